/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * agent_watch.c - a directory watched by cordon-agent (proto.h WATCH): inotify, in a worker
 * process inside the sandbox, as the sandbox (its paths, its mount namespace, its inotify
 * budget). Events go back on the channel as EVENTS messages, named relative to the watched
 * directory, typed as envd's fsnotify does. Runs in: a worker forked by the agent.
 *
 * Bounded: the kernel's queue of the inotify instance (fs.inotify.max_queued_events) holds what
 * the caller has not read yet, a channel message at most CD_SP_MAX bytes more; past that the
 * kernel says IN_Q_OVERFLOW, sent on as EVENTS_OVERFLOW, and the watch ends. The watches count
 * against the sandbox's inotify budget (a user of its own, or its share: docs/e2b.md Tenants),
 * and one watch follows at most MAX_DIRS directories, MAX_DEPTH deep.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cordon.h"
#include "proto.h"

int cd_agent_watch(int fd, const char *path, unsigned flags);

#define MAX_DIRS  65536
#define MAX_DEPTH 128
/* what envd's fsnotify watches (its Linux backend), never through a symlink */
#define WATCH_MASK                                                                                 \
	(IN_CREATE | IN_MOVED_TO | IN_MOVED_FROM | IN_MOVE_SELF | IN_DELETE | IN_DELETE_SELF |     \
	 IN_MODIFY | IN_ATTRIB | IN_DONT_FOLLOW | IN_ONLYDIR | IN_EXCL_UNLINK)

/* A watched directory: its watch descriptor and its path below the root ("" for the root) */
struct dir {
	int wd;
	char *rel;
};

/* One worker, one watch: its state is the process's */
static struct dir *dirs; /* sorted by wd */
static size_t n_dirs;
static const char *root;
static bool recursive;
static int ino = -1, chan = -1;
static char out[CD_SP_MAX];
static size_t out_len;

static int fail(int e, const char *what)
{
	char text[PATH_MAX + 128];

	snprintf(text, sizeof(text), "%s %s: %s", what, root, strerror(e));
	cd_sp_send_simple(chan, CD_SP_ERROR, e, 0, text, strlen(text), -1);
	return -e;
}

/* The events gathered, as one message (waits while the caller reads nothing: the kernel's queue
 * fills meanwhile, then overflows). */
static int flush(uint32_t flags)
{
	struct cd_sp_hdr h = {.type = CD_SP_EVENTS, .len = (uint32_t)out_len, .flags = flags};
	int r;

	if (!out_len && !flags)
		return 0;
	r = cd_sp_send(chan, &h, out, NULL, 0);
	out_len = 0;
	return r;
}

static int put(enum cordon_watch_type type, const char *dir, const char *name)
{
	size_t ld = strlen(dir), ln = strlen(name), need = 1 + ld + (ld ? 1 : 0) + ln + 1;
	int r;

	if (need > CD_SP_MAX)
		return 0;
	if (out_len + need > CD_SP_MAX && (r = flush(0)) < 0)
		return r;
	out[out_len++] = (char)type;
	memcpy(out + out_len, dir, ld);
	out_len += ld;
	if (ld)
		out[out_len++] = '/';
	memcpy(out + out_len, name, ln + 1);
	out_len += ln + 1;
	return 0;
}

static struct dir *find(int wd, size_t *ret_pos)
{
	size_t lo = 0, hi = n_dirs;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (dirs[mid].wd == wd)
			return &dirs[mid];
		if (dirs[mid].wd < wd)
			lo = mid + 1;
		else
			hi = mid;
	}
	*ret_pos = lo;
	return NULL;
}

static void forget(struct dir *d)
{
	size_t i = (size_t)(d - dirs);

	free(d->rel);
	memmove(&dirs[i], &dirs[i + 1], (n_dirs - i - 1) * sizeof(*dirs));
	n_dirs--;
}

/* Watch root/rel: 0, -ENOSPC (MAX_DIRS, or the sandbox's inotify budget), -errno */
static int add_dir(const char *rel)
{
	char path[PATH_MAX];
	struct dir *d, *v;
	size_t pos = 0;
	char *copy;
	int wd;

	if (snprintf(path, sizeof(path), "%s%s%s", root, *rel ? "/" : "", rel) >= (int)sizeof(path))
		return -ENAMETOOLONG;
	wd = inotify_add_watch(ino, path, WATCH_MASK);
	if (wd < 0)
		return -errno;
	copy = strdup(rel);
	if (!copy)
		return -ENOMEM;
	d = find(wd, &pos);
	if (d) { /* the same directory by another path (a bind mount): the newer name */
		free(d->rel);
		d->rel = copy;
		return 0;
	}
	if (n_dirs >= MAX_DIRS) {
		free(copy);
		inotify_rm_watch(ino, wd);
		return -ENOSPC;
	}
	v = realloc(dirs, (n_dirs + 1) * sizeof(*dirs));
	if (!v) {
		free(copy);
		return -ENOMEM;
	}
	dirs = v;
	memmove(&dirs[pos + 1], &dirs[pos], (n_dirs - pos) * sizeof(*dirs));
	dirs[pos] = (struct dir){.wd = wd, .rel = copy};
	n_dirs++;
	return 0;
}

/* Watch the directories below root/rel; announce: a CREATE for each entry found (made before
 * its directory was watched: a new subdirectory's first files). */
static int walk(const char *rel, bool announce, unsigned depth)
{
	char path[PATH_MAX], child[PATH_MAX];
	struct dirent *de;
	DIR *dir;
	int r = 0;

	if (depth >= MAX_DEPTH)
		return 0;
	snprintf(path, sizeof(path), "%s%s%s", root, *rel ? "/" : "", rel);
	dir = opendir(path);
	if (!dir)
		return errno == ENOENT ? 0 : -errno; /* gone meanwhile: its REMOVE follows */
	while (r >= 0 && (de = readdir(dir))) {
		struct stat st;

		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (announce && (r = put(CORDON_WATCH_CREATE, rel, de->d_name)) < 0)
			break;
		if (snprintf(child, sizeof(child), "%s%s%s", rel, *rel ? "/" : "", de->d_name) >=
		    (int)sizeof(child))
			continue;
		if (de->d_type == DT_UNKNOWN &&
		    fstatat(dirfd(dir), de->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0)
			de->d_type = S_ISDIR(st.st_mode) ? DT_DIR : DT_REG;
		if (de->d_type != DT_DIR)
			continue;
		r = add_dir(child);
		if (r == -ENOENT || r == -ENOTDIR)
			r = 0; /* gone or replaced meanwhile */
		if (r >= 0)
			r = walk(child, announce, depth + 1);
	}
	closedir(dir);
	return r;
}

/* A directory moved away (or removed): its watches and those below, forgotten. */
static void drop_below(const char *rel)
{
	size_t len = strlen(rel);

	for (size_t i = n_dirs; i-- > 0;) {
		const char *r = dirs[i].rel;

		if (*r && !strncmp(r, rel, len) && (r[len] == '\0' || r[len] == '/')) {
			inotify_rm_watch(ino, dirs[i].wd);
			forget(&dirs[i]);
		}
	}
}

static int depth_of(const char *rel)
{
	int n = *rel ? 1 : 0;

	for (; *rel; rel++)
		n += *rel == '/';
	return n;
}

/* A new subdirectory (recursive): watched, its entries so far announced. */
static int new_subdir(const struct dir *d, const char *name)
{
	char child[PATH_MAX];
	int r;

	if (snprintf(child, sizeof(child), "%s%s%s", d->rel, *d->rel ? "/" : "", name) >=
	    (int)sizeof(child))
		return 0;
	if (depth_of(child) > MAX_DEPTH)
		return 0;
	r = add_dir(child);
	if (r == -ENOENT || r == -ENOTDIR)
		return 0;
	return r < 0 ? r : walk(child, true, (unsigned)depth_of(child));
}

/* One inotify event into records, in envd's order (CREATE, RENAME, CHMOD, WRITE, REMOVE). */
static int on_event(const struct inotify_event *ev)
{
	static const struct {
		uint32_t mask;
		enum cordon_watch_type type;
	} map[] = {
	    {IN_CREATE | IN_MOVED_TO, CORDON_WATCH_CREATE},
	    {IN_MOVED_FROM | IN_MOVE_SELF, CORDON_WATCH_RENAME},
	    {IN_ATTRIB, CORDON_WATCH_CHMOD},
	    {IN_MODIFY, CORDON_WATCH_WRITE},
	    {IN_DELETE | IN_DELETE_SELF, CORDON_WATCH_REMOVE},
	};
	bool self = ev->mask & (IN_DELETE_SELF | IN_MOVE_SELF);
	size_t pos;
	struct dir *d = find(ev->wd, &pos);
	const char *name = ev->len ? ev->name : "";
	int r = 0;

	if (!d)
		return 0;
	if (ev->mask & IN_IGNORED) {
		forget(d);
		return 0;
	}
	if (self && *d->rel) /* a subdirectory's own end: its parent tells it */
		return 0;
	for (size_t i = 0; i < sizeof(map) / sizeof(map[0]) && r >= 0; i++)
		if (ev->mask & map[i].mask)
			r = put(map[i].type, self ? "" : d->rel, self ? "." : name);
	if (r < 0 || !recursive || !(ev->mask & IN_ISDIR) || self)
		return r;
	if (ev->mask & IN_MOVED_FROM) {
		char child[PATH_MAX];

		snprintf(child, sizeof(child), "%s%s%s", d->rel, *d->rel ? "/" : "", name);
		drop_below(child);
		return 0;
	}
	return ev->mask & (IN_CREATE | IN_MOVED_TO) ? new_subdir(d, name) : 0;
}

/* The kernel's events, until the caller closes the channel, the sandbox ends or the queue
 * overflows. */
static int follow(void)
{
	static char buf[64 * 1024] __attribute__((aligned(__alignof__(struct inotify_event))));

	for (;;) {
		struct pollfd p[2] = {{ino, POLLIN, 0}, {chan, POLLIN, 0}};
		ssize_t n;
		int r = 0;

		if (poll(p, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (p[1].revents) /* the caller sends nothing more: its close */
			return 0;
		n = read(ino, buf, sizeof(buf));
		if (n < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -EIO;
		for (char *e = buf; r >= 0 && e < buf + n;) {
			const struct inotify_event *ev = (const struct inotify_event *)e;

			if (ev->mask & IN_Q_OVERFLOW) {
				if ((r = flush(0)) >= 0)
					flush(CD_SP_EVENTS_OVERFLOW);
				return -EOVERFLOW;
			}
			r = on_event(ev);
			e += sizeof(*ev) + ev->len;
		}
		if (r >= 0)
			r = flush(0);
		if (r < 0)
			return r;
	}
}

int cd_agent_watch(int fd, const char *path, unsigned flags)
{
	struct stat st;
	int r;

	chan = fd;
	root = path;
	recursive = flags & CD_SP_WATCH_RECURSIVE;
	if (stat(path, &st) < 0)
		return fail(errno, "watch");
	if (!S_ISDIR(st.st_mode))
		return fail(ENOTDIR, "watch");
	ino = inotify_init1(IN_CLOEXEC | IN_NONBLOCK);
	if (ino < 0)
		return fail(errno, errno == EMFILE
				       ? "watch (the sandbox's inotify instances are spent)"
				       : "watch (inotify)");
	r = add_dir("");
	if (r >= 0 && recursive)
		r = walk("", false, 1);
	if (r < 0)
		return fail(-r, r == -ENOSPC ? "watch (the sandbox's inotify watches are spent)"
					     : "watch");
	r = cd_sp_send_simple(chan, CD_SP_OK, 0, 0, NULL, 0, -1);
	return r < 0 ? r : follow();
}
