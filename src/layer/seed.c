/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * seed.c - a stored layer copied into an empty overlay upper (layer.h: cd_layer_seed), so that a
 * session forked from another's changes starts with them. Runs in the supervisor before the
 * sandbox starts; the upper is a tmpfs of the sandbox's, the store is ours.
 *
 * Entries are made in the manifest's order (parents first): each change's new entry from tree/
 * with the manifest's mode, the directories above it as tree/ has them (their true mode: the
 * xattr user.cordon.mode when save.c left one), and for a deletion whose directory the upper
 * has, a whiteout (a 0:0 character device: overlayfs's, allowed unprivileged since Linux 5.8).
 * No directory is made opaque: every workdir entry a layer removes is listed as D and gets its
 * own whiteout (or lies below a removed directory or a non-directory, which hide it anyway), so
 * whiteouts alone give the view the run left. A workdir entry made after the save, in a
 * directory the run had emptied, is thus visible in the fork: the workdir is the fork's base.
 * Directory modes are set last, deepest first (a read-only directory still gets its entries).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/fsuid.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "fsops.h"
#include "hostroot.h"
#include "layer.h"
#include "manifest.h"
#include "util.h"

struct made_dir {
	char *path;
	mode_t mode;
};

struct seed {
	const struct cd_layer *l;
	int tree_fd, upper_fd;
	uid_t uid;
	gid_t gid;
	struct made_dir *dirs;
	size_t n_dirs;
	struct cordon_error *err;
};

/* Entries are made with the sandbox's ids as the filesystem ids: root's are not mapped in the
 * user namespace the upper's tmpfs belongs to (EOVERFLOW). Reading the store stays root's. */
static void become(const struct seed *s, bool sandbox)
{
	if (!cd_host_root())
		return;
	setfsgid(sandbox ? s->gid : 0);
	setfsuid(sandbox ? s->uid : 0);
}

#define AS_SANDBOX(s, expr)                                                                        \
	({                                                                                         \
		int _r, _e;                                                                        \
		become((s), true);                                                                 \
		_r = (expr);                                                                       \
		_e = errno;                                                                        \
		become((s), false);                                                                \
		errno = _e;                                                                        \
		_r;                                                                                \
	})

static int own(struct seed *s, int dfd, const char *name, const char *path)
{
	struct stat st;

	if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return cd_fail_errno(s->err, errno, "layer", "upper %s", path);
	if (st.st_uid == s->uid && st.st_gid == s->gid)
		return 0;
	if (fchownat(dfd, name, s->uid, s->gid, AT_SYMLINK_NOFOLLOW) < 0)
		return cd_fail_errno(s->err, errno, "layer", "upper %s: chown %u:%u", path,
				     (unsigned)s->uid, (unsigned)s->gid);
	return 0;
}

static int remember_dir(struct seed *s, const char *path, mode_t mode)
{
	struct made_dir *d = realloc(s->dirs, (s->n_dirs + 1) * sizeof(*d));

	if (!d)
		return cd_fail(s->err, ENOMEM, "layer", "out of memory");
	s->dirs = d;
	d[s->n_dirs].path = strdup(path);
	d[s->n_dirs].mode = mode;
	if (!d[s->n_dirs].path)
		return cd_fail(s->err, ENOMEM, "layer", "out of memory");
	s->n_dirs++;
	return 0;
}

/* The true mode of tree/dir, a directory that is not a change itself. */
static int tree_dir_mode(struct seed *s, const char *dir, mode_t *ret)
{
	_cleanup_close_ int fd = cd_lfs_open(s->tree_fd, dir, O_RDONLY | O_DIRECTORY, 0);
	char m[8] = { 0 };
	struct stat st;

	if (fd < 0 || fstat(fd, &st) < 0)
		return cd_fail_errno(s->err, fd < 0 ? -fd : errno, "layer", "layer %s: tree/%s",
				     s->l->id, dir);
	*ret = st.st_mode & (0777 | S_ISVTX);
	if (fgetxattr(fd, "user.cordon.mode", m, sizeof(m) - 1) > 0)
		*ret = (mode_t)strtoul(m, NULL, 8) & (0777 | S_ISVTX);
	return 0;
}

/* Every directory above path made in the upper (as tree/ has it) when missing. */
static int make_parents(struct seed *s, const char *path)
{
	_cleanup_free_ char *p = strdup(path);
	char *slash = p;

	if (!p)
		return cd_fail(s->err, ENOMEM, "layer", "out of memory");
	while ((slash = strchr(slash, '/'))) {
		_cleanup_close_ int dfd = -1;
		const char *name;
		struct stat st;
		mode_t mode = 0755;
		int r;

		*slash = '\0';
		dfd = cd_lfs_open_parent(s->upper_fd, p, &name);
		if (dfd < 0)
			return cd_fail_errno(s->err, -dfd, "layer", "upper %s", p);
		if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
			r = tree_dir_mode(s, p, &mode);
			if (r >= 0 && AS_SANDBOX(s, mkdirat(dfd, name, 0700)) < 0)
				r = cd_fail_errno(s->err, errno, "layer", "upper %s", p);
			if (r >= 0)
				r = own(s, dfd, name, p);
			if (r >= 0)
				r = remember_dir(s, p, mode);
			if (r < 0)
				return r;
		}
		*slash++ = '/';
	}
	return 0;
}

static int copy_file(struct seed *s, const struct cd_layer_change *c, int dfd, const char *name)
{
	_cleanup_close_ int in = cd_lfs_open(s->tree_fd, c->path, O_RDONLY | O_NONBLOCK | O_NOCTTY,
					     0),
			    out = -1;
	struct stat st;
	uint8_t sha[32];
	uint64_t size;
	int r;

	if (in < 0)
		return cd_fail_errno(s->err, -in, "layer", "layer %s: tree/%s", s->l->id, c->path);
	if (fstat(in, &st) < 0 || !S_ISREG(st.st_mode)) /* a FIFO must not hang the run */
		return cd_fail(s->err, EBADMSG, "layer",
			       "layer %s: tree/%s is not a file (damaged layer)", s->l->id, c->path);
	out = AS_SANDBOX(s, openat(dfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
				   0600));
	if (out < 0)
		return cd_fail_errno(s->err, errno, "layer", "upper %s", c->path);
	/* holes kept: the upper is a tmpfs of --cow-size, a sparse file's apparent size may not
	 * fit there */
	r = cd_lfs_copy_sparse(in, out, c->now.size, NULL, &size, sha);
	if (r == -E2BIG)
		return cd_fail(s->err, EBADMSG, "layer",
			       "layer %s: tree/%s is longer than the manifest says (damaged layer)",
			       s->l->id, c->path);
	if (r < 0)
		return cd_fail_errno(s->err, -r, "layer", "upper %s: copying", c->path);
	if (fchmod(out, c->now.mode) < 0)
		return cd_fail_errno(s->err, errno, "layer", "upper %s: chmod", c->path);
	return 0;
}

static int copy_symlink(struct seed *s, const struct cd_layer_change *c, int dfd, const char *name)
{
	_cleanup_free_ char *target = NULL;
	_cleanup_close_ int tdir = -1;
	const char *tname;
	uint8_t sha[32];
	uint64_t size;
	int r;

	tdir = cd_lfs_open_parent(s->tree_fd, c->path, &tname);
	r = tdir < 0 ? tdir : cd_lfs_readlink(tdir, tname, &target, &size, sha);
	if (r < 0)
		return cd_fail_errno(s->err, -r, "layer", "layer %s: tree/%s", s->l->id, c->path);
	if (AS_SANDBOX(s, symlinkat(target, dfd, name)) < 0)
		return cd_fail_errno(s->err, errno, "layer", "upper %s", c->path);
	return 0;
}

/* A deletion: a whiteout (seed_one checked the upper has its directory). */
static int whiteout(struct seed *s, const struct cd_layer_change *c, int dfd, const char *name)
{
	if (AS_SANDBOX(s, mknodat(dfd, name, S_IFCHR | 0, makedev(0, 0))) < 0)
		return cd_fail_errno(s->err, errno, "layer",
				     "upper %s: making a whiteout (mknod 0:0; Linux 5.8 or later)",
				     c->path);
	return 0;
}

static int seed_one(struct seed *s, const struct cd_layer_change *c)
{
	_cleanup_close_ int dfd = -1;
	const char *name;
	int r;

	if (c->op == CD_LAYER_DELETE) {
		const char *slash = strrchr(c->path, '/');
		_cleanup_free_ char *dir = slash ? strndup(c->path, (size_t)(slash - c->path)) : NULL;
		struct stat st;

		/* the whiteout's directory: in the upper when tree/ has it (else the entry is below a
		 * removed directory or a non-directory, which hide it already) */
		if (dir) {
			_cleanup_close_ int t = cd_lfs_open(s->tree_fd, dir, O_PATH, 0);

			if (t < 0 || fstat(t, &st) < 0 || !S_ISDIR(st.st_mode))
				return 0;
		}
	}
	r = make_parents(s, c->path);
	if (r < 0)
		return r;
	dfd = cd_lfs_open_parent(s->upper_fd, c->path, &name);
	if (dfd < 0)
		return cd_fail_errno(s->err, -dfd, "layer", "upper %s", c->path);
	if (c->op == CD_LAYER_DELETE)
		r = whiteout(s, c, dfd, name);
	else if (c->now.type == CD_LT_DIR) {
		r = AS_SANDBOX(s, mkdirat(dfd, name, 0700)) < 0 ? cd_fail_errno(s->err, errno, "layer", "upper %s",
								 c->path)
						 : remember_dir(s, c->path, c->now.mode);
	} else if (c->now.type == CD_LT_FILE)
		r = copy_file(s, c, dfd, name);
	else
		r = copy_symlink(s, c, dfd, name);
	return r < 0 ? r : own(s, dfd, name, c->path);
}

static int set_dir_modes(struct seed *s)
{
	for (size_t i = s->n_dirs; i-- > 0;) {
		_cleanup_close_ int fd = cd_lfs_open(s->upper_fd, s->dirs[i].path,
						     O_RDONLY | O_DIRECTORY, 0);

		if (fd < 0 || fchmod(fd, s->dirs[i].mode) < 0)
			return cd_fail_errno(s->err, fd < 0 ? -fd : errno, "layer", "upper %s: chmod",
					     s->dirs[i].path);
	}
	return 0;
}

int cd_layer_seed(int store_fd, const char *id, int upper_fd, uid_t uid, gid_t gid,
		  struct cordon_error *err)
{
	_cleanup_(cd_layer_freep) struct cd_layer *l = NULL;
	struct seed s = { .upper_fd = upper_fd, .uid = uid, .gid = gid, .err = err };
	_cleanup_free_ char *tree = NULL;
	int r;

	r = cd_layer_load(store_fd, id, &l, err);
	if (r < 0)
		return r;
	s.l = l;
	tree = cd_strdup_printf("%s/tree", id);
	s.tree_fd = tree ? cd_lfs_open(store_fd, tree, O_RDONLY | O_DIRECTORY, 0) : -ENOMEM;
	if (s.tree_fd < 0)
		return cd_fail_errno(err, -s.tree_fd, "layer", "layer %s: tree/", id);
	for (size_t i = 0; r >= 0 && i < l->n_changes; i++)
		r = seed_one(&s, &l->changes[i]);
	if (r >= 0)
		r = set_dir_modes(&s);
	for (size_t i = 0; i < s.n_dirs; i++)
		free(s.dirs[i].path);
	free(s.dirs);
	close(s.tree_fd);
	return r;
}
