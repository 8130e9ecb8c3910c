/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * protect_list.c - the default protected paths as data (protected-paths/default.list): the
 * parser (pure), the loader (the installed copy, else the binary's own), and
 * cordon_protect_describe(). Runs in the supervisor, when a run's plan is built, and in the CLI.
 */
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>

#include "protect.h"
#include "util.h"

#ifndef CORDON_PROTECT_DIR
#define CORDON_PROTECT_DIR "/usr/local/share/cordon/protected-paths"
#endif

/* protected-paths/default.list, compiled into the binary (meson: embed-policy.py) */
extern const char cd_protect_default_list[];
extern const size_t cd_protect_default_list_len;

#define LIST_NAME      "default.list"
#define LIST_MAX_BYTES (1 << 20)
#define LIST_MAX_RULES 1024

struct word {
	const char *s;
	size_t len;
	unsigned col;
};

const char *cd_protect_list_dir(void)
{
	return CORDON_PROTECT_DIR;
}

void cd_protect_list_done(struct cd_protect_list *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->r[i].glob);
	free(l->r);
	free(l->source);
	*l = (struct cd_protect_list){ 0 };
}

_printf_(5, 6) static int lerr(struct cordon_error *err, const char *name, unsigned line,
			       unsigned col, const char *fmt, ...)
{
	char msg[400];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return cd_fail(err, EINVAL, "protect-list", "%s:%u:%u: %s", name, line, col, msg);
}

static bool word_is(const struct word *w, const char *s)
{
	return w->len == strlen(s) && memcmp(w->s, s, w->len) == 0;
}

/* One line (no newline) into at most 4 words; a '#' where a word would start ends the line. */
static size_t split_words(const char *s, size_t len, struct word w[4])
{
	size_t n = 0, i = 0;

	while (i < len && n < 4) {
		size_t start;

		while (i < len && (s[i] == ' ' || s[i] == '\t' || s[i] == '\r'))
			i++;
		if (i == len || s[i] == '#')
			break;
		start = i;
		while (i < len && s[i] != ' ' && s[i] != '\t' && s[i] != '\r')
			i++;
		w[n++] = (struct word){ s + start, i - start, (unsigned)start + 1 };
	}
	return n;
}

/* The entry of one line's words, checked: 0, or -EINVAL with file:line:col. */
static int parse_entry(const struct word *w, size_t n, const char *name, unsigned line,
		       struct cd_protect_rule *ret, struct cordon_error *err)
{
	struct cordon_error gerr = { 0 };
	char path[PATH_MAX];
	bool wild;

	if (!word_is(&w[0], "protect") && !word_is(&w[0], "deny"))
		return lerr(err, name, line, w[0].col, "unknown kind \"%.*s\" (protect or deny)",
			    (int)w[0].len, w[0].s);
	if (n < 2)
		return lerr(err, name, line, w[0].col + (unsigned)w[0].len,
			    "%.*s needs a path", (int)w[0].len, w[0].s);
	if (n > 3)
		return lerr(err, name, line, w[3].col,
			    "unexpected \"%.*s\" (one entry a line: KIND PATH [refuse|drop])",
			    (int)w[3].len, w[3].s);
	if (w[1].len >= sizeof(path))
		return lerr(err, name, line, w[1].col, "path too long");
	memcpy(path, w[1].s, w[1].len);
	path[w[1].len] = '\0';
	if (cd_protect_glob_check(path, &gerr) < 0)
		return lerr(err, name, line, w[1].col, "%s", gerr.msg);
	wild = strpbrk(path, "*?[") != NULL;
	*ret = (struct cd_protect_rule){ .deny = word_is(&w[0], "deny"), .line = line,
				       .col = w[1].col };
	if (n == 3 && !word_is(&w[2], "refuse") && !word_is(&w[2], "drop"))
		return lerr(err, name, line, w[2].col,
			    "unknown \"%.*s\" (refuse or drop, or nothing: only what exists)",
			    (int)w[2].len, w[2].s);
	if (n == 3 && word_is(&w[2], "refuse") && wild)
		return lerr(err, name, line, w[2].col,
			    "\"%s\": refuse needs a literal path (a placeholder holds its place); "
			    "a pattern can drop", path);
	if (n == 3 && word_is(&w[2], "drop") && wild && strchr(path, '/'))
		return lerr(err, name, line, w[2].col,
			    "\"%s\": a pattern drops its new matches at the top of the workdir "
			    "only (no \"/\")", path);
	ret->create = n == 3;
	ret->no_placeholder = n == 3 && word_is(&w[2], "drop");
	ret->glob = strdup(path);
	return ret->glob ? 0 : cd_fail(err, ENOMEM, "protected-paths", "out of memory");
}

static int cmp_rule(const void *a, const void *b)
{
	const struct cd_protect_rule *x = *(const struct cd_protect_rule *const *)a;
	const struct cd_protect_rule *y = *(const struct cd_protect_rule *const *)b;
	int c = strcmp(x->glob, y->glob);

	return c ? c : x->line < y->line ? -1 : x->line > y->line;
}

/* A path listed twice: the second place, naming the first (sorted: n log n, not n squared) */
static int check_twice(const struct cd_protect_list *l, const char *name, struct cordon_error *err)
{
	_cleanup_free_ const struct cd_protect_rule **v = calloc(l->n ? l->n : 1, sizeof(*v));

	if (!v)
		return cd_fail(err, ENOMEM, "protected-paths", "out of memory");
	for (size_t i = 0; i < l->n; i++)
		v[i] = &l->r[i];
	qsort(v, l->n, sizeof(*v), cmp_rule);
	for (size_t i = 1; i < l->n; i++)
		if (strcmp(v[i]->glob, v[i - 1]->glob) == 0)
			return lerr(err, name, v[i]->line, v[i]->col,
				    "\"%s\" listed twice (first at line %u)", v[i]->glob,
				    v[i - 1]->line);
	return 0;
}

int cd_protect_list_parse(const char *text, size_t len, const char *name,
			  struct cd_protect_list *ret, struct cordon_error *err)
{
	struct cd_protect_list l = { 0 };
	const char *nul = memchr(text, '\0', len);
	size_t lines = 1;
	unsigned line = 1;
	int r = 0;

	if (nul) {
		const char *ls = text;

		for (const char *c = text; c < nul; c++)
			if (*c == '\n')
				line++, ls = c + 1;
		return lerr(err, name, line, (unsigned)(nul - ls) + 1, "a NUL byte");
	}
	for (const char *c = text; (c = memchr(c, '\n', (size_t)(text + len - c))); c++)
		lines++;
	/* room for every line's entry at once: no growing */
	l.r = calloc(lines < LIST_MAX_RULES ? lines : LIST_MAX_RULES, sizeof(*l.r));
	if (!l.r)
		return cd_fail(err, ENOMEM, "protected-paths", "out of memory");
	for (const char *p = text, *end = text + len; r >= 0 && p < end; line++) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t ll = nl ? (size_t)(nl - p) : (size_t)(end - p);
		struct word w[4];
		size_t n = split_words(p, ll, w);
		struct cd_protect_rule rule;

		if (n > 0 && l.n >= LIST_MAX_RULES)
			r = lerr(err, name, line, w[0].col, "more than %d entries", LIST_MAX_RULES);
		else if (n > 0)
			r = parse_entry(w, n, name, line, &rule, err);
		if (n > 0 && r >= 0)
			l.r[l.n++] = rule;
		p += ll + 1;
	}
	if (r >= 0)
		r = check_twice(&l, name, err);
	if (r >= 0)
		l.source = strdup(name);
	if (r >= 0 && !l.source)
		r = cd_fail(err, ENOMEM, "protected-paths", "out of memory");
	if (r < 0) {
		cd_protect_list_done(&l);
		return r;
	}
	*ret = l;
	return 0;
}

/* The whole of a small regular file: 0 and *ret (NUL-ended, *ret_len bytes), or -errno. With
 * trusted, a file another user could have written is refused (EPERM), and so is a symlink
 * there (whose target's owner says nothing of who put the link): it decides what a sandbox may
 * change. */
static int read_list(const char *path, bool trusted, char **ret, size_t *ret_len,
		     struct cordon_error *err)
{
	_cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK |
						    (trusted ? O_NOFOLLOW : 0));
	_cleanup_free_ char *buf = NULL;
	struct stat st;
	size_t got = 0;

	if (fd < 0)
		return errno == ENOENT && trusted
			       ? -ENOENT
			       : cd_fail_errno(err, errno, "protected-paths", "%s", path);
	if (fstat(fd, &st) < 0)
		return cd_fail_errno(err, errno, "protected-paths", "%s", path);
	if (!S_ISREG(st.st_mode))
		return cd_fail(err, EINVAL, "protected-paths", "%s: not a regular file", path);
	if (st.st_size > LIST_MAX_BYTES)
		return cd_fail(err, EFBIG, "protected-paths", "%s: over %d bytes", path,
			       LIST_MAX_BYTES);
	if (trusted && ((st.st_uid != 0 && st.st_uid != geteuid()) || (st.st_mode & S_IWOTH) ||
			((st.st_mode & S_IWGRP) && st.st_gid != 0)))
		return cd_fail(err, EPERM, "protected-paths",
			       "%s: another user may write it (owner %u, mode %04o): refused; it "
			       "must be root's or yours, writable by no one else", path,
			       (unsigned)st.st_uid, (unsigned)(st.st_mode & 07777));
	buf = malloc((size_t)st.st_size + 1);
	if (!buf)
		return cd_fail(err, ENOMEM, "protected-paths", "out of memory");
	while (got < (size_t)st.st_size) {
		ssize_t n = read(fd, buf + got, (size_t)st.st_size - got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return cd_fail_errno(err, errno, "protected-paths", "read %s", path);
		if (n == 0)
			break;
		got += (size_t)n;
	}
	buf[got] = '\0';
	*ret_len = got;
	*ret = CD_TAKE_PTR(buf);
	return 0;
}

int cd_protect_list_load(const char *dir, struct cd_protect_list *ret, struct cordon_error *err)
{
	_cleanup_free_ char *path = cd_strdup_printf("%s/%s", dir ? dir : CORDON_PROTECT_DIR,
						     LIST_NAME);
	_cleanup_free_ char *text = NULL;
	size_t len = 0;
	int r;

	if (!path)
		return cd_fail(err, ENOMEM, "protected-paths", "out of memory");
	/* the installed copy wins (an administrator's additions); where there is none (an
	 * uninstalled build, a copied binary), the binary's own. A copy that is there but cannot
	 * be read or parsed fails the run rather than protecting less than it says. */
	r = read_list(path, true, &text, &len, err);
	if (r == -ENOENT)
		return cd_protect_list_parse(cd_protect_default_list, cd_protect_default_list_len,
					     "built-in:" LIST_NAME, ret, err);
	if (r < 0)
		return r;
	return cd_protect_list_parse(text, len, path, ret, err);
}

int cordon_protect_describe(const char *path, char **ret_text, struct cordon_error *err)
{
	struct cd_protect_list l = { 0 };
	_cleanup_free_ char *text = NULL;
	size_t len = 0, size = 0;
	FILE *f;
	int r;

	if (path) {
		r = read_list(path, false, &text, &len, err);
		if (r >= 0)
			r = cd_protect_list_parse(text, len, path, &l, err);
	} else {
		r = cd_protect_list_load(NULL, &l, err);
	}
	if (r < 0)
		return r;
	free(CD_TAKE_PTR(text));
	f = open_memstream(&text, &size);
	if (!f) {
		cd_protect_list_done(&l);
		return cd_fail(err, ENOMEM, "protected-paths", "out of memory");
	}
	fprintf(f, "# %s: %zu entries\n", l.source, l.n);
	for (size_t i = 0; i < l.n; i++) {
		const char *kind = l.r[i].deny ? "deny" : "protect";

		if (l.r[i].create)
			fprintf(f, "%-8s %-32s %s\n", kind, l.r[i].glob,
				l.r[i].no_placeholder ? "drop" : "refuse");
		else
			fprintf(f, "%-8s %s\n", kind, l.r[i].glob);
	}
	cd_protect_list_done(&l);
	if (fclose(f) != 0)
		return cd_fail(err, ENOMEM, "protected-paths", "out of memory");
	*ret_text = CD_TAKE_PTR(text);
	return 0;
}
