/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * save.c - an overlay's upper layer saved as a layer of the store (layer.h: cd_layer_save).
 * Runs in the supervisor, after the sandbox has ended (nothing changes the upper any more) or,
 * for a checkpoint, while it runs (live: see layer.h); everything in the upper was written by
 * the sandbox: any name, depth, mode or type, sparse files, hard links. What tree/ gets is
 * bounded by what the upper holds (layer.h: CD_SAVE_*): files are copied with their holes, an
 * inode of several names once (its other names hard links to that copy in tree/).
 *
 * The walk is iterative (an explicit stack of names; one directory of each tree open at a
 * time, climbing back through ".." checked against the device and inode we came down from), so
 * neither the C stack nor the descriptor table grows with depth; past CD_SAVE_MAX_DEPTH levels
 * the save fails. Upper entries of mode 000 (ours: the supervisor owns the upper) are opened
 * up through an O_PATH descriptor of the very entry (struct pin); live, their mode is put back
 * through it once read (a directory: when the walk leaves it). The workdir (the lower) is only
 * read, never changed.
 *
 * tree/ keeps the new content: files mode | 0600 and directories mode | 0700, so that the
 * store's owner can always read a layer back; the manifest holds every change's true mode. A
 * directory in tree/ that is not a change itself (it only holds one) and whose mode lacks owner
 * rwx carries its true mode in the xattr user.cordon.mode (octal), for cd_layer_seed.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>

#include "fsops.h"
#include "hostroot.h"
#include "layer.h"
#include "mac.h"
#include "manifest.h"
#include "sha256.h"
#include "util.h"

#define MODE_MASK (0777 | S_ISVTX)
#define GONE      1 /* a live upper's entry vanished or changed type: left out */

enum kind { K_NONE, K_FILE, K_DIR, K_LINK, K_OTHER };

/* An upper entry we opened up (chmod) to read it: its O_PATH descriptor, the mode it had and
 * the mode we gave it; put back when live (unpin). */
struct pin {
	int fd;
	mode_t old, set;
};
#define PIN_NONE ((struct pin){ .fd = -1 })

struct frame {
	char **names; /* this directory's entries, sorted */
	size_t n, i;
	size_t path_len; /* of this directory's path in walk.path */
	dev_t dev, ldev;
	ino_t ino, lino;
	bool lower;     /* has a workdir counterpart (lfd) */
	int parent_lfd; /* the parent's lfd, kept while this frame has none */
	mode_t mode;    /* of the primary directory */
	struct pin pin, pin2; /* the directory opened up while the walk is inside it */
};

struct walk {
	int fd, lfd, tree_fd; /* the directory listed; its workdir counterpart; its tree/ copy */
	bool upper;           /* the primary tree is the upper (opened up when 000) */
	char *path;           /* relative path of the current directory ("" at the top) */
	size_t cap;
	struct frame *f;
	size_t depth, fcap;
	mode_t next_mode; /* set by the visitor for a directory it descends into */
	struct pin next_pin; /* likewise: the directory as the visitor opened it up */
	bool live;           /* the upper, while the sandbox runs */
	size_t held;         /* names held by all frames */
};

/* An upper inode of several names, copied once: its first copy in tree/ */
struct link {
	dev_t dev;
	ino_t ino;
	char *path; /* NULL: a free slot */
	struct cd_layer_state now;
};

struct save {
	int tree_fd, base_fd, upper_fd;
	bool live;
	uint64_t allowed, written; /* data bytes tree/ may get (CD_SAVE_SLACK), and has got */
	uint64_t max_bytes;        /* l->bytes may reach: CD_SAVE_SIZE_FACTOR, CD_SAVE_MAX_BYTES */
	uint64_t path_bytes;       /* kept in memory: the changes' paths, the links' */
	struct link *links;        /* open addressing on (dev, ino) */
	size_t links_cap, n_links;
	dev_t upper_dev, lower_dev;
	struct cd_layer *l;
	size_t cap;
	char *base_dir; /* the base/ directory last made, and its fd */
	int base_dir_fd;
	cd_layer_protect_fn protect_fn; /* more protected globs, once the changes are known */
	void *protect_data;
	struct cordon_error *err;
};

static int store_fail(struct save *s, int r, const char *path)
{
	if (r == -ENOSPC || r == -EDQUOT)
		return cd_fail(s->err, ENOSPC, "layer",
			       "the layer store's filesystem is full: %s not saved (nothing kept; "
			       "free space there or discard layers)",
			       path);
	return cd_fail_errno(s->err, -r, "layer", "saving %s into the layer store", path);
}

/* path + "/" + name (or name at the top), malloc'd */
static char *join(const char *dir, const char *name)
{
	return *dir ? cd_strdup_printf("%s/%s", dir, name) : strdup(name);
}

/* ---- the walk ---- */

static int names_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The names of directory fd, sorted; -E2BIG past max of them. */
static int read_names(int fd, size_t max, char ***ret, size_t *ret_n)
{
	int dfd = openat(fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *d = dfd >= 0 ? fdopendir(dfd) : NULL;
	char **v = NULL;
	size_t n = 0, cap = 0;
	struct dirent *de;

	if (!d) {
		cd_closep(&dfd);
		return -errno;
	}
	while ((de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (n >= max) {
			closedir(d);
			while (n)
				free(v[--n]);
			free(v);
			return -E2BIG;
		}
		if (n + 1 >= cap) {
			char **nv = realloc(v, (cap = cap ? 2 * cap : 16) * sizeof(*v));

			if (!nv)
				goto oom;
			v = nv;
		}
		if (!(v[n] = strdup(de->d_name)))
			goto oom;
		n++;
	}
	closedir(d);
	if (n)
		qsort(v, n, sizeof(*v), names_cmp);
	*ret = v;
	*ret_n = n;
	return 0;
oom:
	closedir(d);
	while (n)
		free(v[--n]);
	free(v);
	return -ENOMEM;
}

static void free_names(struct frame *f)
{
	for (size_t i = 0; i < f->n; i++)
		free(f->names[i]);
	free(f->names);
	f->names = NULL;
}

/* chmod of what the O_PATH descriptor pins (never of a name) */
static int chmod_pinned(int pathfd, mode_t mode)
{
	char proc[64];

	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", pathfd);
	return chmod(proc, mode) < 0 ? -errno : 0;
}

/* The mode of what pin holds put back (live: the sandbox sees this upper), unless it has
 * changed since we set it; the pin let go. */
static void unpin(struct pin *p, bool live)
{
	struct stat st;

	if (p->fd < 0)
		return;
	if (live && fstat(p->fd, &st) == 0 && (st.st_mode & 07777) == p->set)
		(void)chmod_pinned(p->fd, p->old);
	cd_closep(&p->fd);
}

/* An upper entry opened (flags: O_RDONLY, maybe O_DIRECTORY) even when the sandbox took our
 * permissions away: then given owner rwx through an O_PATH descriptor of it, and reopened
 * through that descriptor (*pin: that descriptor and the old mode, for unpin). A file is opened
 * O_NONBLOCK (a FIFO put there meanwhile does not block us) and must be a regular file. */
static int open_upper(int dirfd, const char *name, int flags, struct pin *pin)
{
	_cleanup_close_ int pathfd = -1;
	char proc[64];
	struct stat st;
	mode_t set;
	int fd;

	*pin = PIN_NONE;
	if (!(flags & O_DIRECTORY))
		flags |= O_NONBLOCK | O_NOCTTY;
	fd = openat(dirfd, name, flags | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 && errno != EACCES)
		return -errno;
	if (fd < 0) {
		pathfd = openat(dirfd, name,
				O_PATH | O_NOFOLLOW | O_CLOEXEC | (flags & O_DIRECTORY));
		if (pathfd < 0 || fstat(pathfd, &st) < 0)
			return -errno;
		if (st.st_uid != geteuid() || !(S_ISDIR(st.st_mode) || S_ISREG(st.st_mode)))
			return -EACCES;
		set = (st.st_mode & 07777) | (S_ISDIR(st.st_mode) ? 0700 : 0600);
		if (chmod_pinned(pathfd, set) < 0)
			return -errno;
		*pin = (struct pin){ .fd = CD_TAKE_FD(pathfd), .old = st.st_mode & 07777, .set = set };
		snprintf(proc, sizeof(proc), "/proc/self/fd/%d", pin->fd);
		fd = open(proc, (flags & ~O_NOFOLLOW) | O_CLOEXEC);
		if (fd < 0)
			return -errno;
	}
	if (!(flags & O_DIRECTORY) && (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode))) {
		close(fd);
		return -ESTALE; /* no longer the file we saw */
	}
	return fd;
}

/* An upper file or directory the sandbox closed to its owner (us, not root): opened up
 * (owner read, and for a directory rwx) through an O_PATH descriptor of that very entry, so
 * that its content and xattrs can be read; *pin for unpin. */
static int make_readable(int dirfd, const char *name, const struct stat *st, struct pin *pin)
{
	mode_t need = S_ISDIR(st->st_mode) ? 0700 : 0400, set;
	_cleanup_close_ int pathfd = -1;
	struct stat now;

	*pin = PIN_NONE;
	if (cd_host_root() || !(S_ISDIR(st->st_mode) || S_ISREG(st->st_mode)) ||
	    (st->st_mode & need) == need || st->st_uid != geteuid())
		return 0;
	pathfd = openat(dirfd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	if (pathfd < 0 || fstat(pathfd, &now) < 0)
		return -errno;
	if (now.st_dev != st->st_dev || now.st_ino != st->st_ino)
		return -ESTALE;
	set = (now.st_mode & 07777) | need;
	if (chmod_pinned(pathfd, set) < 0)
		return -errno;
	*pin = (struct pin){ .fd = CD_TAKE_FD(pathfd), .old = now.st_mode & 07777, .set = set };
	return 0;
}

static int push_frame(struct walk *w, int fd, mode_t mode)
{
	struct frame *f;
	struct stat st;
	int r;

	if (w->depth == w->fcap) {
		f = realloc(w->f, (w->fcap = w->fcap ? 2 * w->fcap : 64) * sizeof(*f));
		if (!f)
			return -ENOMEM;
		w->f = f;
	}
	f = &w->f[w->depth];
	*f = (struct frame){ .path_len = strlen(w->path), .parent_lfd = -1, .mode = mode,
			     .pin = PIN_NONE, .pin2 = PIN_NONE };
	if (fstat(fd, &st) < 0)
		return -errno;
	f->dev = st.st_dev;
	f->ino = st.st_ino;
	if (w->lfd >= 0 && fstat(w->lfd, &st) == 0) {
		f->lower = true;
		f->ldev = st.st_dev;
		f->lino = st.st_ino;
	}
	r = read_names(fd, CD_SAVE_MAX_CHANGES - w->held, &f->names, &f->n);
	if (r < 0)
		return r;
	w->held += f->n;
	w->depth++;
	return 0;
}

static int listing_fail(struct cordon_error *err, int r, const char *path)
{
	if (r == -E2BIG)
		return cd_fail(err, E2BIG, "layer",
			       "more than %d names in the directories down to %.200s%s (the limit "
			       "of a layer's changes): not saved",
			       CD_SAVE_MAX_CHANGES, *path ? path : ".", strlen(path) > 200 ? "..." : "");
	return cd_fail_errno(err, -r, "layer", "%.200s: listing", *path ? path : ".");
}

/* A live upper's entry that vanished or changed type under us */
static bool gone(bool live, int r)
{
	return live && (r == -ENOENT || r == -ESTALE || r == -ENOTDIR || r == -ELOOP);
}

static int set_path(struct walk *w, size_t len, const char *name)
{
	size_t need = len + 1 + (name ? strlen(name) : 0) + 1;

	if (need > w->cap) {
		char *p = realloc(w->path, need * 2);

		if (!p)
			return -ENOMEM;
		w->path = p;
		w->cap = need * 2;
	}
	w->path[len] = '\0';
	if (name) {
		if (len)
			strcat(w->path, "/");
		strcat(w->path, name);
	}
	return 0;
}

/* Into the subdirectory name of the current directory (with its workdir counterpart when
 * with_lower). */
static int walk_down(struct walk *w, const char *name, bool with_lower, struct cordon_error *err)
{
	_cleanup_close_ int fd = -1, lfd = -1;
	struct pin pin = w->next_pin, pin2 = PIN_NONE;
	int r, saved_lfd = -1;

	w->next_pin = PIN_NONE;
	if (w->depth >= CD_SAVE_MAX_DEPTH) {
		unpin(&pin, w->live);
		return cd_fail(err, E2BIG, "layer",
			       "the upper has more than %d directory levels (below %.80s...): not "
			       "saved", CD_SAVE_MAX_DEPTH, w->path);
	}
	fd = w->upper ? open_upper(w->fd, name, O_RDONLY | O_DIRECTORY, &pin2)
		      : openat(w->fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		r = w->upper ? fd : -errno;
		unpin(&pin, w->live);
		if (w->upper && gone(w->live, r))
			return GONE; /* left out */
		return cd_fail_errno(err, -r, "layer", "%.200s%s%s: opening", w->path,
				     *w->path ? "/" : "", name);
	}
	if (with_lower && w->lfd >= 0) {
		lfd = openat(w->lfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (lfd < 0) {
			r = errno;
			unpin(&pin2, w->live);
			unpin(&pin, w->live);
			return cd_fail_errno(err, r, "layer", "workdir %.200s%s%s: opening", w->path,
					     *w->path ? "/" : "", name);
		}
	}
	r = set_path(w, strlen(w->path), name);
	if (r < 0) {
		unpin(&pin2, w->live);
		unpin(&pin, w->live);
		return cd_fail(err, ENOMEM, "layer", "out of memory");
	}
	if (lfd < 0)
		saved_lfd = CD_TAKE_FD(w->lfd);
	else
		cd_closep(&w->lfd), w->lfd = CD_TAKE_FD(lfd);
	cd_closep(&w->fd);
	w->fd = CD_TAKE_FD(fd);
	if (w->tree_fd >= 0) {
		int t = openat(w->tree_fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

		close(w->tree_fd);
		w->tree_fd = t;
	}
	r = push_frame(w, w->fd, w->next_mode);
	if (r < 0) {
		cd_closep(&saved_lfd);
		unpin(&pin2, w->live);
		unpin(&pin, w->live);
		return listing_fail(err, r, w->path);
	}
	w->f[w->depth - 1].parent_lfd = saved_lfd;
	w->f[w->depth - 1].pin = pin;
	w->f[w->depth - 1].pin2 = pin2;
	return 0;
}

static int climb(int fd, dev_t dev, ino_t ino)
{
	int up = openat(fd, "..", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	struct stat st;

	if (up < 0)
		return -errno;
	if (fstat(up, &st) < 0 || st.st_dev != dev || st.st_ino != ino) {
		close(up);
		return -ESTALE;
	}
	return up;
}

/* Back to the parent of the current directory (the top frame is popped). */
static int walk_up(struct walk *w, struct cordon_error *err)
{
	struct frame *cur = &w->f[w->depth - 1], *up = &w->f[w->depth - 2];
	int fd = climb(w->fd, up->dev, up->ino);

	if (fd < 0 && w->live)
		return cd_fail(err, -fd, "layer",
			       "%.200s: moved or removed while being saved (back up: %s): not saved; "
			       "try again", w->path, strerror(-fd));
	if (fd < 0)
		return cd_fail_errno(err, -fd, "layer", "%.200s: back up", w->path);
	unpin(&cur->pin2, w->live); /* the directory we leave: its mode back */
	unpin(&cur->pin, w->live);
	close(w->fd);
	w->fd = fd;
	if (cur->parent_lfd >= 0) {
		cd_closep(&w->lfd);
		w->lfd = CD_TAKE_FD(cur->parent_lfd);
	} else if (w->lfd >= 0) {
		fd = climb(w->lfd, up->ldev, up->lino);
		if (fd < 0)
			return cd_fail_errno(err, -fd, "layer", "workdir %s: back up", w->path);
		close(w->lfd);
		w->lfd = fd;
	}
	if (w->tree_fd >= 0) {
		fd = openat(w->tree_fd, "..", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		close(w->tree_fd);
		w->tree_fd = fd;
	}
	w->held -= cur->n;
	free_names(cur);
	w->depth--;
	return set_path(w, up->path_len, NULL);
}

/* visit: < 0 error, 0 next, 1 descend with the workdir's counterpart, 2 descend without */
typedef int (*visit_fn)(struct save *s, struct walk *w, const char *name);

static void walk_free(struct walk *w)
{
	while (w->depth) {
		struct frame *f = &w->f[--w->depth];

		free_names(f);
		cd_closep(&f->parent_lfd);
		unpin(&f->pin2, w->live);
		unpin(&f->pin, w->live);
	}
	unpin(&w->next_pin, w->live);
	free(w->f);
	free(w->path);
	cd_closep(&w->fd);
	cd_closep(&w->lfd);
	cd_closep(&w->tree_fd);
}

/* Walk everything below fd (path prefix: its path), lfd its workdir counterpart (or -1). */
static int walk_run(struct save *s, int fd, int lfd, int tree_fd, bool upper, const char *prefix,
		    mode_t mode, visit_fn visit)
{
	struct walk w = { .fd = -1, .lfd = -1, .tree_fd = -1, .upper = upper,
			  .live = upper && s->live, .next_pin = PIN_NONE };
	int r;

	w.fd = fcntl(fd, F_DUPFD_CLOEXEC, 3);
	w.lfd = lfd >= 0 ? fcntl(lfd, F_DUPFD_CLOEXEC, 3) : -1;
	w.tree_fd = tree_fd >= 0 ? fcntl(tree_fd, F_DUPFD_CLOEXEC, 3) : -1;
	r = w.fd < 0 || (lfd >= 0 && w.lfd < 0) ? -errno : set_path(&w, 0, NULL);
	if (r >= 0 && *prefix)
		r = set_path(&w, 0, prefix);
	if (r >= 0)
		r = push_frame(&w, w.fd, mode);
	if (r < 0) {
		walk_free(&w);
		return listing_fail(s->err, r, prefix);
	}
	while (r >= 0 && w.depth) {
		struct frame *f = &w.f[w.depth - 1];

		if (f->i == f->n) {
			if (w.depth == 1)
				break;
			r = walk_up(&w, s->err);
			continue;
		}
		r = visit(s, &w, f->names[f->i++]);
		if (r > 0)
			r = walk_down(&w, f->names[f->i - 1], r == 1, s->err);
		unpin(&w.next_pin, w.live); /* a directory opened up and not gone into */
	}
	walk_free(&w);
	return r < 0 ? r : 0;
}

/* ---- what is recorded ---- */

static int record(struct save *s, enum cd_layer_op op, const struct cd_layer_state *now,
		  const struct cd_layer_state *base, const char *dir, const char *name)
{
	struct cd_layer *l = s->l;
	struct cd_layer_state none = { .type = CD_LT_NONE };
	size_t len = strlen(dir) + !!*dir + strlen(name);

	if (len > CD_SAVE_MAX_PATH)
		return cd_fail(s->err, ENAMETOOLONG, "layer",
			       "a path of %zu bytes, longer than %d (PATH_MAX), in the upper (%.100s...): "
			       "not saved", len, CD_SAVE_MAX_PATH, *dir ? dir : name);
	if (l->n_changes >= CD_SAVE_MAX_CHANGES)
		return cd_fail(s->err, E2BIG, "layer",
			       "more than %d changes (the limit of a layer): not saved",
			       CD_SAVE_MAX_CHANGES);
	if (s->path_bytes + len + 1 > CD_SAVE_MAX_PATH_BYTES)
		return cd_fail(s->err, E2BIG, "layer",
			       "the changes' paths take more than %llu MiB (the limit of a layer): not "
			       "saved", CD_SAVE_MAX_PATH_BYTES >> 20);
	s->path_bytes += len + 1;
	if (l->n_changes == s->cap) {
		struct cd_layer_change *c = realloc(l->changes, (s->cap = s->cap ? 2 * s->cap : 64) *
								       sizeof(*c));
		if (!c)
			return cd_fail(s->err, ENOMEM, "layer", "out of memory");
		l->changes = c;
	}
	l->changes[l->n_changes] = (struct cd_layer_change){
		.op = op, .now = now ? *now : none, .base = base ? *base : none,
		.path = join(dir, name),
	};
	if (!l->changes[l->n_changes].path)
		return cd_fail(s->err, ENOMEM, "layer", "out of memory");
	l->n_changes++;
	return 0;
}

static enum kind lower_kind(struct save *s, int lfd, const char *name, struct stat *st)
{
	if (lfd < 0 || fstatat(lfd, name, st, AT_SYMLINK_NOFOLLOW) < 0)
		return K_NONE;
	if (st->st_dev != s->lower_dev)
		return K_OTHER; /* a mount point in the workdir: not ours to compare */
	return S_ISREG(st->st_mode) ? K_FILE
	       : S_ISDIR(st->st_mode) ? K_DIR
	       : S_ISLNK(st->st_mode) ? K_LINK
				      : K_OTHER;
}

static bool is_whiteout(const struct stat *st)
{
	return S_ISCHR(st->st_mode) && st->st_rdev == makedev(0, 0);
}

/* Whether name in fd carries one of keys (need_y: with the value "y"; else with any value, of
 * any length, empty included: a redirect is a path, a metacopy mark may be empty). */
static bool has_xattr(int fd, const char *name, const char *const *keys, bool need_y)
{
	_cleanup_free_ char *proc = cd_strdup_printf("/proc/self/fd/%d/%s", fd, name);
	char v[4];

	for (; proc && *keys; keys++) {
		ssize_t n = need_y ? lgetxattr(proc, *keys, v, sizeof(v))
				   : lgetxattr(proc, *keys, NULL, 0);

		if (need_y ? n == 1 && v[0] == 'y' : n >= 0)
			return true;
	}
	return false;
}

static bool is_opaque(int dirfd, const char *name)
{
	static const char *const keys[] = { "user.overlay.opaque", "trusted.overlay.opaque", NULL };

	return has_xattr(dirfd, name, keys, true);
}

/* An overlay that renamed a directory (redirect_dir) or copied up metadata only (metacopy)
 * leaves an upper that does not hold what the sandbox saw: not something we can save. */
static bool is_redirected(int dirfd, const char *name)
{
	static const char *const keys[] = { "user.overlay.redirect", "trusted.overlay.redirect",
					    "user.overlay.metacopy", "trusted.overlay.metacopy",
					    NULL };

	return has_xattr(dirfd, name, keys, false);
}

/* The tree/ directory of the current directory, made (with its parents) when missing. */
static int tree_here(struct save *s, struct walk *w)
{
	int cur;

	if (w->tree_fd >= 0)
		return w->tree_fd;
	cur = fcntl(s->tree_fd, F_DUPFD_CLOEXEC, 3);
	for (size_t k = 1; cur >= 0 && k < w->depth; k++) {
		const struct frame *f = &w->f[k];
		const char *name = w->path + w->f[k - 1].path_len + (k > 1);
		char comp[256];
		size_t n = f->path_len - (size_t)(name - w->path);
		int next;

		memcpy(comp, name, n);
		comp[n] = '\0';
		if (mkdirat(cur, comp, 0700) == 0) {
			char m[8];

			if (fchmodat(cur, comp, (f->mode & MODE_MASK) | 0700, 0) < 0) {
				int r = -errno;

				close(cur);
				return store_fail(s, r, w->path);
			}
			snprintf(m, sizeof(m), "%04o", (unsigned)(f->mode & MODE_MASK));
			if ((f->mode & 0700) != 0700) {
				next = openat(cur, comp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
				if (next >= 0)
					fsetxattr(next, "user.cordon.mode", m, strlen(m), 0);
				cd_closep(&next);
			}
		} else if (errno != EEXIST) {
			int r = -errno;

			close(cur);
			return store_fail(s, r, w->path);
		}
		next = openat(cur, comp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		close(cur);
		cur = next;
	}
	if (cur < 0)
		return store_fail(s, -errno, w->path);
	return w->tree_fd = cur;
}

/* The base/ directory for dir, made when missing. */
static int base_here(struct save *s, const char *dir)
{
	int fd;

	if (s->base_dir && !strcmp(s->base_dir, dir))
		return s->base_dir_fd;
	fd = cd_lfs_mkdirs(s->base_fd, dir, 0700);
	if (fd < 0)
		return store_fail(s, fd, dir);
	free(s->base_dir);
	cd_closep(&s->base_dir_fd);
	s->base_dir = strdup(dir);
	s->base_dir_fd = fd;
	if (!s->base_dir)
		return cd_fail(s->err, ENOMEM, "layer", "out of memory");
	return fd;
}

/* ---- what tree/ gets: bounded by what the upper holds ---- */

/* Apparent bytes the layer's files and symlinks may still add (CD_SAVE_SIZE_FACTOR). */
static uint64_t bytes_left(const struct save *s)
{
	return s->max_bytes > s->l->bytes ? s->max_bytes - s->l->bytes : 0;
}

static int too_big(struct save *s, const char *what, uint64_t size)
{
	return cd_fail(s->err, EFBIG, "layer",
		       "%.200s: a file of %llu bytes or more takes the layer's files past %llu bytes "
		       "in all (%d x --cow-size, counting apparent sizes and every hard link: sparse "
		       "files?): not saved",
		       what, (unsigned long long)size, (unsigned long long)s->max_bytes,
		       CD_SAVE_SIZE_FACTOR);
}

static int over_budget(struct save *s, const char *what)
{
	return cd_fail(s->err, EFBIG, "layer",
		       "the layer holds more than its filesystem used (hard links or sparse files): "
		       "not saved (%llu bytes of data allowed, at %.200s)",
		       (unsigned long long)s->allowed, what);
}

/* What the upper's filesystem has in use, plus CD_SAVE_SLACK. */
static uint64_t upper_allowance(int upper_fd, uint64_t *ret_size)
{
	struct statfs fs;

	if (fstatfs(upper_fd, &fs) < 0)
		return 0;
	if (ret_size)
		*ret_size = (uint64_t)fs.f_blocks * (uint64_t)fs.f_bsize;
	return (uint64_t)(fs.f_blocks - fs.f_bfree) * (uint64_t)fs.f_bsize + CD_SAVE_SLACK;
}

/* Bytes tree/ may still get: a live upper may hold more now than when the save started (what
 * it holds, never more than its size, bounds what we write all the same). */
static uint64_t budget_left(struct save *s)
{
	if (s->live) {
		uint64_t now = upper_allowance(s->upper_fd, NULL);

		if (now > s->allowed)
			s->allowed = now;
	}
	return s->allowed > s->written ? s->allowed - s->written : 0;
}

static size_t link_slot(const struct save *s, dev_t dev, ino_t ino)
{
	size_t i = ((uint64_t)ino * 0x9e3779b97f4a7c15ull ^ (uint64_t)dev) & (s->links_cap - 1);

	while (s->links[i].path && (s->links[i].dev != dev || s->links[i].ino != ino))
		i = (i + 1) & (s->links_cap - 1);
	return i;
}

static const struct link *link_find(const struct save *s, const struct stat *st)
{
	size_t i;

	if (!s->links_cap || st->st_nlink < 2)
		return NULL;
	i = link_slot(s, st->st_dev, st->st_ino);
	return s->links[i].path ? &s->links[i] : NULL;
}

/* An upper inode of several names just copied to tree/path: later names link to it */
static int link_add(struct save *s, const struct stat *st, const char *path,
		    const struct cd_layer_state *now)
{
	size_t len = strlen(path) + 1, i;

	if (st->st_nlink < 2)
		return 0;
	if (s->path_bytes + len > CD_SAVE_MAX_PATH_BYTES)
		return cd_fail(s->err, E2BIG, "layer",
			       "the changes' paths take more than %llu MiB (the limit of a layer): not "
			       "saved", CD_SAVE_MAX_PATH_BYTES >> 20);
	if (2 * (s->n_links + 1) > s->links_cap) {
		struct link *old = s->links;
		size_t old_cap = s->links_cap;

		s->links_cap = old_cap ? 2 * old_cap : 64;
		s->links = calloc(s->links_cap, sizeof(*s->links));
		if (!s->links) {
			s->links = old;
			s->links_cap = old_cap;
			return cd_fail(s->err, ENOMEM, "layer", "out of memory");
		}
		for (size_t k = 0; k < old_cap; k++)
			if (old[k].path)
				s->links[link_slot(s, old[k].dev, old[k].ino)] = old[k];
		free(old);
	}
	i = link_slot(s, st->st_dev, st->st_ino);
	if (s->links[i].path)
		return 0;
	s->links[i] = (struct link){ .dev = st->st_dev, .ino = st->st_ino, .path = strdup(path),
				     .now = *now };
	if (!s->links[i].path)
		return cd_fail(s->err, ENOMEM, "layer", "out of memory");
	s->path_bytes += len;
	s->n_links++;
	return 0;
}

static void links_free(struct save *s)
{
	for (size_t i = 0; i < s->links_cap; i++)
		free(s->links[i].path);
	free(s->links);
}

/* Another name of an upper inode already in tree/: linked to that copy (1), or 0 when it
 * cannot be (then copied). */
static int link_to_first(struct save *s, const struct stat *st, int to_fd, const char *name,
			 struct cd_layer_state *ret)
{
	const struct link *k = link_find(s, st);
	_cleanup_close_ int pfd = -1;
	const char *first;

	if (!k)
		return 0;
	pfd = cd_lfs_open_parent(s->tree_fd, k->path, &first);
	if (pfd < 0 || linkat(pfd, first, to_fd, name, 0) < 0)
		return 0;
	*ret = k->now;
	return 1;
}

/* A file or symlink from (dirfd, name) into (to_fd, name), its state filled. upper: st is the
 * upper's entry (hostile): holes kept, the budget and size limits, hard links made once.
 * 1 (GONE): a live upper's entry vanished or changed type, nothing made. */
static int copy_entry(struct save *s, int dirfd, const char *name, bool upper, const struct stat *st,
		      int to_fd, const char *what, struct cd_layer_state *ret)
{
	_cleanup_close_ int in = -1, out = -1;
	_cleanup_free_ char *target = NULL;
	struct pin pin = PIN_NONE;
	struct stat ist;
	uint64_t left;
	int r;

	ret->mode = st->st_mode & MODE_MASK;
	if (S_ISLNK(st->st_mode)) {
		ret->type = CD_LT_SYMLINK;
		r = cd_lfs_readlink(dirfd, name, &target, &ret->size, ret->sha256);
		if (r == -EINVAL) /* no longer a symlink */
			r = -ESTALE;
		if (upper && gone(s->live, r))
			return GONE;
		if (r < 0)
			return cd_fail_errno(s->err, -r, "layer", "%s: reading the symlink", what);
		/* a tmpfs keeps a target of 128 bytes or more in a page of its own */
		if (upper && ret->size >= 128) {
			if (ret->size > budget_left(s))
				return over_budget(s, what);
			s->written += ret->size;
		}
		if (symlinkat(target, to_fd, name) < 0)
			return store_fail(s, -errno, what);
		return 0;
	}
	ret->type = CD_LT_FILE;
	if (upper && (uint64_t)st->st_size > bytes_left(s))
		return too_big(s, what, (uint64_t)st->st_size);
	if (upper && link_to_first(s, st, to_fd, name, ret) > 0)
		return 0;
	in = upper ? open_upper(dirfd, name, O_RDONLY, &pin)
		   : openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);
	unpin(&pin, s->live); /* open: its mode back at once */
	r = in < 0 ? (upper ? in : -errno) : fstat(in, &ist) < 0 ? -errno : 0;
	if (r >= 0 && (!S_ISREG(ist.st_mode) || ist.st_dev != st->st_dev || ist.st_ino != st->st_ino))
		r = -ESTALE; /* not the file we saw */
	if (upper && gone(s->live, r))
		return GONE;
	if (r < 0)
		return cd_fail_errno(s->err, -r, "layer", "%s: opening", what);
	out = openat(to_fd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (out < 0)
		return store_fail(s, -errno, what);
	if (upper) {
		left = budget_left(s);
		r = cd_lfs_copy_sparse(in, out, bytes_left(s), &left, &ret->size, ret->sha256);
		if (r >= 0 || r == -EFBIG)
			s->written = s->allowed - left;
		if (r == -EFBIG)
			return over_budget(s, what);
		if (r == -E2BIG)
			return too_big(s, what, bytes_left(s) + 1);
	} else { /* the workdir's own file into base/: its holes kept too */
		r = cd_lfs_copy_sparse(in, out, UINT64_MAX, NULL, &ret->size, ret->sha256);
	}
	if (r < 0)
		return r == -ENOSPC || r == -EDQUOT ? store_fail(s, r, what)
						    : cd_fail_errno(s->err, -r, "layer", "%s: copying", what);
	if (fchmod(out, ret->mode | 0600) < 0)
		return store_fail(s, -errno, what);
	return upper ? link_add(s, st, what, ret) : 0;
}

/* State of a file or symlink without copying it; GONE as copy_entry. */
static int state_of(struct save *s, int dirfd, const char *name, bool upper, const struct stat *st,
		    const char *what, struct cd_layer_state *ret)
{
	_cleanup_close_ int fd = -1;
	_cleanup_free_ char *target = NULL;
	struct pin pin = PIN_NONE;
	struct stat fst;
	int r;

	memset(ret, 0, sizeof(*ret));
	ret->mode = st->st_mode & MODE_MASK;
	if (S_ISLNK(st->st_mode)) {
		ret->type = CD_LT_SYMLINK;
		r = cd_lfs_readlink(dirfd, name, &target, &ret->size, ret->sha256);
		if (r == -EINVAL)
			r = -ESTALE;
	} else {
		ret->type = CD_LT_FILE;
		fd = upper ? open_upper(dirfd, name, O_RDONLY, &pin)
			   : openat(dirfd, name,
				    O_RDONLY | O_NOFOLLOW | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);
		unpin(&pin, s->live);
		r = fd < 0 ? (upper ? fd : -errno) : fstat(fd, &fst) < 0 ? -errno : 0;
		if (r >= 0 && (!S_ISREG(fst.st_mode) || fst.st_dev != st->st_dev ||
			       fst.st_ino != st->st_ino))
			r = -ESTALE;
		if (r >= 0)
			r = upper ? cd_lfs_copy_sparse(fd, -1, s->max_bytes, NULL, &ret->size,
						       ret->sha256)
				  : cd_lfs_hash_fd(fd, &ret->size, ret->sha256);
		if (upper && r == -E2BIG)
			return too_big(s, what, s->max_bytes + 1);
	}
	if (upper && gone(s->live, r))
		return GONE;
	return r < 0 ? cd_fail_errno(s->err, -r, "layer", "%s: reading", what) : 0;
}

/* The workdir's file or symlink name in lfd (directory dir) recorded as base. */
static int save_base(struct save *s, int lfd, const char *dir, const char *name,
		     const struct stat *st, struct cd_layer_state *ret)
{
	_cleanup_free_ char *what = join(dir, name);
	int bfd = base_here(s, dir);

	if (!what)
		return cd_fail(s->err, ENOMEM, "layer", "out of memory");
	return bfd < 0 ? bfd : copy_entry(s, lfd, name, false, st, bfd, what, ret);
}

static int del_visit(struct save *s, struct walk *w, const char *name)
{
	struct cd_layer_state base = { .type = CD_LT_DIR };
	struct stat st;
	int r;

	if (fstatat(w->fd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return cd_fail_errno(s->err, errno, "layer", "workdir %s/%s", w->path, name);
	if (st.st_dev != s->lower_dev || !(S_ISREG(st.st_mode) || S_ISDIR(st.st_mode) ||
					   S_ISLNK(st.st_mode))) {
		s->l->skipped++;
		return 0;
	}
	if (S_ISDIR(st.st_mode))
		base.mode = st.st_mode & MODE_MASK;
	else if ((r = save_base(s, w->fd, w->path, name, &st, &base)) < 0)
		return r;
	r = record(s, CD_LAYER_DELETE, NULL, &base, w->path, name);
	if (r < 0 || !S_ISDIR(st.st_mode))
		return r;
	w->next_mode = st.st_mode;
	return 2;
}

/* D for the workdir's name in lfd (directory dir) and, for a directory, all below it. */
static int delete_lower(struct save *s, int lfd, const char *dir, const char *name)
{
	_cleanup_free_ char *path = join(dir, name);
	_cleanup_close_ int fd = -1;
	struct cd_layer_state base = { .type = CD_LT_DIR };
	struct stat st;
	int r;

	if (!path)
		return cd_fail(s->err, ENOMEM, "layer", "out of memory");
	if (fstatat(lfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return cd_fail_errno(s->err, errno, "layer", "workdir %s", path);
	if (!S_ISDIR(st.st_mode)) {
		r = save_base(s, lfd, dir, name, &st, &base);
		return r < 0 ? r : record(s, CD_LAYER_DELETE, NULL, &base, dir, name);
	}
	base.mode = st.st_mode & MODE_MASK;
	r = record(s, CD_LAYER_DELETE, NULL, &base, dir, name);
	if (r < 0)
		return r;
	fd = openat(lfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return cd_fail_errno(s->err, errno, "layer", "workdir %s: opening", path);
	return walk_run(s, fd, -1, -1, false, path, st.st_mode, del_visit);
}

/* An opaque directory over a workdir directory: what the workdir has there and the upper
 * does not is deleted. Called just after the walk entered it. */
static int opaque_deletions(struct save *s, struct walk *w)
{
	const struct frame *f = &w->f[w->depth - 1];
	char **lnames = NULL;
	size_t ln = 0;
	int r;

	r = read_names(w->lfd, CD_SAVE_MAX_CHANGES, &lnames, &ln);
	if (r < 0)
		return listing_fail(s->err, r, w->path);
	for (size_t i = 0; i < ln && r >= 0; i++) {
		struct stat st;

		if (f->n && bsearch(&lnames[i], f->names, f->n, sizeof(char *), names_cmp))
			continue;
		if (lower_kind(s, w->lfd, lnames[i], &st) == K_OTHER) {
			s->l->skipped++;
			continue;
		}
		r = tree_here(s, w); /* the directory of the whiteouts cd_layer_seed makes */
		if (r >= 0)
			r = delete_lower(s, w->lfd, w->path, lnames[i]);
	}
	for (size_t i = 0; i < ln; i++)
		free(lnames[i]);
	free(lnames);
	return r;
}

static int dir_visit(struct save *s, struct walk *w, const char *name, const struct stat *us,
		     enum kind lk, const struct stat *ls)
{
	struct cd_layer_state now = { .type = CD_LT_DIR, .mode = us->st_mode & MODE_MASK }, base;
	int tfd, r;

	if (lk == K_OTHER) {
		s->l->skipped++;
		return 0;
	}
	w->next_mode = us->st_mode;
	if (lk == K_DIR && (ls->st_mode & MODE_MASK) == now.mode)
		return is_opaque(w->fd, name) ? 3 : 1; /* unchanged itself */
	if (lk == K_DIR) {
		base = (struct cd_layer_state){ .type = CD_LT_DIR, .mode = ls->st_mode & MODE_MASK };
		r = record(s, CD_LAYER_MODIFY, &now, &base, w->path, name);
	} else if (lk == K_NONE) {
		r = record(s, CD_LAYER_ADD, &now, NULL, w->path, name);
	} else {
		r = save_base(s, w->lfd, w->path, name, ls, &base);
		if (r >= 0)
			r = record(s, CD_LAYER_MODIFY, &now, &base, w->path, name);
	}
	if (r < 0)
		return r;
	tfd = tree_here(s, w);
	if (tfd < 0)
		return tfd;
	if (mkdirat(tfd, name, 0700) < 0 || fchmodat(tfd, name, now.mode | 0700, 0) < 0)
		return store_fail(s, -errno, s->l->changes[s->l->n_changes - 1].path);
	if (lk == K_DIR)
		return is_opaque(w->fd, name) ? 3 : 1;
	return 2;
}

static int file_visit(struct save *s, struct walk *w, const char *name, const struct stat *us,
		      enum kind lk, const struct stat *ls)
{
	_cleanup_free_ char *path = join(w->path, name);
	struct cd_layer_state now, base;
	bool same_type = (lk == K_FILE && S_ISREG(us->st_mode)) ||
			 (lk == K_LINK && S_ISLNK(us->st_mode));
	int tfd, r;

	if (!path)
		return cd_fail(s->err, ENOMEM, "layer", "out of memory");
	if (lk == K_OTHER) {
		s->l->skipped++;
		return 0;
	}
	if (S_ISREG(us->st_mode) && is_redirected(w->fd, name))
		return cd_fail(s->err, ENOTSUP, "layer",
			       "%s: a metacopy-only copy-up (the overlay must be mounted without "
			       "metacopy)", path);
	if (same_type && (us->st_mode & MODE_MASK) == (ls->st_mode & MODE_MASK) &&
	    us->st_size == ls->st_size) { /* maybe no change at all: compare the content */
		r = state_of(s, w->fd, name, true, us, path, &now);
		if (r == GONE)
			return 0;
		if (r >= 0)
			r = state_of(s, w->lfd, name, false, ls, path, &base);
		if (r < 0 || cd_layer_state_equal(&now, &base))
			return r < 0 ? r : 0;
	}
	tfd = tree_here(s, w);
	if (tfd < 0)
		return tfd;
	r = copy_entry(s, w->fd, name, true, us, tfd, path, &now);
	if (r != 0)
		return r < 0 ? r : 0; /* GONE: left out */
	if (now.size > bytes_left(s)) /* a symlink, another name of an inode copied already */
		return too_big(s, path, now.size);
	s->l->bytes += now.size;
	if (lk == K_NONE)
		return record(s, CD_LAYER_ADD, &now, NULL, w->path, name);
	if (lk == K_DIR) { /* a file where the workdir has a directory: all of it goes */
		r = delete_lower(s, w->lfd, w->path, name);
		if (r < 0)
			return r;
		/* delete_lower recorded the directory itself as D: it is an M */
		for (size_t i = s->l->n_changes; i-- > 0;)
			if (!strcmp(s->l->changes[i].path, path)) {
				s->l->changes[i].op = CD_LAYER_MODIFY;
				s->l->changes[i].now = now;
				break;
			}
		return 0;
	}
	r = save_base(s, w->lfd, w->path, name, ls, &base);
	return r < 0 ? r : record(s, CD_LAYER_MODIFY, &now, &base, w->path, name);
}

static int upper_visit_entry(struct save *s, struct walk *w, const char *name,
			     const struct stat *us, enum kind lk, const struct stat *ls);

static int upper_visit(struct save *s, struct walk *w, const char *name)
{
	struct stat us, ls;
	struct pin pin;
	enum kind lk;
	int r;

	if (fstatat(w->fd, name, &us, AT_SYMLINK_NOFOLLOW) < 0) {
		if (gone(s->live, -errno))
			return 0;
		return cd_fail_errno(s->err, errno, "layer", "upper %.200s/%s", w->path, name);
	}
	lk = lower_kind(s, w->lfd, name, &ls);
	if (us.st_dev != s->upper_dev) {
		s->l->skipped++;
		return 0;
	}
	r = make_readable(w->fd, name, &us, &pin);
	if (gone(s->live, r))
		return 0;
	if (r < 0)
		return cd_fail_errno(s->err, -r, "layer", "upper %.200s/%s: opening up", w->path,
				     name);
	if (S_ISDIR(us.st_mode)) { /* opened up while the walk is in it (walk_down, walk_up) */
		w->next_pin = pin;
		pin = PIN_NONE;
	}
	r = upper_visit_entry(s, w, name, &us, lk, &ls);
	unpin(&pin, s->live); /* a file: read, its mode back */
	return r;
}

static int upper_visit_entry(struct save *s, struct walk *w, const char *name,
			     const struct stat *us, enum kind lk, const struct stat *ls)
{
	int r;

	if (is_whiteout(us)) {
		if (lk == K_NONE)
			return 0;
		if (lk == K_OTHER) {
			s->l->skipped++;
			return 0;
		}
		r = tree_here(s, w); /* the whiteout's directory, for cd_layer_seed */
		return r < 0 ? r : delete_lower(s, w->lfd, w->path, name);
	}
	if (S_ISDIR(us->st_mode)) {
		if (is_redirected(w->fd, name))
			return cd_fail(s->err, ENOTSUP, "layer",
				       "%s%s%s: a renamed directory (the overlay must be mounted "
				       "with redirect_dir=off)", w->path, *w->path ? "/" : "", name);
		r = dir_visit(s, w, name, us, lk, ls);
		if (r != 3)
			return r;
		r = walk_down(w, name, true, s->err); /* opaque: into it here, then deletions */
		if (r == 0)
			r = opaque_deletions(s, w);
		return r < 0 ? r : 0;
	}
	if (S_ISREG(us->st_mode) || S_ISLNK(us->st_mode))
		return file_visit(s, w, name, us, lk, ls);
	s->l->skipped++; /* FIFO, socket, device */
	return 0;
}

/* ---- the layer ---- */

static int copy_meta(const struct cd_layer *meta, struct cd_layer **ret)
{
	struct cd_layer *l = calloc(1, sizeof(*l));

	if (!l)
		return -ENOMEM;
	l->workdir = strdup(meta->workdir ? meta->workdir : "/");
	l->protect = meta->protect ? cd_strv_copy((const char *const *)meta->protect)
				   : calloc(1, sizeof(char *));
	l->workdir_dev = meta->workdir_dev;
	l->workdir_ino = meta->workdir_ino;
	l->created = meta->created;
	l->saved = meta->saved ? meta->saved : (int64_t)time(NULL);
	*ret = l;
	if (!l->workdir || !l->protect)
		return -ENOMEM;
	return 0;
}

/* The manifest goes to its file and into its MAC at once (a FILE over both): it may be hundreds
 * of megabytes, never held twice. */
struct tee {
	int fd;
	struct cd_layer_mac *mac;
};

static ssize_t tee_write(void *cookie, const char *buf, size_t n)
{
	struct tee *t = cookie;
	int r = cd_write_all(t->fd, buf, n);

	if (r < 0) {
		errno = -r;
		return -1;
	}
	if (t->mac)
		cd_layer_mac_update(t->mac, buf, n);
	return (ssize_t)n;
}

static int write_manifest(struct save *s, int tmp_fd, const struct cd_layer_key *key,
			  const char *id)
{
	_cleanup_close_ int fd = openat(tmp_fd, "manifest",
					O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	struct cd_layer_mac mac;
	struct tee t = { .fd = fd, .mac = &mac };
	uint8_t sum[32];
	char hex[65];
	FILE *f;
	int r;

	if (fd < 0)
		return store_fail(s, -errno, "the manifest");
	f = fopencookie(&t, "w", (cookie_io_functions_t){ .write = tee_write });
	if (!f)
		return store_fail(s, -errno, "the manifest");
	cd_layer_mac_init(&mac, key, id);
	r = cd_layer_manifest_write(s->l, f); /* flushed: every byte is in the MAC */
	cd_layer_mac_final(&mac, sum);
	t.mac = NULL;
	cd_sha256_hex(sum, hex);
	if (r >= 0 && (fprintf(f, "mac %s\n", hex) < 0 || fflush(f) == EOF))
		r = errno ? -errno : -EIO;
	if (fclose(f) == EOF && r >= 0)
		r = errno ? -errno : -EIO;
	if (r >= 0 && fsync(fd) < 0)
		r = -errno;
	return r < 0 ? store_fail(s, r, "the manifest") : 0;
}

static int make_tmp(int store_fd, char id[CD_LAYER_ID_LEN + 1], struct cordon_error *err)
{
	char tmp[CD_LAYER_ID_LEN + 8];

	for (int tries = 0; tries < 16; tries++) {
		struct stat st;
		int r = cd_layer_new_id(id);

		if (r < 0)
			return cd_fail_errno(err, -r, "layer", "getrandom");
		snprintf(tmp, sizeof(tmp), ".%s.tmp", id);
		if (fstatat(store_fd, id, &st, AT_SYMLINK_NOFOLLOW) == 0)
			continue;
		if (mkdirat(store_fd, tmp, 0700) == 0)
			return openat(store_fd, tmp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (errno != EEXIST)
			return errno == ENOSPC || errno == EDQUOT
				       ? cd_fail(err, ENOSPC, "layer",
						 "the layer store's filesystem is full")
				       : cd_fail_errno(err, errno, "layer", "layer store: making %s",
						       tmp);
	}
	return cd_fail(err, EEXIST, "layer", "layer store: no free layer id");
}

static int save_into(struct save *s, int tmp_fd, int upper_fd, int lower_fd,
		     const struct cd_layer_key *key, const char *id)
{
	struct stat ust, lst;
	int r;

	if (fstat(upper_fd, &ust) < 0 || fstat(lower_fd, &lst) < 0)
		return cd_fail_errno(s->err, errno, "layer", "the upper or the workdir");
	s->upper_dev = ust.st_dev;
	s->lower_dev = lst.st_dev;
	s->upper_fd = upper_fd;
	{
		uint64_t size = 0;

		s->allowed = upper_allowance(upper_fd, &size);
		if (!s->allowed)
			return cd_fail_errno(s->err, errno, "layer", "the upper's filesystem (statfs)");
		s->max_bytes = size > CD_SAVE_MAX_BYTES / CD_SAVE_SIZE_FACTOR
				       ? CD_SAVE_MAX_BYTES
				       : size * CD_SAVE_SIZE_FACTOR;
		if (!size) { /* a filesystem of no stated size (tmpfs without size=) */
			s->max_bytes = CD_SAVE_MAX_BYTES;
			s->allowed = UINT64_MAX;
		}
	}
	if (mkdirat(tmp_fd, "tree", 0700) < 0 || mkdirat(tmp_fd, "base", 0700) < 0)
		return store_fail(s, -errno, "tree/");
	s->tree_fd = openat(tmp_fd, "tree", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	s->base_fd = openat(tmp_fd, "base", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (s->tree_fd < 0 || s->base_fd < 0)
		return store_fail(s, -errno, "tree/");
	if (is_opaque(upper_fd, "."))
		return cd_fail(s->err, ENOTSUP, "layer", "the upper's top directory is opaque");
	r = walk_run(s, upper_fd, lower_fd, s->tree_fd, true, "", ust.st_mode, upper_visit);
	if (r < 0)
		return r;
	cd_layer_sort(s->l->changes, s->l->n_changes);
	if (s->protect_fn) {
		r = s->protect_fn(s->protect_data, s->l, upper_fd, &s->l->protect, s->err);
		if (r < 0)
			return r;
	}
	return write_manifest(s, tmp_fd, key, id);
}

int cd_layer_save(int store_fd, int upper_fd, int lower_fd, const struct cd_layer *meta,
		  bool live, char ret_id[CD_LAYER_ID_LEN + 1], struct cordon_error *err)
{
	return cd_layer_save_protected(store_fd, upper_fd, lower_fd, meta, NULL, NULL, live, ret_id,
				       err);
}

int cd_layer_save_protected(int store_fd, int upper_fd, int lower_fd, const struct cd_layer *meta,
			    cd_layer_protect_fn protect_fn, void *data, bool live,
			  char ret_id[CD_LAYER_ID_LEN + 1], struct cordon_error *err)
{
	struct save s = { .tree_fd = -1, .base_fd = -1, .base_dir_fd = -1, .upper_fd = -1,
			  .live = live, .protect_fn = protect_fn, .protect_data = data,
			  .err = err };
	_cleanup_close_ int tmp_fd = -1;
	char id[CD_LAYER_ID_LEN + 1], tmp[CD_LAYER_ID_LEN + 8];
	struct cd_layer_key key;
	int r;

	if (copy_meta(meta, &s.l) < 0) {
		cd_layer_free(s.l);
		return cd_fail(err, ENOMEM, "layer", "out of memory");
	}
	r = cd_layer_key_get(store_fd, true, &key, err); /* read now, wiped at once after */
	tmp_fd = r < 0 ? r : make_tmp(store_fd, id, err);
	if (tmp_fd < 0) {
		cd_layer_key_wipe(&key);
		cd_layer_free(s.l);
		return tmp_fd;
	}
	r = save_into(&s, tmp_fd, upper_fd, lower_fd, &key, id);
	cd_layer_key_wipe(&key);
	snprintf(tmp, sizeof(tmp), ".%s.tmp", id);
	if (r >= 0 && (fsync(tmp_fd) < 0 || renameat(store_fd, tmp, store_fd, id) < 0))
		r = store_fail(&s, -errno, "the layer");
	if (r >= 0)
		fsync(store_fd);
	cd_closep(&s.tree_fd);
	cd_closep(&s.base_fd);
	cd_closep(&s.base_dir_fd);
	free(s.base_dir);
	links_free(&s);
	cd_layer_free(s.l);
	if (r < 0) {
		cd_layer_tmp_remove(store_fd, id);
		return r;
	}
	memcpy(ret_id, id, sizeof(id));
	return 0;
}
