/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* marks.c - the earlier workdirs, remembered (marks.h). Runs in the supervisor, as the caller. */
#include <fcntl.h>
#include <pwd.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "marks.h"

#define ROOT_STATE "/var/lib/cordon"
#define LIST_NAME  "workdirs.d"
#define LEGACY     "workdirs" /* the one-file list of earlier versions */
#define NAME_MAX_  80

static char *state_dir(void)
{
	const char *xdg = getenv("XDG_STATE_HOME"), *home = getenv("HOME");
	struct passwd *pw;

	if (geteuid() == 0)
		return strdup(ROOT_STATE);
	if (xdg && xdg[0] == '/')
		return cd_strdup_printf("%s/cordon", xdg);
	if (!home || home[0] != '/') {
		pw = getpwuid(geteuid());
		home = pw ? pw->pw_dir : NULL;
	}
	return home && home[0] == '/' ? cd_strdup_printf("%s/.local/state/cordon", home) : NULL;
}

/* mkdir -p; what it makes is the caller's alone, but root's list is for every user to read */
static int make_dirs(const char *dir, mode_t mode)
{
	_cleanup_free_ char *p = strdup(dir);

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

/* "BUCKET/DEV-INO-SEC.NSEC", all hex */
static void entry_name(const struct cd_mark *d, char buf[NAME_MAX_])
{
	snprintf(buf, NAME_MAX_, "%02x/%llx-%llx-%llx.%x", (unsigned)(d->ino & 0xff),
		 (unsigned long long)d->dev, (unsigned long long)d->ino,
		 (unsigned long long)d->btime_sec, d->btime_nsec);
}

static bool parse_name(const char *name, struct cd_mark *ret)
{
	unsigned long long dev, ino, sec;
	unsigned nsec;
	int n = 0;

	if (sscanf(name, "%llx-%llx-%llx.%x%n", &dev, &ino, &sec, &nsec, &n) != 4 || name[n])
		return false;
	*ret = (struct cd_mark){ dev, ino, (int64_t)sec, nsec };
	return true;
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

static bool same_mark(const struct cd_mark *a, const struct cd_mark *b)
{
	return a->dev == b->dev && a->ino == b->ino && a->btime_sec == b->btime_sec &&
	       a->btime_nsec == b->btime_nsec;
}

/* --- the one-file list of earlier versions: "dev ino sec.nsec hex(path)" per line --- */

typedef int (*legacy_fn)(const struct cd_mark *d, const char *path, void *data);

static int hexval(char c)
{
	return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* the path's hex, decoded in place ("-": none) */
static void unhex(char *s)
{
	size_t i = 0;

	for (; hexval(s[2 * i]) >= 0 && hexval(s[2 * i + 1]) >= 0; i++)
		s[i] = (char)(hexval(s[2 * i]) << 4 | hexval(s[2 * i + 1]));
	s[i] = '\0';
}

static int legacy_each(int dir, legacy_fn fn, void *data)
{
	int fd = openat(dir, LEGACY, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY);
	_cleanup_(cd_fclosep) FILE *f = fd >= 0 ? fdopen(fd, "r") : NULL;
	_cleanup_free_ char *line = NULL;
	size_t size = 0;
	int r = 0;

	if (fd < 0)
		return -errno;
	if (!f) {
		close(fd);
		return -ENOMEM;
	}
	while (r >= 0 && getline(&line, &size, f) > 0) {
		unsigned long long dev, ino, sec;
		unsigned nsec;
		int n = 0;

		if (sscanf(line, "%llx %llx %llx.%x %n", &dev, &ino, &sec, &nsec, &n) < 4 || !n)
			continue;
		line[strcspn(line, "\n")] = '\0';
		unhex(line + n);
		r = fn(&(struct cd_mark){ dev, ino, (int64_t)sec, nsec }, line + n, data);
	}
	return r;
}

static int push_legacy(const struct cd_mark *d, _unused_ const char *path, void *data)
{
	struct cd_marks *m = data;
	struct cd_mark *v;

	if (m->n_legacy % 64 == 0) {
		v = reallocarray(m->legacy, m->n_legacy + 64, sizeof(*v));
		if (!v)
			return -ENOMEM;
		m->legacy = v;
	}
	m->legacy[m->n_legacy++] = *d;
	return 0;
}

/* --- the directory --- */

static int open_dir(const char *path)
{
	return open(path, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
}

/* a list's directory, and the entries of an earlier version's file beside it */
static int load_one(struct cd_marks *m, const char *state)
{
	_cleanup_free_ char *list = cd_strdup_printf("%s/" LIST_NAME, state);
	_cleanup_close_ int st = open_dir(state);

	if (!list)
		return -1;
	if (st >= 0 && faccessat(st, LEGACY, F_OK, AT_SYMLINK_NOFOLLOW) == 0)
		legacy_each(st, push_legacy, m);
	return open_dir(list);
}

void cd_marks_load(struct cd_marks *m)
{
	_cleanup_free_ char *state = state_dir();

	*m = (struct cd_marks){ .dir_fd = -1, .root_fd = -1 };
	if (!state) {
		snprintf(m->why, sizeof(m->why), "no home directory to keep the list in");
		return;
	}
	m->path = cd_strdup_printf("%s/" LIST_NAME, state);
	if (!m->path)
		return;
	m->dir_fd = load_one(m, state);
	/* root's list too: a sandbox root ran for this user (sudo cordon -w ~/proj) left its
	 * symlinks here as well; only root writes that list */
	if (geteuid() != 0)
		m->root_fd = load_one(m, ROOT_STATE);
}

bool cd_marks_any(const struct cd_marks *m)
{
	return m && (m->n_legacy || m->dir_fd >= 0 || m->root_fd >= 0);
}

static bool in_dir(int dir, const char *name)
{
	struct stat st;

	return dir >= 0 && fstatat(dir, name, &st, AT_SYMLINK_NOFOLLOW) == 0;
}

bool cd_marks_has(const struct cd_marks *m, const struct cd_mark *d)
{
	char name[NAME_MAX_];

	if (!m)
		return false;
	for (size_t i = 0; i < m->n_legacy; i++)
		if (same_mark(&m->legacy[i], d))
			return true;
	entry_name(d, name);
	return in_dir(m->dir_fd, name) || in_dir(m->root_fd, name);
}

/* Does the entry's directory still exist at its path? A gone one holds no symlink any more. */
static bool still_there(const struct cd_mark *d, const char *path)
{
	_cleanup_close_ int fd = path[0] == '/' ? open(path, O_PATH | O_CLOEXEC) : -1;
	struct cd_mark now;

	return fd < 0 ? path[0] != '/' : cd_mark_of(fd, &now) < 0 || same_mark(&now, d);
}

struct entry {
	char name[NAME_MAX_];
	struct timespec added;
	bool keep;
};

static int by_age(const void *a, const void *b)
{
	const struct timespec *x = &((const struct entry *)a)->added;
	const struct timespec *y = &((const struct entry *)b)->added;

	return x->tv_sec != y->tv_sec ? (x->tv_sec > y->tv_sec) - (x->tv_sec < y->tv_sec)
				      : (x->tv_nsec > y->tv_nsec) - (x->tv_nsec < y->tv_nsec);
}

/* The bucket's entries, up to twice its limit (more came from elsewhere: those wait). */
static size_t read_bucket(int bucket, struct entry *v, size_t max)
{
	_cleanup_(cd_closedirp) DIR *d = fdopendir(dup(bucket));
	struct dirent *de;
	size_t n = 0;

	while (d && n < max && (de = readdir(d))) {
		struct stat st;
		struct cd_mark mark;

		if (strlen(de->d_name) >= sizeof(v[n].name) || !parse_name(de->d_name, &mark) ||
		    fstatat(bucket, de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
			continue;
		strcpy(v[n].name, de->d_name);
		v[n].added = st.st_mtim;
		v[n++].keep = true;
	}
	return n;
}

/* A full bucket: without the directories that are gone, and if still too full, the oldest. */
static void prune_bucket(int dir, const char *bucket_name)
{
	_cleanup_close_ int bucket = openat(dir, bucket_name,
					    O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	_cleanup_free_ struct entry *v = calloc(2 * CD_MARKS_BUCKET_MAX, sizeof(*v));
	size_t n, kept;

	if (bucket < 0 || !v)
		return;
	n = read_bucket(bucket, v, 2 * CD_MARKS_BUCKET_MAX);
	if (n <= CD_MARKS_BUCKET_MAX)
		return;
	qsort(v, n, sizeof(*v), by_age);
	kept = n;
	for (size_t i = 0; i < n; i++) {
		char target[4096];
		ssize_t len = readlinkat(bucket, v[i].name, target, sizeof(target) - 1);
		struct cd_mark mark;

		if (len < 0 || !parse_name(v[i].name, &mark))
			continue;
		target[len] = '\0';
		if (!still_there(&mark, target)) {
			v[i].keep = false;
			kept--;
		}
	}
	for (size_t i = 0; i < n; i++) {
		if (v[i].keep && kept > CD_MARKS_BUCKET_MAX * 3 / 4) {
			v[i].keep = false; /* the oldest of those still there */
			kept--;
		}
		if (!v[i].keep)
			unlinkat(bucket, v[i].name, 0);
	}
}

/* One entry: 1 if new, 0 if it was there, or -errno. */
static int add_entry(int dir, const struct cd_mark *d, const char *path, mode_t mode)
{
	char name[NAME_MAX_];

	entry_name(d, name);
	if (symlinkat(path[0] ? path : "-", dir, name) == 0)
		return 1;
	if (errno == EEXIST)
		return 0;
	if (errno != ENOENT)
		return -errno;
	name[2] = '\0'; /* the bucket is made on its first entry */
	if (mkdirat(dir, name, mode) < 0 && errno != EEXIST)
		return -errno;
	name[2] = '/';
	if (symlinkat(path[0] ? path : "-", dir, name) == 0)
		return 1;
	return errno == EEXIST ? 0 : -errno;
}

static int import_legacy(const struct cd_mark *d, const char *path, void *data)
{
	const int *dir = data;

	add_entry(dir[0], d, path, (mode_t)dir[1]);
	return 0;
}

/* an earlier version's file: its entries moved into the directory, then it is removed */
static void migrate(struct cd_marks *m, mode_t mode)
{
	_cleanup_free_ char *state = strndup(m->path, (size_t)(strrchr(m->path, '/') - m->path));
	_cleanup_close_ int st = state ? open_dir(state) : -1;
	int data[2] = { m->dir_fd, (int)mode };

	if (st < 0 || faccessat(st, LEGACY, F_OK, AT_SYMLINK_NOFOLLOW) < 0)
		return;
	if (legacy_each(st, import_legacy, data) >= 0)
		unlinkat(st, LEGACY, 0);
}

int cd_marks_add(struct cd_marks *m, const struct cd_mark *d, const char *dir_path)
{
	mode_t mode = geteuid() == 0 ? 0755 : 0700; /* every user's runs read root's list */
	char name[NAME_MAX_];
	int r;

	if (!m->path)
		return -ENOENT;
	if (m->dir_fd < 0) {
		r = make_dirs(m->path, mode);
		m->dir_fd = r < 0 ? r : open_dir(m->path);
		if (m->dir_fd < 0) {
			r = m->dir_fd < -1 ? m->dir_fd : -errno;
			m->dir_fd = -1;
			snprintf(m->why, sizeof(m->why), "%s: %s", m->path, strerror(-r));
			return r;
		}
	}
	migrate(m, mode);
	r = add_entry(m->dir_fd, d, dir_path, mode);
	if (r > 0) {
		entry_name(d, name);
		name[2] = '\0';
		prune_bucket(m->dir_fd, name);
	}
	if (r < 0)
		snprintf(m->why, sizeof(m->why), "%s: %s", m->path, strerror(-r));
	return r < 0 ? r : 0;
}

void cd_marks_done(struct cd_marks *m)
{
	cd_closep(&m->dir_fd);
	cd_closep(&m->root_fd);
	free(m->legacy);
	free(m->path);
	*m = (struct cd_marks){ .dir_fd = -1, .root_fd = -1 };
}
