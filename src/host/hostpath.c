/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * hostpath.c - resolve host paths one component at a time, follow only trusted symlinks, and
 * hand back a descriptor (hostpath.h). Runs in the supervisor, as the caller.
 */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>

#include "hostpath.h"

#define MAX_LINKS 40 /* as the kernel's */

struct walk {
	const char *given; /* the path as given, for messages */
	const char *step;
	unsigned flags;
	char *rest;        /* what is left to resolve (malloc'd) */
	int cur;           /* O_PATH of the directory reached so far */
	unsigned links;
	uid_t link_owner;
	const struct cd_marks *marks;
	bool below_mark;   /* an earlier workdir was on the way: no symlink is trusted since */
};

/* Was the directory just reached a sandbox's workdir? (sticky: the walk went below it) */
static void check_mark(struct walk *w)
{
	struct cd_mark d;

	if (!w->below_mark && cd_marks_any(w->marks) && cd_mark_of(w->cur, &d) == 0)
		w->below_mark = cd_marks_has(w->marks, &d);
}

static bool trusted_owner(uid_t uid)
{
	return uid == 0 || uid == geteuid();
}

/* The kernel's name for what fd refers to: an absolute path, or -errno. */
static int fd_path(int fd, char **ret)
{
	char proc[64], buf[4096];
	ssize_t n;

	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
	n = readlink(proc, buf, sizeof(buf) - 1);
	if (n < 0)
		return -errno;
	buf[n] = '\0';
	if (buf[0] != '/' || (n > 10 && strcmp(buf + n - 10, " (deleted)") == 0))
		return -ENOENT;
	*ret = strdup(buf);
	return *ret ? 0 : -ENOMEM;
}

static int link_refused(struct walk *w, const char *name, const struct stat *st, bool last,
			struct cordon_error *err)
{
	_cleanup_free_ char *dir = NULL;

	fd_path(w->cur, &dir);
	if (w->flags & CD_HOSTPATH_CANONICAL)
		return cd_fail(err, ELOOP, w->step,
			       "%s: %s%s%s became a symlink since it was given: cordon does not "
			       "follow it",
			       w->given, dir && strcmp(dir, "/") ? dir : "", "/", name);
	if (last && (w->flags & CD_HOSTPATH_NOFOLLOW))
		return cd_fail(err, ELOOP, w->step,
			       "%s: is a symlink, which cordon does not follow here (a sandbox "
			       "may have left it): give the real path",
			       w->given);
	if (w->below_mark)
		return cd_fail(err, ELOOP, w->step,
			       "%s: %s%s%s is a symlink in a directory that was a sandbox's "
			       "workdir, which may have planted it: cordon does not follow it "
			       "(give the real path)",
			       w->given, dir && strcmp(dir, "/") ? dir : "", "/", name);
	return cd_fail(err, EPERM, w->step,
		       "%s: %s%s%s is a symlink owned by uid %u; cordon follows only symlinks owned "
		       "by root or by you (give the real path)",
		       w->given, dir && strcmp(dir, "/") ? dir : "", "/", name,
		       (unsigned)st->st_uid);
}

/* Replace what is left with the link's target followed by what came after the link. */
static int follow(struct walk *w, int link, const char *after, struct cordon_error *err)
{
	char target[4096];
	ssize_t n = readlinkat(link, "", target, sizeof(target) - 1);
	_cleanup_free_ char *rest = NULL;

	if (n < 0)
		return cd_fail_errno(err, errno, w->step, "%s: read a symlink", w->given);
	target[n] = '\0';
	if (++w->links > MAX_LINKS)
		return cd_fail_errno(err, ELOOP, w->step, "%s", w->given);
	rest = cd_strdup_printf("%s/%s", target, after);
	if (!rest)
		return cd_fail(err, ENOMEM, w->step, "out of memory");
	if (target[0] == '/') {
		int root = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);

		if (root < 0)
			return cd_fail_errno(err, errno, w->step, "open /");
		close(w->cur);
		w->cur = root;
	}
	free(w->rest);
	w->rest = CD_TAKE_PTR(rest);
	return 0;
}

/* One component: name, in w->cur. 1: it was a symlink, followed (w->rest is its target and
 * what came after); 0: w->cur is now the component; -errno. */
static int step_one(struct walk *w, const char *name, const char *after, bool last,
		    struct cordon_error *err)
{
	_cleanup_close_ int next = openat(w->cur, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	struct stat st;
	int r;

	if (next < 0 || fstat(next, &st) < 0)
		return cd_fail_errno(err, errno, w->step, "%s", w->given);
	if (S_ISLNK(st.st_mode)) {
		if ((last && (w->flags & CD_HOSTPATH_NOFOLLOW)) || w->below_mark ||
		    (w->flags & CD_HOSTPATH_CANONICAL) || !trusted_owner(st.st_uid))
			return link_refused(w, name, &st, last, err);
		w->link_owner = st.st_uid;
		r = follow(w, next, after, err);
		return r < 0 ? r : 1;
	}
	if (!last && !S_ISDIR(st.st_mode))
		return cd_fail_errno(err, ENOTDIR, w->step, "%s", w->given);
	close(w->cur);
	w->cur = CD_TAKE_FD(next);
	check_mark(w);
	return 0;
}

/* Is nothing left but "." components ("", "/.", "./")? Then this is the last name: "link/." names
 * the link as much as "link" does. */
static bool only_dots(const char *p)
{
	for (;;) {
		size_t len;

		p += strspn(p, "/");
		len = strcspn(p, "/");
		if (!len)
			return true;
		if (len != 1 || p[0] != '.')
			return false;
		p += len;
	}
}

static int walk(struct walk *w, struct cordon_error *err)
{
	for (;;) {
		const char *p = w->rest + strspn(w->rest, "/"), *end, *after;
		_cleanup_free_ char *name = NULL;
		char *rest;
		int r;

		if (!*p)
			return 0;
		end = strchrnul(p, '/');
		after = end + strspn(end, "/");
		name = strndup(p, (size_t)(end - p));
		if (!name)
			return cd_fail(err, ENOMEM, w->step, "out of memory");
		r = strcmp(name, ".") == 0 ? 0 : step_one(w, name, after, only_dots(after), err);
		if (r < 0)
			return r;
		if (r == 1)
			continue; /* w->rest is the link's target now */
		rest = strdup(after);
		if (!rest)
			return cd_fail(err, ENOMEM, w->step, "out of memory");
		free(w->rest);
		w->rest = rest;
	}
}

static int finish(int fd, const char *given, const char *step, unsigned flags,
		  struct cd_hostpath *ret, struct cordon_error *err)
{
	struct cd_hostpath hp = { .fd = fd, .link_owner = (uid_t)-1 };
	int r;

	if (fstat(fd, &hp.st) < 0)
		return cd_fail_errno(err, errno, step, "%s", given);
	if ((flags & CD_HOSTPATH_DIR) && !S_ISDIR(hp.st.st_mode))
		return cd_fail(err, ENOTDIR, step, "%s: not a directory", given);
	r = fd_path(fd, &hp.path);
	if (r < 0)
		return cd_fail_errno(err, -r, step, "%s: find its path", given);
	*ret = hp;
	return 0;
}

/* A relative path is walked from "/" through the current directory's canonical path, so that
 * the directories above the current one are checked as well. */
static char *absolute(const char *path)
{
	_cleanup_free_ char *cwd = NULL;

	if (path[0] == '/')
		return strdup(path);
	cwd = getcwd(NULL, 0);
	return cwd ? cd_strdup_printf("%s/%s", cwd, path) : NULL;
}

int cd_hostpath_open(const char *path, unsigned flags, const char *step,
		     const struct cd_marks *marks, struct cd_hostpath *ret,
		     struct cordon_error *err)
{
	struct walk w = { .given = path, .step = step, .flags = flags, .cur = -1, .marks = marks };
	int r;

	if (!path || !*path)
		return cd_fail(err, EINVAL, step, "empty path");
	w.rest = absolute(path);
	if (!w.rest)
		return cd_fail_errno(err, errno ? errno : ENOMEM, step, "%s", path);
	w.cur = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	r = w.cur < 0 ? cd_fail_errno(err, errno, step, "%s", path) : walk(&w, err);
	if (r >= 0)
		r = finish(w.cur, path, step, flags, ret, err);
	free(w.rest);
	if (r < 0) {
		cd_closep(&w.cur);
		return r;
	}
	ret->links = w.links;
	ret->link_owner = w.links ? w.link_owner : (uid_t)-1;
	return 0;
}

int cd_hostpath_from_fd(int fd, const char *step, struct cd_hostpath *ret,
			struct cordon_error *err)
{
	int r;

	if (fd < 0)
		return cd_fail_errno(err, errno, step, "the current directory");
	r = finish(fd, ".", step, CD_HOSTPATH_DIR, ret, err);
	if (r < 0)
		close(fd);
	return r;
}

void cd_hostpath_done(struct cd_hostpath *p)
{
	cd_closep(&p->fd);
	free(p->path);
	*p = (struct cd_hostpath){ .fd = -1 };
}

int cd_hostpath_open_parent(const char *path, const char *step, const struct cd_marks *marks,
			    struct cd_hostpath *ret_dir, char **ret_name, struct cordon_error *err)
{
	_cleanup_free_ char *copy = path ? strdup(path) : NULL;
	char *slash, *name;
	int r;

	if (!path || !*path)
		return cd_fail(err, EINVAL, step, "empty path");
	if (!copy)
		return cd_fail(err, ENOMEM, step, "out of memory");
	while (strlen(copy) > 1 && copy[strlen(copy) - 1] == '/')
		copy[strlen(copy) - 1] = '\0';
	slash = strrchr(copy, '/');
	name = slash ? slash + 1 : copy;
	if (!*name || strcmp(name, ".") == 0 || strcmp(name, "..") == 0)
		return cd_fail(err, EINVAL, step, "%s: not a file name", path);
	name = strdup(name);
	if (!name)
		return cd_fail(err, ENOMEM, step, "out of memory");
	if (slash)
		slash[slash == copy ? 1 : 0] = '\0';
	r = cd_hostpath_open(slash ? copy : ".", CD_HOSTPATH_DIR, step, marks, ret_dir, err);
	if (r < 0) {
		free(name);
		return r;
	}
	*ret_name = name;
	return 0;
}

/* mountinfo's escapes (\040 for a space, ...) undone, in place */
static void unescape(char *s)
{
	char *o = s;

	for (; *s; s++, o++) {
		if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' && s[2] >= '0' && s[2] <= '7' &&
		    s[3] >= '0' && s[3] <= '7') {
			*o = (char)((s[1] - '0') * 64 + (s[2] - '0') * 8 + (s[3] - '0'));
			s += 3;
		} else {
			*o = *s;
		}
	}
	*o = '\0';
}

/* A directory's mount (statx's mnt_id), its path, and that mount's root and mount point
 * (mountinfo's 4th and 5th fields) */
struct fs_where {
	uint64_t mnt_id;
	char *path, *root, *point;
};

static void fs_where_done(struct fs_where *w)
{
	free(w->path);
	free(w->root);
	free(w->point);
}

/* The roots and mount points of the n mounts, in one pass over mountinfo. */
static int mounts_of(struct fs_where *w, size_t n)
{
	_cleanup_(cd_fclosep) FILE *f = fopen("/proc/self/mountinfo", "re");
	_cleanup_free_ char *line = NULL;
	size_t size = 0, found = 0;

	if (!f)
		return -errno;
	while (found < n && getline(&line, &size, f) > 0) {
		unsigned long long id;
		char root[4096], point[4096];

		if (sscanf(line, "%llu %*u %*s %4095s %4095s", &id, root, point) != 3)
			continue;
		unescape(root);
		unescape(point);
		for (size_t i = 0; i < n; i++) {
			if (w[i].mnt_id != id || w[i].root)
				continue;
			w[i].root = strdup(root);
			w[i].point = strdup(point);
			if (!w[i].root || !w[i].point)
				return -ENOMEM;
			found++;
		}
	}
	return found == n ? 0 : -ENOENT;
}

/* The path of directory fd within its filesystem: its mount's root joined with the path below
 * the mount point. Every mount of one filesystem (a bind mount of a directory below the
 * workdir, say) shows a directory under this one path. */
static int fs_path(const struct fs_where *w, char **ret)
{
	const char *below = strcmp(w->point, "/") == 0 ? w->path : w->path + strlen(w->point);

	if (!cd_path_startswith(w->path, w->point))
		return -ENOENT;
	*ret = cd_strdup_printf("%s%s", strcmp(w->root, "/") == 0 ? "" : w->root, below);
	if (*ret && !**ret) {
		free(*ret);
		*ret = strdup("/");
	}
	return *ret ? 0 : -ENOMEM;
}

static int locate(int fd, struct fs_where *w)
{
	struct statx stx;

	if (statx(fd, "", AT_EMPTY_PATH, STATX_MNT_ID, &stx) < 0)
		return -errno;
	if (!(stx.stx_mask & STATX_MNT_ID))
		return -EOPNOTSUPP;
	w->mnt_id = stx.stx_mnt_id;
	return fd_path(fd, &w->path);
}

/* The same filesystem, and a path in it at or below anc's? */
static int within_fs(int dirfd, const struct stat *st, const struct cd_hostpath *anc)
{
	_cleanup_free_ char *dir = NULL, *top = NULL;
	struct fs_where w[2] = { 0 };
	int r;

	if (st->st_dev != anc->st.st_dev)
		return 0;
	r = locate(dirfd, &w[0]);
	if (r >= 0)
		r = locate(anc->fd, &w[1]);
	if (r >= 0)
		r = mounts_of(w, 2);
	if (r >= 0)
		r = fs_path(&w[0], &dir);
	if (r >= 0)
		r = fs_path(&w[1], &top);
	fs_where_done(&w[0]);
	fs_where_done(&w[1]);
	if (r == -EOPNOTSUPP)
		return 0; /* before 5.8: the ".." walk alone */
	return r < 0 ? r : cd_path_startswith(dir, top);
}

int cd_hostpath_within(int dirfd, const struct cd_hostpath *anc)
{
	_cleanup_close_ int cur = fcntl(dirfd, F_DUPFD_CLOEXEC, 3);
	struct stat st, up;
	int r;

	if (cur < 0 || fstat(cur, &st) < 0)
		return -errno;
	r = within_fs(cur, &st, anc);
	if (r != 0)
		return r;
	for (;;) {
		int parent;

		if (st.st_dev == anc->st.st_dev && st.st_ino == anc->st.st_ino)
			return 1;
		parent = openat(cur, "..", O_PATH | O_DIRECTORY | O_CLOEXEC);
		if (parent < 0)
			return -errno;
		close(cur);
		cur = parent;
		if (fstat(cur, &up) < 0)
			return -errno;
		if (up.st_dev == st.st_dev && up.st_ino == st.st_ino)
			return 0; /* the root: ".." is itself */
		st = up;
	}
}

int cd_hostpath_create(int dirfd, const char *name, mode_t mode, char **ret_tmp)
{
	_cleanup_free_ char *tmp = NULL;
	uint64_t rnd;
	int fd = -1;

	for (int tries = 0; tries < 16; tries++) {
		if (getrandom(&rnd, sizeof(rnd), 0) != sizeof(rnd))
			return -EIO;
		free(tmp);
		tmp = cd_strdup_printf(".%.200s.%016llx", name, (unsigned long long)rnd);
		if (!tmp)
			return -ENOMEM;
		fd = openat(dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_NOCTTY |
						O_CLOEXEC, mode);
		if (fd >= 0)
			break;
		if (errno != EEXIST)
			return -errno;
	}
	if (fd < 0)
		return -EEXIST;
	if (ret_tmp) {
		*ret_tmp = CD_TAKE_PTR(tmp);
		return fd;
	}
	if (renameat(dirfd, tmp, dirfd, name) < 0) {
		int e = errno;

		unlinkat(dirfd, tmp, 0);
		close(fd);
		return -e;
	}
	return fd;
}
