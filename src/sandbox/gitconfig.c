/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * gitconfig.c - what a repository's git config names for git to run or read (gitconfig.h): a
 * reader of git's config syntax, pure, and the table of the variables naming programs git runs.
 * Runs in the supervisor, when a run's protected paths are planned (protect_git.c).
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

/* The variables whose value is a program git runs, or a command line naming one (git runs it
 * with the shell where it has shell syntax): each with what runs it. "*": any subsection (a
 * driver's, a tool's name), or any key. Where the value is a path of the workdir, that file is
 * protected with the config (protect_git.c). */
static const struct {
	const char *section, *sub, *key;
} commands[] = {
	{ "core", NULL, "fsmonitor" },     /* every git status, diff, add, commit */
	{ "core", NULL, "pager" },         /* every paged command: log, diff, show */
	{ "pager", NULL, "*" },            /* the same, per command */
	{ "core", NULL, "editor" },        /* commit without -m, tag -a, merge, rebase -i */
	{ "sequence", NULL, "editor" },    /* rebase -i */
	{ "core", NULL, "sshcommand" },    /* fetch, pull, push over ssh */
	{ "core", NULL, "gitproxy" },      /* fetch over git:// */
	{ "core", NULL, "askpass" },       /* a password prompt */
	{ "core", NULL, "alternaterefscommand" }, /* a push into this repository */
	{ "credential", NULL, "helper" },  /* fetch, push over https */
	{ "credential", "*", "helper" },   /* the same, per URL */
	{ "diff", NULL, "external" },      /* every git diff */
	{ "diff", "*", "command" },        /* git diff, of paths .gitattributes gives the driver */
	{ "diff", "*", "textconv" },       /* git diff, log -p, show, blame: the same */
	{ "filter", "*", "clean" },        /* git add, status, diff: the same */
	{ "filter", "*", "smudge" },       /* checkout, switch, reset: the same */
	{ "filter", "*", "process" },      /* both */
	{ "merge", "*", "driver" },        /* merge, rebase, cherry-pick: the same */
	{ "gpg", NULL, "program" },        /* a signed commit or tag (commit.gpgSign), verify */
	{ "gpg", "*", "program" },         /* the same, per format (openpgp, x509, ssh) */
	{ "gpg", "ssh", "defaultkeycommand" }, /* an ssh-signed commit */
	{ "interactive", NULL, "difffilter" }, /* git add -p */
	{ "alias", NULL, "*" },            /* "!..." a shell command, or git's options (-c) */
	{ "alias", "*", "*" },             /* (the same, for a git that reads [alias "x"]) */
	{ "remote", "*", "uploadpack" },   /* fetch from the remote (run here for a path) */
	{ "remote", "*", "receivepack" },  /* push to it (the same) */
	{ "submodule", "*", "update" },    /* "!command": git submodule update */
	{ "mergetool", "*", "cmd" },       /* git mergetool */
	{ "difftool", "*", "cmd" },        /* git difftool */
	{ "tar", "*", "command" },         /* git archive */
	{ "browser", "*", "cmd" },         /* git help --web, instaweb */
	{ "man", "*", "cmd" },             /* git help */
	{ "sendemail", NULL, "sendmailcmd" }, /* git send-email */
	{ "sendemail", NULL, "tocmd" },
	{ "sendemail", NULL, "cccmd" },
	{ "sendemail", NULL, "headercmd" },
	{ "sendemail", "*", "sendmailcmd" }, /* the same, per identity */
};

static bool part_is(const char *want, const char *s, size_t n)
{
	return strcmp(want, "*") == 0 || (strlen(want) == n && memcmp(want, s, n) == 0);
}

static bool is_command(const char *var)
{
	const char *dot = strchr(var, '.'), *last = strrchr(var, '.');

	if (!dot)
		return false;
	for (size_t i = 0; i < CD_ELEMENTSOF(commands); i++) {
		if (!part_is(commands[i].section, var, (size_t)(dot - var)) ||
		    !part_is(commands[i].key, last + 1, strlen(last + 1)))
			continue;
		if (!commands[i].sub ? dot == last
				     : dot != last && part_is(commands[i].sub, dot + 1,
							      (size_t)(last - dot - 1)))
			return true;
	}
	return false;
}

int cd_gitconfig_kind(const char *var)
{
	const char *dot = strrchr(var, '.'); /* the last: before the key */

	if (strcmp(var, "core.hookspath") == 0)
		return CD_GITCONFIG_HOOKS;
	if (strcmp(var, "include.path") == 0)
		return CD_GITCONFIG_INCLUDE;
	if (strcmp(var, "extensions.objectformat") == 0)
		return CD_GITCONFIG_FORMAT;
	if (strncmp(var, "submodule.", 10) == 0 && dot > var + 9 && strcmp(dot + 1, "path") == 0)
		return CD_GITCONFIG_SUBMODULE;
	/* includeIf's condition is what lies between its first and its last dot (even none: git
	 * then finds it false, but not by much) */
	if (strncmp(var, "includeif.", 10) == 0 && dot > var + 9 && strcmp(dot + 1, "path") == 0)
		return CD_GITCONFIG_INCLUDE;
	return is_command(var) ? CD_GITCONFIG_COMMAND : -1;
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

int cd_gitconfig_read(const char *text, size_t len, struct cd_gitconfig *ret)
{
	_cleanup_(cd_gitconfig_done) struct cd_gitconfig found = { 0 };
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
		    (k = cd_gitconfig_kind(var)) >= 0 && push(&found.v[k], val, old) < 0)
			return -ENOMEM;
		skip_line(&c);
	}
	*ret = found;
	found = (struct cd_gitconfig){ 0 };
	return 0;
}

void cd_gitconfig_done(struct cd_gitconfig *c)
{
	for (size_t k = 0; k < CD_GITCONFIG_KINDS; k++)
		cd_strv_free(c->v[k]);
	*c = (struct cd_gitconfig){ 0 };
}
