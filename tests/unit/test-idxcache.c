/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * test-idxcache.c - the git index cache (idxcache.h): an entry's format both ways and its
 * strict reading (every byte changed, every length cut, numbers not canonical, bounds); the key
 * (device, inode, size, mtime, ctime each tell a new state) and the racy rule (stamps within the
 * filesystem's granularity and two ticks of the reading are not trusted); a reading made now of
 * an index written now is racy, and the sweep then reads the index again even where its stat
 * did not move. TAP.
 */
#include <errno.h>
#include <fcntl.h>
#include <nettle/sha2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "config.h"
#include "idxcache.h"
#include "protect.h"
#include "protect_git.h"

#include "../lib/tap.h"

#define TICK 4000000ll /* 4 ms: HZ=250 */

static const struct cd_idxcache_entry base = {
	.key = { .dev = 0xfe00, .ino = 123456, .size = 8000672,
		 .mtime_sec = 1796550945, .mtime_nsec = 221882901,
		 .ctime_sec = 1796550945, .ctime_nsec = 226495760,
		 .hash_len = 20, .flags = 0 },
	.scanned_sec = 1796550955, .scanned_nsec = 1, /* ten seconds later */
};

static char *paths[] = { "modules/m0", "a b\nc", "\x01\xff/x", "d/", NULL };
static char *dirs[] = { "sparse/", NULL };

static struct cd_gitindex sample(void)
{
	struct cd_gitindex x = { .paths = paths, .n = 4, .version = 4, .split = true,
				 .nameless = true, .sparse = true, .dirs = dirs, .n_dirs = 1 };

	for (size_t i = 0; i < sizeof(x.shared); i++)
		x.shared[i] = (uint8_t)(i * 7 + 1);
	return x;
}

static bool same_strv(char **a, char **b, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!a || !b || strcmp(a[i], b[i]) != 0)
			return false;
	return (!a || !a[n]) && (!b || !b[n]);
}

static void test_round_trip(void)
{
	struct cd_gitindex x = sample(), y = { 0 };
	struct cd_idxcache_entry e = base, f = { 0 };
	char *buf = NULL;
	size_t len = 0;

	e.key.mtime_sec = -5; /* before 1970: stamps are signed */
	e.key.hash_len = 32;
	e.key.flags = CD_GITINDEX_ALL;
	ok(cd_idxcache_format(&e, &x, &buf, &len) == 0, "an entry formats");
	ok(cd_idxcache_parse(buf, len, &f, &y) == 0, "... and parses");
	ok(memcmp(&e, &f, sizeof(e)) == 0 && cd_idxcache_key_eq(&e.key, &f.key),
	   "... to the same key and reading time");
	ok(y.version == 4 && y.split && y.nameless && y.sparse &&
	   memcmp(x.shared, y.shared, sizeof(x.shared)) == 0, "... the same index facts");
	ok(y.n == 4 && same_strv(x.paths, y.paths, 4), "... the same gitlinks (newline, bytes)");
	ok(y.n_dirs == 1 && same_strv(x.dirs, y.dirs, 1), "... the same sparse directories");
	cd_gitindex_done(&y);
	free(buf);

	x = (struct cd_gitindex){ .version = 2 };
	ok(cd_idxcache_format(&base, &x, &buf, &len) == 0 &&
	   cd_idxcache_parse(buf, len, &f, &y) == 0 && y.n == 0 && !y.paths && !y.dirs,
	   "an index without gitlinks: none, as the reader gives none (NULL)");
	cd_gitindex_done(&y);
	free(buf);
}

/* Every byte changed, every length short of the whole, a byte more: refused */
static void test_strict(void)
{
	struct cd_gitindex x = sample(), y;
	struct cd_idxcache_entry f;
	char *buf = NULL;
	size_t len = 0, bad_flip = 0, bad_cut = 0;

	cd_idxcache_format(&base, &x, &buf, &len);
	for (size_t i = 0; i < len; i++) {
		for (int bit = 0; bit < 8; bit++) {
			buf[i] ^= (char)(1 << bit);
			if (cd_idxcache_parse(buf, len, &f, &y) != -EBADMSG) {
				bad_flip++;
				cd_gitindex_done(&y);
			}
			buf[i] ^= (char)(1 << bit);
		}
	}
	is_uint(bad_flip, 0, "every bit of an entry (%zu bytes) flipped: refused", len);
	for (size_t n = 0; n < len; n++)
		if (cd_idxcache_parse(buf, n, &f, &y) != -EBADMSG) {
			bad_cut++;
			cd_gitindex_done(&y);
		}
	is_uint(bad_cut, 0, "every length short of the whole: refused");
	buf = realloc(buf, len + 1);
	buf[len] = '\n';
	ok(cd_idxcache_parse(buf, len + 1, &f, &y) == -EBADMSG, "a byte more: refused");
	free(buf);
}

/* body, then its SHA-256 line: what a writer with the format but bad numbers would make */
static int parse_signed(const char *body, struct cd_gitindex *y)
{
	size_t len = strlen(body);
	char *buf = malloc(len + 80);
	struct sha256_ctx s;
	struct cd_idxcache_entry f;
	uint8_t d[32];
	int r;

	if (!buf)
		abort();
	sha256_init(&s);
	sha256_update(&s, len, (const uint8_t *)body);
	sha256_digest(&s, 32, d);
	memcpy(buf, body, len);
	len += (size_t)sprintf(buf + len, "sha256 ");
	for (int i = 0; i < 32; i++)
		len += (size_t)sprintf(buf + len, "%02x", d[i]);
	buf[len++] = '\n';
	r = cd_idxcache_parse(buf, len, &f, y);
	free(buf);
	return r;
}

#define HEAD  "cordon-gitindex-cache 1\n"
#define KEY   "key 65024 123 8000672 1796550945.221882902 1796550945.226495760 20 0\n"
#define SCAN  "scanned 1796550955.000000001\n"
#define INDEX "index 2 0 0 0 " \
	      "0000000000000000000000000000000000000000000000000000000000000000\n"

static void test_canonical(void)
{
	static const struct {
		const char *body, *what;
	} bad[] = {
		{ HEAD "key 065024 123 8000672 1796550945.221882902 1796550945.226495760 20 0\n"
		  SCAN INDEX, "a leading zero" },
		{ HEAD "key +65024 123 8000672 1796550945.221882902 1796550945.226495760 20 0\n"
		  SCAN INDEX, "a sign" },
		{ HEAD "key 65024 123 8000672 -0.221882902 1796550945.226495760 20 0\n" SCAN INDEX,
		  "-0 seconds" },
		{ HEAD "key 65024 123 8000672 1796550945.22188290 1796550945.226495760 20 0\n"
		  SCAN INDEX, "eight digits of nanoseconds" },
		{ HEAD "key 65024 123 8000672 1796550945.221882902 1796550945.226495760 21 0\n"
		  SCAN INDEX, "a hash of 21 bytes" },
		{ HEAD "key 65024 123 8000672 1796550945.221882902 1796550945.226495760 20 2\n"
		  SCAN INDEX, "an unknown flag" },
		{ HEAD "key 18446744073709551616 123 8000672 1796550945.221882902 "
		  "1796550945.226495760 20 0\n" SCAN INDEX, "a device past 64 bits" },
		{ HEAD "key 65024 123 9223372036854775808 1796550945.221882902 "
		  "1796550945.226495760 20 0\n" SCAN INDEX, "a size past off_t" },
		{ HEAD KEY SCAN "index 5 0 0 0 "
		  "0000000000000000000000000000000000000000000000000000000000000000\n",
		  "index version 5" },
		{ HEAD KEY SCAN "index 2 2 0 0 "
		  "0000000000000000000000000000000000000000000000000000000000000000\n",
		  "a flag of 2" },
		{ HEAD KEY SCAN "index 2 0 0 0 00\n", "a short shared hash" },
		{ HEAD KEY SCAN INDEX "p 6D\n", "uppercase hex" },
		{ HEAD KEY SCAN INDEX "p 6\n", "odd hex" },
		{ HEAD KEY SCAN INDEX "p \n", "an empty path" },
		{ HEAD KEY SCAN INDEX "p 610062\n", "a path with a NUL" },
		{ HEAD KEY SCAN INDEX "d 61\np 62\n", "a gitlink after a sparse directory" },
		{ HEAD KEY SCAN INDEX "x 61\n", "an unknown line" },
		{ HEAD KEY "scanned 1796550955.000000001 \n" INDEX, "a space more" },
		{ "cordon-gitindex-cache 2\n" KEY SCAN INDEX, "another version" },
	};
	struct cd_gitindex y;

	ok(parse_signed(HEAD KEY SCAN INDEX "p 61\nd 62\n", &y) == 0 && y.n == 1 &&
	   strcmp(y.paths[0], "a") == 0 && strcmp(y.dirs[0], "b") == 0,
	   "(control) an entry written by hand parses");
	cd_gitindex_done(&y);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		int r = parse_signed(bad[i].body, &y);

		ok(r == -EBADMSG, "refused, its SHA-256 right: %s", bad[i].what);
		if (r == 0)
			cd_gitindex_done(&y);
	}
}

/* Bounds: paths per entry, a path's length, the file's size */
static void test_bounds(void)
{
	struct cd_gitindex x = { .version = 2 }, y;
	struct cd_idxcache_entry f;
	char **v = calloc(CD_IDXCACHE_PATHS_MAX + 2, sizeof(*v));
	char *buf = NULL, *body, *p, longpath[PATH_MAX + 1];
	size_t len;
	int r;

	for (size_t i = 0; i <= CD_IDXCACHE_PATHS_MAX; i++)
		v[i] = "m";
	x.paths = v;
	x.n = CD_IDXCACHE_PATHS_MAX + 1;
	ok(cd_idxcache_format(&base, &x, &buf, &len) == -E2BIG,
	   "more than %u gitlinks: not kept", CD_IDXCACHE_PATHS_MAX);
	memset(longpath, 'a', PATH_MAX);
	longpath[PATH_MAX] = '\0';
	v[0] = longpath;
	v[1] = NULL;
	x.n = 1;
	ok(cd_idxcache_format(&base, &x, &buf, &len) == -E2BIG, "a path of PATH_MAX: not kept");

	/* the parser's own bounds, with the digest right */
	body = malloc(CD_IDXCACHE_FILE_MAX + 4096);
	p = body + sprintf(body, HEAD KEY SCAN INDEX);
	for (size_t i = 0; i <= CD_IDXCACHE_PATHS_MAX; i++)
		p += sprintf(p, "p 61\n");
	r = parse_signed(body, &y);
	ok(r == -EBADMSG, "an entry of %u paths: refused", CD_IDXCACHE_PATHS_MAX + 1);
	p = body + sprintf(body, HEAD KEY SCAN INDEX "p ");
	for (size_t i = 0; i < PATH_MAX; i++)
		p += sprintf(p, "61");
	sprintf(p, "\n");
	ok(parse_signed(body, &y) == -EBADMSG, "a path of PATH_MAX bytes: refused");
	free(body);
	buf = calloc(1, CD_IDXCACHE_FILE_MAX + 1);
	ok(cd_idxcache_parse(buf, CD_IDXCACHE_FILE_MAX + 1, &f, &y) == -EBADMSG,
	   "a file over %u bytes: refused", CD_IDXCACHE_FILE_MAX);
	free(buf);
	free(v);
}

/* Each field of the key tells a new state; the racy rule */
static void test_key(void)
{
	struct cd_idxcache_entry e = base;
	struct cd_idxcache_key k = base.key;
	struct stat st = { 0 };

	ok(cd_idxcache_trust(&e, &k, TICK), "the same key, stamps ten seconds old: trusted");
#define CHANGED(field, v, what)                                                                \
	do {                                                                                   \
		k = base.key;                                                                  \
		k.field = (v);                                                                 \
		ok(!cd_idxcache_trust(&e, &k, TICK), "%s: not trusted", what);               \
	} while (0)
	CHANGED(size, base.key.size + 1, "the size changed");
	CHANGED(size, base.key.size - 1, "the size shrunk");
	CHANGED(mtime_nsec, base.key.mtime_nsec + 1, "mtime one nanosecond later");
	CHANGED(mtime_sec, base.key.mtime_sec - 1, "mtime set back a second (touch -d)");
	CHANGED(ctime_nsec, base.key.ctime_nsec + 1, "ctime one nanosecond later");
	CHANGED(ctime_sec, base.key.ctime_sec + 1, "ctime a second later");
	CHANGED(ino, base.key.ino + 1, "another inode (a new file renamed over it)");
	CHANGED(dev, base.key.dev + 1, "another device");
	CHANGED(hash_len, 32, "read as SHA-256");
	CHANGED(flags, CD_GITINDEX_ALL, "read for every path");
#undef CHANGED

	st.st_dev = 1, st.st_ino = 2, st.st_size = 3;
	st.st_mtim = (struct timespec){ 4, 5 }, st.st_ctim = (struct timespec){ 6, 7 };
	cd_idxcache_key_of(&st, 20, 0, &k);
	ok(k.dev == 1 && k.ino == 2 && k.size == 3 && k.mtime_sec == 4 && k.mtime_nsec == 5 &&
	   k.ctime_sec == 6 && k.ctime_nsec == 7 && k.hash_len == 20 && k.flags == 0,
	   "the key is the stat's device, inode, size, mtime and ctime");

	/* racy: stamps within granularity + two ticks of the reading */
	e = base;
	e.scanned_sec = base.key.ctime_sec;
	e.scanned_nsec = base.key.ctime_nsec;
	ok(cd_idxcache_racy(&e, TICK), "read in the tick of the last change: racy");
	e.scanned_nsec = base.key.ctime_nsec + 2 * TICK;
	ok(cd_idxcache_racy(&e, TICK), "read two ticks after ctime: racy");
	e.scanned_nsec = base.key.ctime_nsec + 2 * TICK + 2;
	ok(!cd_idxcache_racy(&e, TICK), "read two ticks and 2 ns after (stamps of 1 ns): not");
	e.scanned_nsec = base.key.ctime_nsec + 1;
	ok(!cd_idxcache_trust(&e, &base.key, TICK),
	   "a racy entry is not trusted though its key is the index's (it is read again)");
	e = base;
	e.key.mtime_sec = e.scanned_sec; /* a stamp after the reading (a clock set back) */
	ok(cd_idxcache_racy(&e, TICK), "an mtime after the reading: racy");
	e = base;
	e.key.mtime_nsec = e.key.ctime_nsec = 0; /* whole seconds: FAT, 1 s filesystems */
	e.scanned_sec = e.key.ctime_sec + 2;
	e.scanned_nsec = 0;
	ok(cd_idxcache_racy(&e, TICK), "whole-second stamps read 2 s later: racy (2 s grain)");
	e.scanned_nsec = 2 * TICK + 1;
	ok(!cd_idxcache_racy(&e, TICK), "... 2 s and two ticks later: not");
	e = base;
	e.key.mtime_nsec = 120000000, e.key.ctime_nsec = 350000000; /* 10 ms granularity */
	e.scanned_sec = e.key.ctime_sec;
	e.scanned_nsec = 350000000 + 10000000 + 2 * TICK;
	ok(cd_idxcache_racy(&e, TICK), "stamps of 10 ms, read 10 ms + 2 ticks after: racy");
	e.scanned_nsec++;
	ok(!cd_idxcache_racy(&e, TICK), "... a nanosecond more: not");
}

/* ---- the reading of an index file, and the sweep's use of its racy flag ---- */

static char top[64];

/* top/rel, in a buffer of its own until the fourth call after */
static const char *at(const char *rel)
{
	static char bufs[4][256];
	static unsigned k;
	char *b = bufs[k++ % 4];

	snprintf(b, sizeof(bufs[0]), "%s/%s", top, rel);
	return b;
}

static void put(const char *rel, const void *b, size_t n)
{
	FILE *f = fopen(at(rel), "w");

	if (f) {
		fwrite(b, 1, n, f);
		fclose(f);
	}
}

/* An index (version 2, SHA-1) of one entry of mode and name (4 bytes) */
static void write_index(uint32_t mode, const char name[5])
{
	uint8_t b[12 + 72 + 20] = "DIRC\0\0\0\2\0\0\0\1";

	b[12 + 24] = (uint8_t)(mode >> 24), b[12 + 25] = (uint8_t)(mode >> 16);
	b[12 + 26] = (uint8_t)(mode >> 8), b[12 + 27] = (uint8_t)mode;
	b[12 + 61] = 4;
	memcpy(b + 12 + 62, name, 4);
	put(".git/index", b, sizeof(b));
}

static bool there(const char *rel)
{
	struct stat st;

	return lstat(at(rel), &st) == 0;
}

static void test_read_racy(void)
{
	const char *p = at(".git/index");
	struct cd_gitindex x;
	struct stat st;
	bool racy = false;
	int fd;

	write_index(0160000, "subm");
	fd = open(p, O_RDONLY | O_CLOEXEC);
	fstat(fd, &st);
	ok(cd_idxcache_read(NULL, CD_IDXCACHE_USE, fd, &st, 20, 0, &x, &racy) == 0 && x.n == 1 &&
	   strcmp(x.paths[0], "subm") == 0, "an index read without a cache: its gitlink");
	ok(racy, "... written just now: the reading is racy");
	cd_gitindex_done(&x);
	close(fd);
	usleep(100 * 1000);
	fd = open(p, O_RDONLY | O_CLOEXEC);
	fstat(fd, &st);
	if (!st.st_mtim.tv_nsec && !st.st_ctim.tv_nsec) {
		skip("this filesystem keeps whole seconds", "... read later: not racy");
	} else {
		cd_idxcache_read(NULL, CD_IDXCACHE_USE, fd, &st, 20, 0, &x, &racy);
		ok(!racy, "... read 100 ms later: not racy");
		cd_gitindex_done(&x);
	}
	close(fd);
}

static int plan(struct cd_protect_plan *p)
{
	struct cordon_config *c = cordon_config_new();
	struct cordon_error err = { 0 };
	int fd = open(top, O_RDONLY | O_DIRECTORY | O_CLOEXEC), r;

	r = cd_protect_plan_build(&c->protect, fd, top, p, &err);
	close(fd);
	cordon_config_free(c);
	return r;
}

static int sweep(const struct cd_protect_plan *p)
{
	int fd = open(top, O_RDONLY | O_DIRECTORY | O_CLOEXEC), r;

	r = cd_protect_sweep(p, fd, getuid(), NULL, NULL);
	close(fd);
	return r;
}

/* A change in the tick of the start's reading may leave the index's stat as it was: the sweep
 * reads it again when the start's reading was racy (a filesystem without multigrain stamps
 * does leave it; here the stat the start recorded is made the index's afterwards) */
static void test_sweep_racy(bool racy)
{
	struct cd_protect_plan p = { 0 };
	struct stat now;

	write_index(0100644, "subm");
	ok(plan(&p) == 0 && p.n_repos == 1, "a plan of a repository whose index has no gitlink");
	write_index(0160000, "subm"); /* in place: the same size, inode */
	mkdir(at("subm"), 0755);
	put("subm/.git", "gitdir: .evil\n", 14);
	stat(at(".git/index"), &now);
	p.repos[0].index_st = now; /* as a change in the same tick leaves it */
	p.repos[0].index_racy = racy;
	sweep(&p);
	if (racy)
		ok(!there("subm/.git") && there("subm/.git.cordon-moved-aside"),
		   "the start's reading racy: the sweep reads the index again, and moves the new "
		   "submodule's .git aside");
	else
		ok(there("subm/.git"), "(control) not racy: the sweep trusts the stat, which did "
		   "not move (what the racy rule is for)");
	cd_protect_plan_done(&p);
	unlink(at("subm/.git"));
	unlink(at("subm/.git.cordon-moved-aside"));
}

int main(void)
{
	test_round_trip();
	test_strict();
	test_canonical();
	test_bounds();
	test_key();

	strcpy(top, "/tmp/test-idxcache.XXXXXX");
	if (!mkdtemp(top))
		return 1;
	mkdir(at(".git"), 0755);
	test_read_racy();
	test_sweep_racy(true);
	test_sweep_racy(false);
	{
		char cmd[128];

		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", top);
		if (system(cmd) != 0)
			diag("could not remove %s", top);
	}
	return done_testing();
}
