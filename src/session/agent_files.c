/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * agent_files.c - the file operations of cordon-agent (agent.c), each run by a worker process
 * inside the sandbox, as the sandbox: what the sandbox may not do, this may not either. Every
 * function replies on the channel (proto.h) and returns 0 or -errno.
 */
#include <errno.h>
#include <fcntl.h>
#include <dirent.h>
#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cordon.h"
#include "proto.h"

int cd_agent_file_op(int fd, const struct cd_sp_msg *m);
int cd_agent_watch(int fd, const char *path, unsigned flags); /* agent_watch.c */
int cd_agent_usage(int fd, unsigned window_ms);                /* agent_usage.c */

static int fail(int fd, int e, const char *what, const char *path)
{
	char text[1024];

	snprintf(text, sizeof(text), "%s %s: %s", what, path, strerror(e));
	cd_sp_send_simple(fd, CD_SP_ERROR, e, 0, text, strlen(text), -1);
	return -e;
}

static int ok(int fd, int32_t value, uint64_t arg, int pass)
{
	return cd_sp_send_simple(fd, CD_SP_OK, value, arg, NULL, 0, pass);
}

static uint32_t file_type(mode_t mode)
{
	if (S_ISREG(mode))
		return CORDON_FILE_REGULAR;
	if (S_ISDIR(mode))
		return CORDON_FILE_DIRECTORY;
	if (S_ISLNK(mode))
		return CORDON_FILE_SYMLINK;
	return CORDON_FILE_OTHER;
}

/* One ENTRY: the lstat of path (absolute), with its link target. */
static int send_entry(int fd, const char *path, const struct stat *st)
{
	char buf[sizeof(struct cd_sp_entry) + 2 * PATH_MAX + 2];
	struct cd_sp_entry e = {
		.type = file_type(st->st_mode), .mode = st->st_mode, .uid = st->st_uid,
		.gid = st->st_gid, .size = (uint64_t)st->st_size,
		.mtime_ns = (int64_t)st->st_mtim.tv_sec * 1000000000 + st->st_mtim.tv_nsec,
	};
	size_t plen = strlen(path), n = sizeof(e);
	ssize_t tlen = 0;

	if (plen >= PATH_MAX)
		return -ENAMETOOLONG;
	memcpy(buf, &e, sizeof(e));
	memcpy(buf + n, path, plen + 1);
	n += plen + 1;
	if (S_ISLNK(st->st_mode)) {
		tlen = readlink(path, buf + n, PATH_MAX);
		if (tlen < 0)
			tlen = 0;
	}
	buf[n + (size_t)tlen] = '\0';
	n += (size_t)tlen + 1;
	return cd_sp_send_simple(fd, CD_SP_ENTRY, 0, 0, buf, n, -1);
}

/* An absolute path for what the caller named (relative: to the workdir, our directory). */
static const char *absolute(const char *path, char *buf, size_t size)
{
	char cwd[PATH_MAX];

	if (path[0] == '/')
		return path;
	if (!getcwd(cwd, sizeof(cwd)))
		return path;
	snprintf(buf, size, "%s%s%s", cwd, strcmp(cwd, "/") ? "/" : "", path);
	return buf;
}

static int op_stat(int fd, const char *path)
{
	char abs[2 * PATH_MAX];
	struct stat st;

	if (lstat(path, &st) < 0)
		return fail(fd, errno, "stat", path);
	send_entry(fd, absolute(path, abs, sizeof(abs)), &st);
	return ok(fd, 0, 0, -1);
}

/* --- list: depth levels below path, at most max + 1 entries sent (the caller refuses more) --- */
struct lister {
	int fd;
	uint64_t left;
};

static int list_dir(struct lister *l, const char *dir, unsigned depth)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	int r = 0;

	if (!d)
		return -errno;
	while (r >= 0 && l->left && (de = readdir(d))) {
		char path[PATH_MAX];
		struct stat st;

		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (snprintf(path, sizeof(path), "%s%s%s", dir, strcmp(dir, "/") ? "/" : "",
			     de->d_name) >= (int)sizeof(path))
			continue;
		if (lstat(path, &st) < 0)
			continue; /* gone meanwhile */
		r = send_entry(l->fd, path, &st);
		l->left--;
		/* never through a symlink: lstat said directory */
		if (r >= 0 && depth > 1 && S_ISDIR(st.st_mode))
			list_dir(l, path, depth - 1);
	}
	closedir(d);
	return r;
}

static int op_list(int fd, const char *path, unsigned depth, uint64_t max)
{
	char abs[2 * PATH_MAX];
	struct lister l = { .fd = fd, .left = max + 1 };
	struct stat st;
	int r;

	if (lstat(path, &st) < 0)
		return fail(fd, errno, "list", path);
	if (!S_ISDIR(st.st_mode))
		return fail(fd, ENOTDIR, "list", path);
	r = list_dir(&l, absolute(path, abs, sizeof(abs)), depth < 1 ? 1 : depth > 64 ? 64 : depth);
	if (r < 0)
		return fail(fd, -r, "list", path);
	return ok(fd, 0, 0, -1);
}

/* --- contents --- */

/* Opened without blocking (a FIFO), kept only when a regular file. */
static int open_regular(const char *path, int flags, mode_t mode, int *ret)
{
	struct stat st;
	int f = open(path, flags | O_NONBLOCK | O_NOCTTY | O_CLOEXEC, mode);

	if (f < 0)
		return -errno;
	if (fstat(f, &st) < 0 || !S_ISREG(st.st_mode)) {
		int e = S_ISDIR(st.st_mode) ? EISDIR : EINVAL;

		close(f);
		return -e;
	}
	if (fcntl(f, F_SETFL, flags & O_ACCMODE) < 0) {
		close(f);
		return -errno;
	}
	*ret = f;
	return 0;
}

static int op_open(int fd, const char *path)
{
	int f, r = open_regular(path, O_RDONLY, 0, &f);

	if (r < 0)
		return fail(fd, -r, "open", path);
	r = ok(fd, 0, 0, f);
	close(f);
	return r;
}

/* mkdir -p of path's parents (make_last: path too); *made: path was made */
static int make_dirs(const char *path, bool make_last, int *made)
{
	char buf[PATH_MAX];
	size_t len = strlen(path);

	if (len >= sizeof(buf))
		return -ENAMETOOLONG;
	memcpy(buf, path, len + 1);
	for (char *p = buf + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(buf, 0755) < 0 && errno != EEXIST)
			return -errno;
		*p = '/';
	}
	*made = 0;
	if (!make_last)
		return 0;
	if (mkdir(buf, 0755) == 0) {
		*made = 1;
		return 0;
	}
	if (errno == EEXIST) {
		struct stat st;

		if (stat(buf, &st) == 0 && S_ISDIR(st.st_mode))
			return 0;
		return -ENOTDIR;
	}
	return -errno;
}

static int op_write(int fd, const char *path, mode_t mode, int in)
{
	char buf[65536];
	uint64_t total = 0;
	int f, made, r = make_dirs(path, false, &made);

	if (r >= 0)
		r = open_regular(path, O_WRONLY | O_CREAT | O_TRUNC, mode & 07777, &f);
	if (r < 0)
		return fail(fd, -r, "write", path);
	for (;;) {
		ssize_t n = read(in, buf, sizeof(buf));

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			r = -errno;
			break;
		}
		if (n == 0)
			break;
		for (ssize_t off = 0; off < n;) {
			ssize_t w = write(f, buf + off, (size_t)(n - off));

			if (w < 0 && errno == EINTR)
				continue;
			if (w < 0) {
				r = -errno;
				break;
			}
			off += w;
		}
		if (r < 0)
			break;
		total += (uint64_t)n;
	}
	if (close(f) < 0 && r >= 0)
		r = -errno;
	if (r < 0)
		return fail(fd, -r, "write", path);
	return ok(fd, 0, total, -1);
}

static int op_mkdir(int fd, const char *path)
{
	int made, r = make_dirs(path, true, &made);

	return r < 0 ? fail(fd, -r, "mkdir", path) : ok(fd, made, 0, -1);
}

static int remove_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)ftw;
	return (flag == FTW_DP ? rmdir(path) : unlink(path)) < 0 ? -1 : 0;
}

static int op_remove(int fd, const char *path)
{
	struct stat st;

	if (lstat(path, &st) < 0)
		return fail(fd, errno, "remove", path);
	if (S_ISDIR(st.st_mode) ? nftw(path, remove_one, 16, FTW_DEPTH | FTW_PHYS | FTW_MOUNT) < 0
				: unlink(path) < 0)
		return fail(fd, errno, "remove", path);
	return ok(fd, 0, 0, -1);
}

static int op_rename(int fd, const char *from, const char *to)
{
	if (rename(from, to) < 0)
		return fail(fd, errno, "rename", from);
	return ok(fd, 0, 0, -1);
}

int cd_agent_file_op(int fd, const struct cd_sp_msg *m)
{
	size_t pos = 0;
	const char *path = cd_sp_next(m, &pos), *to = NULL;

	if (m->h.type == CD_SP_RENAME)
		to = cd_sp_next(m, &pos);
	if (!path || !*path || pos != m->h.len || (m->h.type == CD_SP_RENAME && (!to || !*to)) ||
	    m->n_fd != (m->h.type == CD_SP_WRITE ? 1u : 0u))
		return fail(fd, EPROTO, "request", "(malformed)");
	switch (m->h.type) {
	case CD_SP_STAT:
		return op_stat(fd, path);
	case CD_SP_LIST:
		return op_list(fd, path, (unsigned)m->h.value, m->h.arg);
	case CD_SP_OPEN:
		return op_open(fd, path);
	case CD_SP_WRITE:
		return op_write(fd, path, (mode_t)m->h.value, m->fd[0]);
	case CD_SP_MKDIR:
		return op_mkdir(fd, path);
	case CD_SP_REMOVE:
		return op_remove(fd, path);
	case CD_SP_RENAME:
		return op_rename(fd, path, to);
	case CD_SP_WATCH:
		return cd_agent_watch(fd, path, (unsigned)m->h.value);
	case CD_SP_USAGE:
		return cd_agent_usage(fd, m->h.value > 0 && m->h.value <= 1000 ? (unsigned)m->h.value
									       : 100);
	default:
		return fail(fd, EOPNOTSUPP, "request", "(unknown)");
	}
}
