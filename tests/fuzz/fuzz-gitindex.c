/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * fuzz-gitindex.c - libFuzzer target for the reader of git's index, cd_gitindex_parse
 * (src/sandbox/gitindex.c), which the supervisor runs, as root, on indexes a sandbox wrote, to
 * find the submodules git would enter. Missing one git reads is a hole, so besides the
 * sanitizers the target abort()s when:
 *  - the input read as an index, with either hash length: the reader fails with other than
 *    -EINVAL (-ENOMEM aside), gives an empty path or one longer than the input, or a gitlink
 *    that its reading of every entry (CD_GITINDEX_ALL) does not have; read through a source
 *    that gives a few bytes at a time (cd_gitindex_read), a different answer;
 *  - the input read as a recipe (its first byte: the version and the hash's length; then
 *    entries of a mode, flags and a name) and written here as git writes an index (after
 *    read-cache.c's do_write_index and ce_write_entry: version 3 where an entry has extended
 *    flags, the padding, version 4's names made from the previous one, 0xfff for a long name) is
 *    not read back as exactly its gitlinks, in order; nor when the same index carries an offset
 *    table (IEOT, EOIE) as git with index.threads writes it.
 * Built with -DCORDON_FUZZ_REPLAY (replay.h), `fuzz-gitindex --git [--random N] [--seed S]
 * FILE|DIR...` also puts each input, and N recipes made at random, as the index of a scratch
 * repository and compares with `git ls-files -s -z`: every gitlink git lists must be read, where
 * the reader reads the index (it refuses one that git reads past its end into memory that is not
 * the file's, or with a name that does not end where git ends it: git's reading is undefined
 * there), and an index written here must be read (tests/fuzz/run does it after fuzzing, on the
 * corpus).
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gitindex.h"
#include "util.h"

#define FUZZ_MAX_INPUT (64 << 10)

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);

_printf_(1, 2) _Noreturn static void broken(const char *fmt, ...)
{
	va_list ap;

	fputs("fuzz-gitindex: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	abort();
}

static bool has(const struct cd_gitindex *x, const char *p)
{
	for (size_t i = 0; i < x->n; i++)
		if (strcmp(x->paths[i], p) == 0)
			return true;
	return false;
}

/* The input as an index file */
static void raw(const unsigned char *d, size_t n, size_t h)
{
	struct cd_gitindex links, all;
	int r = cd_gitindex_parse(d, n, h, 0, &links), ra;

	if (r < 0 && r != -EINVAL && r != -ENOMEM)
		broken("the reader failed with %d", r);
	if (r < 0)
		return;
	for (size_t i = 0; i < links.n; i++)
		if (!links.paths[i][0] || strlen(links.paths[i]) > n)
			broken("a gitlink's path is empty or longer than the input");
	ra = cd_gitindex_parse(d, n, h, CD_GITINDEX_ALL, &all);
	if (ra == 0) {
		for (size_t i = 0; i < links.n; i++)
			if (!has(&all, links.paths[i]))
				broken("gitlink \"%s\" is not among every entry's paths",
				       links.paths[i]);
		cd_gitindex_done(&all);
	} else if (ra != -ENOMEM) {
		broken("every entry's reading failed (%d) where the gitlinks' did not", ra);
	}
	cd_gitindex_done(&links);
}

/* --- an index written as git writes it --- */

struct ent {
	uint32_t mode;
	uint16_t ext; /* skip-worktree 0x4000, intent-to-add 0x2000 */
	unsigned stage;
	char *name;
};

struct recipe {
	unsigned version;
	size_t h;
	bool ieot;
	struct ent *e;
	size_t n;
};

static void recipe_done(struct recipe *rc)
{
	for (size_t i = 0; i < rc->n; i++)
		free(rc->e[i].name);
	free(rc->e);
}

/* first byte: version (2, 3, 4), hash length, an offset table; then per entry: a mode byte, a
 * flags byte, a length byte and that many bytes of name (a NUL is no byte of a name git
 * writes: 'a'); flags bit 8 makes the name 4095 bytes (0xfff in its flags: read up to its NUL;
 * a longer one names no path the reader takes: gitindex.h) */
static void recipe_read(const unsigned char *d, size_t n, struct recipe *rc)
{
	static const uint32_t modes[] = { 0100644, 0120000, 0160000, 0100755 };
	size_t i = 1;

	*rc = (struct recipe){ .version = 2 + d[0] % 3, .h = d[0] & 4 ? 32 : 20,
			       .ieot = d[0] & 8 };
	while (i + 3 <= n && rc->n < 512) {
		size_t len = d[i + 2] % 64 + 1, full;
		struct ent *e;

		if (i + 3 + len > n)
			break;
		full = d[i + 1] & 8 ? PATH_MAX - 1 : len;
		rc->e = realloc(rc->e, (rc->n + 1) * sizeof(*rc->e));
		if (!rc->e)
			abort();
		e = &rc->e[rc->n++];
		*e = (struct ent){ .mode = modes[d[i] % 4],
				   .ext = (uint16_t)((d[i + 1] & 1 ? 0x4000 : 0) |
						     (d[i + 1] & 2 ? 0x2000 : 0)),
				   .stage = (d[i + 1] >> 4) & 3, .name = malloc(full + 1) };
		if (!e->name)
			abort();
		for (size_t k = 0; k < full; k++)
			e->name[k] = d[i + 3 + k % len] ? (char)d[i + 3 + k % len] : 'a';
		e->name[full] = '\0';
		i += 3 + len;
	}
}

struct buf {
	uint8_t *b;
	size_t n, cap;
};

static void put(struct buf *b, const void *p, size_t n)
{
	if (b->n + n > b->cap) {
		b->cap = 2 * (b->n + n) + 64;
		b->b = realloc(b->b, b->cap);
		if (!b->b)
			abort();
	}
	memcpy(b->b + b->n, p, n);
	b->n += n;
}

static void put32(struct buf *b, uint32_t v)
{
	uint8_t t[4] = { (uint8_t)(v >> 24), (uint8_t)(v >> 16), (uint8_t)(v >> 8), (uint8_t)v };

	put(b, t, 4);
}

static void put16(struct buf *b, uint16_t v)
{
	uint8_t t[2] = { (uint8_t)(v >> 8), (uint8_t)v };

	put(b, t, 2);
}

/* git's encode_varint */
static void put_varint(struct buf *b, uint64_t v)
{
	uint8_t t[16];
	size_t pos = sizeof(t) - 1;

	t[pos] = v & 127;
	while (v >>= 7)
		t[--pos] = (uint8_t)(128 | (--v & 127));
	put(b, t + pos, sizeof(t) - pos);
}

/* ce_write_entry: prev is the previous name (version 4), its first byte poisoned at the start of
 * an offset table's block, as git does */
static void write_entry(struct buf *b, unsigned version, size_t h, const struct ent *e,
			char **prev, size_t *prev_len)
{
	static const uint8_t oid[32] = { [0 ... 31] = 0x5a };
	size_t start = b->n, len = strlen(e->name), common = 0;
	uint8_t stat[40] = { 0 };

	stat[24] = (uint8_t)(e->mode >> 24);
	stat[25] = (uint8_t)(e->mode >> 16);
	stat[26] = (uint8_t)(e->mode >> 8);
	stat[27] = (uint8_t)e->mode;
	put(b, stat, sizeof(stat));
	put(b, oid, h);
	put16(b, (uint16_t)((len < 0xfff ? len : 0xfff) | e->stage << 12 | (e->ext ? 0x4000 : 0)));
	if (e->ext)
		put16(b, e->ext);
	if (version == 4) {
		while (e->name[common] && common < *prev_len && e->name[common] == (*prev)[common])
			common++;
		put_varint(b, *prev_len - common);
		put(b, e->name + common, len - common + 1);
		free(*prev);
		*prev = strdup(e->name);
		*prev_len = len;
		if (!*prev)
			abort();
		return;
	}
	put(b, e->name, len);
	do
		put(b, "", 1);
	while ((b->n - start) % 8);
}

/* The index of rc, as git writes it; with an offset table of two blocks where rc says so */
static void recipe_write(const struct recipe *rc, struct buf *b)
{
	unsigned version = rc->version;
	size_t prev_len = 0, split = rc->n / 2, offsets[2] = { 12, 12 }, ext_at;
	char *prev = NULL;

	for (size_t i = 0; version == 2 && i < rc->n; i++)
		if (rc->e[i].ext)
			version = 3; /* as git: 3 when an entry needs it */
	*b = (struct buf){ 0 };
	put(b, "DIRC", 4);
	put32(b, version);
	put32(b, (uint32_t)rc->n);
	for (size_t i = 0; i < rc->n; i++) {
		if (rc->ieot && i == split && i) {
			offsets[1] = b->n;
			if (prev)
				prev[0] = '\0';
		}
		write_entry(b, version, rc->h, &rc->e[i], &prev, &prev_len);
	}
	free(prev);
	ext_at = b->n;
	if (rc->ieot && rc->n) {
		uint8_t e[64] = { 0 };

		put(b, "IEOT", 4);
		put32(b, split ? 20 : 12);
		put32(b, 1);
		put32(b, (uint32_t)offsets[0]);
		put32(b, (uint32_t)(split ? split : rc->n));
		if (split) {
			put32(b, (uint32_t)offsets[1]);
			put32(b, (uint32_t)(rc->n - split));
		}
		put(b, "EOIE", 4);
		put32(b, (uint32_t)(4 + rc->h));
		put32(b, (uint32_t)ext_at);
		put(b, e, rc->h);
	}
	{
		static const uint8_t sum[32];

		put(b, sum, rc->h);
	}
}

static void structured(const unsigned char *d, size_t n)
{
	struct recipe rc;
	struct cd_gitindex x;
	struct buf b;
	size_t k = 0;
	int r;

	if (n < 1)
		return;
	recipe_read(d, n, &rc);
	recipe_write(&rc, &b);
	r = cd_gitindex_parse(b.b, b.n, rc.h, 0, &x);
	if (r == -ENOMEM)
		goto out;
	if (r < 0)
		broken("an index written as git writes it (version %u, %zu entries) is refused "
		       "(%d)", rc.version, rc.n, r);
	for (size_t i = 0; i < rc.n; i++) {
		if (rc.e[i].mode != 0160000)
			continue;
		if (k >= x.n || strcmp(x.paths[k], rc.e[i].name) != 0)
			broken("gitlink #%zu \"%.40s\": read as \"%.40s\"", k + 1, rc.e[i].name,
			       k < x.n ? x.paths[k] : "(nothing)");
		k++;
	}
	/* with an offset table, both readings: the gitlinks twice */
	if (x.n != (rc.ieot && rc.n ? 2 * k : k))
		broken("%zu paths read, %zu gitlinks written%s", x.n, k,
		       rc.ieot ? " (an offset table: twice)" : "");
	cd_gitindex_done(&x);
out:
	free(b.b);
	recipe_done(&rc);
}

/* Read through a source that gives at most a few bytes at a time: the same answer */
struct trickle {
	const unsigned char *d;
	size_t n, step;
};

static ssize_t trickle_pread(void *ctx, void *buf, size_t n, uint64_t off)
{
	const struct trickle *t = ctx;

	if (off >= t->n)
		return 0;
	if (n > t->n - off)
		n = (size_t)(t->n - off);
	if (n > t->step)
		n = t->step;
	memcpy(buf, t->d + off, n);
	return (ssize_t)n;
}

static void trickled(const unsigned char *d, size_t n)
{
	struct trickle t = { d, n, 1 + (n ? d[n - 1] % 7 : 0) };
	const struct cd_gitindex_src src = { trickle_pread, &t, n };
	struct cd_gitindex a, b;
	int ra = cd_gitindex_parse(d, n, 20, 0, &a), rb = cd_gitindex_read(&src, 20, 0, &b);

	if (ra != rb || (ra == 0 && a.n != b.n))
		broken("read %zu bytes at a time, not the same answer (%d, %d)", t.step, ra, rb);
	for (size_t i = 0; ra == 0 && i < a.n; i++)
		if (strcmp(a.paths[i], b.paths[i]) != 0)
			broken("read a few bytes at a time: \"%s\", not \"%s\"", b.paths[i],
			       a.paths[i]);
	if (ra == 0) {
		cd_gitindex_done(&a);
		cd_gitindex_done(&b);
	}
}

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
	if (size > FUZZ_MAX_INPUT)
		return 0;
	raw(data, size, 20);
	raw(data, size, 32);
	trickled(data, size);
	structured(data, size);
	return 0;
}

#ifdef CORDON_FUZZ_REPLAY
/* --- outside the fuzzer: the reader against git itself --- */
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include "replay.h"

extern char **environ;

static char repo[4096];
static const char *artifacts;
static unsigned compared, taken, refused, mismatches;
static bool recipe; /* the input is an index written here as git writes it */

/* an input that differs, kept in the artifacts */
static void keep(const unsigned char *d, size_t n)
{
	char path[4096];
	FILE *f;

	if (!artifacts || mismatches > 20 ||
	    snprintf(path, sizeof(path), "%s/git-mismatch-%u", artifacts, mismatches) >=
		    (int)sizeof(path) ||
	    !(f = fopen(path, "wbe")))
		return;
	fwrite(d, 1, n, f);
	fclose(f);
	fprintf(stderr, "fuzz-gitindex: (input: %s)\n", path);
}

/* `git ls-files -s -z` in the scratch repository: its exit status, its gitlinks */
static int git_links(char ***ret)
{
	char *argv[] = { "git", "-C", repo, "ls-files", "-s", "-z", NULL };
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
		perror("fuzz-gitindex: git");
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
	for (size_t i = 0; i < len;) { /* "MODE OID STAGE\tPATH\0" */
		char *rec = out + i, *tab = memchr(rec, '\t', strnlen(rec, len - i));

		i += strnlen(rec, len - i) + 1;
		if (tab && strncmp(rec, "160000 ", 7) == 0 && cd_strv_push(ret, tab + 1) < 0)
			abort();
	}
	free(out);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
}

static void against_git(const unsigned char *d, size_t n)
{
	char path[4200], **git = NULL;
	struct cd_gitindex x;
	int fd, status, r;

	LLVMFuzzerTestOneInput(d, n);
	snprintf(path, sizeof(path), "%s/.git/index", repo);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0 || write(fd, d, n) != (ssize_t)n || close(fd) < 0)
		abort();
	status = git_links(&git);
	compared++;
	if (status != 0)
		goto out;
	taken++;
	r = cd_gitindex_parse(d, n, 20, 0, &x);
	if (r < 0 && recipe) {
		mismatches++;
		fprintf(stderr, "fuzz-gitindex: an index written as git writes it (%zu bytes) is "
				"refused\n", n);
		keep(d, n);
	}
	if (r < 0) { /* git reads past the file, or an unterminated name: undefined */
		refused++;
		goto out;
	}
	for (size_t i = 0; git && git[i]; i++)
		/* "./": an empty name, the worktree's top, whose repository is the one read */
		if (strcmp(git[i], "./") != 0 && !has(&x, git[i])) {
			mismatches++;
			fprintf(stderr, "fuzz-gitindex: git lists gitlink \"%s\", the reader not\n",
				git[i]);
			keep(d, n);
		}
	cd_gitindex_done(&x);
out:
	cd_strv_free(git);
}

static int against_git_path(const char *path)
{
	struct stat st;
	unsigned char *d;
	size_t n;
	DIR *dir;
	int count = 0;

	if (stat(path, &st) < 0)
		return -1;
	if (!S_ISDIR(st.st_mode)) {
		if (!(d = replay_read(path, &n)))
			return -1;
		if (n <= FUZZ_MAX_INPUT)
			against_git(d, n);
		free(d);
		return 1;
	}
	if (!(dir = opendir(path)))
		return -1;
	for (struct dirent *e; (e = readdir(dir));) {
		char sub[4096];

		if (e->d_name[0] == '.' ||
		    snprintf(sub, sizeof(sub), "%s/%s", path, e->d_name) >= (int)sizeof(sub))
			continue;
		count += against_git_path(sub) > 0;
	}
	closedir(dir);
	return count;
}

/* Recipes at random (SHA-1: the scratch repository's), names sorted as git keeps them */
static int cmp_ent(const void *a, const void *b)
{
	const struct ent *x = a, *y = b;
	int c = strcmp(x->name, y->name);

	return c ? c : (int)x->stage - (int)y->stage;
}

static void random_recipes(unsigned count, unsigned seed)
{
	static const char *const names[] = { "a", "b", "sub", "x/y", "x/z", "lib/m", "lib/n/o",
					      "dir/sub", "dir/subx", "z" };

	srand(seed);
	for (unsigned i = 0; i < count; i++) {
		struct recipe rc = { .version = 2 + (unsigned)rand() % 3, .h = 20,
				     .ieot = rand() % 4 == 0 };
		size_t n = 0;
		struct buf b;

		rc.e = calloc(CD_ELEMENTSOF(names), sizeof(*rc.e));
		for (size_t k = 0; rc.e && k < CD_ELEMENTSOF(names); k++) {
			static const uint32_t modes[] = { 0100644, 0120000, 0160000, 0100755 };

			if (rand() % 2)
				continue;
			rc.e[n] = (struct ent){ .mode = modes[rand() % 4],
						.ext = rand() % 4 ? 0 : 0x4000,
						.name = strdup(names[k]) };
			if (!rc.e[n++].name)
				abort();
		}
		rc.n = n;
		qsort(rc.e, rc.n, sizeof(*rc.e), cmp_ent);
		recipe_write(&rc, &b);
		recipe = true;
		against_git(b.b, b.n);
		recipe = false;
		free(b.b);
		recipe_done(&rc);
	}
}

/* fuzz-gitindex [--git [--random N] [--seed S] [--artifacts DIR]] FILE|DIR... */
int main(int argc, char **argv)
{
	unsigned n_random = 0, seed = 1;
	char cmd[4200];
	int i;

	if (argc < 2 || strcmp(argv[1], "--git") != 0)
		return replay_main("fuzz-gitindex", argc, argv);
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
	snprintf(repo, sizeof(repo), "/tmp/fuzz-gitindex-XXXXXX");
	if (!mkdtemp(repo))
		return 2;
	snprintf(cmd, sizeof(cmd), "git init -q '%s'", repo);
	if (system(cmd) != 0) {
		fprintf(stderr, "fuzz-gitindex: git init does not work\n");
		return 2;
	}
	for (; i < argc; i++)
		if (against_git_path(argv[i]) < 0) {
			fprintf(stderr, "fuzz-gitindex: cannot read %s\n", argv[i]);
			return 2;
		}
	random_recipes(n_random, seed);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", repo);
	if (system(cmd) != 0)
		return 2;
	printf("fuzz-gitindex: every gitlink git lists is read, in %u indexes (git reads %u, of "
	       "which the reader refuses %u where git reads past the file or an unterminated name; "
	       "%u written with seed %u)\n",
	       compared - (mismatches ? 1 : 0), taken, refused, n_random, seed);
	return mismatches ? 1 : 0;
}
#endif
