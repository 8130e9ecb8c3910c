/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* snapshot.c - walk the workdir without following symlinks or crossing mounts, hash regular
 * files, and compare two walks. */
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "sha256.h"
#include "snapshot.h"

static void hash_file(int dirfd, const char *name, struct cd_fentry *e)
{
	_cleanup_close_ int fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	struct cd_sha256 h;
	uint8_t d[32], buf[65536];
	ssize_t n;

	if (fd < 0 || e->size > CD_SNAPSHOT_HASH_CAP)
		return;
	cd_sha256_init(&h);
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		cd_sha256_update(&h, buf, (size_t)n);
	if (n < 0)
		return;
	cd_sha256_final(&h, d);
	cd_sha256_hex(d, e->sha256);
	e->hashed = true;
}

static int add(struct cd_snapshot *s, int dirfd, const char *name, const char *rel,
	       const struct stat *st)
{
	struct cd_fentry *e;

	if (s->n == CD_SNAPSHOT_MAX_ENTRIES) {
		s->truncated = true;
		return 0;
	}
	if (s->n == s->cap) {
		size_t cap = s->cap ? 2 * s->cap : 256;
		struct cd_fentry *v = realloc(s->e, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		s->e = v, s->cap = cap;
	}
	e = &s->e[s->n];
	*e = (struct cd_fentry){ .mode = st->st_mode, .uid = st->st_uid,
				 .size = (uint64_t)st->st_size, .ino = st->st_ino,
				 .mtime_ns = (int64_t)st->st_mtim.tv_sec * 1000000000 + st->st_mtim.tv_nsec };
	e->path = strdup(rel);
	if (!e->path)
		return -ENOMEM;
	if (S_ISREG(st->st_mode))
		hash_file(dirfd, name, e);
	if (S_ISLNK(st->st_mode)) {
		char t[4096];
		ssize_t n = readlinkat(dirfd, name, t, sizeof(t) - 1);

		if (n >= 0) {
			t[n] = '\0';
			e->link = strdup(t);
		}
	}
	s->n++;
	return 0;
}

static bool skipped(const struct cd_snapshot *s, const struct stat *st)
{
	for (size_t i = 0; i < s->n_skip; i++)
		if (s->skip[i].dev == st->st_dev && s->skip[i].ino == st->st_ino)
			return true;
	return false;
}

static int walk(struct cd_snapshot *s, int dirfd, const char *prefix, dev_t dev)
{
	DIR *d = fdopendir(dirfd);
	struct dirent *de;
	int r = 0;

	if (!d) {
		close(dirfd);
		return 0; /* unreadable: its entries are not known */
	}
	while (r >= 0 && (de = readdir(d))) {
		_cleanup_free_ char *rel = NULL;
		struct stat st;

		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (fstatat(dirfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 || skipped(s, &st))
			continue;
		rel = prefix[0] ? cd_strdup_printf("%s/%s", prefix, de->d_name) : strdup(de->d_name);
		if (!rel)
			return closedir(d), -ENOMEM;
		r = add(s, dirfd, de->d_name, rel, &st);
		if (r >= 0 && S_ISDIR(st.st_mode) && st.st_dev == dev) {
			int sub = openat(dirfd, de->d_name,
					 O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

			if (sub >= 0)
				r = walk(s, sub, rel, dev);
		}
	}
	closedir(d);
	return r;
}

static int by_path(const void *a, const void *b)
{
	return strcmp(((const struct cd_fentry *)a)->path, ((const struct cd_fentry *)b)->path);
}

int cd_snapshot_take(const char *dir, const struct cd_file_id *skip, size_t n_skip,
		     struct cd_snapshot *s)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	struct stat st;
	int r;

	*s = (struct cd_snapshot){ .skip = skip, .n_skip = n_skip };
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0) {
		r = -errno;
		close(fd);
		return r;
	}
	r = walk(s, fd, "", st.st_dev);
	if (r >= 0)
		qsort(s->e, s->n, sizeof(*s->e), by_path);
	return r;
}

void cd_snapshot_done(struct cd_snapshot *s)
{
	for (size_t i = 0; i < s->n; i++) {
		free(s->e[i].path);
		free(s->e[i].link);
	}
	free(s->e);
	*s = (struct cd_snapshot){ 0 };
}

static bool changed(const struct cd_fentry *a, const struct cd_fentry *b)
{
	if (a->mode != b->mode || a->uid != b->uid)
		return true;
	if (S_ISDIR(a->mode))
		return false; /* its entries tell what changed in it */
	if (a->size != b->size || a->mtime_ns != b->mtime_ns || a->ino != b->ino ||
	    a->hashed != b->hashed)
		return true;
	if (a->hashed && strcmp(a->sha256, b->sha256) != 0)
		return true;
	return (a->link || b->link) && (!a->link || !b->link || strcmp(a->link, b->link) != 0);
}

void cd_snapshot_diff(const struct cd_snapshot *a, const struct cd_snapshot *b,
		      void (*fn)(enum cd_change what, const struct cd_fentry *e, void *data),
		      void *data)
{
	size_t i = 0, k = 0;

	while (i < a->n || k < b->n) {
		int c = i == a->n ? 1 : k == b->n ? -1 : strcmp(a->e[i].path, b->e[k].path);

		if (c < 0)
			fn(CD_DELETED, &a->e[i++], data);
		else if (c > 0)
			fn(CD_CREATED, &b->e[k++], data);
		else {
			if (changed(&a->e[i], &b->e[k]))
				fn(CD_MODIFIED, &b->e[k], data);
			i++, k++;
		}
	}
}

const char *cd_fentry_type(mode_t mode)
{
	return S_ISREG(mode) ? "file" : S_ISDIR(mode) ? "dir" : S_ISLNK(mode) ? "symlink" :
	       S_ISFIFO(mode) ? "fifo" : S_ISSOCK(mode) ? "socket" : "other";
}
