/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * idxcache.c - a git index's reading kept for the next run (idxcache.h): the key and its racy
 * rule and the entry's format (pure), then the directory, the entries and the reading of an
 * index through them. Runs in the supervisor, where the run's protected paths are planned and
 * after a direct run (protect_git.c).
 */
#include <dirent.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <nettle/sha2.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <time.h>

#include "fsops.h"
#include "hostpath.h"
#include "hostroot.h"
#include "idxcache.h"
#include "marks.h"
#include "output.h"
#include "util.h"

#define MAGIC     "cordon-gitindex-cache 1\n"
#define NSEC      1000000000ll
#define TMP_AGE   60 /* seconds: a temporary file this old is a crashed writer's */

/* ---- the key (pure) ---- */

void cd_idxcache_key_of(const struct stat *st, size_t hash_len, unsigned flags,
			struct cd_idxcache_key *ret)
{
	*ret = (struct cd_idxcache_key){
		.dev = st->st_dev, .ino = st->st_ino, .size = (uint64_t)st->st_size,
		.mtime_sec = st->st_mtim.tv_sec, .mtime_nsec = (uint32_t)st->st_mtim.tv_nsec,
		.ctime_sec = st->st_ctim.tv_sec, .ctime_nsec = (uint32_t)st->st_ctim.tv_nsec,
		.hash_len = (uint32_t)hash_len, .flags = flags,
	};
}

bool cd_idxcache_key_eq(const struct cd_idxcache_key *a, const struct cd_idxcache_key *b)
{
	return a->dev == b->dev && a->ino == b->ino && a->size == b->size &&
	       a->mtime_sec == b->mtime_sec && a->mtime_nsec == b->mtime_nsec &&
	       a->ctime_sec == b->ctime_sec && a->ctime_nsec == b->ctime_nsec &&
	       a->hash_len == b->hash_len && a->flags == b->flags;
}

static int64_t gcd(int64_t a, int64_t b)
{
	while (b) {
		int64_t t = a % b;

		a = b;
		b = t;
	}
	return a;
}

/* The filesystem's granularity, as far as two of its stamps show it: the largest divisor of a
 * second that divides both (never less than the real one); whole seconds: 2 s (FAT's mtime) */
static int64_t granularity(const struct cd_idxcache_key *k)
{
	if (!k->mtime_nsec && !k->ctime_nsec)
		return 2 * NSEC;
	return gcd(gcd(NSEC, k->mtime_nsec), k->ctime_nsec);
}

/* a - b in nanoseconds, saturated */
static int64_t diff_ns(int64_t a_sec, uint32_t a_nsec, int64_t b_sec, uint32_t b_nsec)
{
	int64_t d = a_sec - b_sec;

	if (d > INT64_MAX / NSEC - 1)
		return INT64_MAX;
	if (d < INT64_MIN / NSEC + 1)
		return INT64_MIN;
	return d * NSEC + (int64_t)a_nsec - (int64_t)b_nsec;
}

bool cd_idxcache_racy(const struct cd_idxcache_entry *e, int64_t tick_ns)
{
	const struct cd_idxcache_key *k = &e->key;
	int64_t slack = granularity(k) + 2 * (tick_ns > 0 ? tick_ns : NSEC / 100);

	/* a change after the reading is stamped at least at its start less a tick: it moves
	 * the stamps only if they are older than that by the granularity */
	return diff_ns(e->scanned_sec, e->scanned_nsec, k->mtime_sec, k->mtime_nsec) <= slack ||
	       diff_ns(e->scanned_sec, e->scanned_nsec, k->ctime_sec, k->ctime_nsec) <= slack;
}

bool cd_idxcache_trust(const struct cd_idxcache_entry *e, const struct cd_idxcache_key *now,
		       int64_t tick_ns)
{
	return cd_idxcache_key_eq(&e->key, now) && !cd_idxcache_racy(e, tick_ns);
}

/* ---- an entry's file (pure) ----
 *   cordon-gitindex-cache 1
 *   key DEV INO SIZE MSEC.MNSEC CSEC.CNSEC HASHLEN FLAGS
 *   scanned SEC.NSEC
 *   index VERSION SPLIT NAMELESS SPARSE SHARED(64 hex)
 *   p HEX           (each gitlink, hex: any byte but NUL)
 *   d HEX           (each sparse directory)
 *   sha256 HEX      (of every byte before this line)
 * numbers in decimal without leading zeros, nanoseconds in 9 digits, hex in lowercase */

static void hex(FILE *f, const uint8_t *b, size_t n)
{
	for (size_t i = 0; i < n; i++)
		fprintf(f, "%02x", b[i]);
}

static int put_paths(FILE *f, char c, char *const *v, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		size_t len = strlen(v[i]);

		if (len == 0 || len >= PATH_MAX)
			return -E2BIG;
		fprintf(f, "%c ", c);
		hex(f, (const uint8_t *)v[i], len);
		fputc('\n', f);
	}
	return 0;
}

static void digest(const char *buf, size_t len, uint8_t out[32])
{
	struct sha256_ctx s;

	sha256_init(&s);
	sha256_update(&s, len, (const uint8_t *)buf);
	sha256_digest(&s, SHA256_DIGEST_SIZE, out);
}

int cd_idxcache_format(const struct cd_idxcache_entry *e, const struct cd_gitindex *x,
		       char **ret, size_t *ret_len)
{
	const struct cd_idxcache_key *k = &e->key;
	_cleanup_free_ char *buf = NULL;
	size_t len = 0;
	FILE *f;
	uint8_t d[32];
	int r;

	if (x->n + x->n_dirs > CD_IDXCACHE_PATHS_MAX)
		return -E2BIG;
	f = open_memstream(&buf, &len);
	if (!f)
		return -ENOMEM;
	fprintf(f, MAGIC "key %llu %llu %llu %lld.%09u %lld.%09u %u %u\nscanned %lld.%09u\n",
		(unsigned long long)k->dev, (unsigned long long)k->ino,
		(unsigned long long)k->size, (long long)k->mtime_sec, k->mtime_nsec,
		(long long)k->ctime_sec, k->ctime_nsec, k->hash_len, k->flags,
		(long long)e->scanned_sec, e->scanned_nsec);
	fprintf(f, "index %u %d %d %d ", x->version, x->split, x->nameless, x->sparse);
	hex(f, x->shared, sizeof(x->shared));
	fputc('\n', f);
	r = put_paths(f, 'p', x->paths, x->n);
	if (r >= 0)
		r = put_paths(f, 'd', x->dirs, x->n_dirs);
	if (fclose(f) != 0 && r >= 0)
		r = -ENOMEM;
	if (r >= 0 && len + 72 > CD_IDXCACHE_FILE_MAX)
		r = -E2BIG;
	if (r < 0)
		return r;
	digest(buf, len, d);
	f = open_memstream(ret, ret_len);
	if (!f)
		return -ENOMEM;
	fwrite(buf, 1, len, f);
	fputs("sha256 ", f);
	hex(f, d, sizeof(d));
	fputc('\n', f);
	return fclose(f) == 0 ? 0 : -ENOMEM;
}

/* A cursor over the entry's bytes: each reader takes exactly what it names, or fails */
struct cur {
	const char *p, *end;
};

static bool lit(struct cur *c, const char *s)
{
	size_t n = strlen(s);

	if ((size_t)(c->end - c->p) < n || memcmp(c->p, s, n) != 0)
		return false;
	c->p += n;
	return true;
}

/* A decimal number without a sign or leading zeros, at most max */
static bool num(struct cur *c, uint64_t max, uint64_t *ret)
{
	uint64_t v = 0;
	const char *s = c->p;

	while (c->p < c->end && *c->p >= '0' && *c->p <= '9') {
		unsigned d = (unsigned)(*c->p - '0');

		if (d > max || v > (max - d) / 10)
			return false;
		v = v * 10 + d;
		c->p++;
	}
	if (c->p == s || (*s == '0' && c->p - s > 1))
		return false;
	*ret = v;
	return true;
}

/* SEC.NSEC: a signed number of seconds (no "-0"), nine digits of nanoseconds */
static bool stamp(struct cur *c, int64_t *sec, uint32_t *nsec)
{
	bool neg = lit(c, "-");
	uint64_t s, ns = 0;

	if (!num(c, INT64_MAX, &s) || (neg && s == 0) || !lit(c, "."))
		return false;
	for (int i = 0; i < 9; i++, c->p++) {
		if (c->p >= c->end || *c->p < '0' || *c->p > '9')
			return false;
		ns = ns * 10 + (uint64_t)(*c->p - '0');
	}
	*sec = neg ? -(int64_t)s : (int64_t)s;
	*nsec = (uint32_t)ns;
	return true;
}

static int hexval(char ch)
{
	return ch >= '0' && ch <= '9' ? ch - '0' : ch >= 'a' && ch <= 'f' ? ch - 'a' + 10 : -1;
}

/* Lowercase hex up to the end of the line (not taken): into out, at most max bytes */
static bool unhex(struct cur *c, uint8_t *out, size_t max, size_t *ret_len)
{
	size_t n = 0;

	while (c->p + 1 < c->end && *c->p != '\n') {
		int hi = hexval(c->p[0]), lo = hexval(c->p[1]);

		if (hi < 0 || lo < 0 || n == max)
			return false;
		out[n++] = (uint8_t)(hi << 4 | lo);
		c->p += 2;
	}
	*ret_len = n;
	return true;
}

static bool key_line(struct cur *c, struct cd_idxcache_entry *e)
{
	struct cd_idxcache_key *k = &e->key;
	uint64_t hl, fl;

	if (!lit(c, "key ") || !num(c, UINT64_MAX, &k->dev) || !lit(c, " ") ||
	    !num(c, UINT64_MAX, &k->ino) || !lit(c, " ") || !num(c, INT64_MAX, &k->size) ||
	    !lit(c, " ") || !stamp(c, &k->mtime_sec, &k->mtime_nsec) || !lit(c, " ") ||
	    !stamp(c, &k->ctime_sec, &k->ctime_nsec) || !lit(c, " ") || !num(c, 32, &hl) ||
	    !lit(c, " ") || !num(c, CD_GITINDEX_ALL, &fl) || !lit(c, "\nscanned ") ||
	    !stamp(c, &e->scanned_sec, &e->scanned_nsec) || !lit(c, "\n"))
		return false;
	k->hash_len = (uint32_t)hl;
	k->flags = (uint32_t)fl;
	return hl == 20 || hl == 32;
}

static bool index_line(struct cur *c, struct cd_gitindex *x)
{
	uint64_t v, split, nameless, sparse;
	size_t n;

	if (!lit(c, "index ") || !num(c, 4, &v) || v < 2 || !lit(c, " ") || !num(c, 1, &split) ||
	    !lit(c, " ") || !num(c, 1, &nameless) || !lit(c, " ") || !num(c, 1, &sparse) ||
	    !lit(c, " ") || !unhex(c, x->shared, sizeof(x->shared), &n) ||
	    n != sizeof(x->shared) || !lit(c, "\n"))
		return false;
	x->version = (unsigned)v;
	x->split = split;
	x->nameless = nameless;
	x->sparse = sparse;
	return true;
}

/* The "p" (or "d") lines into v: each a path of 1..PATH_MAX bytes without a NUL */
static int path_lines(struct cur *c, char tag, char ***v, size_t *n, size_t *total)
{
	const char prefix[3] = { tag, ' ', '\0' };
	uint8_t *buf = malloc(PATH_MAX);
	int r = 0;

	if (!buf)
		return -ENOMEM;
	while (r >= 0 && lit(c, prefix)) {
		size_t len;

		if (++*total > CD_IDXCACHE_PATHS_MAX || !unhex(c, buf, PATH_MAX - 1, &len) ||
		    !len || memchr(buf, 0, len) || !lit(c, "\n")) {
			r = -EBADMSG;
			break;
		}
		buf[len] = '\0';
		r = cd_strv_push(v, (const char *)buf);
		if (r >= 0)
			(*n)++;
	}
	free(buf);
	return r;
}

static int parse_body(struct cur *c, struct cd_idxcache_entry *e, struct cd_gitindex *x)
{
	size_t total = 0;
	int r;

	if (!lit(c, MAGIC) || !key_line(c, e) || !index_line(c, x))
		return -EBADMSG;
	r = path_lines(c, 'p', &x->paths, &x->n, &total);
	if (r >= 0)
		r = path_lines(c, 'd', &x->dirs, &x->n_dirs, &total);
	return r;
}

int cd_idxcache_parse(const char *buf, size_t len, struct cd_idxcache_entry *ret_e,
		      struct cd_gitindex *ret_x)
{
	struct cd_idxcache_entry e = { 0 };
	struct cd_gitindex x = { 0 };
	struct cur c = { buf, buf + len };
	uint8_t want[32], got[32];
	size_t body, n;
	int r;

	if (len > CD_IDXCACHE_FILE_MAX)
		return -EBADMSG;
	r = parse_body(&c, &e, &x);
	body = (size_t)(c.p - buf);
	if (r >= 0 && (!lit(&c, "sha256 ") || !unhex(&c, got, sizeof(got), &n) ||
		       n != sizeof(got) || !lit(&c, "\n") || c.p != c.end))
		r = -EBADMSG;
	if (r >= 0) {
		digest(buf, body, want);
		if (memcmp(want, got, sizeof(want)) != 0)
			r = -EBADMSG;
	}
	if (r < 0) {
		cd_gitindex_done(&x);
		return r;
	}
	*ret_e = e;
	*ret_x = x;
	return 0;
}

/* ---- the directory: STATE/gitindex.d ---- */

/* The resolution of the clock files are stamped with (a tick: 1 to 10 ms) */
static int64_t coarse_tick(void)
{
	struct timespec res;

	return clock_getres(CLOCK_REALTIME_COARSE, &res) == 0 && !res.tv_sec && res.tv_nsec > 0
		       ? res.tv_nsec
		       : NSEC / 100;
}

void cd_idxcache_init(struct cd_idxcache *c, const struct cd_hostpath *workdir,
		      const struct cd_marks *marks)
{
	*c = (struct cd_idxcache){ .workdir = workdir, .marks = marks, .dir_fd = -1,
				   .tick_ns = coarse_tick() };
}

void cd_idxcache_done(struct cd_idxcache *c)
{
	cd_closep(&c->dir_fd);
	c->tried = true;
}

/* STATE: reached from "/" through no symlink, not below an earlier sandbox's workdir, made if
 * missing as the layers' key's directory is (mac.c), the caller's or root's, writable by no one
 * else. (Not in the workdir: a run whose workdir holds it is refused before it plans; and
 * gitindex.d, below it, is checked to be out of the workdir by any mount.) */
static int open_state(struct cd_idxcache *c, const char *state)
{
	const struct cd_layer_place how = { .what = "cordon's state directory",
					    .fix = "cordon follows none on the way to its state",
					    .make = true,
					    .mode = cd_host_root() ? 0755 : 0700,
					    .marks = c->marks };
	struct cordon_error err = { 0 };
	struct stat st;
	int fd = cd_layer_dir_open(state, &how, &err);

	if (fd < 0) {
		snprintf(c->why, sizeof(c->why), "%.200s", err.msg);
		return -1;
	}
	if (fstat(fd, &st) < 0 || (st.st_uid != geteuid() && st.st_uid != 0) ||
	    (st.st_mode & 022)) {
		snprintf(c->why, sizeof(c->why), "%.160s: not the caller's or root's, or writable "
			 "by others", state);
		close(fd);
		return -1;
	}
	return fd;
}

/* STATE/gitindex.d (fd, named path): the caller's, 0700, and out of every sandbox's reach as
 * STATE is: not the workdir nor in it, not an earlier sandbox's workdir (a workdir may be made
 * below STATE: only one holding STATE's list of them is refused) */
static bool check_dir(struct cd_idxcache *c, int fd, const char *path)
{
	const struct cd_output_ctx ctx = { .workdir = c->workdir, .marks = c->marks };
	struct cordon_error err = { 0 };
	struct cd_mark m;
	struct stat st;

	if (fstat(fd, &st) < 0 || st.st_uid != geteuid() || (st.st_mode & 07777) != 0700) {
		snprintf(c->why, sizeof(c->why),
			 "%.160s: not the caller's, or its mode is not 0700", path);
		return false;
	}
	if (cd_output_refuse_in_workdir(fd, path, "protect", "keep it elsewhere", &ctx, &err) < 0) {
		snprintf(c->why, sizeof(c->why), "%.200s", err.msg);
		return false;
	}
	if (cd_marks_any(c->marks) && (cd_mark_of(fd, &m) < 0 || cd_marks_has(c->marks, &m))) {
		snprintf(c->why, sizeof(c->why), "%.160s: was a sandbox's workdir", path);
		return false;
	}
	return true;
}

/* STATE/gitindex.d, made if missing */
static void open_dir(struct cd_idxcache *c)
{
	_cleanup_free_ char *state = cd_marks_state_dir(), *path = NULL;
	_cleanup_close_ int sfd = -1, fd = -1;

	c->tried = true;
	if (!state || !c->marks) {
		snprintf(c->why, sizeof(c->why), state ? "no list of earlier workdirs"
						       : "no state directory (no HOME)");
		return;
	}
	path = cd_strdup_printf("%s/" CD_IDXCACHE_DIR, state);
	if (!path) {
		snprintf(c->why, sizeof(c->why), "out of memory");
		return;
	}
	sfd = open_state(c, state);
	if (sfd < 0)
		return;
	if (mkdirat(sfd, CD_IDXCACHE_DIR, 0700) == 0 &&
	    fchmodat(sfd, CD_IDXCACHE_DIR, 0700, 0) < 0) { /* whatever the umask */
		snprintf(c->why, sizeof(c->why), "%.160s: %s", path, strerror(errno));
		return;
	}
	fd = openat(sfd, CD_IDXCACHE_DIR, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		snprintf(c->why, sizeof(c->why), "%.160s: %s", path, strerror(errno));
		return;
	}
	if (check_dir(c, fd, path))
		c->dir_fd = CD_TAKE_FD(fd);
}

/* ---- entries ---- */

/* "DEV-INO": one entry per index file */
static void entry_name(const struct cd_idxcache_key *k, char buf[48])
{
	snprintf(buf, 48, "%llx-%llx", (unsigned long long)k->dev, (unsigned long long)k->ino);
}

/* An entry's file: the caller's regular file, 0600, one name, bounded; parsed */
static int load(int dir, const char *name, struct cd_idxcache_entry *e, struct cd_gitindex *x)
{
	_cleanup_close_ int fd = openat(dir, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY |
							   O_CLOEXEC);
	_cleanup_free_ char *buf = NULL;
	struct stat st;
	ssize_t n;

	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_uid != geteuid() ||
	    (st.st_mode & 07777) != 0600 || st.st_nlink != 1 || st.st_size > CD_IDXCACHE_FILE_MAX)
		return -EPERM;
	buf = malloc((size_t)st.st_size + 1);
	if (!buf)
		return -ENOMEM;
	n = pread(fd, buf, (size_t)st.st_size + 1, 0);
	if (n != st.st_size)
		return -EBADMSG; /* changed meanwhile */
	return cd_idxcache_parse(buf, (size_t)n, e, x);
}

struct aged {
	struct timespec mtime;
	char name[64];
};

static int older(const void *a, const void *b)
{
	const struct timespec *x = &((const struct aged *)a)->mtime;
	const struct timespec *y = &((const struct aged *)b)->mtime;

	return x->tv_sec != y->tv_sec ? (x->tv_sec < y->tv_sec ? -1 : 1)
				      : (x->tv_nsec > y->tv_nsec) - (x->tv_nsec < y->tv_nsec);
}

/* The entries but keep (about to be replaced), oldest first; temporary files of writers that
 * died removed on the way */
static size_t list_entries(int dir, const char *keep, struct aged **ret)
{
	int fd = fcntl(dir, F_DUPFD_CLOEXEC, 3);
	_cleanup_(cd_closedirp) DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	struct aged *v = NULL;
	size_t n = 0;
	time_t now = time(NULL);

	if (!d) {
		cd_closep(&fd);
		return 0;
	}
	rewinddir(d); /* the descriptor shares its offset with dir's */
	for (struct dirent *de; (de = readdir(d));) {
		struct stat st;
		bool tmp = strncmp(de->d_name, ".tmp-", 5) == 0;

		if ((de->d_name[0] == '.' && !tmp) || strcmp(de->d_name, keep) == 0 ||
		    strlen(de->d_name) >= sizeof(v->name) ||
		    fstatat(dir, de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
			continue;
		if (tmp) {
			if (now - st.st_mtim.tv_sec > TMP_AGE)
				unlinkat(dir, de->d_name, 0);
			continue;
		}
		if (n % 64 == 0) {
			struct aged *nv = reallocarray(v, n + 64, sizeof(*v));

			if (!nv)
				break;
			v = nv;
		}
		v[n].mtime = st.st_mtim;
		snprintf(v[n++].name, sizeof(v->name), "%s", de->d_name);
	}
	if (v)
		qsort(v, n, sizeof(*v), older);
	*ret = v;
	return n;
}

/* Room for one entry more: the oldest written go first */
static void evict(int dir, const char *keep)
{
	struct aged *v = NULL;
	size_t n = list_entries(dir, keep, &v);

	for (size_t i = 0; n >= CD_IDXCACHE_ENTRIES && i <= n - CD_IDXCACHE_ENTRIES; i++)
		unlinkat(dir, v[i].name, 0);
	free(v);
}

/* Written whole under a temporary name, renamed into place; on any failure the old entry goes
 * too (it describes another state of the index, or none) */
static bool store(int dir, const char *name, const struct cd_idxcache_entry *e,
		  const struct cd_gitindex *x)
{
	_cleanup_free_ char *buf = NULL;
	_cleanup_close_ int fd = -1;
	char id[33], tmp[48];
	size_t len = 0;
	int r = cd_idxcache_format(e, x, &buf, &len);

	if (r >= 0)
		r = cd_random_id(id);
	if (r < 0) {
		unlinkat(dir, name, 0);
		return false;
	}
	evict(dir, name);
	snprintf(tmp, sizeof(tmp), ".tmp-%.16s", id);
	fd = openat(dir, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	r = fd < 0 || fchmod(fd, 0600) < 0 ? -errno : cd_write_all(fd, buf, len);
	if (r >= 0 && renameat(dir, tmp, dir, name) < 0)
		r = -errno;
	if (r < 0) {
		if (fd >= 0)
			unlinkat(dir, tmp, 0);
		unlinkat(dir, name, 0);
	}
	return r >= 0;
}

/* ---- reading an index through the cache ---- */

/* Does the filesystem stamp every change of a file's content with this kernel's clock, mapped
 * writes included (page_mkwrite: file_update_time)? */
static bool stamps_writes(int fd)
{
	struct statfs fs;

	if (fstatfs(fd, &fs) < 0)
		return false;
	switch ((unsigned long)fs.f_type) {
	case EXT4_SUPER_MAGIC: /* ext2 and ext3 too */
	case XFS_SUPER_MAGIC:
	case BTRFS_SUPER_MAGIC:
	case F2FS_SUPER_MAGIC:
		return true;
	default:
		return false;
	}
}

/* Does anyone hold the file open for writing (or mapped so)? A read lease is refused then. It is
 * dropped at once; an open for writing meanwhile would signal the lease's owner: SIGURG, which
 * a process ignores unless it asks for it, rather than SIGIO, which ends it. */
static bool no_writer(int fd)
{
	bool ok;

	if (fcntl(fd, F_SETSIG, SIGURG) < 0)
		return false;
	ok = fcntl(fd, F_SETLEASE, F_RDLCK) == 0;
	if (ok)
		(void)fcntl(fd, F_SETLEASE, F_UNLCK);
	return ok;
}

static ssize_t fd_pread(void *ctx, void *buf, size_t n, uint64_t off)
{
	ssize_t k = pread(*(const int *)ctx, buf, n, (off_t)off);

	return k < 0 ? -errno : k;
}

static bool lookup(struct cd_idxcache *c, const struct cd_idxcache_key *now, const char *name,
		   struct cd_gitindex *ret)
{
	struct cd_idxcache_entry e;
	struct cd_gitindex x;

	if (load(c->dir_fd, name, &e, &x) < 0)
		return false;
	if (!cd_idxcache_trust(&e, now, c->tick_ns)) {
		cd_gitindex_done(&x);
		return false;
	}
	*ret = x;
	return true;
}

int cd_idxcache_read(struct cd_idxcache *c, enum cd_idxcache_mode mode, int fd,
		     const struct stat *st, size_t hash_len, unsigned flags,
		     struct cd_gitindex *ret, bool *ret_racy)
{
	const struct cd_gitindex_src src = { fd_pread, &fd, (uint64_t)st->st_size };
	const int64_t tick = c ? c->tick_ns : coarse_tick();
	struct cd_idxcache_entry e = { 0 };
	struct cd_idxcache_key k;
	struct timespec t0;
	struct stat after;
	char name[48];
	bool keep;
	int r;

	cd_idxcache_key_of(st, hash_len, flags, &e.key);
	entry_name(&e.key, name);
	/* small, or on a filesystem whose stamps cannot be trusted: read, the cache unused */
	if (!c || st->st_size < CD_IDXCACHE_MIN || !stamps_writes(fd))
		c = NULL;
	if (c && !c->tried && mode == CD_IDXCACHE_USE)
		open_dir(c);
	if (c && c->dir_fd < 0)
		c = NULL;
	if (c && mode == CD_IDXCACHE_USE && lookup(c, &e.key, name, ret)) {
		c->hits++;
		*ret_racy = false; /* older than the entry's reading by more than a tick */
		return 0;
	}
	clock_gettime(CLOCK_REALTIME, &t0); /* before the lease: a later writer stamps later */
	e.scanned_sec = t0.tv_sec;
	e.scanned_nsec = (uint32_t)t0.tv_nsec;
	keep = c && no_writer(fd);
	r = cd_gitindex_read(&src, hash_len, flags, ret);
	if (r < 0)
		return r;
	*ret_racy = cd_idxcache_racy(&e, tick);
	if (!c)
		return 0;
	c->misses++;
	keep = keep && !*ret_racy && fstat(fd, &after) == 0;
	if (keep)
		cd_idxcache_key_of(&after, hash_len, flags, &k);
	if (keep && cd_idxcache_key_eq(&k, &e.key) && store(c->dir_fd, name, &e, ret))
		c->stored++;
	else
		unlinkat(c->dir_fd, name, 0); /* another state of the index, or none */
	return 0;
}
