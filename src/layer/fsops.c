/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* fsops.c - descriptor-only file operations of src/layer (fsops.h). Runs in the supervisor
 * (save, seed) and the caller (apply, diff). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "fsops.h"
#include "sha256.h"
#include "util.h"

#define RESOLVE_HERE (RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_XDEV)
#define CHUNK        3072 /* bytes of path per openat2 call: well below PATH_MAX */

static int openat2_one(int dirfd, const char *path, int flags, mode_t mode)
{
	struct open_how how = {
		.flags = (uint64_t)(flags | O_CLOEXEC | O_NOFOLLOW),
		.mode = (flags & (O_CREAT | O_TMPFILE)) ? mode : 0,
		.resolve = RESOLVE_HERE,
	};
	long fd;

	do
		fd = syscall(SYS_openat2, dirfd, path, &how, sizeof(how));
	while (fd < 0 && errno == EAGAIN);
	return fd < 0 ? -errno : (int)fd;
}

int cd_lfs_open(int dirfd, const char *path, int flags, mode_t mode)
{
	_cleanup_close_ int cur = -1;
	const char *p = path;

	if (!*p)
		return openat2_one(dirfd, ".", flags, mode);
	while (strlen(p) > CHUNK) { /* the directories of a long path, a piece at a time */
		char piece[CHUNK + 1];
		const char *cut = p + CHUNK;
		int next;

		while (cut > p && *cut != '/')
			cut--;
		if (cut == p)
			return -ENAMETOOLONG; /* no component is that long */
		memcpy(piece, p, (size_t)(cut - p));
		piece[cut - p] = '\0';
		next = openat2_one(cur >= 0 ? cur : dirfd, piece, O_PATH | O_DIRECTORY, 0);
		if (next < 0)
			return next;
		cd_closep(&cur);
		cur = next;
		p = cut + 1;
	}
	return openat2_one(cur >= 0 ? cur : dirfd, p, flags, mode);
}

int cd_lfs_open_parent(int dirfd, const char *path, const char **ret_name)
{
	const char *slash = strrchr(path, '/');
	_cleanup_free_ char *dir = NULL;

	if (!slash) {
		*ret_name = path;
		return openat2_one(dirfd, ".", O_RDONLY | O_DIRECTORY, 0);
	}
	dir = strndup(path, (size_t)(slash - path));
	if (!dir)
		return -ENOMEM;
	*ret_name = slash + 1;
	return cd_lfs_open(dirfd, dir, O_RDONLY | O_DIRECTORY, 0);
}

int cd_lfs_mkdirs(int dirfd, const char *dir, mode_t mode)
{
	int cur = openat2_one(dirfd, ".", O_RDONLY | O_DIRECTORY, 0);
	const char *c = dir;

	while (cur >= 0 && *c) {
		size_t n = strcspn(c, "/");
		char name[NAME_MAX + 1];
		int next;

		if (n == 0 || n > NAME_MAX) {
			close(cur);
			return -EINVAL;
		}
		memcpy(name, c, n);
		name[n] = '\0';
		if (mkdirat(cur, name, mode) < 0 && errno != EEXIST) {
			int r = -errno;

			close(cur);
			return r;
		}
		next = openat2_one(cur, name, O_RDONLY | O_DIRECTORY, 0);
		close(cur);
		cur = next;
		c += n + (c[n] == '/');
	}
	return cur;
}

int cd_lfs_hash_fd(int fd, uint64_t *ret_size, uint8_t ret_sha[32])
{
	struct cd_sha256 s;
	uint64_t size = 0;
	char buf[65536];

	cd_sha256_init(&s);
	for (;;) {
		ssize_t n = read(fd, buf, sizeof(buf));

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			break;
		cd_sha256_update(&s, buf, (size_t)n);
		size += (uint64_t)n;
	}
	cd_sha256_final(&s, ret_sha);
	*ret_size = size;
	return 0;
}

static void hash_zeros(struct cd_sha256 *s, uint64_t n)
{
	static const char zeros[65536];

	while (n) {
		size_t k = n < sizeof(zeros) ? (size_t)n : sizeof(zeros);

		cd_sha256_update(s, zeros, k);
		n -= k;
	}
}

static int pwrite_all(int fd, const char *buf, size_t n, uint64_t off)
{
	while (n) {
		ssize_t k = pwrite(fd, buf, n, (off_t)off);

		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0)
			return -errno;
		buf += k;
		n -= (size_t)k;
		off += (uint64_t)k;
	}
	return 0;
}

int cd_lfs_copy_sparse(int in, int out, uint64_t max_size, uint64_t *budget, uint64_t *ret_size,
		       uint8_t ret_sha[32])
{
	struct cd_sha256 s;
	uint64_t off = 0;
	char buf[65536];
	struct stat st;

	if (fstat(in, &st) < 0)
		return -errno;
	if ((uint64_t)st.st_size > max_size)
		return -E2BIG;
	cd_sha256_init(&s);
	for (;;) {
		off_t data = lseek(in, (off_t)off, SEEK_DATA), hole;

		if (data < 0 && errno == ENXIO) { /* no data from off on: a hole to the end */
			if (fstat(in, &st) < 0)
				return -errno;
			if ((uint64_t)st.st_size > max_size)
				return -E2BIG;
			if ((uint64_t)st.st_size > off)
				hash_zeros(&s, (uint64_t)st.st_size - off), off = (uint64_t)st.st_size;
			break;
		}
		if (data < 0 && errno != EINVAL)
			return -errno;
		if (data < 0) /* no SEEK_DATA here: all of it is data */
			data = (off_t)off;
		if ((uint64_t)data > max_size)
			return -E2BIG;
		hash_zeros(&s, (uint64_t)data - off);
		off = (uint64_t)data;
		hole = lseek(in, data, SEEK_HOLE);
		if (hole <= data) /* no SEEK_HOLE (or a race): read on to the end */
			hole = INT64_MAX;
		while (off < (uint64_t)hole) {
			size_t want = (uint64_t)hole - off < sizeof(buf) ? (size_t)((uint64_t)hole - off)
									 : sizeof(buf);
			ssize_t n = pread(in, buf, want, (off_t)off);
			int r;

			if (n < 0 && errno == EINTR)
				continue;
			if (n < 0)
				return -errno;
			if (n == 0)
				goto end; /* the end of the file */
			if (off + (uint64_t)n > max_size)
				return -E2BIG;
			if (out >= 0) {
				if (budget && (uint64_t)n > *budget)
					return -EFBIG;
				if (budget)
					*budget -= (uint64_t)n;
				r = pwrite_all(out, buf, (size_t)n, off);
				if (r < 0)
					return r;
			}
			cd_sha256_update(&s, buf, (size_t)n);
			off += (uint64_t)n;
		}
	}
end:
	if (out >= 0 && ftruncate(out, (off_t)off) < 0)
		return -errno;
	cd_sha256_final(&s, ret_sha);
	*ret_size = off;
	return 0;
}

int cd_lfs_readlink(int dirfd, const char *name, char **ret, uint64_t *ret_size,
		    uint8_t ret_sha[32])
{
	char *buf = malloc(PATH_MAX + 1);
	struct cd_sha256 s;
	ssize_t n;

	if (!buf)
		return -ENOMEM;
	n = readlinkat(dirfd, name, buf, PATH_MAX + 1);
	if (n < 0 || n > PATH_MAX) {
		int r = n < 0 ? -errno : -ENAMETOOLONG;

		free(buf);
		return r;
	}
	buf[n] = '\0';
	cd_sha256_init(&s);
	cd_sha256_update(&s, buf, (size_t)n);
	cd_sha256_final(&s, ret_sha);
	*ret_size = (uint64_t)n;
	*ret = buf;
	return 0;
}

static void random_hex(char *out, size_t bytes)
{
	uint8_t b[32];

	if (getrandom(b, bytes, 0) != (ssize_t)bytes) /* never short for <= 256 bytes */
		for (size_t i = 0; i < bytes; i++)
			b[i] = (uint8_t)(rand() ^ (int)getpid());
	for (size_t i = 0; i < bytes; i++)
		sprintf(out + 2 * i, "%02x", b[i]);
}

void cd_lfs_tmpname(char ret[32])
{
	memcpy(ret, ".cordon-", 8);
	random_hex(ret + 8, 6);
}

int cd_layer_new_id(char ret[CD_LAYER_ID_LEN + 1])
{
	uint8_t b[CD_LAYER_ID_LEN / 2];

	if (getrandom(b, sizeof(b), 0) != (ssize_t)sizeof(b))
		return errno ? -errno : -EIO;
	for (size_t i = 0; i < sizeof(b); i++)
		sprintf(ret + 2 * i, "%02x", b[i]);
	return 0;
}
