/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* rmtree.c - remove a tree through descriptors (rmtree.h). Runs in the supervisor. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rmtree.h"
#include "util.h"

/* Where we came from: the directory above (to check "..") and our name in it. */
struct level {
	dev_t dev;
	ino_t ino;
	char *name;
};

/* chmod of the directory the O_PATH descriptor pins (never of a name, which the sandbox could
 * swap for a symlink meanwhile) */
static int chmod_pinned(int pathfd, mode_t mode)
{
	char proc[64];

	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", pathfd);
	return chmod(proc, mode) < 0 ? -errno : 0;
}

/* The directory name in dirfd, which fstatat() described as st, opened for reading although
 * its mode (000, set by the sandbox) says no: opened up through a descriptor of that very
 * directory, then read through it. *ret_opened: its mode was changed (restore_dir() puts it
 * back). Only directories of ours: root never gets EACCES. */
static int open_dir_opened_up(int dirfd, const char *name, const struct stat *st, int *ret_path,
			      bool *ret_opened)
{
	int pathfd = openat(dirfd, name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC), fd, r;
	struct stat now;

	*ret_opened = false;
	*ret_path = -1;
	if (pathfd < 0)
		return -errno;
	if (fstat(pathfd, &now) < 0 || now.st_dev != st->st_dev || now.st_ino != st->st_ino ||
	    now.st_uid != geteuid()) {
		close(pathfd);
		return -EACCES;
	}
	r = chmod_pinned(pathfd, (now.st_mode & 07777) | 0700);
	if (r < 0) {
		close(pathfd);
		return r;
	}
	*ret_opened = true;
	fd = openat(pathfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0) {
		r = -errno;
		chmod_pinned(pathfd, now.st_mode & 07777);
		close(pathfd);
		*ret_opened = false;
		return r;
	}
	*ret_path = pathfd;
	return fd;
}

static void restore_dir(int *pathfd, const struct stat *st, bool opened)
{
	if (opened && *pathfd >= 0)
		chmod_pinned(*pathfd, st->st_mode & 07777);
	*pathfd = cd_safe_close(*pathfd);
}

static int open_dir_at(int dirfd, const char *name)
{
	int fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC | O_NOATIME);

	if (fd < 0 && errno == EPERM) /* O_NOATIME on a file not ours */
		fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 && errno == EACCES) { /* a mode 000 directory (not root): ours to open up */
		struct stat st;
		bool opened;
		int pathfd;

		if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISDIR(st.st_mode))
			return -EACCES;
		fd = open_dir_opened_up(dirfd, name, &st, &pathfd, &opened);
		cd_closep(&pathfd); /* left open (0700): it is about to go */
		return fd;
	}
	return fd < 0 ? -errno : fd;
}

/* Remove the entries of fd that are not directories; the first subdirectory on the same
 * filesystem is named in *ret_sub (malloc'd), NULL when none is left. */
static int sweep(int fd, dev_t dev, char **ret_sub, int *first_err)
{
	int dup_fd = fcntl(fd, F_DUPFD_CLOEXEC, 3);
	DIR *d = dup_fd >= 0 ? fdopendir(dup_fd) : NULL;
	struct dirent *de;

	*ret_sub = NULL;
	if (!d) {
		cd_closep(&dup_fd);
		return -errno;
	}
	rewinddir(d);
	while ((de = readdir(d))) {
		struct stat st;

		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (fstatat(fd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
			continue;
		if (S_ISDIR(st.st_mode) && st.st_dev == dev) {
			if (!*ret_sub)
				*ret_sub = strdup(de->d_name);
			if (!*ret_sub) {
				closedir(d);
				return -ENOMEM;
			}
			continue;
		}
		if (unlinkat(fd, de->d_name, S_ISDIR(st.st_mode) ? AT_REMOVEDIR : 0) < 0 &&
		    !*first_err)
			*first_err = -errno; /* a mount point (another device) stays */
	}
	closedir(d);
	return 0;
}

/* Back to the directory above, checked to be the one we came down from. */
static int climb(int fd, const struct level *up)
{
	int parent = openat(fd, "..", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	struct stat st;

	if (parent < 0)
		return -errno;
	if (fstat(parent, &st) < 0 || st.st_dev != up->dev || st.st_ino != up->ino) {
		close(parent);
		return -ESTALE;
	}
	return parent;
}

int cd_rmtree_contents(int dirfd)
{
	_cleanup_free_ struct level *stack = NULL;
	size_t depth = 0, cap = 0;
	struct stat root;
	int fd, r = 0, first_err = 0;

	if (fstat(dirfd, &root) < 0)
		return -errno;
	fd = fcntl(dirfd, F_DUPFD_CLOEXEC, 3);
	if (fd < 0)
		return -errno;
	for (;;) {
		_cleanup_free_ char *sub = NULL;
		struct stat here;

		r = sweep(fd, root.st_dev, &sub, &first_err);
		if (r < 0)
			break;
		if (sub) { /* down: remember where we are */
			int child = open_dir_at(fd, sub);

			if (child < 0 || fstat(fd, &here) < 0) {
				r = child < 0 ? child : -errno;
				cd_closep(&child);
				break;
			}
			if (depth == cap) {
				struct level *n = realloc(stack, (cap = cap ? 2 * cap : 64) * sizeof(*n));

				if (!n) {
					close(child);
					r = -ENOMEM;
					break;
				}
				stack = n;
			}
			stack[depth++] = (struct level){ here.st_dev, here.st_ino, CD_TAKE_PTR(sub) };
			close(fd);
			fd = child;
			continue;
		}
		if (!depth)
			break; /* the top is empty */
		/* this directory is empty: up, and remove it there */
		depth--;
		r = climb(fd, &stack[depth]);
		if (r >= 0) {
			close(fd);
			fd = r;
			r = unlinkat(fd, stack[depth].name, AT_REMOVEDIR) < 0 ? -errno : 0;
		}
		free(stack[depth].name);
		if (r < 0)
			break;
	}
	while (depth)
		free(stack[--depth].name);
	close(fd);
	return r < 0 ? r : first_err;
}

int cd_rmtree_path(const char *path, const struct stat *st)
{
	_cleanup_free_ char *parent = strdup(path);
	_cleanup_close_ int pfd = -1, fd = -1;
	const char *base;
	struct stat now;
	char *slash;
	int r;

	if (!parent)
		return -ENOMEM;
	slash = strrchr(parent, '/');
	if (!slash || !slash[1])
		return -EINVAL;
	base = path + (slash - parent) + 1;
	*slash = '\0';
	pfd = open(*parent ? parent : "/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (pfd < 0)
		return -errno;
	fd = open_dir_at(pfd, base);
	if (fd < 0)
		return fd;
	if (fstat(fd, &now) < 0)
		return -errno;
	if (now.st_dev != st->st_dev || now.st_ino != st->st_ino)
		return -ESTALE;
	r = cd_rmtree_contents(fd);
	if (r < 0)
		return r;
	return unlinkat(pfd, base, AT_REMOVEDIR) < 0 ? -errno : 0;
}

struct usage {
	dev_t dev;
	uint64_t bytes, entries, max_entries;
};

static int usage_at(int fd, struct usage *u, unsigned depth_left)
{
	int dup_fd = fcntl(fd, F_DUPFD_CLOEXEC, 3);
	DIR *d = dup_fd >= 0 ? fdopendir(dup_fd) : NULL;
	struct dirent *de;
	int r = 0;

	if (!d) {
		cd_closep(&dup_fd);
		return -errno;
	}
	rewinddir(d); /* the duplicate shares fd's offset: from the start */
	while (r >= 0 && (de = readdir(d))) {
		struct stat st;
		bool reopened = false;
		int sub, pathfd = -1;

		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (fstatat(fd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
			continue; /* gone meanwhile */
		u->bytes += (uint64_t)st.st_blocks * 512;
		if (++u->entries > u->max_entries) {
			r = -E2BIG;
			break;
		}
		if (!S_ISDIR(st.st_mode) || st.st_dev != u->dev)
			continue;
		if (!depth_left) {
			r = -E2BIG;
			break;
		}
		sub = openat(fd, de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		/* a directory of ours the sandbox closed (mode 000): nothing hides from the count;
		 * opened up while it is counted (through its own descriptor), then put back */
		if (sub < 0 && errno == EACCES)
			sub = open_dir_opened_up(fd, de->d_name, &st, &pathfd, &reopened);
		if (sub >= 0)
			r = usage_at(sub, u, depth_left - 1);
		restore_dir(&pathfd, &st, reopened);
		cd_closep(&sub);
	}
	closedir(d);
	return r;
}

int cd_tree_usage(int dirfd, unsigned max_depth, uint64_t max_entries, uint64_t *ret_bytes,
		  uint64_t *ret_entries)
{
	struct usage u = { .max_entries = max_entries };
	struct stat st;
	int r;

	if (fstat(dirfd, &st) < 0)
		return -errno;
	u.dev = st.st_dev;
	u.bytes = (uint64_t)st.st_blocks * 512;
	r = usage_at(dirfd, &u, max_depth);
	*ret_bytes = u.bytes;
	*ret_entries = u.entries;
	return r;
}
