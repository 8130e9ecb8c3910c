/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * gitconfig.c - what a repository's git config names for git to run or read (gitconfig.h): a
 * reader of git's config syntax, pure. Runs in the supervisor, when a run's protected paths are
 * planned (protect.c).
 */
#include <ctype.h>
#include <string.h>

#include "gitconfig.h"
#include "util.h"

struct cursor {
	const char *p, *end;
};

static int peek(const struct cursor *c)
{
	return c->p < c->end ? (unsigned char)*c->p : -1;
}

static void skip_blanks(struct cursor *c)
{
	while (peek(c) == ' ' || peek(c) == '\t' || peek(c) == '\r')
		c->p++;
}

static void skip_line(struct cursor *c)
{
	while (peek(c) >= 0 && peek(c) != '\n')
		c->p++;
}

/* "[name]", "[name "sub"]", "[name.sub]": the name, lower-cased, and whether a subsection
 * follows. false: not a header git would read (the rest of the line is skipped). */
static bool section(struct cursor *c, char *name, size_t size, bool *sub)
{
	size_t n = 0;

	c->p++; /* '[' */
	while (peek(c) >= 0 && (isalnum(peek(c)) || peek(c) == '-') && n + 1 < size)
		name[n++] = (char)tolower(*c->p++);
	name[n] = '\0';
	*sub = peek(c) == '.' || peek(c) == ' ' || peek(c) == '\t';
	while (peek(c) >= 0 && peek(c) != ']' && peek(c) != '\n')
		c->p++;
	if (peek(c) != ']' || n == 0)
		return false;
	c->p++;
	return true;
}

/* A value after '=': quotes removed, escapes undone, a backslash-newline joined, a comment cut,
 * leading and trailing blanks (outside quotes) dropped. -EINVAL: a quote not closed. */
static int value(struct cursor *c, char *out, size_t size)
{
	size_t n = 0, keep = 0; /* keep: the length up to the last character not a trailing blank */
	bool quoted = false;

	skip_blanks(c);
	for (int ch; (ch = peek(c)) >= 0 && (ch != '\n' || quoted); c->p++) {
		if (ch == '\n')
			return -EINVAL; /* git: a newline inside quotes is an error */
		if (!quoted && (ch == '#' || ch == ';'))
			break;
		if (ch == '"') {
			quoted = !quoted;
			keep = n;
			continue;
		}
		if (ch == '\\') {
			int e = c->p + 1 < c->end ? (unsigned char)c->p[1] : -1;

			c->p++;
			if (e == '\n')
				continue; /* continued on the next line */
			ch = e == 'n' ? '\n' : e == 't' ? '\t' : e == 'b' ? '\b' : e;
			if (ch != '"' && ch != '\\' && e != 'n' && e != 't' && e != 'b')
				return -EINVAL; /* git refuses other escapes */
		} else if (!quoted && (ch == ' ' || ch == '\t' || ch == '\r')) {
			if (n > 0 && n + 1 < size)
				out[n++] = (char)ch;
			continue;
		}
		if (n + 1 >= size)
			return -E2BIG;
		out[n++] = (char)ch;
		keep = n;
	}
	if (quoted)
		return -EINVAL;
	out[keep] = '\0';
	return 0;
}

/* One "key = value" line of a section: the key lower-cased, the value when there is one */
static int entry(struct cursor *c, char *key, size_t ksize, char *val, size_t vsize, bool *has)
{
	size_t n = 0;

	while (peek(c) >= 0 && (isalnum(peek(c)) || peek(c) == '-') && n + 1 < ksize)
		key[n++] = (char)tolower(*c->p++);
	key[n] = '\0';
	skip_blanks(c);
	*has = peek(c) == '=';
	if (!*has)
		return 0;
	c->p++;
	return value(c, val, vsize);
}

int cd_gitconfig_paths(const char *text, size_t len, char ***ret_hooks, char ***ret_includes)
{
	_cleanup_strv_ char **hooks = NULL, **includes = NULL;
	struct cursor c = { text, text + len };
	char sec[64] = "", key[64], val[4096];
	bool sub = false;

	while (peek(&c) >= 0) {
		bool has = false;

		skip_blanks(&c);
		if (peek(&c) == '[' && !section(&c, sec, sizeof(sec), &sub)) {
			sec[0] = '\0';
			skip_line(&c);
		}
		skip_blanks(&c);
		if (peek(&c) >= 0 && isalpha(peek(&c))) {
			int r = entry(&c, key, sizeof(key), val, sizeof(val), &has);

			if (r == -EINVAL)
				break; /* git refuses the file, and runs nothing of it */
			has = has && r == 0; /* (a value too long for us: not a path git can use) */
			if (has && !sub && strcmp(sec, "core") == 0 && strcmp(key, "hookspath") == 0 &&
			    cd_strv_push(&hooks, val) < 0)
				return -ENOMEM;
			if (has && strcmp(key, "path") == 0 &&
			    ((!sub && strcmp(sec, "include") == 0) || strcmp(sec, "includeif") == 0) &&
			    cd_strv_push(&includes, val) < 0)
				return -ENOMEM;
		}
		skip_line(&c);
		if (peek(&c) == '\n')
			c.p++;
	}
	*ret_hooks = CD_TAKE_PTR(hooks);
	*ret_includes = CD_TAKE_PTR(includes);
	return 0;
}
