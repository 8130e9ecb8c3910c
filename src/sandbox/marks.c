/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* marks.c - the earlier workdirs, remembered (marks.h). Runs in the supervisor, as the caller. */
#include <fcntl.h>
#include <pwd.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/sysmacros.h>

#include "marks.h"

#define ROOT_DIR  "/var/lib/cordon"
#define LINE_FMT  "%llx %llx %llx.%x %s\n" /* dev ino btime path (hex: any byte) */
#define LINE_MAX_ (3 * 17 + 9 + 2 * 4096 + 2)

static char *state_dir(void)
{
	const char *xdg = getenv("XDG_STATE_HOME"), *home = getenv("HOME");
	struct passwd *pw;

	if (geteuid() == 0)
		return strdup(ROOT_DIR);
	if (xdg && xdg[0] == '/')
		return cd_strdup_printf("%s/cordon", xdg);
	if (!home || home[0] != '/') {
		pw = getpwuid(geteuid());
		home = pw ? pw->pw_dir : NULL;
	}
	return home && home[0] == '/' ? cd_strdup_printf("%s/.local/state/cordon", home) : NULL;
}

/* mkdir -p; what it makes is the caller's alone, but root's list is for every user to read */
static int make_dirs(const char *dir)
{
	_cleanup_free_ char *p = strdup(dir);
	mode_t mode = geteuid() == 0 ? 0755 : 0700;

	if (!p)
		return -ENOMEM;
	for (char *s = strchr(p + 1, '/');; s = strchr(s + 1, '/')) {
		if (s)
			*s = '\0';
		if (mkdir(p, mode) < 0 && errno != EEXIST)
			return -errno;
		if (!s)
			return 0;
		*s = '/';
	}
}

/* Room for one more: doubled when full (a list of 65536 is read whole at every run). */
static int grow(struct cd_marks *m)
{
	size_t cap = m->cap ? 2 * m->cap : 64;
	struct cd_mark *v;
	char **p;

	if (m->n < m->cap)
		return 0;
	v = reallocarray(m->v, cap, sizeof(*v));
	if (!v)
		return -ENOMEM;
	m->v = v;
	p = reallocarray(m->paths, cap, sizeof(*p));
	if (!p)
		return -ENOMEM;
	m->paths = p;
	m->cap = cap;
	return 0;
}

static int push(struct cd_marks *m, const struct cd_mark *d, const char *path)
{
	int r = grow(m);

	if (r < 0)
		return r;
	m->paths[m->n] = strdup(path ? path : "");
	if (!m->paths[m->n])
		return -ENOMEM;
	m->v[m->n++] = *d;
	return 0;
}

static void unhex(char *s)
{
	size_t n = strlen(s) / 2;

	for (size_t i = 0; i < n; i++) {
		unsigned b;

		if (sscanf(s + 2 * i, "%2x", &b) != 1)
			b = '?';
		s[i] = (char)b;
	}
	s[n] = '\0';
}

static int parse(FILE *f, struct cd_marks *m)
{
	char line[LINE_MAX_];

	while (fgets(line, sizeof(line), f)) {
		unsigned long long dev, ino, sec;
		unsigned nsec;
		char hex[2 * 4096 + 1];
		int r;

		hex[0] = '\0';
		if (sscanf(line, "%llx %llx %llx.%x %8192s", &dev, &ino, &sec, &nsec, hex) < 4)
			continue;
		unhex(hex);
		r = push(m, &(struct cd_mark){ dev, ino, (int64_t)sec, nsec }, hex);
		if (r < 0)
			return r;
	}
	return 0;
}

static int format(const struct cd_mark *d, const char *path, char *buf, size_t size)
{
	char hex[2 * 4096 + 1];
	size_t n = 0;

	for (; path && *path && n + 2 < sizeof(hex); path++)
		n += (size_t)snprintf(hex + n, 3, "%02x", (unsigned char)*path);
	hex[n] = '\0';
	return snprintf(buf, size, LINE_FMT, (unsigned long long)d->dev,
			(unsigned long long)d->ino, (unsigned long long)d->btime_sec, d->btime_nsec,
			n ? hex : "-");
}

int cd_mark_of(int fd, struct cd_mark *ret)
{
	struct statx stx;

	if (statx(fd, "", AT_EMPTY_PATH, STATX_INO | STATX_BTIME, &stx) < 0)
		return -errno;
	*ret = (struct cd_mark){ .dev = makedev(stx.stx_dev_major, stx.stx_dev_minor),
				 .ino = stx.stx_ino };
	if (stx.stx_mask & STATX_BTIME) {
		ret->btime_sec = stx.stx_btime.tv_sec;
		ret->btime_nsec = stx.stx_btime.tv_nsec;
	}
	return 0;
}

static void load_file(struct cd_marks *m, const char *path)
{
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY);
	FILE *f = fd >= 0 ? fdopen(fd, "r") : NULL;

	if (fd >= 0 && !f)
		close(fd);
	if (f) {
		parse(f, m);
		fclose(f);
	}
}

void cd_marks_load(struct cd_marks *m)
{
	_cleanup_free_ char *dir = state_dir();

	*m = (struct cd_marks){ 0 };
	if (!dir) {
		snprintf(m->why, sizeof(m->why), "no home directory to keep the list in");
		return;
	}
	m->path = cd_strdup_printf("%s/workdirs", dir);
	if (!m->path)
		return;
	load_file(m, m->path);
	/* root's list too: a sandbox root ran for this user (sudo cordon -w ~/proj) left its
	 * symlinks here as well; only root writes that list */
	if (geteuid() != 0)
		load_file(m, ROOT_DIR "/workdirs");
}

bool cd_marks_has(const struct cd_marks *m, const struct cd_mark *d)
{
	for (size_t i = 0; m && i < m->n; i++)
		if (m->v[i].dev == d->dev && m->v[i].ino == d->ino &&
		    m->v[i].btime_sec == d->btime_sec && m->v[i].btime_nsec == d->btime_nsec)
			return true;
	return false;
}

/* The list file, open and locked, still the one at its path (a shrinking run may have renamed
 * a new one over it meanwhile: then the new one). */
static int open_locked(const char *path, mode_t mode)
{
	for (int tries = 0; tries < 16; tries++) {
		int fd = open(path, O_RDWR | O_CREAT | O_APPEND | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY,
			      mode);
		struct stat a, b;

		if (fd < 0)
			return -errno;
		if (flock(fd, LOCK_EX) == 0 && fstat(fd, &a) == 0 && lstat(path, &b) == 0 &&
		    a.st_dev == b.st_dev && a.st_ino == b.st_ino)
			return fd;
		close(fd);
	}
	return -EAGAIN;
}

/* Does the entry's directory still exist at its path? A gone one holds no symlink any more. */
static bool still_there(const struct cd_mark *d, const char *path)
{
	_cleanup_close_ int fd = path[0] == '/' ? open(path, O_PATH | O_CLOEXEC) : -1;
	struct cd_mark now;

	return fd < 0 ? path[0] != '/' : cd_mark_of(fd, &now) < 0 || (now.dev == d->dev &&
		now.ino == d->ino && now.btime_sec == d->btime_sec && now.btime_nsec == d->btime_nsec);
}

/* Over CD_MARKS_MAX (under the lock): the list written anew without the directories that are
 * gone, and, if it is still too long, without the oldest; renamed over the file. */
static int shrink(const struct cd_marks *f, const char *path, mode_t mode)
{
	_cleanup_free_ char *tmp = cd_strdup_printf("%s.new", path);
	_cleanup_free_ bool *keep = calloc(f->n ? f->n : 1, sizeof(*keep));
	_cleanup_close_ int fd = -1;
	size_t kept = 0, start = 0;
	char line[LINE_MAX_];

	if (!tmp || !keep)
		return -ENOMEM;
	for (size_t i = 0; i < f->n; i++)
		kept += keep[i] = still_there(&f->v[i], f->paths[i]);
	for (; kept > CD_MARKS_MAX * 3 / 4 && start < f->n; start++)
		kept -= keep[start];
	unlink(tmp);
	fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
	if (fd < 0)
		return -errno;
	for (size_t i = start; i < f->n; i++) {
		int n = keep[i] ? format(&f->v[i], f->paths[i], line, sizeof(line)) : 0;

		if (n > 0 && cd_write_all(fd, line, (size_t)n) < 0)
			return -errno;
	}
	return rename(tmp, path) < 0 ? -errno : 0;
}

int cd_marks_add(struct cd_marks *m, const struct cd_mark *d, const char *dir_path)
{
	_cleanup_free_ char *dir = NULL;
	_cleanup_close_ int fd = -1;
	_cleanup_(cd_fclosep) FILE *f = NULL;
	struct cd_marks file = { 0 };
	mode_t mode = geteuid() == 0 ? 0644 : 0600;
	char line[LINE_MAX_];
	int r, n;

	if (!m->path)
		return -ENOENT;
	dir = strndup(m->path, (size_t)(strrchr(m->path, '/') - m->path));
	if (!dir)
		return -ENOMEM;
	r = make_dirs(dir);
	if (r >= 0 && geteuid() == 0)
		chmod(dir, 0755); /* every user's runs read root's list */
	fd = r < 0 ? r : open_locked(m->path, mode);
	if (fd < 0) {
		snprintf(m->why, sizeof(m->why), "%s: %s", m->path, strerror(-fd));
		return fd;
	}
	if (geteuid() == 0)
		fchmod(fd, mode); /* every user's runs read root's list */
	/* the file as it is now, under the lock: other runs may have added to it */
	f = fdopen(dup(fd), "r");
	if (f)
		parse(f, &file);
	r = 0;
	if (!cd_marks_has(&file, d)) {
		n = format(d, dir_path, line, sizeof(line));
		r = cd_write_all(fd, line, (size_t)n);
		if (r >= 0)
			r = push(&file, d, dir_path);
		if (r >= 0 && file.n > CD_MARKS_MAX)
			r = shrink(&file, m->path, mode);
	}
	cd_marks_done(&file);
	return r < 0 ? r : push(m, d, dir_path);
}

void cd_marks_done(struct cd_marks *m)
{
	for (size_t i = 0; i < m->n; i++)
		free(m->paths[i]);
	free(m->paths);
	free(m->v);
	free(m->path);
	*m = (struct cd_marks){ 0 };
}
