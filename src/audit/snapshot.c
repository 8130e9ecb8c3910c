/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* snapshot.c - walk the workdir without following symlinks or crossing mounts, hash regular
 * files, and compare two walks. Supervisor side: the walks run outside the sandbox's cgroup
 * (the second after its timeout), over a tree the sandbox wrote, so every cost is bounded
 * (snapshot.h) and a bound reached is recorded for the audit trail. */
#include <dirent.h>
#include <fcntl.h>
#include <search.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "sha256.h"
#include "snapshot.h"

#define STOPPING_BOUNDS ((1u << CD_WALK_ENTRIES) | (1u << CD_WALK_NAMES) | (1u << CD_WALK_TIME))
#define UNLISTED        "the walk stopped there: changes in what it did not list are not reported"

static const struct cd_walk_bound_info bounds[CD_WALK_NBOUNDS] = {
	[CD_WALK_ENTRIES] = { "entries", CD_SNAPSHOT_MAX_ENTRIES, UNLISTED, false },
	[CD_WALK_DEPTH] = { "depth", CD_SNAPSHOT_MAX_DEPTH,
			    "directories this deep are listed but not entered: changes below them "
			    "are not reported", true },
	[CD_WALK_PATH] = { "path-bytes", CD_SNAPSHOT_MAX_PATH,
			   "entries with a longer path are not listed: their changes are not "
			   "reported", true },
	[CD_WALK_NAMES] = { "name-bytes", CD_SNAPSHOT_MAX_NAMES, UNLISTED, false },
	[CD_WALK_HASHED] = { "hashed-bytes", CD_SNAPSHOT_MAX_HASHED,
			     "further files are not hashed (sha256 null): their changes are found "
			     "by size, mode, owner, inode and times", true },
	[CD_WALK_TIME] = { "time-ms", CD_SNAPSHOT_MAX_MS, UNLISTED, false },
};

const struct cd_walk_bound_info *cd_walk_bound(enum cd_walk_bound b)
{
	return &bounds[b];
}

/* A file with other links: hashed once per walk, whichever link comes first. */
struct inode_digest {
	dev_t dev;
	ino_t ino;
	bool hashed;
	char sha256[65];
};

/* The walk's position: one path buffer for every level, not a copy per level. */
struct walker {
	struct cd_snapshot *s;
	dev_t dev; /* the workdir's: mount points are not crossed */
	size_t len;
	char path[CD_SNAPSHOT_MAX_PATH + 1];
};

static void bound_hit(struct cd_snapshot *s, enum cd_walk_bound b)
{
	s->hit |= 1u << b;
	s->count[b]++;
}

static bool stopped(const struct cd_snapshot *s)
{
	return s->hit & STOPPING_BOUNDS;
}

static bool past_deadline(struct cd_snapshot *s)
{
	if (!(s->hit & (1u << CD_WALK_TIME)) && cd_now_ns() >= s->deadline_ns)
		bound_hit(s, CD_WALK_TIME);
	return s->hit & (1u << CD_WALK_TIME);
}

static int by_inode(const void *a, const void *b)
{
	const struct inode_digest *x = a, *y = b;

	if (x->dev != y->dev)
		return x->dev < y->dev ? -1 : 1;
	return x->ino < y->ino ? -1 : x->ino > y->ino;
}

static uint64_t min_u64(uint64_t a, uint64_t b)
{
	return a < b ? a : b;
}

/* At most size bytes (what lstat said, and what was budgeted): a file that grew is not hashed. */
static int hash_fd(struct cd_snapshot *s, int fd, uint64_t size, char ret[65])
{
	struct cd_sha256 h;
	uint8_t d[32], buf[65536];
	uint64_t total = 0;
	ssize_t n;

	cd_sha256_init(&h);
	/* one byte past size tells a file that grew */
	while ((n = read(fd, buf, (size_t)min_u64(sizeof(buf), size + 1 - total))) > 0) {
		total += (uint64_t)n;
		s->hashed_bytes += (uint64_t)n;
		if (total > size)
			return -EFBIG;
		if (past_deadline(s))
			return -ETIME;
		cd_sha256_update(&h, buf, (size_t)n);
	}
	if (n < 0)
		return -errno;
	cd_sha256_final(&h, d);
	cd_sha256_hex(d, ret);
	return 0;
}

static int hash_file(struct cd_snapshot *s, int dirfd, const char *name, struct cd_fentry *e)
{
	_cleanup_close_ int fd = -1;
	int r;

	fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	if (fd < 0)
		return -errno;
	r = hash_fd(s, fd, e->size, e->sha256);
	e->hashed = r >= 0;
	return r;
}

/* The digest of a regular file, read once per inode: its other links get it without a read. */
static int hash_entry(struct cd_snapshot *s, int dirfd, const char *name, const struct stat *st,
		      struct cd_fentry *e)
{
	struct inode_digest key = { .dev = st->st_dev, .ino = st->st_ino }, *d;
	void *found = NULL;

	if (e->size > CD_SNAPSHOT_HASH_CAP)
		return 0;
	if (st->st_nlink > 1)
		found = tfind(&key, &s->inodes, by_inode);
	if (found) {
		d = *(struct inode_digest **)found;
		e->hashed = d->hashed;
		memcpy(e->sha256, d->sha256, sizeof(e->sha256));
		return 0;
	}
	if (s->hashed_bytes + e->size > CD_SNAPSHOT_MAX_HASHED) {
		bound_hit(s, CD_WALK_HASHED);
		return 0;
	}
	if (hash_file(s, dirfd, name, e) == -ETIME || st->st_nlink <= 1)
		return 0;
	d = malloc(sizeof(*d));
	if (!d)
		return -ENOMEM;
	*d = key;
	d->hashed = e->hashed;
	memcpy(d->sha256, e->sha256, sizeof(d->sha256));
	if (!tsearch(d, &s->inodes, by_inode))
		return free(d), -ENOMEM;
	return 0;
}

static int grow(struct cd_snapshot *s)
{
	size_t cap = s->cap ? 2 * s->cap : 256;
	struct cd_fentry *v;

	if (s->n < s->cap)
		return 0;
	v = realloc(s->e, cap * sizeof(*v));
	if (!v)
		return -ENOMEM;
	s->e = v, s->cap = cap;
	return 0;
}

/* The entry at w->path; *ret_added is false when a bound left it out. */
static int add(struct walker *w, int dirfd, const char *name, const struct stat *st,
	       bool *ret_added)
{
	struct cd_snapshot *s = w->s;
	struct cd_fentry *e;
	ssize_t n = -1;
	char t[4096];

	if (S_ISLNK(st->st_mode) && (n = readlinkat(dirfd, name, t, sizeof(t) - 1)) >= 0)
		t[n] = '\0';
	if (s->n == CD_SNAPSHOT_MAX_ENTRIES)
		return bound_hit(s, CD_WALK_ENTRIES), 0;
	if (s->name_bytes + w->len + 1 + (uint64_t)(n + 1) > CD_SNAPSHOT_MAX_NAMES)
		return bound_hit(s, CD_WALK_NAMES), 0;
	if (grow(s) < 0)
		return -ENOMEM;
	e = &s->e[s->n];
	*e = (struct cd_fentry){
		.mode = st->st_mode, .uid = st->st_uid, .size = (uint64_t)st->st_size,
		.ino = st->st_ino,
		.mtime_ns = (int64_t)st->st_mtim.tv_sec * 1000000000 + st->st_mtim.tv_nsec,
		.ctime_ns = (int64_t)st->st_ctim.tv_sec * 1000000000 + st->st_ctim.tv_nsec,
	};
	e->path = strdup(w->path);
	e->link = n >= 0 ? strdup(t) : NULL;
	s->n++; /* from here on cd_snapshot_done frees it */
	if (!e->path || (n >= 0 && !e->link))
		return -ENOMEM;
	s->name_bytes += w->len + 1 + (uint64_t)(n + 1);
	*ret_added = true;
	return S_ISREG(st->st_mode) ? hash_entry(s, dirfd, name, st, e) : 0;
}

static bool skipped(const struct cd_snapshot *s, const struct stat *st)
{
	for (size_t i = 0; i < s->n_skip; i++)
		if (s->skip[i].dev == st->st_dev && s->skip[i].ino == st->st_ino)
			return true;
	return false;
}

static void closedirp(DIR **d)
{
	if (*d)
		closedir(*d);
}

static int walk_dir(struct walker *w, int dirfd, unsigned depth, bool *ret_listed);

/* A directory entry at depth: entered unless it is a mount point or too deep. */
static int enter(struct walker *w, int dirfd, const char *name, const struct stat *st,
		 unsigned depth)
{
	size_t i = w->s->n - 1; /* its entry, just added: an index, as entering moves the array */
	bool listed = false;
	int sub, r;

	if (st->st_dev != w->dev)
		return 0;
	if (depth == CD_SNAPSHOT_MAX_DEPTH)
		return bound_hit(w->s, CD_WALK_DEPTH), 0;
	sub = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (sub < 0)
		return 0; /* unreadable: not listed */
	r = walk_dir(w, sub, depth + 1, &listed);
	w->s->e[i].listed = listed;
	return r;
}

/* One entry of dirfd: *ret_added is false when it is not in the snapshot, so that dirfd's
 * listing is not whole. */
static int visit(struct walker *w, int dirfd, const char *name, unsigned depth, bool *ret_added)
{
	size_t len = w->len, n = strlen(name);
	struct stat st;
	bool added = false;
	int r;

	*ret_added = false;
	if (past_deadline(w->s))
		return 0;
	if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
		*ret_added = errno == ENOENT; /* removed since readdir: not there, nothing missed */
		return 0;
	}
	if (skipped(w->s, &st))
		return *ret_added = true, 0; /* cordon's own files: left out of both walks */
	if (len + (len > 0) + n > CD_SNAPSHOT_MAX_PATH)
		return bound_hit(w->s, CD_WALK_PATH), 0;
	if (len)
		w->path[w->len++] = '/';
	memcpy(w->path + w->len, name, n + 1);
	w->len += n;
	r = add(w, dirfd, name, &st, &added);
	if (r >= 0 && added && S_ISDIR(st.st_mode))
		r = enter(w, dirfd, name, &st, depth);
	w->len = len;
	w->path[len] = '\0';
	*ret_added = added;
	return r;
}

/* The entries of dirfd (taken), at depth; *ret_listed: every one of them is in the snapshot. */
static int walk_dir(struct walker *w, int dirfd, unsigned depth, bool *ret_listed)
{
	_cleanup_(closedirp) DIR *d = fdopendir(dirfd);
	bool listed = true;
	struct dirent *de;

	*ret_listed = false;
	if (!d)
		return close(dirfd), 0; /* unreadable: its entries are not known */
	for (;;) {
		bool added;
		int r;

		errno = 0;
		de = readdir(d);
		if (!de)
			break;
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		r = visit(w, dirfd, de->d_name, depth, &added);
		if (r < 0)
			return r;
		if (stopped(w->s))
			return 0;
		listed = listed && added;
	}
	*ret_listed = listed && errno == 0;
	return 0;
}

static int by_path(const void *a, const void *b)
{
	return strcmp(((const struct cd_fentry *)a)->path, ((const struct cd_fentry *)b)->path);
}

int cd_snapshot_take(const char *dir, const struct cd_file_id *skip, size_t n_skip,
		     struct cd_snapshot *s)
{
	_cleanup_free_ struct walker *w = malloc(sizeof(*w));
	struct stat st;
	int fd, r;

	*s = (struct cd_snapshot){ .skip = skip, .n_skip = n_skip };
	s->deadline_ns = cd_now_ns() + CD_SNAPSHOT_MAX_MS * NSEC_PER_MSEC;
	if (!w)
		return -ENOMEM;
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0) {
		r = -errno;
		close(fd);
		return r;
	}
	*w = (struct walker){ .s = s, .dev = st.st_dev };
	r = walk_dir(w, fd, 1, &s->listed);
	tdestroy(s->inodes, free); /* only needed while walking */
	s->inodes = NULL;
	if (r < 0) {
		cd_snapshot_done(s);
		return r;
	}
	if (s->n) /* an empty workdir: no array (qsort's pointer must not be NULL) */
		qsort(s->e, s->n, sizeof(*s->e), by_path);
	return 0;
}

void cd_snapshot_done(struct cd_snapshot *s)
{
	for (size_t i = 0; i < s->n; i++) {
		free(s->e[i].path);
		free(s->e[i].link);
	}
	free(s->e);
	if (s->inodes)
		tdestroy(s->inodes, free);
	*s = (struct cd_snapshot){ 0 };
}

/* Two hashes decide the content. Without both (a file too large, unreadable, or past the walk's
 * hash bound on one side), its change time does, which the sandbox cannot set as it can mtime. */
static bool changed(const struct cd_fentry *a, const struct cd_fentry *b)
{
	if (a->mode != b->mode || a->uid != b->uid)
		return true;
	if (S_ISDIR(a->mode))
		return false; /* its entries tell what changed in it */
	if (a->size != b->size || a->mtime_ns != b->mtime_ns || a->ino != b->ino)
		return true;
	if (a->hashed && b->hashed) {
		if (strcmp(a->sha256, b->sha256) != 0)
			return true;
	} else if (S_ISREG(a->mode) && a->ctime_ns != b->ctime_ns) {
		return true;
	}
	return (a->link || b->link) && (!a->link || !b->link || strcmp(a->link, b->link) != 0);
}

/* The entry whose path is the first len bytes of p (s is sorted by path), or NULL. */
static const struct cd_fentry *find(const struct cd_snapshot *s, const char *p, size_t len,
				    size_t *ret_i)
{
	size_t lo = 0, hi = s->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const char *q = s->e[mid].path;
		int c = strncmp(p, q, len);

		if (c == 0 && q[len] != '\0')
			c = -1; /* p is a prefix of q */
		if (c == 0) {
			*ret_i = mid;
			return &s->e[mid];
		}
		if (c < 0)
			hi = mid;
		else
			lo = mid + 1;
	}
	return NULL;
}

/* Whether the walk of other, which does not have path, saw it absent: its parent is there a
 * directory listed whole, or not a directory, or itself seen absent. The parent is in own (a
 * walk lists a directory's entries only after the directory), and comes before path there:
 * its answer is in own_seen already. */
static bool seen_absent(const struct cd_snapshot *other, const struct cd_snapshot *own,
			const bool *own_seen, const char *path)
{
	const char *slash = strrchr(path, '/');
	const struct cd_fentry *p;
	size_t i;

	if (!slash)
		return other->listed;
	p = find(other, path, (size_t)(slash - path), &i);
	if (p)
		return !S_ISDIR(p->mode) || p->listed;
	return find(own, path, (size_t)(slash - path), &i) && own_seen[i];
}

int cd_snapshot_diff(const struct cd_snapshot *a, const struct cd_snapshot *b,
		     void (*fn)(enum cd_change what, const struct cd_fentry *e, void *data),
		     void *data)
{
	_cleanup_free_ bool *seen_a = calloc(a->n + 1, sizeof(bool));
	_cleanup_free_ bool *seen_b = calloc(b->n + 1, sizeof(bool));
	size_t i = 0, k = 0;

	if (!seen_a || !seen_b)
		return -ENOMEM;
	while (i < a->n || k < b->n) {
		int c = i == a->n ? 1 : k == b->n ? -1 : strcmp(a->e[i].path, b->e[k].path);

		if (c < 0) {
			seen_a[i] = seen_absent(b, a, seen_a, a->e[i].path);
			if (seen_a[i])
				fn(CD_DELETED, &a->e[i], data);
			i++;
		} else if (c > 0) {
			seen_b[k] = seen_absent(a, b, seen_b, b->e[k].path);
			if (seen_b[k])
				fn(CD_CREATED, &b->e[k], data);
			k++;
		} else {
			if (changed(&a->e[i], &b->e[k]))
				fn(CD_MODIFIED, &b->e[k], data);
			i++, k++;
		}
	}
	return 0;
}

const char *cd_fentry_type(mode_t mode)
{
	return S_ISREG(mode) ? "file" : S_ISDIR(mode) ? "dir" : S_ISLNK(mode) ? "symlink" :
	       S_ISFIFO(mode) ? "fifo" : S_ISSOCK(mode) ? "socket" : "other";
}
