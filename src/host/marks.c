/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* marks.c - the earlier workdirs, remembered (marks.h). Runs in the supervisor, as the caller. */
#include <fcntl.h>
#include <pwd.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "hostroot.h"
#include "marks.h"

#define ROOT_STATE "/var/lib/cordon"
#define LIST_NAME  "workdirs.d"
#define LEGACY     "workdirs" /* the one-file list of earlier versions */
#define NAME_MAX_  80

char *cd_marks_state_dir(void)
{
	const char *xdg = getenv("XDG_STATE_HOME"), *home = getenv("HOME");
	struct passwd *pw;

	if (cd_host_root())
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

/* Which bucket: a hash of the whole mark (not the inode's low byte, which a sandbox can choose
 * by making directories until one has it) */
static unsigned bucket_of(const struct cd_mark *d)
{
	uint64_t h = 1469598103934665603ull; /* FNV-1a */
	const uint64_t v[] = { d->dev, d->ino, (uint64_t)d->btime_sec, d->btime_nsec };

	for (size_t i = 0; i < CD_ELEMENTSOF(v); i++)
		for (int b = 0; b < 64; b += 8)
			h = (h ^ ((v[i] >> b) & 0xff)) * 1099511628211ull;
	return (unsigned)(h % CD_MARKS_BUCKETS);
}

/* "BUCKET/DEV-INO-SEC.NSEC", all hex */
static void entry_name(const struct cd_mark *d, char buf[NAME_MAX_])
{
	snprintf(buf, NAME_MAX_, "%02x/%llx-%llx-%llx.%x", bucket_of(d),
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

/* The path's hex decoded in place ("-": none): false unless the field is exactly that. */
static bool unhex(char *s)
{
	size_t i = 0;

	if (strcmp(s, "-") == 0) {
		s[0] = '\0';
		return true;
	}
	for (; hexval(s[2 * i]) >= 0 && hexval(s[2 * i + 1]) >= 0; i++)
		s[i] = (char)(hexval(s[2 * i]) << 4 | hexval(s[2 * i + 1]));
	if (s[2 * i] != '\0')
		return false;
	s[i] = '\0';
	return true;
}

/* One line, whole ("dev ino sec.nsec hex|-\n"): false for anything else (a write cut short). */
static bool parse_line(char *line, struct cd_mark *ret, char **ret_path)
{
	unsigned long long dev, ino, sec;
	unsigned nsec;
	size_t len = strlen(line);
	int n = 0;

	if (len == 0 || line[len - 1] != '\n')
		return false;
	line[len - 1] = '\0';
	if (sscanf(line, "%llx %llx %llx.%x %n", &dev, &ino, &sec, &nsec, &n) != 4 || !n ||
	    !unhex(line + n))
		return false;
	*ret = (struct cd_mark){ dev, ino, (int64_t)sec, nsec };
	*ret_path = line + n;
	return true;
}

/* Each whole line of the file fd to fn: 0, the first error of fn, -EIO for a read error, or
 * -EBADMSG when a line was not whole (the others are still handed over). */
static int legacy_each(int fd, legacy_fn fn, void *data)
{
	_cleanup_(cd_fclosep) FILE *f = fdopen(fd, "r");
	_cleanup_free_ char *line = NULL;
	size_t size = 0;
	int r = 0, bad = 0;

	if (!f) {
		close(fd);
		return -ENOMEM;
	}
	while (r >= 0 && getline(&line, &size, f) > 0) {
		struct cd_mark mark;
		char *path;

		if (parse_line(line, &mark, &path))
			r = fn(&mark, path, data);
		else
			bad = -EBADMSG;
	}
	if (r >= 0 && ferror(f))
		r = -EIO;
	return r < 0 ? r : bad;
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
	int fd = st < 0 ? -1 : openat(st, LEGACY, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY);

	if (fd >= 0)
		legacy_each(fd, push_legacy, m); /* takes fd */
	return list ? open_dir(list) : -1;
}

void cd_marks_load(struct cd_marks *m)
{
	_cleanup_free_ char *state = cd_marks_state_dir();

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
	if (!cd_host_root())
		m->root_fd = load_one(m, ROOT_STATE);
}

bool cd_marks_any(const struct cd_marks *m)
{
	return m && (m->n_legacy || m->dir_fd >= 0 || m->root_fd >= 0);
}

/* Fails closed: an entry that cannot be looked up (a bucket closed to us, say) counts as there,
 * so that a symlink in that directory is refused rather than followed. */
static bool in_dir(int dir, const char *name)
{
	struct stat st;

	return dir >= 0 && (fstatat(dir, name, &st, AT_SYMLINK_NOFOLLOW) == 0 || errno != ENOENT);
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

static size_t count_entries(int bucket)
{
	_cleanup_(cd_closedirp) DIR *d = fdopendir(dup(bucket));
	size_t n = 0;

	while (d && readdir(d))
		n++;
	return n > 2 ? n - 2 : 0; /* . and .. */
}

/* A bucket past CD_MARKS_BUCKET_MAX entries: without the directories that are gone. Those still
 * there stay, however many (a bucket of live ones is checked again at each new entry: 65,536
 * live earlier workdirs before that happens): a limit by age would let a sandbox push its own
 * workdir out of the list (make directories, have the user run in them). */
static void prune_bucket(int dir, const char *bucket_name)
{
	_cleanup_close_ int bucket = openat(dir, bucket_name,
					    O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	_cleanup_(cd_closedirp) DIR *d = NULL;
	size_t n = bucket < 0 ? 0 : count_entries(bucket);
	struct dirent *de;

	if (n <= CD_MARKS_BUCKET_MAX)
		return;
	d = fdopendir(dup(bucket));
	if (d)
		rewinddir(d); /* the count read to the end through a descriptor sharing this offset */
	while (d && (de = readdir(d))) {
		char target[4096];
		struct cd_mark mark;
		ssize_t len;

		if (!parse_name(de->d_name, &mark))
			continue;
		len = readlinkat(bucket, de->d_name, target, sizeof(target) - 1);
		if (len < 0)
			continue;
		target[len] = '\0';
		if (!still_there(&mark, target))
			unlinkat(bucket, de->d_name, 0);
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
	name[2] = '\0'; /* the bucket is made on its first entry, whatever the umask */
	if ((mkdirat(dir, name, mode) < 0 && errno != EEXIST) || fchmodat(dir, name, mode, 0) < 0)
		return -errno;
	name[2] = '/';
	if (symlinkat(path[0] ? path : "-", dir, name) == 0)
		return 1;
	return errno == EEXIST ? 0 : -errno;
}

static int import_legacy(const struct cd_mark *d, const char *path, void *data)
{
	const int *dir = data;
	int r = add_entry(dir[0], d, path, (mode_t)dir[1]);

	return r < 0 ? r : 0;
}

/* An earlier version's file: its entries moved into the directory under its writers' lock
 * (an older cordon may still be adding to it), then it is removed; kept, and read at every
 * run, unless every line was whole and every entry made. */
static void migrate(struct cd_marks *m, mode_t mode)
{
	_cleanup_free_ char *state = strndup(m->path, (size_t)(strrchr(m->path, '/') - m->path));
	_cleanup_close_ int st = state ? open_dir(state) : -1;
	_cleanup_close_ int fd = st < 0 ? -1 : openat(st, LEGACY, O_RDONLY | O_NOFOLLOW |
								  O_CLOEXEC | O_NOCTTY);
	int data[2] = { m->dir_fd, (int)mode };
	struct stat a, b;

	if (fd < 0 || flock(fd, LOCK_EX) < 0 || fstat(fd, &a) < 0 ||
	    fstatat(st, LEGACY, &b, AT_SYMLINK_NOFOLLOW) < 0 || a.st_dev != b.st_dev ||
	    a.st_ino != b.st_ino)
		return; /* replaced meanwhile: the next run */
	if (legacy_each(dup(fd), import_legacy, data) == 0)
		unlinkat(st, LEGACY, 0);
}

int cd_marks_add(struct cd_marks *m, const struct cd_mark *d, const char *dir_path)
{
	mode_t mode = cd_host_root() ? 0755 : 0700; /* every user's runs read root's list */
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
	/* whatever a umask made of root's list (this run's, or an earlier one's): every user's
	 * runs read it */
	if (cd_host_root()) {
		chmod(ROOT_STATE, mode);
		chmod(m->path, mode);
	}
	migrate(m, mode);
	r = add_entry(m->dir_fd, d, dir_path, mode);
	entry_name(d, name);
	name[2] = '\0';
	if (r == 0 && cd_host_root() && fchmodat(m->dir_fd, name, mode, 0) < 0)
		r = -errno; /* other users' runs could not read their marks */
	if (r > 0)
		prune_bucket(m->dir_fd, name);
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
