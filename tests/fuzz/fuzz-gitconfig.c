/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * fuzz-gitconfig.c - libFuzzer target for the reader of git's config syntax, cd_gitconfig_read
 * (src/sandbox/gitconfig.c), which the supervisor runs as root on a workdir's .git/config and
 * what it includes, to protect the hooks directory, the files git would take from there and the
 * programs it names.
 * Missing one that git reads is a hole, so besides the sanitizers the target holds it to a second
 * reading, written after git's own parser (ref_*: a character at a time, as git's config.c), and
 * abort()s when:
 *  - a value the second reading finds for a variable of a kind the reader gives (core.hooksPath,
 *    include.path or includeIf.*.path, a program git runs, submodule.*.path,
 *    extensions.objectFormat: cd_gitconfig_kind(), a table), as git 2.45 and later read it
 *    (blanks inside kept) or as earlier versions do (each a space), is
 *    not in the reader's answer, in the same order (where git refuses the file, up to the line
 *    it refuses: the reader may find more after it; a value of PATH_MAX bytes or more is no
 *    path git can open, and the reader leaves it out);
 *  - where git takes the whole file, the reader finds anything else;
 *  - T, a blank line, then more config does not read as T's answer then the more's (no line
 *    swallows what follows it); T with "\r\n" line ends, or after a UTF-8 byte order mark, does
 *    not read as T;
 *  - the reader fails (it may only run out of memory), or a value is longer than the input.
 * The second reading is itself compared with git, outside the fuzzer: built with
 * -DCORDON_FUZZ_REPLAY (replay.h), `fuzz-gitconfig --git [--random N] FILE|DIR...` runs
 * `git config --file F --list` on each input and on N configs made at random (tests/fuzz/run
 * does it after fuzzing, on the corpus).
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gitconfig.h"
#include "util.h"

#define FUZZ_MAX_INPUT (64 << 10)

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);

_printf_(1, 2) _Noreturn static void broken(const char *fmt, ...)
{
	va_list ap;

	fputs("fuzz-gitconfig: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	abort();
}

/* --- the second reading, after git's config.c --- */

#define KINDS CD_GITCONFIG_KINDS

struct ref {
	const unsigned char *d;
	size_t n, i;
	bool eof;
	char *var, *val, *old; /* each n + 16 bytes: nothing read is longer than the input */
	size_t vlen, baselen;
	char **found[2 * KINDS]; /* per kind: as git 2.45 and later, and earlier ones, read them */
	char **answer[KINDS];    /* what the reader must answer, per kind */
};

static bool sp(int c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

static bool alpha(int c)
{
	return (c | 0x20) >= 'a' && (c | 0x20) <= 'z';
}

static bool keychar(int c)
{
	return alpha(c) || (c >= '0' && c <= '9') || c == '-';
}

static char low(int c)
{
	return (char)(c >= 'A' && c <= 'Z' ? c | 0x20 : c);
}

/* git's get_next_char(): "\r\n" is '\n', and so is the end (eof set) */
static int ref_get(struct ref *r)
{
	int c;

	if (r->i >= r->n) {
		r->eof = true;
		return '\n';
	}
	c = r->d[r->i++];
	if (c == '\r' && r->i < r->n && r->d[r->i] == '\n') {
		r->i++;
		c = '\n';
	}
	return c;
}

/* [name "subsection"]: after the blank that ended the name */
static bool ref_subsection(struct ref *r, int c)
{
	do {
		if (c == '\n')
			return false;
		c = ref_get(r);
	} while (sp(c));
	if (c != '"')
		return false;
	r->var[r->vlen++] = '.';
	for (;;) {
		c = ref_get(r);
		if (c == '\n')
			return false;
		if (c == '"')
			break;
		if (c == '\\' && (c = ref_get(r)) == '\n')
			return false;
		r->var[r->vlen++] = (char)c;
	}
	return ref_get(r) == ']';
}

/* after '[': the section's name (and subsection) into var, then a '.' */
static bool ref_section(struct ref *r)
{
	int c;

	r->vlen = 0;
	for (;;) {
		c = ref_get(r);
		if (r->eof)
			return false;
		if (c == ']')
			break;
		if (sp(c)) {
			if (!ref_subsection(r, c))
				return false;
			break;
		}
		if (!keychar(c) && c != '.')
			return false;
		r->var[r->vlen++] = low(c);
	}
	if (r->vlen == 0)
		return false;
	r->var[r->vlen++] = '.';
	r->baselen = r->vlen;
	return true;
}

static int ref_escape(int c)
{
	switch (c) {
	case 't':
		return '\t';
	case 'b':
		return '\b';
	case 'n':
		return '\n';
	case '\\':
	case '"':
		return c;
	default:
		return -1;
	}
}

/* after '=': the value into val (blanks kept) and old (each blank a space). false: refused */
static bool ref_value(struct ref *r)
{
	size_t n = 0, o = 0, trim = 0, spaces = 0;
	bool quote = false, comment = false;

	for (;;) {
		int c = ref_get(r);

		if (c == '\n') {
			if (quote)
				return false;
			if (trim)
				n = trim;
			r->val[n] = r->old[o] = '\0';
			return true;
		}
		if (comment)
			continue;
		if (sp(c) && !quote) {
			if (!trim)
				trim = n;
			if (n)
				r->val[n++] = (char)c;
			if (o)
				spaces++;
			continue;
		}
		if (!quote && (c == ';' || c == '#')) {
			comment = true;
			continue;
		}
		trim = 0;
		for (; spaces; spaces--)
			r->old[o++] = ' ';
		if (c == '\\') {
			c = ref_get(r);
			if (c == '\n')
				continue;
			if ((c = ref_escape(c)) < 0)
				return false;
		} else if (c == '"') {
			quote = !quote;
			continue;
		}
		r->val[n++] = r->old[o++] = (char)c;
	}
}

static void push(char ***v, const char *s)
{
	if (cd_strv_push(v, s) < 0)
		abort();
}

/* an entry from its first letter c: 1 with a value, 0 without, -1 refused */
static int ref_entry(struct ref *r, int c)
{
	int k;

	r->vlen = r->baselen;
	r->var[r->vlen++] = low(c);
	for (;;) {
		c = ref_get(r);
		if (r->eof || !keychar(c))
			break;
		r->var[r->vlen++] = low(c);
	}
	r->var[r->vlen] = '\0';
	while (c == ' ' || c == '\t')
		c = ref_get(r);
	if (c == '\n')
		return 0;
	if (c != '=' || !ref_value(r))
		return -1;
	k = cd_gitconfig_kind(r->var);
	if (k < 0)
		return 1;
	push(&r->found[2 * k], r->val);
	push(&r->found[2 * k + 1], r->old);
	if (strlen(r->val) < PATH_MAX) { /* longer: no path git can open */
		push(&r->answer[k], r->val);
		if (strcmp(r->val, r->old) != 0)
			push(&r->answer[k], r->old);
	}
	return 1;
}

/* The whole file: true if git takes it, false if it refuses it (found: what came before) */
static bool ref_parse(struct ref *r)
{
	static const unsigned char bom[] = { 0xef, 0xbb, 0xbf };
	size_t b = 0;
	bool comment = false, in_bom = true;

	for (;;) {
		int c = ref_get(r);

		if (in_bom && b < 3 && c == bom[b]) {
			b++;
			continue;
		}
		if (in_bom && b > 0 && b < 3)
			return false; /* git takes no part of a byte order mark */
		in_bom = false;
		if (c == '\n') {
			if (r->eof)
				return true;
			comment = false;
			continue;
		}
		if (comment || sp(c))
			continue;
		if (c == '#' || c == ';') {
			comment = true;
			continue;
		}
		if (c == '[') {
			if (!ref_section(r))
				return false;
			continue;
		}
		if (!alpha(c) || ref_entry(r, c) < 0)
			return false;
	}
}

static bool ref_read(struct ref *r, const unsigned char *d, size_t n)
{
	*r = (struct ref){ .d = d, .n = n };
	r->var = malloc(n + 16);
	r->val = malloc(n + 16);
	r->old = malloc(n + 16);
	if (!r->var || !r->val || !r->old)
		abort();
	return ref_parse(r);
}

static void ref_done(struct ref *r)
{
	for (int i = 0; i < 2 * KINDS; i++)
		cd_strv_free(r->found[i]);
	for (int k = 0; k < KINDS; k++)
		cd_strv_free(r->answer[k]);
	free(r->var);
	free(r->val);
	free(r->old);
}

/* --- the checks --- */

static const char *const kind_names[KINDS] = { "core.hooksPath", "include path", "command",
					       "submodule path", "object format" };

static void reader(const unsigned char *d, size_t n, struct cd_gitconfig *c)
{
	if (cd_gitconfig_read((const char *)d, n, c) < 0)
		broken("the reader failed on %zu bytes", n);
}

static size_t count(char **v)
{
	return v ? cd_strv_len(v) : 0;
}

/* got starts with want (exact: is want) */
static void starts_with(char **got, char **want, bool exact, const char *what)
{
	size_t i;

	for (i = 0; i < count(want); i++)
		if (i >= count(got) || strcmp(got[i], want[i]) != 0)
			broken("%s #%zu: git reads \"%s\", the reader %s%s%s", what, i + 1, want[i],
			       i < count(got) ? "\"" : "nothing", i < count(got) ? got[i] : "",
			       i < count(got) ? "\"" : "");
	if (exact && count(got) > i)
		broken("%s #%zu: the reader finds \"%s\", git nothing more", what, i + 1, got[i]);
}

static bool same(char **a, char **b)
{
	if (count(a) != count(b))
		return false;
	for (size_t i = 0; i < count(a); i++)
		if (strcmp(a[i], b[i]) != 0)
			return false;
	return true;
}

/* the reading of d, n must be want's */
static void reads_as(const unsigned char *d, size_t n, const struct cd_gitconfig *want,
		     const char *what)
{
	struct cd_gitconfig c;

	reader(d, n, &c);
	for (int k = 0; k < KINDS; k++)
		if (!same(c.v[k], want->v[k]))
			broken("%s: %zu values of kind %s, not %zu", what, count(c.v[k]),
			       kind_names[k], count(want->v[k]));
	cd_gitconfig_done(&c);
}

/* one more value of each kind */
static const char more[] = "[core]\n\thooksPath = more-hooks\n[include]\n\tpath = more.inc\n"
			   "[core]\n\tfsmonitor = more-fsmonitor\n[submodule \"m\"]\n"
			   "\tpath = more-sub\n[extensions]\n\tobjectFormat = more-format\n";
static const char *const more_values[KINDS] = { "more-hooks", "more.inc", "more-fsmonitor",
						"more-sub", "more-format" };

/* got is want, then last */
static bool then(char **got, char **want, const char *last)
{
	size_t n = count(want);

	if (count(got) != n + 1 || strcmp(got[n], last) != 0)
		return false;
	for (size_t i = 0; i < n; i++)
		if (strcmp(got[i], want[i]) != 0)
			return false;
	return true;
}

/* T, a blank line (after a blank, if T ends with a lone '\r' that the newline would pair
 * with), then more: T's values, then more's */
static void check_framing(const unsigned char *d, size_t n, const struct cd_gitconfig *want)
{
	const char *sep = n && d[n - 1] == '\r' ? " \n\n" : "\n\n";
	size_t sl = strlen(sep), ml = strlen(more);
	unsigned char *t = malloc(n + sl + ml);
	struct cd_gitconfig c;

	if (!t)
		abort();
	memcpy(t, d, n);
	memcpy(t + n, sep, sl);
	memcpy(t + n + sl, more, ml);
	reader(t, n + sl + ml, &c);
	for (int k = 0; k < KINDS; k++)
		if (!then(c.v[k], want->v[k], more_values[k]))
			broken("the input, a blank line, then more config: not the input's "
			       "values of kind %s, then the more's (%zu values, not %zu + 1)",
			       kind_names[k], count(c.v[k]), count(want->v[k]));
	cd_gitconfig_done(&c);
	free(t);
}

/* T with "\r\n" for each "\n" (T without '\r'), and after a byte order mark (T without one),
 * reads as T */
static void check_same(const unsigned char *d, size_t n, const struct cd_gitconfig *want)
{
	unsigned char *t = malloc(2 * n + 3);
	size_t k = 0;

	if (!t)
		abort();
	if (!memchr(d, '\r', n)) {
		for (size_t i = 0; i < n; i++) {
			if (d[i] == '\n')
				t[k++] = '\r';
			t[k++] = d[i];
		}
		reads_as(t, k, want, "with \"\\r\\n\" line ends");
	}
	if (!n || d[0] != 0xef) {
		memcpy(t, "\xef\xbb\xbf", 3);
		memcpy(t + 3, d, n);
		reads_as(t, n + 3, want, "after a byte order mark");
	}
	free(t);
}

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
	struct cd_gitconfig c;
	struct ref r;
	bool whole;

	if (size > FUZZ_MAX_INPUT)
		return 0;
	reader(data, size, &c);
	for (int k = 0; k < KINDS; k++)
		for (size_t i = 0; i < count(c.v[k]); i++)
			if (strlen(c.v[k][i]) > size)
				broken("a value of kind %s longer than the input", kind_names[k]);
	whole = ref_read(&r, data, size);
	for (int k = 0; k < KINDS; k++)
		starts_with(c.v[k], r.answer[k], whole, kind_names[k]);
	ref_done(&r);
	check_framing(data, size, &c);
	check_same(data, size, &c);
	cd_gitconfig_done(&c);
	return 0;
}

#ifdef CORDON_FUZZ_REPLAY
/* --- outside the fuzzer: the second reading against git itself --- */
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include "replay.h"

extern char **environ;

static int git_old; /* HOOK_OLD: this git turns each blank inside a value into a space */
static const char *artifacts;
static unsigned mismatches, failed, taken; /* each difference; the inputs with one; git's */

/* `git config -z --file path --list`: its exit status, and the values of each kind, in order */
static int git_read(const char *path, char ***ret)
{
	char *argv[] = { "git", "config", "-z", "--file", (char *)path, "--list", NULL };
	posix_spawn_file_actions_t fa;
	char *out = NULL, buf[4096];
	size_t len = 0;
	int p[2], status;
	ssize_t n;
	pid_t pid;

	if (pipe2(p, O_CLOEXEC) < 0 || posix_spawn_file_actions_init(&fa) != 0)
		abort();
	posix_spawn_file_actions_adddup2(&fa, p[1], 1);
	posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
	if (posix_spawnp(&pid, "git", &fa, NULL, argv, environ) != 0) {
		perror("fuzz-gitconfig: git");
		exit(2);
	}
	posix_spawn_file_actions_destroy(&fa);
	close(p[1]);
	while ((n = read(p[0], buf, sizeof(buf))) > 0) {
		if (!(out = realloc(out, len + (size_t)n + 1)))
			abort();
		memcpy(out + len, buf, (size_t)n);
		len += (size_t)n;
	}
	close(p[0]);
	if (waitpid(pid, &status, 0) < 0)
		abort();
	/* records "key\nvalue\0", or "key\0" without a value */
	for (size_t i = 0; i < len;) {
		char *rec = out + i, *nl;
		int k;

		i += strnlen(rec, len - i) + 1;
		nl = strchr(rec, '\n');
		if (!nl)
			continue;
		*nl = '\0';
		k = cd_gitconfig_kind(rec);
		if (k >= 0)
			push(&ret[k], nl + 1);
	}
	free(out);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
}

static void mismatch(const unsigned char *d, size_t n, const char *fmt, const char *a,
		     const char *b)
{
	char path[4096];
	FILE *f;

	if (++mismatches > 20)
		return; /* counted; enough said */
	fprintf(stderr, "fuzz-gitconfig: the second reading is not git's: ");
	fprintf(stderr, fmt, a, b);
	if (artifacts &&
	    snprintf(path, sizeof(path), "%s/git-mismatch-%u", artifacts, mismatches) <
		(int)sizeof(path) &&
	    (f = fopen(path, "wbe"))) {
		fwrite(d, 1, n, f);
		fclose(f);
		fprintf(stderr, " (input: %s)", path);
	}
	fputc('\n', stderr);
}

/* one input, in the file path: the target's checks, then git against the second reading */
static void against_git(const char *path, const unsigned char *d, size_t n)
{
	char **git[KINDS] = { NULL };
	int status = git_read(path, git);
	struct ref r;
	bool whole = ref_read(&r, d, n);
	unsigned before = mismatches;

	LLVMFuzzerTestOneInput(d, n);
	if (whole != (status == 0))
		mismatch(d, n, "git %s the file, the second reading %s it",
			 status ? "refuses" : "takes", whole ? "takes" : "refuses");
	for (int k = 0; whole && status == 0 && k < KINDS; k++) {
		char **want = r.found[2 * k + git_old];

		for (size_t i = 0; i < count(git[k]) || i < count(want); i++)
			if (i >= count(git[k]) || i >= count(want) || strcmp(git[k][i], want[i]))
				mismatch(d, n, "git reads \"%s\", the second reading \"%s\"",
					 i < count(git[k]) ? git[k][i] : "(nothing)",
					 i < count(want) ? want[i] : "(nothing)");
	}
	failed += mismatches != before;
	taken += status == 0;
	ref_done(&r);
	for (int k = 0; k < KINDS; k++)
		cd_strv_free(git[k]);
}

static int against_git_file(const char *path)
{
	unsigned char *d;
	size_t n;

	d = replay_read(path, &n);
	if (!d)
		return -1;
	if (n <= FUZZ_MAX_INPUT)
		against_git(path, d, n);
	free(d);
	return 1;
}

/* a file, or the files of a directory: how many, or -1 */
static int against_git_path(const char *path)
{
	struct stat st;
	DIR *d;
	int n = 0;

	if (stat(path, &st) < 0)
		return -1;
	if (!S_ISDIR(st.st_mode))
		return against_git_file(path);
	if (!(d = opendir(path)))
		return -1;
	for (struct dirent *e; (e = readdir(d));) {
		char sub[4096];

		if (e->d_name[0] == '.' ||
		    snprintf(sub, sizeof(sub), "%s/%s", path, e->d_name) >= (int)sizeof(sub) ||
		    stat(sub, &st) < 0 || !S_ISREG(st.st_mode))
			continue;
		n += against_git_file(sub) > 0;
	}
	closedir(d);
	return n;
}

/* Configs made of git's tokens at random (seeded): lines of a header, an entry, a comment or
 * any tokens, each written to tmp and compared */
static const char *const tokens[] = {
	"[", "]", "core", "include", "includeIf", "CoRe", "hooksPath", "path", "=", " ", "\t",
	"alias", "fsmonitor", "submodule", "!",
	"\n", "\r\n", "\r", "\"", "\\", "#", ";", "x", "a b", "/", ".", "-", "\xef\xbb\xbf", "\\t",
	"\\n", "\\b", "\\\"", "\\\\", "\\q", "\\\n", "\\\r\n", "\"gitdir:x/\"", "0", "\v",
	"\xc3\xa9",
};
static const char *const headers[] = {
	"[core]", "[Core]", "[include]", "[includeIf \"gitdir:x/\"]", "[core \"x\"]", "[core.x]",
	"[includeIf.x]", "[includeif]", "[ \"x\"]", "[a][core]", "[core]\t", "[core] ",
	"[includeIf \"a\\\"]b\"]", "[includeIf \"]\"]", "[x \"]x=\\q\"]", "[core]hooksPath=h",
	"[alias]", "[pager]", "[diff \"x\"]", "[filter \"lfs\"]", "[submodule \"s.t\"]",
	"[extensions]", "[credential \"https://a.b\"]", "[Diff.X]", "[core]fsmonitor=f",
};
static const char *const keys[] = { "\thooksPath", "\tpath", "hookspath", "PATH", "\tother",
				    "\tfsmonitor", "\ttextconv", "\tclean", "st", "\tobjectFormat",
				    "\thelper", "\tlog" };
static const char *const values[] = {
	"x", "a b", "\t", " ", "\"", "\" q \"", "\\t", "\\n", "\\\\", "\\\"", "\\q", "\\\n",
	"\\\r\n", "#c", ";c", "\r", "y", "\\", "\"#\"",
};

#define PICK(a) (a)[rand() % (int)CD_ELEMENTSOF(a)]

static size_t add(unsigned char *d, size_t len, const char *s)
{
	size_t sl = strlen(s);

	memcpy(d + len, s, sl);
	return len + sl;
}

static size_t random_line(unsigned char *d, size_t len)
{
	int what = rand() % 10;

	if (what < 3)
		return add(d, len, PICK(headers));
	if (what < 8) {
		len = add(d, len, PICK(keys));
		len = add(d, len, rand() % 2 ? " = " : "=");
		for (int t = rand() % 6; t > 0; t--)
			len = add(d, len, PICK(values));
		return len;
	}
	if (what == 8)
		return add(d, len, rand() % 2 ? "# a comment" : "; \\");
	for (int t = 1 + rand() % 4; t > 0; t--)
		len = add(d, len, PICK(tokens));
	return len;
}

static int random_configs(unsigned n, unsigned seed, const char *tmp)
{
	unsigned char *d = malloc(4096);

	if (!d)
		abort();
	srand(seed);
	for (unsigned i = 0; i < n; i++) {
		size_t len = rand() % 8 ? 0 : add(d, 0, "\xef\xbb\xbf");
		int fd;

		for (int l = 1 + rand() % 6; l > 0; l--) {
			len = random_line(d, len);
			if (l > 1 || rand() % 2)
				len = add(d, len, rand() % 8 ? "\n" : "\r\n");
		}
		if (len && rand() % 32 == 0)
			d[rand() % len] = '\0'; /* a NUL somewhere */
		fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
		if (fd < 0 || write(fd, d, len) != (ssize_t)len || close(fd) < 0)
			abort();
		against_git(tmp, d, len);
	}
	free(d);
	unlink(tmp);
	return 0;
}

/* whether this git turns a tab inside a value into a space (before 2.45) */
static void probe_git(const char *tmp)
{
	char **git[KINDS] = { NULL };
	FILE *f = fopen(tmp, "we");

	if (!f || fputs("[core]\n\thooksPath = a\tb\n", f) < 0 || fclose(f) != 0 ||
	    git_read(tmp, git) != 0 || count(git[0]) != 1) {
		fprintf(stderr, "fuzz-gitconfig: git config does not work\n");
		exit(2);
	}
	git_old = strcmp(git[0][0], "a b") == 0;
	for (int k = 0; k < KINDS; k++)
		cd_strv_free(git[k]);
	unlink(tmp);
}

/* fuzz-gitconfig [--git [--random N] [--seed S] [--artifacts DIR]] FILE|DIR... */
int main(int argc, char **argv)
{
	unsigned n_random = 0, seed = 1, files = 0;
	char tmp[4096];
	int i = 1, fd;

	if (argc < 2 || strcmp(argv[1], "--git") != 0)
		return replay_main("fuzz-gitconfig", argc, argv);
	for (i = 2; i + 1 < argc && strncmp(argv[i], "--", 2) == 0; i += 2) {
		if (strcmp(argv[i], "--random") == 0)
			n_random = (unsigned)strtoul(argv[i + 1], NULL, 10);
		else if (strcmp(argv[i], "--seed") == 0)
			seed = (unsigned)strtoul(argv[i + 1], NULL, 10);
		else if (strcmp(argv[i], "--artifacts") == 0)
			artifacts = argv[i + 1];
		else
			break;
	}
	/* the input in hand: in the artifacts, where it stays if a check abort()s */
	snprintf(tmp, sizeof(tmp), "%s/input-XXXXXX", artifacts ? artifacts : "/tmp");
	fd = mkstemp(tmp);
	if (fd < 0)
		return 2;
	close(fd);
	probe_git(tmp);
	for (; i < argc; i++) {
		int n = against_git_path(argv[i]);

		if (n < 0) {
			fprintf(stderr, "fuzz-gitconfig: cannot read %s\n", argv[i]);
			return 2;
		}
		files += (unsigned)n;
	}
	random_configs(n_random, seed, tmp);
	printf("fuzz-gitconfig: the second reading is git's (%s blanks inside a value) on %u of %u "
	       "configs (%u files, %u generated with seed %u; git takes %u)\n",
	       git_old ? "spaces for" : "keeps", files + n_random - failed, files + n_random, files,
	       n_random, seed, taken);
	return mismatches ? 1 : 0;
}
#endif
