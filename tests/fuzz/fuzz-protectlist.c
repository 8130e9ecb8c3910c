/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * fuzz-protectlist.c - libFuzzer target for the parser of the protected-paths list,
 * cd_protect_list_parse (src/sandbox/protect_list.c: protected-paths/default.list, or an
 * administrator's copy, read by the supervisor at every run). Each input is a list. Besides the
 * sanitizers, it abort()s when a promise breaks:
 *  - a refusal without "fuzz.list:LINE:COL: why", or with a line or column not in the input;
 *  - an accepted list whose entries are not one per line that is neither blank nor a comment
 *    (the lines read plainly: nothing dropped, nothing made up), in order;
 *  - an entry whose path is not the input's word at its line and column, is empty, has a blank,
 *    is refused by cd_protect_glob_check(), or is listed twice; a pattern that refuses (it needs a
 *    literal path), or drops with a '/'; "drop" without "created" set;
 *  - what cordon_protect_describe() writes of the list (`cordon protect --list`) does not parse
 *    back to the same entries.
 * Built with -DCORDON_FUZZ_REPLAY, it has a main that replays files (replay.h).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "protect.h"
#include "util.h"

#define FUZZ_MAX_INPUT (64 << 10)

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);

_printf_(1, 2) _Noreturn static void broken(const char *fmt, ...)
{
	va_list ap;

	fputs("fuzz-protectlist: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	abort();
}

static bool blank(char c)
{
	return c == ' ' || c == '\t' || c == '\r';
}

/* line number ln (from 1) of d: its start and length; false past the end */
static bool line_at(const char *d, size_t n, unsigned ln, const char **ret, size_t *ret_len)
{
	const char *p = d, *end = d + n, *nl;

	for (unsigned i = 1; i < ln; i++) {
		nl = memchr(p, '\n', (size_t)(end - p));
		if (!nl)
			return false;
		p = nl + 1;
	}
	nl = memchr(p, '\n', (size_t)(end - p));
	*ret = p;
	*ret_len = nl ? (size_t)(nl - p) : (size_t)(end - p);
	return true;
}

/* a refusal: "fuzz.list:LINE:COL: why", LINE a line of d, COL at most one past its end */
static void check_refusal(const char *d, size_t n, const struct cordon_error *err)
{
	unsigned ln, col;
	int at = 0;
	const char *l;
	size_t ll;

	if (err->code == ENOMEM)
		return;
	if (err->code != EINVAL ||
	    sscanf(err->msg, "fuzz.list:%u:%u: %n", &ln, &col, &at) != 2 || !at ||
	    !err->msg[at])
		broken("a refusal that does not say where and why: \"%s\" (%d)", err->msg,
		       err->code);
	if (!line_at(d, n, ln, &l, &ll) || col < 1 || col > ll + 1)
		broken("\"%s\": no such place in the input", err->msg);
}

/* The entries' lines, read plainly: a line whose first character that is not a blank is
 * neither its end nor '#' */
static size_t entry_lines(const char *d, size_t n, unsigned *lines, size_t max)
{
	size_t k = 0;
	unsigned ln = 1;

	for (const char *p = d, *end = d + n; p < end; ln++) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t ll = nl ? (size_t)(nl - p) : (size_t)(end - p), i = 0;

		while (i < ll && blank(p[i]))
			i++;
		if (i < ll && p[i] != '#' && k < max)
			lines[k++] = ln;
		p += ll + 1;
	}
	return k;
}

static void check_entry(const char *d, size_t n, const struct cd_protect_rule *r)
{
	struct cordon_error err = { 0 };
	size_t gl = strlen(r->glob), ll;
	const char *l;
	bool wild = strpbrk(r->glob, "*?[") != NULL;

	if (!line_at(d, n, r->line, &l, &ll) || r->col < 2 || r->col - 1 + gl > ll ||
	    memcmp(l + r->col - 1, r->glob, gl) != 0 || !blank(l[r->col - 2]) ||
	    (r->col - 1 + gl < ll && !blank(l[r->col - 1 + gl])))
		broken("line %u: the path \"%s\" is not the input's word at column %u", r->line,
		       r->glob, r->col);
	if (!gl || strpbrk(r->glob, " \t\r\n") || cd_protect_glob_check(r->glob, &err) < 0)
		broken("line %u: a path the rules refuse: \"%s\" (%s)", r->line, r->glob, err.msg);
	if (r->no_placeholder && !r->create)
		broken("line %u: drop, but not protected from being made", r->line);
	if (wild && r->create && !r->no_placeholder)
		broken("line %u: the pattern \"%s\" refuses", r->line, r->glob);
	if (wild && r->no_placeholder && strchr(r->glob, '/'))
		broken("line %u: the pattern \"%s\" drops below the top", r->line, r->glob);
}

static int cmp_glob(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void check_list(const char *d, size_t n, const struct cd_protect_list *l)
{
	unsigned *lines = calloc(l->n + 1, sizeof(*lines));
	char **globs = calloc(l->n + 1, sizeof(*globs));

	if (!lines || !globs)
		abort();
	if (!l->source || strcmp(l->source, "fuzz.list") != 0)
		broken("the list's source is \"%s\"", l->source ? l->source : "(null)");
	if (entry_lines(d, n, lines, l->n + 1) != l->n)
		broken("%zu entries, but %zu lines that are neither blank nor comments", l->n,
		       entry_lines(d, n, lines, l->n + 1));
	for (size_t i = 0; i < l->n; i++) {
		if (l->r[i].line != lines[i])
			broken("entry %zu comes from line %u, not %u", i + 1, l->r[i].line,
			       lines[i]);
		check_entry(d, n, &l->r[i]);
		globs[i] = l->r[i].glob;
	}
	qsort(globs, l->n, sizeof(*globs), cmp_glob);
	for (size_t i = 1; i < l->n; i++)
		if (strcmp(globs[i], globs[i - 1]) == 0)
			broken("\"%s\" listed twice, and taken", globs[i]);
	free(lines);
	free(globs);
}

/* cordon_protect_describe() reads a file: the list goes through a memfd of its own */
static void check_described(const char *d, size_t n, const struct cd_protect_list *l)
{
	static int fd = -1;
	struct cordon_error err = { 0 };
	struct cd_protect_list back = { 0 };
	char path[64], *text = NULL;

	if (fd < 0 && (fd = memfd_create("fuzz.list", MFD_CLOEXEC)) < 0)
		abort();
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	if (ftruncate(fd, 0) < 0 || pwrite(fd, d, n, 0) != (ssize_t)n)
		abort();
	if (cordon_protect_describe(path, &text, &err) < 0)
		broken("the list parses, but cordon_protect_describe() fails: %s", err.msg);
	if (cd_protect_list_parse(text, strlen(text), "described", &back, &err) < 0)
		broken("what cordon_protect_describe() writes does not parse: %s", err.msg);
	if (back.n != l->n)
		broken("described: %zu entries, not %zu", back.n, l->n);
	for (size_t i = 0; i < l->n; i++) {
		const struct cd_protect_rule *a = &l->r[i], *b = &back.r[i];

		if (strcmp(a->glob, b->glob) != 0 || a->deny != b->deny || a->create != b->create ||
		    a->no_placeholder != b->no_placeholder)
			broken("described: entry %zu (\"%s\", line %u) comes back otherwise", i + 1,
			       a->glob, a->line);
	}
	cd_protect_list_done(&back);
	free(text);
}

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
	struct cordon_error err = { 0 };
	struct cd_protect_list l = { 0 };
	const char *d = (const char *)data;

	if (size > FUZZ_MAX_INPUT)
		return 0;
	if (cd_protect_list_parse(d, size, "fuzz.list", &l, &err) < 0) {
		check_refusal(d, size, &err);
		return 0;
	}
	check_list(d, size, &l);
	check_described(d, size, &l);
	cd_protect_list_done(&l);
	return 0;
}

#ifdef CORDON_FUZZ_REPLAY
#include "replay.h"

int main(int argc, char **argv)
{
	return replay_main("fuzz-protectlist", argc, argv);
}
#endif
