/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* marks.c - the earlier workdirs, remembered (marks.h). Runs in the supervisor, as the caller. */
#include <fcntl.h>
#include <pwd.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/sysmacros.h>

#include "marks.h"

static char *state_dir(void)
{
	const char *xdg = getenv("XDG_STATE_HOME"), *home = getenv("HOME");
	struct passwd *pw;

	if (geteuid() == 0)
		return strdup("/var/lib/cordon");
	if (xdg && xdg[0] == '/')
		return cd_strdup_printf("%s/cordon", xdg);
	if (!home || home[0] != '/') {
		pw = getpwuid(geteuid());
		home = pw ? pw->pw_dir : NULL;
	}
	return home && home[0] == '/' ? cd_strdup_printf("%s/.local/state/cordon", home) : NULL;
}

/* mkdir -p, 0700 for what it makes */
static int make_dirs(const char *dir)
{
	_cleanup_free_ char *p = strdup(dir);

	if (!p)
		return -ENOMEM;
	for (char *s = strchr(p + 1, '/');; s = strchr(s + 1, '/')) {
		if (s)
			*s = '\0';
		if (mkdir(p, 0700) < 0 && errno != EEXIST)
			return -errno;
		if (!s)
			return 0;
		*s = '/';
	}
}

#define LINE_FMT "%llx %llx %llx.%x\n"

static int parse(FILE *f, struct cd_marks *m)
{
	unsigned long long dev, ino, sec;
	unsigned nsec;

	while (fscanf(f, LINE_FMT, &dev, &ino, &sec, &nsec) == 4) {
		struct cd_mark *v = reallocarray(m->v, m->n + 1, sizeof(*v));

		if (!v)
			return -ENOMEM;
		m->v = v;
		m->v[m->n++] = (struct cd_mark){ dev, ino, (int64_t)sec, nsec };
	}
	return 0;
}

static int format(const struct cd_mark *d, char *buf, size_t size)
{
	return snprintf(buf, size, LINE_FMT, (unsigned long long)d->dev,
			(unsigned long long)d->ino, (unsigned long long)d->btime_sec, d->btime_nsec);
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

/* The file, opened without following a symlink at its name, read or created. */
static int open_file(struct cd_marks *m, int flags)
{
	int fd = open(m->path, flags | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY, 0600);

	if (fd < 0)
		snprintf(m->why, sizeof(m->why), "%s: %s", m->path, strerror(errno));
	return fd < 0 ? -errno : fd;
}

void cd_marks_load(struct cd_marks *m)
{
	_cleanup_free_ char *dir = state_dir();
	_cleanup_(cd_fclosep) FILE *f = NULL;
	int fd;

	*m = (struct cd_marks){ 0 };
	if (!dir) {
		snprintf(m->why, sizeof(m->why), "no home directory to keep the list in");
		return;
	}
	m->path = cd_strdup_printf("%s/workdirs", dir);
	if (!m->path)
		return;
	fd = open_file(m, O_RDONLY);
	if (fd >= 0 && (f = fdopen(fd, "r")) == NULL)
		close(fd);
	if (f)
		parse(f, m);
}

bool cd_marks_has(const struct cd_marks *m, const struct cd_mark *d)
{
	for (size_t i = 0; m && i < m->n; i++)
		if (m->v[i].dev == d->dev && m->v[i].ino == d->ino &&
		    m->v[i].btime_sec == d->btime_sec && m->v[i].btime_nsec == d->btime_nsec)
			return true;
	return false;
}

/* Past CD_MARKS_MAX entries, the newest half is written anew and renamed over the file. */
static int shrink(struct cd_marks *m)
{
	_cleanup_free_ char *tmp = cd_strdup_printf("%s.new", m->path);
	_cleanup_(cd_fclosep) FILE *f = NULL;
	size_t from = m->n - CD_MARKS_MAX / 2;

	if (!tmp)
		return -ENOMEM;
	unlink(tmp);
	f = fopen(tmp, "wxe");
	if (!f)
		return -errno;
	for (size_t i = from; i < m->n; i++) {
		char line[96];

		format(&m->v[i], line, sizeof(line));
		fputs(line, f);
	}
	if (fflush(f) != 0 || rename(tmp, m->path) < 0)
		return -errno;
	return 0;
}

int cd_marks_add(struct cd_marks *m, const struct cd_mark *d)
{
	_cleanup_free_ char *dir = NULL;
	_cleanup_close_ int fd = -1;
	struct cd_mark *v;
	char line[96];
	int r, n;

	if (!m->path)
		return -ENOENT;
	if (cd_marks_has(m, d))
		return 0;
	dir = strndup(m->path, strrchr(m->path, '/') - m->path);
	if (!dir)
		return -ENOMEM;
	r = make_dirs(dir);
	if (r < 0) {
		snprintf(m->why, sizeof(m->why), "%s: %s", dir, strerror(-r));
		return r;
	}
	fd = open_file(m, O_WRONLY | O_CREAT | O_APPEND);
	if (fd < 0)
		return fd;
	flock(fd, LOCK_EX); /* one line at a time among concurrent runs; shrinking alone */
	n = format(d, line, sizeof(line));
	r = cd_write_all(fd, line, (size_t)n);
	if (r < 0)
		return r;
	v = reallocarray(m->v, m->n + 1, sizeof(*v));
	if (!v)
		return -ENOMEM;
	m->v = v;
	m->v[m->n++] = *d;
	return m->n > CD_MARKS_MAX ? shrink(m) : 0;
}

void cd_marks_done(struct cd_marks *m)
{
	free(m->v);
	free(m->path);
	*m = (struct cd_marks){ 0 };
}
