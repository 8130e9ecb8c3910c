/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * gitconfig.c - what a repository's git config names for git to run or read (gitconfig.h): a
 * reader of git's config syntax, pure. Runs in the supervisor, when a run's protected paths are
 * planned (protect.c).
 *
 * It reads as git's parser does (config.c): "\r\n" is one newline, a UTF-8 byte order mark at
 * the start is skipped, the end of the file ends a line, a header may be followed by more on its
 * line, names and keys are ASCII. Where git refuses a line (and with it the file: git then dies
 * and runs nothing of it), it goes on at the next line: what it finds then is more than git
 * would use, never less, whatever it misjudged as refused. tests/fuzz/fuzz-gitconfig.c holds it
 * to a second reading after git's, itself compared with git.
 */
#include <limits.h>
#include <string.h>

#include "gitconfig.h"
#include "util.h"

struct cursor {
	const char *p, *end;
};

/* The next character as git reads it ("\r\n" as '\n'), -1 at the end */
static int peek(const struct cursor *c)
{
	if (c->p >= c->end)
		return -1;
	if (c->p[0] == '\r' && c->p + 1 < c->end && c->p[1] == '\n')
		return '\n';
	return (unsigned char)*c->p;
}

static void next(struct cursor *c)
{
	if (c->p < c->end)
		c->p += c->p[0] == '\r' && peek(c) == '\n' ? 2 : 1;
}

/* git's own character classes (ASCII, whatever the locale) */
static bool is_space(int ch)
{
	return ch == ' ' || ch == '\t' || ch == '\r' || ch == '\n';
}

static bool is_alpha(int ch)
{
	return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z');
}

static bool is_keychar(int ch)
{
	return is_alpha(ch) || (ch >= '0' && ch <= '9') || ch == '-';
}

static char lower(int ch)
{
	return (char)(ch >= 'A' && ch <= 'Z' ? ch + 'a' - 'A' : ch);
}

/* to the end of the line (its '\n' left for the caller) */
static void skip_line(struct cursor *c)
{
	while (peek(c) >= 0 && peek(c) != '\n')
		next(c);
}

/* The name git's callbacks see, "section[.subsection].key" (section and key lower-cased), in
 * var (room for the whole input): what matters is read as git's callbacks read it, a C string,
 * so a NUL in a subsection cuts it there (`[core "hookspath\0"]` makes every key of the section
 * core.hookspath). base: its length up to the key; 0 without a section. */
struct name {
	char *var;
	size_t len, base;
};

/* The quoted subsection of "[name "sub"]" after the name's blank: escapes taken as the
 * character, then a ']' at once. false: git refuses the header (a newline before its end). */
static bool subsection(struct cursor *c, struct name *v)
{
	while (is_space(peek(c)) && peek(c) != '\n')
		next(c);
	if (peek(c) != '"')
		return false;
	v->var[v->len++] = '.';
	for (next(c); peek(c) != '"'; next(c)) {
		if (peek(c) == '\\')
			next(c);
		if (peek(c) < 0 || peek(c) == '\n')
			return false;
		v->var[v->len++] = (char)peek(c);
	}
	next(c);
	if (peek(c) != ']')
		return false;
	next(c);
	return true;
}

/* a header read: the '.' before the key */
static bool section_end(struct name *v)
{
	v->var[v->len++] = '.';
	v->base = v->len;
	return true;
}

/* "[name]", "[name.sub]", "[name "sub"]": the name lower-cased (and the subsection as it is),
 * then a '.'. false: not a header git reads. */
static bool section(struct cursor *c, struct name *v)
{
	v->len = v->base = 0;
	for (next(c); peek(c) != ']'; next(c)) {
		if (is_space(peek(c)))
			return peek(c) != '\n' && subsection(c, v) && section_end(v);
		if (!is_keychar(peek(c)) && peek(c) != '.')
			return false;
		v->var[v->len++] = lower(peek(c));
	}
	next(c);
	return v->len > 0 && section_end(v);
}

/* A value after '=', in out as git 2.45 and later read it, in old as earlier ones did (each
 * unquoted blank inside a space): quotes removed, escapes undone, a backslash-newline joined, a
 * comment cut, leading and trailing blanks outside quotes dropped. It ends at the newline, left
 * for the caller. -EINVAL: git refuses it (a quote left open, an unknown escape); -E2BIG: longer
 * than size - 1 (read to its end all the same; as a path, git could not open it either). */
static int value(struct cursor *c, char *out, char *old, size_t size)
{
	size_t n = 0, keep = 0; /* keep: the length up to the last character not a trailing blank */
	bool quoted = false, full = false, lost = false; /* lost: a blank with no room left */
	int ch;

	for (; (ch = peek(c)) >= 0 && ch != '\n'; next(c)) {
		if (!quoted && (ch == '#' || ch == ';')) {
			skip_line(c);
			break;
		}
		if (!quoted && is_space(ch)) {
			if (n > 0 && n + 1 < size)
				out[n] = (char)ch, old[n++] = ' ';
			else if (n > 0)
				lost = true;
			continue;
		}
		keep = n; /* what follows is no trailing blank: the blanks before it stay */
		full = full || lost;
		if (ch == '"') {
			quoted = !quoted;
			continue;
		}
		if (ch == '\\') {
			next(c);
			ch = peek(c);
			if (ch < 0 || ch == '\n')
				continue; /* joined with the next line (git reads the end as one) */
			if (ch == 'n' || ch == 't' || ch == 'b')
				ch = ch == 'n' ? '\n' : ch == 't' ? '\t' : '\b';
			else if (ch != '"' && ch != '\\')
				return -EINVAL;
		}
		if (n + 1 >= size) {
			full = true;
			continue;
		}
		out[n] = old[n] = (char)ch;
		keep = ++n;
	}
	if (quoted)
		return -EINVAL;
	out[keep] = old[keep] = '\0';
	return full ? -E2BIG : 0;
}

/* One "key = value" (or "key" alone), the key lower-cased after the section's name in v, the
 * value when there is one */
static int entry(struct cursor *c, struct name *v, char *val, char *old, size_t vsize, bool *has)
{
	for (v->len = v->base; is_keychar(peek(c)); next(c))
		v->var[v->len++] = lower(peek(c));
	v->var[v->len] = '\0';
	while (peek(c) == ' ' || peek(c) == '\t')
		next(c);
	*has = peek(c) == '=';
	if (!*has)
		return 0;
	next(c);
	return value(c, val, old, vsize);
}

/* var as git's callbacks read it: core.hooksPath (0), include.path or includeIf.*.path (1),
 * neither (-1). includeIf's condition is what lies between its first and its last dot (even
 * none: git then finds it false, but not by much). */
static int kind(const char *var)
{
	const char *dot;

	if (strcmp(var, "core.hookspath") == 0)
		return 0;
	if (strcmp(var, "include.path") == 0)
		return 1;
	if (strncmp(var, "includeif.", 10) != 0)
		return -1;
	dot = strrchr(var + 9, '.');
	return dot != var + 9 && strcmp(dot + 1, "path") == 0 ? 1 : -1;
}

/* The value, and its reading by git before 2.45 where that differs */
static int push(char ***v, const char *val, const char *old)
{
	if (cd_strv_push(v, val) < 0)
		return -ENOMEM;
	if (strcmp(val, old) != 0 && cd_strv_push(v, old) < 0)
		return -ENOMEM;
	return 0;
}

int cd_gitconfig_paths(const char *text, size_t len, char ***ret_hooks, char ***ret_includes)
{
	_cleanup_strv_ char **hooks = NULL, **includes = NULL;
	_cleanup_free_ char *var = malloc(len + 4); /* a name and a key, two dots, a NUL */
	struct cursor c = { text, text + len };
	struct name v = { var, 0, 0 };
	char val[PATH_MAX], old[PATH_MAX];
	bool has;

	if (!var)
		return -ENOMEM;
	if (len >= 3 && memcmp(text, "\xef\xbb\xbf", 3) == 0)
		c.p += 3; /* a UTF-8 byte order mark, which git skips */
	while (peek(&c) >= 0) {
		int ch = peek(&c), k;

		if (is_space(ch)) {
			next(&c);
			continue;
		}
		if (ch == '[') {
			if (!section(&c, &v)) {
				v.base = 0;
				skip_line(&c);
			}
			continue; /* git reads on after a header, on the same line */
		}
		/* an entry (one a line); else a comment, or a line git refuses */
		if (is_alpha(ch) && entry(&c, &v, val, old, sizeof(val), &has) == 0 && has &&
		    (k = kind(var)) >= 0 && push(k == 0 ? &hooks : &includes, val, old) < 0)
			return -ENOMEM;
		skip_line(&c);
	}
	*ret_hooks = CD_TAKE_PTR(hooks);
	*ret_includes = CD_TAKE_PTR(includes);
	return 0;
}
