/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * test-gitindex.c - the reader of git's index (gitindex.h): indexes git 2.39 wrote (versions 2,
 * 3, 4, SHA-256, a split index and its shared index, an offset table, a sparse index: the seeds
 * of tests/fuzz/fuzz-gitindex.c), each cut short at every length, and indexes written here to
 * show what git does with what it did not write: an offset table git with index.threads reads
 * instead of the entries one after the other, v4 names, flags and extensions git refuses, a
 * gitlink without a name, and version 4 names that grow from one another to what no git writes
 * (the supervisor that reads them would keep N long paths for N small entries). TAP.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gitindex.h"

#include "../lib/tap.h"

#ifndef CORDON_TEST_CORPUS_DIR
#error "CORDON_TEST_CORPUS_DIR: tests/fuzz/corpus"
#endif

static uint8_t *load(const char *name, size_t *ret_len)
{
	char path[4096];
	struct stat st;
	uint8_t *b;
	int fd;

	snprintf(path, sizeof(path), "%s/%s", CORDON_TEST_CORPUS_DIR, name);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) < 0 ||
	    !(b = malloc((size_t)st.st_size + 1)) ||
	    read(fd, b, (size_t)st.st_size) != st.st_size) {
		if (fd >= 0)
			close(fd);
		return NULL;
	}
	close(fd);
	*ret_len = (size_t)st.st_size;
	return b;
}

/* The paths found, sorted and without repeats, joined by " " */
static const char *joined(const struct cd_gitindex *x)
{
	static char out[4096];
	char **v = calloc(x->n + 1, sizeof(*v));
	size_t n = 0;

	out[0] = '\0';
	for (size_t i = 0; v && i < x->n; i++)
		v[n++] = x->paths[i];
	for (size_t i = 0; v && i < n; i++)
		for (size_t j = i + 1; j < n; j++)
			if (strcmp(v[j], v[i]) < 0) {
				char *t = v[i];

				v[i] = v[j];
				v[j] = t;
			}
	for (size_t i = 0; v && i < n; i++)
		if (i == 0 || strcmp(v[i], v[i - 1]) != 0)
			snprintf(out + strlen(out), sizeof(out) - strlen(out), "%s%s",
				 out[0] ? " " : "", v[i]);
	free(v);
	return out;
}

static int parse_file(const char *name, size_t h, unsigned flags, struct cd_gitindex *x)
{
	size_t len = 0;
	uint8_t *b = load(name, &len);
	int r;

	if (!b)
		return -ENOENT;
	r = cd_gitindex_parse(b, len, h, flags, x);
	free(b);
	return r;
}

static void test_git_written(void)
{
	struct cd_gitindex x = { 0 };
	char shared[80];

	ok(parse_file("v2.gitindex", 20, 0, &x) == 0 && x.version == 2 &&
	   strcmp(joined(&x), "sub x/y") == 0 && !x.split && !x.sparse && !x.nameless,
	   "version 2: the gitlinks sub and x/y (%s)", joined(&x));
	cd_gitindex_done(&x);
	ok(parse_file("v3.gitindex", 20, 0, &x) == 0 && x.version == 3 &&
	   strcmp(joined(&x), "sub x/y") == 0,
	   "version 3 (sub skip-worktree, an intent-to-add file): both gitlinks (%s)", joined(&x));
	cd_gitindex_done(&x);
	ok(parse_file("v3.gitindex", 20, CD_GITINDEX_ALL, &x) == 0 &&
	   strcmp(joined(&x), "a b/c new sub x/y") == 0, "... every entry (%s)", joined(&x));
	cd_gitindex_done(&x);
	ok(parse_file("v4.gitindex", 20, CD_GITINDEX_ALL, &x) == 0 && x.version == 4 &&
	   strcmp(joined(&x), "a b/c new sub x/y") == 0,
	   "version 4: names made from the previous one (%s)", joined(&x));
	cd_gitindex_done(&x);
	ok(parse_file("sha256.gitindex", 32, 0, &x) == 0 && strcmp(joined(&x), "sub x/y") == 0,
	   "SHA-256, version 2 (%s)", joined(&x));
	cd_gitindex_done(&x);
	ok(parse_file("sha256-v4.gitindex", 32, 0, &x) == 0 && strcmp(joined(&x), "sub x/y") == 0,
	   "SHA-256, version 4 (%s)", joined(&x));
	cd_gitindex_done(&x);
	ok(parse_file("split.gitindex", 20, 0, &x) == 0 && x.split &&
	   strcmp(joined(&x), "z/late") == 0,
	   "a split index: the gitlink added since (%s), and a shared index", joined(&x));
	cd_gitindex_shared_name(&x, 20, shared);
	ok(strcmp(shared, "sharedindex.9bbec0babb0683ebbfe390dfda1d00eea9df788a") == 0,
	   "... named %s", shared);
	cd_gitindex_done(&x);
	ok(parse_file("split-shared.gitindex", 20, 0, &x) == 0 && !x.split &&
	   strcmp(joined(&x), "sub x/y") == 0, "... which holds the others (%s)", joined(&x));
	cd_gitindex_done(&x);
	ok(parse_file("ieot-v4.gitindex", 20, 0, &x) == 0 &&
	   strcmp(joined(&x), "d20/sub d7/sub") == 0,
	   "version 4 with an offset table (index.threads): read both ways (%s)", joined(&x));
	cd_gitindex_done(&x);
	ok(parse_file("sparse.gitindex", 20, 0, &x) == 0 && x.sparse && x.n_dirs == 1 &&
	   strcmp(x.dirs[0], "out/deep/") == 0 && strcmp(joined(&x), "out/sub") == 0,
	   "a sparse index: said so; git keeps a gitlink out of sparse directories (%s)",
	   joined(&x));
	cd_gitindex_done(&x);
}

/* Every fixture cut short at every length: an answer, never a read past the end (ASan) */
static void test_truncated(void)
{
	static const char *const names[] = { "v2.gitindex", "v3.gitindex", "v4.gitindex",
					     "sha256-v4.gitindex", "split.gitindex",
					     "ieot-v4.gitindex", "sparse.gitindex" };
	bool sane = true;

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		size_t len = 0;
		uint8_t *b = load(names[i], &len);

		for (size_t n = 0; b && n < len; n++) {
			uint8_t *c = malloc(n ? n : 1); /* its own: ASan sees a read past it */
			struct cd_gitindex x;
			int r;

			memcpy(c, b, n);
			r = cd_gitindex_parse(c, n, 20, CD_GITINDEX_ALL, &x);
			if (r == 0)
				cd_gitindex_done(&x);
			sane = sane && (r == 0 || r == -EINVAL);
			free(c);
		}
		free(b);
	}
	ok(sane, "each index cut at every length: read or refused (-EINVAL)");
}

/* --- indexes written here, as git writes them, and as git would not --- */

struct w {
	uint8_t b[8192];
	size_t n;
	unsigned version;
	char prev[256];
};

static void put32(struct w *w, uint32_t v)
{
	w->b[w->n++] = (uint8_t)(v >> 24);
	w->b[w->n++] = (uint8_t)(v >> 16);
	w->b[w->n++] = (uint8_t)(v >> 8);
	w->b[w->n++] = (uint8_t)v;
}

static void put16(struct w *w, uint16_t v)
{
	w->b[w->n++] = (uint8_t)(v >> 8);
	w->b[w->n++] = (uint8_t)v;
}

static void header(struct w *w, unsigned version, uint32_t count)
{
	memset(w, 0, sizeof(*w));
	memcpy(w->b, "DIRC", 4);
	w->n = 4;
	w->version = version;
	put32(w, version);
	put32(w, count);
}

/* git's encode_varint */
static void varint(struct w *w, uint64_t v)
{
	uint8_t t[16];
	size_t pos = sizeof(t) - 1;

	t[pos] = v & 127;
	while (v >>= 7)
		t[--pos] = (uint8_t)(128 | (--v & 127));
	memcpy(w->b + w->n, t + pos, sizeof(t) - pos);
	w->n += sizeof(t) - pos;
}

/* An entry; ext2: the second flags (CE_EXTENDED set); strip (version 4): what to remove from
 * the previous name, SIZE_MAX: what git would */
static void entry(struct w *w, uint32_t mode, const char *name, int ext2, size_t strip)
{
	size_t start = w->n, len = strlen(name), common = 0;

	memset(w->b + w->n, 0, 40);
	w->n += 24;
	put32(w, mode);
	w->n += 12;
	memset(w->b + w->n, 0x11, 20);
	w->n += 20;
	put16(w, (uint16_t)((len < 0xfff ? len : 0xfff) | (ext2 >= 0 ? 0x4000 : 0)));
	if (ext2 >= 0)
		put16(w, (uint16_t)ext2);
	if (w->version == 4) {
		while (name[common] && name[common] == w->prev[common])
			common++;
		varint(w, strip == SIZE_MAX ? strlen(w->prev) - common : strip);
		memcpy(w->b + w->n, name + common, len - common + 1);
		w->n += len - common + 1;
		snprintf(w->prev, sizeof(w->prev), "%s", name);
		return;
	}
	memcpy(w->b + w->n, name, len);
	w->n += len;
	do
		w->b[w->n++] = 0;
	while ((w->n - start) % 8);
}

static void ext(struct w *w, const char *sig, const void *data, uint32_t size)
{
	memcpy(w->b + w->n, sig, 4);
	w->n += 4;
	put32(w, size);
	memcpy(w->b + w->n, data, size);
	w->n += size;
}

static int done_parse(struct w *w, unsigned flags, struct cd_gitindex *x)
{
	memset(w->b + w->n, 0, 20); /* the checksum, which nothing checks */
	w->n += 20;
	return cd_gitindex_parse(w->b, w->n, 20, flags, x);
}

static void test_written(void)
{
	struct cd_gitindex x = { 0 };
	struct w w;
	uint8_t hash[20];

	header(&w, 2, 2);
	entry(&w, 0100644, "a", -1, 0);
	entry(&w, 0160000, "lib/x", -1, 0);
	ext(&w, "TREE", "", 0);
	ext(&w, "ZZZZ", "junk", 4);
	ok(done_parse(&w, 0, &x) == 0 && strcmp(joined(&x), "lib/x") == 0,
	   "written here: a gitlink; extensions git reads or ignores ('A'..'Z') are passed over");
	cd_gitindex_done(&x);

	header(&w, 2, 1);
	entry(&w, 0160000, "x", -1, 0);
	ext(&w, "zzzz", "", 0);
	ok(done_parse(&w, 0, &x) == -EINVAL,
	   "an extension git does not know, not 'A'..'Z': refused");

	header(&w, 5, 0);
	ok(done_parse(&w, 0, &x) == -EINVAL, "version 5: refused");
	header(&w, 2, 0);
	w.b[0] = 'd';
	ok(done_parse(&w, 0, &x) == -EINVAL, "a bad signature: refused");

	header(&w, 3, 2);
	entry(&w, 0160000, "skip", 0x4000, 0);
	entry(&w, 0160000, "odd", 0x0100, 0);
	ok(done_parse(&w, 0, &x) == -EINVAL,
	   "extended flags git does not know: refused (git dies)");

	header(&w, 4, 3);
	entry(&w, 0100644, "dir/a", -1, SIZE_MAX);
	entry(&w, 0160000, "dir/sub", -1, SIZE_MAX);
	entry(&w, 0160000, "other", -1, SIZE_MAX);
	ok(done_parse(&w, 0, &x) == 0 && strcmp(joined(&x), "dir/sub other") == 0,
	   "version 4 written here: %s", joined(&x));
	cd_gitindex_done(&x);

	header(&w, 4, 2);
	entry(&w, 0100644, "a", -1, SIZE_MAX);
	entry(&w, 0160000, "b", -1, 9);
	ok(done_parse(&w, 0, &x) == -EINVAL,
	   "version 4: a name removing more than the previous one had: refused (git dies)");

	header(&w, 2, 1);
	entry(&w, 0160000, "", -1, 0);
	memset(hash, 0xab, sizeof(hash));
	ext(&w, "link", hash, sizeof(hash));
	ok(done_parse(&w, 0, &x) == 0 && x.split && x.nameless && x.n == 0,
	   "a split index's gitlink without a name (it replaces an entry of the shared index)");
	cd_gitindex_done(&x);

	header(&w, 2, 1);
	entry(&w, 0160000, "x", -1, 0);
	memset(hash, 0, sizeof(hash));
	ext(&w, "link", hash, sizeof(hash));
	ok(done_parse(&w, 0, &x) == 0 && !x.split, "a link extension of zeros: no shared index");
	cd_gitindex_done(&x);

	header(&w, 2, 1);
	entry(&w, 0160000, "x", -1, 0);
	ext(&w, "link", hash, 10);
	ok(done_parse(&w, 0, &x) == -EINVAL, "a link extension shorter than a hash: refused");
}

/* The entries git reads depend on index.threads: by default one after the other, with it by the
 * blocks of the offset table (IEOT) that the end-of-index-entries extension (EOIE) leads to. An
 * index whose table names an entry the sequence does not have hides a gitlink from a reader
 * that only follows the sequence. */
static void test_offset_table(void)
{
	struct cd_gitindex x = { 0 };
	struct w w;
	struct w h;
	size_t hidden, ext_at;
	uint8_t t[12], e[24];

	header(&w, 2, 1);
	entry(&w, 0100644, "plain", -1, 0);
	/* an entry the sequence does not read: inside an extension git ignores */
	header(&h, 2, 0);
	h.n = 0;
	entry(&h, 0160000, "evil", -1, 0);
	ext_at = w.n;
	ext(&w, "HIDE", h.b, (uint32_t)h.n);
	hidden = ext_at + 8;
	t[0] = t[1] = t[2] = 0, t[3] = 1; /* version 1 */
	t[4] = (uint8_t)(hidden >> 24), t[5] = (uint8_t)(hidden >> 16);
	t[6] = (uint8_t)(hidden >> 8), t[7] = (uint8_t)hidden;
	t[8] = t[9] = t[10] = 0, t[11] = 1; /* one entry */
	ext(&w, "IEOT", t, sizeof(t));
	memset(e, 0, sizeof(e));
	e[0] = (uint8_t)(ext_at >> 24), e[1] = (uint8_t)(ext_at >> 16);
	e[2] = (uint8_t)(ext_at >> 8), e[3] = (uint8_t)ext_at;
	ext(&w, "EOIE", e, sizeof(e));
	ok(done_parse(&w, 0, &x) == 0 && strcmp(joined(&x), "evil") == 0,
	   "a gitlink only the offset table names (what git with index.threads reads): found (%s)",
	   joined(&x));
	cd_gitindex_done(&x);
}

/* A version 4 index of n gitlinks: the first named `first` bytes of 'a', each next one the
 * previous with `strip` bytes removed and `add` bytes of 'b' added (what a sandbox can write in
 * n * (64 + add) bytes) */
static int grown(size_t n, size_t first, size_t strip, size_t add, struct cd_gitindex *x)
{
	size_t cap = 12 + first + n * (64 + add) + 20, len = 12;
	uint8_t *b = calloc(1, cap);
	int r;

	if (!b)
		return -ENOMEM;
	memcpy(b, "DIRC\0\0\0\4", 8);
	for (int i = 0; i < 4; i++)
		b[8 + i] = (uint8_t)(n >> (24 - 8 * i));
	for (size_t i = 0; i < n; i++) {
		size_t suffix = i ? add : first;

		b[len + 24] = 0;
		b[len + 25] = 0;
		b[len + 26] = 0xe0; /* mode 0160000: a gitlink */
		b[len + 60] = 0x0f; /* name length 0xfff: up to the NUL */
		b[len + 61] = 0xff;
		b[len + 62] = (uint8_t)(i ? strip : 0); /* strip < 128: one byte of varint */
		memset(b + len + 63, i ? 'b' : 'a', suffix);
		len += 63 + suffix + 1;
	}
	r = cd_gitindex_parse(b, len + 20, 20, 0, x);
	free(b);
	return r;
}

static void test_grown(void)
{
	struct cd_gitindex x = { 0 };

	ok(grown(2, PATH_MAX - 2, 0, 1, &x) == 0 && x.n == 2 && strlen(x.paths[1]) == PATH_MAX - 1,
	   "version 4: a name of PATH_MAX - 1 bytes grown from the previous one is read");
	cd_gitindex_done(&x);
	ok(grown(2, PATH_MAX - 1, 0, 1, &x) == -EINVAL,
	   "version 4: a name grown to PATH_MAX bytes is refused (no path git can lstat)");
	ok(grown(4000, 1, 0, 64, &x) == -EINVAL,
	   "version 4: 4,000 entries of 64 bytes each growing the name (256 KB; 1 GB of paths kept "
	   "before): refused");
	ok(grown(10000, 4000, 1, 1, &x) == 0 && x.n == 10000,
	   "version 4: 10,000 gitlinks of 4,000 bytes each, the paths kept 40 MB: read");
	cd_gitindex_done(&x);
	ok(grown(20000, 4000, 1, 1, &x) == -EINVAL,
	   "version 4: 20,000 gitlinks of 4,000 bytes each (1.3 MB of index), the paths to keep past "
	   "64 MiB: refused");
}

int main(void)
{
	test_git_written();
	test_truncated();
	test_written();
	test_offset_table();
	test_grown();
	return done_testing();
}
