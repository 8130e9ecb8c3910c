/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * apply.c - a stored layer written into its workdir (layer.h: cd_layer_apply). Runs in the
 * caller (the CLI, the API), on the host, maybe as root, into a tree a sandbox could have
 * prepared: every path is resolved beneath the workdir's descriptor without following a symlink
 * or crossing a mount (openat2), every entry created under a temporary name and renamed in.
 *
 * Phase 1 checks everything and changes nothing: protected paths, then each change's path as
 * the workdir has it now against its BASE (a match: to do) and its new state (a match: done
 * already, skipped); anything else is a conflict. A directory to remove must hold nothing the
 * layer does not remove too; the directory of a new entry must be there or be made by the layer.
 * Phase 2: deletions deepest first, then additions and modifications parents first, then the
 * modes of directories (last, deepest first: a read-only directory still gets its entries).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fsops.h"
#include "hostroot.h"
#include "layer.h"
#include "manifest.h"
#include "protect_glob.h"
#include "util.h"

enum { CUR_OTHER = '?' }; /* a FIFO, device, socket or mount point: never a match */

struct apply {
	const struct cd_layer *l;
	int store_fd, workdir_fd;
	dev_t dev;
	bool chown;
	uid_t uid;
	gid_t gid;
	bool *pending;
	size_t done;
	struct cordon_error *err;
};

/* ---- protected paths ---- */

/* The same rule as the mounts that protected the path during the run (protect.c). */
bool cd_layer_protected(const char *glob, const char *path)
{
	return cd_protect_glob_match(glob, path);
}

static int check_protect(const struct cd_layer *l, struct cordon_error *err)
{
	for (size_t i = 0; i < l->n_changes; i++)
		for (char **g = l->protect; g && *g; g++)
			if (cd_protect_glob_match(*g, l->changes[i].path))
				return cd_fail(err, EPERM, "layer",
					       "%s: protected (%s): the layer changes it, not applied",
					       l->changes[i].path, *g);
	return 0;
}

/* ---- the workdir now ---- */

static int refuse_path(struct apply *a, const char *path, int r)
{
	if (r == -ELOOP)
		return cd_fail(a->err, ELOOP, "layer",
			       "%s: a symlink in the workdir on the way there, not followed: not applied",
			       path);
	if (r == -EXDEV)
		return cd_fail(a->err, EXDEV, "layer",
			       "%s: a mount point in the workdir on the way there: not applied", path);
	return cd_fail_errno(a->err, -r, "layer", "workdir %s", path);
}

/* The state of path in the workdir, as a save computes BASE. */
static int current(struct apply *a, const char *path, struct cd_layer_state *ret)
{
	_cleanup_close_ int dfd = -1, fd = -1;
	_cleanup_free_ char *target = NULL;
	const char *name;
	struct stat st;
	int r;

	memset(ret, 0, sizeof(*ret));
	ret->type = CD_LT_NONE;
	dfd = cd_lfs_open_parent(a->workdir_fd, path, &name);
	if (dfd == -ENOENT || dfd == -ENOTDIR)
		return 0;
	if (dfd < 0)
		return refuse_path(a, path, dfd);
	if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return errno == ENOENT ? 0 : cd_fail_errno(a->err, errno, "layer", "workdir %s", path);
	ret->mode = st.st_mode & (0777 | S_ISVTX);
	if (st.st_dev != a->dev) {
		ret->type = (enum cd_layer_type)CUR_OTHER;
	} else if (S_ISDIR(st.st_mode)) {
		ret->type = CD_LT_DIR;
	} else if (S_ISLNK(st.st_mode)) {
		ret->type = CD_LT_SYMLINK;
		r = cd_lfs_readlink(dfd, name, &target, &ret->size, ret->sha256);
		if (r < 0)
			return cd_fail_errno(a->err, -r, "layer", "workdir %s", path);
	} else if (S_ISREG(st.st_mode)) {
		ret->type = CD_LT_FILE;
		fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
		if (fd < 0)
			return cd_fail_errno(a->err, errno, "layer", "workdir %s", path);
		r = cd_lfs_hash_fd(fd, &ret->size, ret->sha256);
		if (r < 0)
			return cd_fail_errno(a->err, -r, "layer", "workdir %s", path);
	} else {
		ret->type = (enum cd_layer_type)CUR_OTHER;
	}
	return 0;
}

/* A directory the layer removes holds only what the layer removes too. */
static int check_emptied(struct apply *a, const char *path)
{
	_cleanup_close_ int fd = cd_lfs_open(a->workdir_fd, path, O_RDONLY | O_DIRECTORY, 0);
	_cleanup_free_ char *child = NULL;
	struct dirent *de;
	DIR *d;
	int r = 0;

	if (fd < 0)
		return refuse_path(a, path, fd);
	d = fdopendir(fd);
	if (!d)
		return cd_fail_errno(a->err, errno, "layer", "workdir %s", path);
	fd = -1;
	while (r >= 0 && (de = readdir(d))) {
		const struct cd_layer_change *c;

		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		free(child);
		child = cd_strdup_printf("%s/%s", path, de->d_name);
		c = child ? cd_layer_find(a->l, child) : NULL;
		if (!c || c->op != CD_LAYER_DELETE)
			r = cd_fail(a->err, EEXIST, "layer",
				    "%s: changed in the workdir since the run (it now holds %s, which "
				    "the layer does not remove): not applied",
				    path, de->d_name);
	}
	closedir(d);
	return r;
}

/* The directory of a new entry is there, or the layer makes it. */
static int check_parent(struct apply *a, const char *path)
{
	const struct cd_layer_change *c;
	_cleanup_free_ char *dir = NULL;
	struct cd_layer_state st;
	const char *slash = strrchr(path, '/');
	int r;

	if (!slash)
		return 0;
	dir = strndup(path, (size_t)(slash - path));
	if (!dir)
		return cd_fail(a->err, ENOMEM, "layer", "out of memory");
	c = cd_layer_find(a->l, dir);
	if (c && c->now.type == CD_LT_DIR)
		return 0;
	r = current(a, dir, &st);
	if (r < 0)
		return r;
	if (st.type != CD_LT_DIR)
		return cd_fail(a->err, EEXIST, "layer",
			       "%s: changed in the workdir since the run (its directory %s is gone): "
			       "not applied",
			       path, dir);
	return 0;
}

static int check_one(struct apply *a, size_t i)
{
	const struct cd_layer_change *c = &a->l->changes[i];
	struct cd_layer_state cur;
	char s1[96], s2[96];
	int r;

	if (cd_layer_git_path(c->path))
		return 0; /* git's state: never written as files (gitref.c brings the commits) */
	r = current(a, c->path, &cur);

	if (r < 0)
		return r;
	if (cd_layer_state_equal(&cur, &c->now) && c->op != CD_LAYER_DELETE)
		return 0; /* done already */
	if (c->op == CD_LAYER_DELETE && cur.type == CD_LT_NONE)
		return 0;
	if (!cd_layer_state_equal(&cur, &c->base))
		return cd_fail(a->err, EEXIST, "layer",
			       "%s: changed in the workdir since the run (now %s; the run saw %s): "
			       "not applied",
			       c->path, cd_layer_state_str(&cur, s1), cd_layer_state_str(&c->base, s2));
	a->pending[i] = true;
	if (c->base.type == CD_LT_DIR && c->now.type != CD_LT_DIR) {
		r = check_emptied(a, c->path);
		if (r < 0)
			return r;
	}
	return c->now.type != CD_LT_NONE ? check_parent(a, c->path) : 0;
}

/* ---- writing ---- */

static int open_parent(struct apply *a, const char *path, const char **name)
{
	int fd = cd_lfs_open_parent(a->workdir_fd, path, name);

	return fd < 0 ? refuse_path(a, path, fd) : fd;
}

static int partly(struct apply *a, const char *path, int code, const char *what)
{
	return cd_fail(a->err, code, "layer",
		       "%s: %s: %s (the workdir is partly changed: %zu changes made)", path, what,
		       strerror(code), a->done);
}

static int delete_one(struct apply *a, const struct cd_layer_change *c)
{
	_cleanup_close_ int dfd = -1;
	const char *name;

	dfd = open_parent(a, c->path, &name);
	if (dfd < 0)
		return dfd;
	if (unlinkat(dfd, name, c->base.type == CD_LT_DIR ? AT_REMOVEDIR : 0) < 0 && errno != ENOENT)
		return partly(a, c->path, errno, "removing");
	return 0;
}

/* tree/PATH of the layer, opened */
static int open_tree(struct apply *a, const char *path, int flags)
{
	_cleanup_free_ char *rel = cd_strdup_printf("%s/tree/%s", a->l->id, path);

	return rel ? cd_lfs_open(a->store_fd, rel, flags, 0) : -ENOMEM;
}

static int write_file(struct apply *a, const struct cd_layer_change *c, int dfd, const char *tmp)
{
	/* the store is ours, but what tree/ holds is checked as it is copied: a FIFO put there
	 * must not hang apply */
	_cleanup_close_ int in = open_tree(a, c->path, O_RDONLY | O_NONBLOCK | O_NOCTTY), out = -1;
	struct stat st;
	uint8_t sha[32];
	uint64_t size;
	int r;

	if (in < 0)
		return cd_fail_errno(a->err, -in, "layer", "layer %s: tree/%s", a->l->id, c->path);
	if (fstat(in, &st) < 0 || !S_ISREG(st.st_mode))
		return cd_fail(a->err, EBADMSG, "layer",
			       "layer %s: tree/%s is not a file (damaged layer)", a->l->id, c->path);
	out = openat(dfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (out < 0)
		return partly(a, c->path, errno, "creating");
	/* holes stay holes (the save kept them): a layer of a few KiB of data and GiBs of
	 * apparent size costs the workdir's disk what it costs the store */
	r = cd_lfs_copy_sparse(in, out, c->now.size, NULL, &size, sha);
	if (r == -E2BIG)
		return cd_fail(a->err, EBADMSG, "layer",
			       "layer %s: tree/%s is longer than the manifest says (damaged layer)",
			       a->l->id, c->path);
	if (r < 0)
		return partly(a, c->path, -r, "writing");
	if (size != c->now.size || memcmp(sha, c->now.sha256, 32))
		return cd_fail(a->err, EBADMSG, "layer",
			       "layer %s: tree/%s does not hold what the manifest says (damaged "
			       "layer)", a->l->id, c->path);
	if (a->chown && fchown(out, a->uid, a->gid) < 0)
		return partly(a, c->path, errno, "chown");
	if (fchmod(out, c->now.mode) < 0)
		return partly(a, c->path, errno, "chmod");
	return 0;
}

static int write_symlink(struct apply *a, const struct cd_layer_change *c, int dfd, const char *tmp)
{
	_cleanup_free_ char *target = NULL, *rel = cd_strdup_printf("%s/tree/%s", a->l->id, c->path);
	_cleanup_close_ int tdir = -1;
	const char *name;
	uint8_t sha[32];
	uint64_t size;
	int r;

	if (!rel)
		return cd_fail(a->err, ENOMEM, "layer", "out of memory");
	tdir = cd_lfs_open_parent(a->store_fd, rel, &name);
	r = tdir < 0 ? tdir : cd_lfs_readlink(tdir, name, &target, &size, sha);
	if (r < 0)
		return cd_fail_errno(a->err, -r, "layer", "layer %s: tree/%s", a->l->id, c->path);
	if (size != c->now.size || memcmp(sha, c->now.sha256, 32))
		return cd_fail(a->err, EBADMSG, "layer",
			       "layer %s: tree/%s does not hold what the manifest says (damaged "
			       "layer)", a->l->id, c->path);
	if (symlinkat(target, dfd, tmp) < 0)
		return partly(a, c->path, errno, "creating");
	if (a->chown && fchownat(dfd, tmp, a->uid, a->gid, AT_SYMLINK_NOFOLLOW) < 0)
		return partly(a, c->path, errno, "chown");
	return 0;
}

static int add_one(struct apply *a, const struct cd_layer_change *c)
{
	_cleanup_close_ int dfd = -1;
	const char *name;
	char tmp[32];
	int r;

	dfd = open_parent(a, c->path, &name);
	if (dfd < 0)
		return dfd;
	if (c->now.type == CD_LT_DIR) {
		if (c->base.type == CD_LT_DIR)
			return 0; /* a mode: set last */
		if (mkdirat(dfd, name, 0700) < 0)
			return partly(a, c->path, errno, "making the directory");
		if (a->chown && fchownat(dfd, name, a->uid, a->gid, AT_SYMLINK_NOFOLLOW) < 0)
			return partly(a, c->path, errno, "chown");
		return 0;
	}
	cd_lfs_tmpname(tmp);
	r = c->now.type == CD_LT_FILE ? write_file(a, c, dfd, tmp) : write_symlink(a, c, dfd, tmp);
	if (r >= 0 && renameat(dfd, tmp, dfd, name) < 0)
		r = partly(a, c->path, errno, "renaming into place");
	if (r < 0)
		unlinkat(dfd, tmp, 0);
	return r;
}

static int dir_mode(struct apply *a, const struct cd_layer_change *c)
{
	_cleanup_close_ int fd = cd_lfs_open(a->workdir_fd, c->path, O_RDONLY | O_DIRECTORY, 0);

	if (fd < 0)
		return refuse_path(a, c->path, fd);
	return fchmod(fd, c->now.mode) < 0 ? partly(a, c->path, errno, "chmod") : 0;
}

static bool removes_first(const struct cd_layer_change *c)
{
	if (c->op == CD_LAYER_DELETE)
		return true;
	/* a type change to or from a directory: the old entry goes first */
	return c->op == CD_LAYER_MODIFY && c->base.type != c->now.type &&
	       (c->base.type == CD_LT_DIR || c->now.type == CD_LT_DIR);
}

static int write_all(struct apply *a)
{
	const struct cd_layer *l = a->l;
	int r;

	for (size_t i = l->n_changes; i-- > 0;) /* deepest first: children sort after parents */
		if (a->pending[i] && removes_first(&l->changes[i])) {
			r = delete_one(a, &l->changes[i]);
			if (r < 0)
				return r;
			a->done += l->changes[i].op == CD_LAYER_DELETE;
		}
	for (size_t i = 0; i < l->n_changes; i++)
		if (a->pending[i] && l->changes[i].op != CD_LAYER_DELETE) {
			r = add_one(a, &l->changes[i]);
			if (r < 0)
				return r;
			a->done++;
		}
	for (size_t i = l->n_changes; i-- > 0;)
		if (a->pending[i] && l->changes[i].now.type == CD_LT_DIR) {
			r = dir_mode(a, &l->changes[i]);
			if (r < 0)
				return r;
		}
	return 0;
}

int cd_layer_apply(const struct cd_layer *l, int store_fd, int workdir_fd,
		   struct cordon_error *err)
{
	_cleanup_(cd_strv_freep) char **refs = NULL;

	return cd_layer_apply_git(l, store_fd, workdir_fd, &refs, err);
}

int cd_layer_apply_git(const struct cd_layer *l, int store_fd, int workdir_fd, char ***ret_refs,
		       struct cordon_error *err)
{
	_cleanup_free_ bool *pending = calloc(l->n_changes + 1, sizeof(bool));
	struct apply a = { .l = l, .store_fd = store_fd, .workdir_fd = workdir_fd, .err = err };
	struct stat st;
	int r;

	if (!pending)
		return cd_fail(err, ENOMEM, "layer", "out of memory");
	a.pending = pending;
	if (fstat(workdir_fd, &st) < 0)
		return cd_fail_errno(err, errno, "layer", "the workdir");
	a.dev = st.st_dev;
	a.chown = cd_host_root();
	a.uid = st.st_uid;
	a.gid = st.st_gid;
	r = check_protect(l, err);
	for (size_t i = 0; r >= 0 && i < l->n_changes; i++)
		r = check_one(&a, i);
	/* the commits first: a layer whose objects git refuses writes nothing */
	if (r >= 0)
		r = cd_layer_git_fetch(l, store_fd, workdir_fd, ret_refs, err);
	if (r < 0)
		return r;
	return write_all(&a);
}
