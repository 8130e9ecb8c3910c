/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * test-sha256.c - SHA-256 (sha256.h) against the FIPS 180-4 examples (NIST's "SHA256.pdf" and
 * the long-message vectors), fed whole, a byte at a time and in uneven chunks; and the workdir
 * walk that hashes the audit trail's files (snapshot.h), on a temporary file larger than its
 * read buffer. TAP.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sha256.h"
#include "snapshot.h"
#include "util.h"

#include "../lib/tap.h"

/* 56 bytes: the length does not fit after them, the padding takes a block of its own */
#define MSG_448 "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"
/* 112 bytes: a message of two blocks, the second with the padding */
#define MSG_896                                                                                    \
	"abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmn"                                 \
	"hijklmnoijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu"
#define MILLION_A "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0"

static const struct {
	const char *name, *msg, *digest;
} vectors[] = {
	{ "empty", "", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855" },
	{ "abc", "abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad" },
	{ "448 bits", MSG_448, "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1" },
	{ "896 bits", MSG_896, "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1" },
};

/* The digest of msg given in pieces of chunk bytes, the last one shorter (0: in one call). */
static void digest_of(const char *msg, size_t n, size_t chunk, char hex[65])
{
	struct cd_sha256 h;
	uint8_t d[32];

	cd_sha256_init(&h);
	if (!chunk)
		cd_sha256_update(&h, msg, n);
	for (size_t i = 0; chunk && i < n; i += chunk)
		cd_sha256_update(&h, msg + i, n - i < chunk ? n - i : chunk);
	cd_sha256_final(&h, d);
	cd_sha256_hex(d, hex);
}

static void test_vectors(void)
{
	char hex[65];

	for (size_t i = 0; i < CD_ELEMENTSOF(vectors); i++) {
		size_t n = strlen(vectors[i].msg);

		digest_of(vectors[i].msg, n, 0, hex);
		is_str(hex, vectors[i].digest, "%s, in one update", vectors[i].name);
		digest_of(vectors[i].msg, n, 1, hex);
		is_str(hex, vectors[i].digest, "%s, a byte at a time", vectors[i].name);
		digest_of(vectors[i].msg, n, 7, hex);
		is_str(hex, vectors[i].digest, "%s, 7 bytes at a time", vectors[i].name);
	}
}

/* One million 'a' in chunks of 1 to 199 bytes that straddle the 64-byte blocks unevenly. */
static void test_million(void)
{
	static char a[200];
	struct cd_sha256 h;
	uint8_t d[32];
	char hex[65];
	size_t left = 1000000, step = 0;

	memset(a, 'a', sizeof(a));
	cd_sha256_init(&h);
	while (left) {
		size_t k = 1 + (step++ * 37) % 199;

		if (k > left)
			k = left;
		cd_sha256_update(&h, a, k);
		left -= k;
	}
	cd_sha256_final(&h, d);
	cd_sha256_hex(d, hex);
	is_str(hex, MILLION_A, "one million 'a' in uneven chunks (%zu updates)", step);

	/* final leaves a fresh context (sha256.h): the next message does not carry the last one */
	cd_sha256_update(&h, "abc", 3);
	cd_sha256_final(&h, d);
	cd_sha256_hex(d, hex);
	is_str(hex, vectors[1].digest, "after final, the context starts a new message");
}

static int write_file(int dirfd, const char *name, const char *s, size_t n)
{
	int fd = openat(dirfd, name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	ssize_t w;

	if (fd < 0)
		return -1;
	w = write(fd, s, n);
	close(fd);
	return w == (ssize_t)n ? 0 : -1;
}

static const struct cd_fentry *entry(const struct cd_snapshot *s, const char *path)
{
	for (size_t i = 0; i < s->n; i++)
		if (strcmp(s->e[i].path, path) == 0)
			return &s->e[i];
	return NULL;
}

/* The audit's file events hash through the workdir walk, in reads of its own buffer's size: a
 * file of a million bytes takes several, and an empty file none. */
static void test_file_hash(void)
{
	char dir[] = "/tmp/test-sha256.XXXXXX";
	struct cd_snapshot s = {0};
	const struct cd_fentry *e;
	char *big = malloc(1000000);
	int dirfd = -1, r;

	if (!big || !mkdtemp(dir) || (dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0) {
		ok(0, "a temporary directory for the file hashes");
		free(big);
		return;
	}
	memset(big, 'a', 1000000);
	ok(write_file(dirfd, "million", big, 1000000) == 0 &&
	       write_file(dirfd, "empty", "", 0) == 0 && write_file(dirfd, "abc", "abc", 3) == 0,
	   "files written in %s", dir);
	r = cd_snapshot_take(dir, NULL, 0, &s);
	is_int(r, 0, "the workdir walk reads them");
	if (r == 0) {
		e = entry(&s, "million");
		ok(e && e->hashed, "the million-byte file is hashed");
		is_str(e ? e->sha256 : NULL, MILLION_A, "... to the digest of one million 'a'");
		e = entry(&s, "empty");
		is_str(e && e->hashed ? e->sha256 : NULL, vectors[0].digest,
		       "an empty file's digest");
		e = entry(&s, "abc");
		is_str(e && e->hashed ? e->sha256 : NULL, vectors[1].digest,
		       "a 3-byte file's digest");
		cd_snapshot_done(&s);
	}
	unlinkat(dirfd, "million", 0);
	unlinkat(dirfd, "empty", 0);
	unlinkat(dirfd, "abc", 0);
	close(dirfd);
	rmdir(dir);
	free(big);
}

int main(void)
{
	test_vectors();
	test_million();
	test_file_hash();
	return done_testing();
}
