/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * mount.c - build the sandbox's root and enter it. Runs in the child (pid 1 of the new
 * namespaces), with full capabilities in its own user namespace, before anything untrusted runs.
 *
 * Only the new mount API is used (open_tree, fsopen/fsmount, mount_setattr, move_mount), so that
 * every mount is made on a file descriptor rather than a path looked up again:
 *  phase 1  every host source is cloned into a detached tree (open_tree) and made read-only,
 *           nosuid, nodev with one recursive mount_setattr, while host paths still resolve
 *           (open_sources; the workdir's tree comes from the supervisor, checked);
 *  phase 2  a tmpfs is attached at /tmp of our private copy of the host's tree: the new root
 *           (attach_root);
 *  phase 3  each planned entry but /sys is placed into it, in the plan's order (place). Mount
 *           points are found or created with openat2(RESOLVE_IN_ROOT), so a symlink planted in
 *           the workdir or the rootfs resolves inside the new root and can never point a mount
 *           at the host. /proc is locked down as it is placed (masks, read-only parts). The
 *           workdir (place_workdir) is, with --cow, an overlay of its tree and a tmpfs of its
 *           own, whose upper directory is handed to the supervisor (sync 2's CD_MSG_LAYER);
 *           right after it, the protected paths (place_protect): pins, then read-only clones or
 *           masks;
 *  phase 4  the tmpfs mounts meant to be read-only and the root itself become read-only
 *           (make_read_only); then /sys, a fresh sysfs of pid 1's network namespace (or the
 *           host's, read-only, with --net host), on a directory of the read-only root;
 *  phase 5  pivot_root(".", ".") and the old root is detached: nothing of the host's tree is
 *           reachable any more but what was bound (enter_root).
 */
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/xattr.h>

#include "mount.h"
#include "sync.h"
#include "sysinfo.h"
#include "timing.h"

#define EMPTY_FILE ".cordon-empty"   /* mask sources in the new root; removed in phase 4 */
/* the new root holds directories, mount points and the files cordon makes (each at most 1 MiB:
 * passwd, group, hosts) */
#define CD_ROOT_TMPFS_SIZE (4u << 20)
#define EMPTY_DIR  ".cordon-empty.d"

/* /proc entries that let a process read kernel memory or state, or poke the kernel. */
static const char *const proc_masked_files[] = {
	"kallsyms", "kcore", "keys", "kpagecgroup", "kpagecount", "kpageflags", "latency_stats",
	"sched_debug", "timer_list", "timer_stats", "vmallocinfo",
};
static const char *const proc_masked_dirs[] = { "acpi", "asound", "scsi" };
static const char *const sys_masked_dirs[] = { "firmware", "devices/virtual/powercap" };
static const char *const proc_readonly[] = { "bus", "fs", "irq", "sys", "sysrq-trigger" };
static const char *const dev_nodes[] = { "full", "null", "random", "tty", "urandom", "zero" };

struct mount_ctx {
	struct cd_mount_plan *plan;
	int root;     /* the new root's mount fd */
	int empty;    /* O_PATH fd of EMPTY_FILE */
	int empty_dir; /* and of EMPTY_DIR */
	int proc;      /* a fresh procfs pid 1 made, for the first /proc; -1: none (left) */
	int dev_src[CD_ELEMENTSOF(dev_nodes)];
	bool workdir_placed;
	uint64_t workdir_mnt_id; /* the workdir's mount once placed (the one writable host one) */
};

static int sys_open_tree(int dfd, const char *path, unsigned flags)
{
	return (int)syscall(SYS_open_tree, dfd, path, flags);
}

static int sys_move_mount(int from, int to)
{
	return (int)syscall(SYS_move_mount, from, "", to, "",
			    MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH);
}

static int set_attr(int fd, uint64_t attr, bool recursive)
{
	struct mount_attr a = { .attr_set = attr };

	return mount_setattr(fd, "", AT_EMPTY_PATH | (recursive ? AT_RECURSIVE : 0), &a,
			     sizeof(a));
}

/* mount(2) family errors with what usually causes them. */
static int mount_fail(struct cordon_error *err, int e, const char *what, const char *path)
{
	char hint[400];

	if (e == EPERM && cd_sysinfo_userns_hint_inside(hint, sizeof(hint)))
		return cd_fail(err, e, "mount", "%s %s: %s (%s)", what, path, strerror(e), hint);
	return cd_fail(err, e, "mount", "%s %s: %s", what, path, strerror(e));
}

/* A fresh proc or sysfs refused (EPERM at its creation or its mount, by kernel version): the
 * kernel allows one in a user namespace only while the host's is wholly visible */
static int fresh_refused(struct cordon_error *err, int e, const char *type)
{
	char hint[400];
	bool more = cd_sysinfo_userns_hint_inside(hint, sizeof(hint));

	return cd_fail(err, e, "mount",
		       "cannot mount a fresh %s: %s. The host's %s is partly covered (as inside a "
		       "Docker or Podman container), and the kernel then refuses a new one; run the "
		       "container with --security-opt systempaths=unconfined (or privileged)%s%s",
		       type, strerror(e), type, more ? "; or: " : "", more ? hint : "");
}

static bool fresh_kind(const char *type)
{
	return strcmp(type, "proc") == 0 || strcmp(type, "sysfs") == 0;
}

/* A new superblock of `type`, detached, as a mount fd. opts: "key=value" or "flag", NULL-ended. */
static int fs_new(const char *type, const char *const *opts, uint64_t attrs, int *ret,
		  struct cordon_error *err)
{
	_cleanup_close_ int fs = fsopen(type, FSOPEN_CLOEXEC);
	char detail[256] = "";
	int m;

	if (fs < 0)
		return mount_fail(err, errno, "fsopen", type);
	for (; opts && *opts; opts++) {
		_cleanup_free_ char *key = strdup(*opts);
		char *val = key ? strchr(key, '=') : NULL;

		if (!key)
			return cd_fail(err, ENOMEM, "mount", "out of memory");
		if (val)
			*val++ = '\0';
		if (fsconfig(fs, val ? FSCONFIG_SET_STRING : FSCONFIG_SET_FLAG, key, val, 0) < 0)
			return cd_fail_errno(err, errno, "mount", "%s option %s", type, *opts);
	}
	/* mountinfo's source: the type, as mount(8) and runc name it ("none" otherwise), which
	 * the runtime-spec's runtimetest compares with a config's mounts[].source. A label. */
	(void)fsconfig(fs, FSCONFIG_SET_STRING, "source", type, 0);
	if (fsconfig(fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0) {
		int e = errno;
		ssize_t n = read(fs, detail, sizeof(detail) - 1); /* the kernel's own message */

		detail[n > 0 ? n - (detail[n - 1] == '\n') : 0] = '\0';
		if (e == EPERM && fresh_kind(type))
			return fresh_refused(err, e, type);
		if (detail[0])
			return cd_fail(err, e, "mount", "create %s: %s (%s)", type, strerror(e),
				       detail);
		return mount_fail(err, e, "create", type);
	}
	m = fsmount(fs, FSMOUNT_CLOEXEC, (unsigned)attrs);
	if (m < 0 && errno == EPERM && fresh_kind(type))
		return fresh_refused(err, errno, type);
	if (m < 0)
		return mount_fail(err, errno, "fsmount", type);
	*ret = m;
	return 0;
}

static int tmpfs_new(struct mount_ctx *ctx, uint64_t size, mode_t mode, uint64_t attrs,
		     int *ret, struct cordon_error *err)
{
	char o_size[40], o_inodes[40], o_mode[24], o_uid[24], o_gid[24];
	const char *opts[] = { o_size, o_inodes, o_mode, o_uid, o_gid, NULL };
	/* the byte cap does not bound inodes; one per KiB does, so empty files cannot eat
	 * the kernel's memory either */
	uint64_t inodes = size / 1024 < 1024 ? 1024 : size / 1024;

	snprintf(o_size, sizeof(o_size), "size=%llu", (unsigned long long)size);
	snprintf(o_inodes, sizeof(o_inodes), "nr_inodes=%llu", (unsigned long long)inodes);
	snprintf(o_mode, sizeof(o_mode), "mode=%o", (unsigned)mode);
	snprintf(o_uid, sizeof(o_uid), "uid=%u", ctx->plan->uid);
	snprintf(o_gid, sizeof(o_gid), "gid=%u", ctx->plan->gid);
	return fs_new("tmpfs", opts, attrs, ret, err);
}

static int openat2_in(int root, const char *path, int flags, int *ret)
{
	struct open_how how = {
		.flags = (uint64_t)(flags | O_CLOEXEC),
		.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS,
	};
	int fd;

	if (path[0] == '/')
		path++;
	if (!*path)
		path = ".";
	fd = (int)syscall(SYS_openat2, root, path, &how, sizeof(how));
	if (fd < 0)
		return -errno;
	*ret = fd;
	return 0;
}

/* Would making `path` in the resolved directory dir write to the workdir, on the host? By its
 * path, and by dir's mount: a symlink elsewhere in the new root (in a --ro-bind source) may
 * lead into the workdir. Where the mount cannot be told, it is taken to be the workdir's. */
static bool in_workdir(const struct mount_ctx *ctx, int dir, const char *path)
{
	struct statx stx;

	if (!ctx->workdir_placed)
		return false;
	if (cd_path_startswith(path, ctx->plan->workdir_target))
		return true;
	if (!ctx->workdir_mnt_id)
		return false; /* before 5.8: no mount ids, the path alone */
	if (statx(dir, "", AT_EMPTY_PATH, STATX_MNT_ID, &stx) < 0 || !(stx.stx_mask & STATX_MNT_ID))
		return true;
	return stx.stx_mnt_id == ctx->workdir_mnt_id;
}

/* One missing directory, `name` in the resolved parent `dir`: nothing is followed. Never in the
 * workdir once it is in place: that would write to the host. */
static int make_dir(struct mount_ctx *ctx, int dir, const char *prefix, const char *name,
		    const char *dst, struct cordon_error *err)
{
	if (in_workdir(ctx, dir, prefix))
		return cd_fail(err, ENOENT, "mount",
			       "mount point %s does not exist in the workdir "
			       "(cordon does not create files in the workdir)",
			       dst);
	if (mkdirat(dir, name, 0755) < 0 && errno != EEXIST)
		return cd_fail_errno(err, errno, "mount", "create mount point %s", prefix);
	return 0;
}

/* The directory `dst`, created with its parents as needed: as an O_PATH fd. Each prefix is
 * looked up from the new root (a symlink in it resolves inside it) until one is missing; from
 * there each is made in its resolved parent, then looked up the same way. */
static int open_dir_p(struct mount_ctx *ctx, const char *dst, int *ret, struct cordon_error *err)
{
	_cleanup_close_ int cur = -1;
	char prefix[4096];
	size_t len = strlen(dst);
	bool missing = false;
	int r;

	if (len >= sizeof(prefix))
		return cd_fail(err, ENAMETOOLONG, "mount", "%s: path too long", dst);
	r = openat2_in(ctx->root, dst, O_PATH | O_DIRECTORY, ret);
	if (r != -ENOENT)
		return r < 0 ? cd_fail_errno(err, -r, "mount", "mount point %s", dst) : 0;
	for (size_t start = 1, end; start < len; start = end + 1) {
		int next = -1;

		end = start + strcspn(dst + start, "/");
		if (end == start)
			continue;
		memcpy(prefix, dst, end);
		prefix[end] = '\0';
		/* all of dst was missing: so is its last name, once its parent is found */
		r = missing || end == len ? -ENOENT
					  : openat2_in(ctx->root, prefix, O_PATH | O_DIRECTORY, &next);
		if (r == -ENOENT) {
			missing = true;
			r = make_dir(ctx, cur >= 0 ? cur : ctx->root, prefix, prefix + start, dst,
				     err);
			if (r < 0)
				return r;
			r = openat2_in(ctx->root, prefix, O_PATH | O_DIRECTORY, &next);
		}
		if (r < 0)
			return cd_fail_errno(err, -r, "mount", "mount point %s", dst);
		if (cur >= 0)
			close(cur);
		cur = next;
	}
	if (cur < 0)
		return cd_fail_errno(err, ENOENT, "mount", "mount point %s", dst);
	*ret = CD_TAKE_FD(cur);
	return 0;
}

/* The parent directory of dst (created as needed) and the last component. */
static int open_parent(struct mount_ctx *ctx, const char *dst, int *ret, const char **ret_name,
		       struct cordon_error *err)
{
	const char *slash = strrchr(dst, '/');
	char parent[4096];
	size_t n = (size_t)(slash - dst);

	if (n >= sizeof(parent))
		return cd_fail(err, ENAMETOOLONG, "mount", "%s: path too long", dst);
	memcpy(parent, dst, n);
	parent[n] = '\0';
	*ret_name = slash + 1;
	return open_dir_p(ctx, n ? parent : "/", ret, err);
}

/* The file `dst`, created empty if missing, as an O_PATH fd. */
static int open_file_p(struct mount_ctx *ctx, const char *dst, int *ret, struct cordon_error *err)
{
	_cleanup_close_ int parent = -1;
	const char *name;
	int fd, r;

	r = openat2_in(ctx->root, dst, O_PATH, &fd);
	if (r == 0) {
		*ret = fd;
		return 0;
	}
	r = open_parent(ctx, dst, &parent, &name, err);
	if (r < 0)
		return r;
	if (in_workdir(ctx, parent, dst))
		return cd_fail(err, ENOENT, "mount",
			       "mount point %s does not exist in the workdir (cordon does not "
			       "create files in the workdir)",
			       dst);
	fd = openat(parent, name, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC | O_NOFOLLOW, 0644);
	if (fd < 0)
		return cd_fail_errno(err, errno, "mount", "create mount point %s", dst);
	close(fd);
	r = openat2_in(ctx->root, dst, O_PATH, &fd);
	if (r < 0)
		return cd_fail_errno(err, -r, "mount", "mount point %s", dst);
	*ret = fd;
	return 0;
}

static int attach(int mnt, int target, const char *dst, struct cordon_error *err)
{
	if (sys_move_mount(mnt, target) < 0)
		return mount_fail(err, errno, "attach on", dst);
	return 0;
}

/* Attach on `name` in dir, a directory pid 1 made in a filesystem of its own just now: nothing
 * there can be a symlink (the sandbox has not started), so the name is not opened first. */
static int attach_in_new(int mnt, int dir, const char *name, const char *dst,
			 struct cordon_error *err)
{
	if (syscall(SYS_move_mount, mnt, "", dir, name, MOVE_MOUNT_F_EMPTY_PATH) < 0)
		return mount_fail(err, errno, "attach on", dst);
	return 0;
}

/* A top-level name of the new root (a tmpfs pid 1 made: nothing in it is a symlink but what
 * cordon put there), or NULL for a deeper path */
static const char *top_level(const char *dst)
{
	return dst[0] == '/' && dst[1] && !strchr(dst + 1, '/') ? dst + 1 : NULL;
}

/* Clone a host tree; read-only (unless rw), nosuid, nodev everywhere in it. The sources are
 * canonical paths (resolved, or checked not to be symlinks, by the supervisor): a symlink that
 * appears in one since (a tree a sandbox can write, swapped) is refused, never followed. */
static int clone_source(const char *src, bool rw, int *ret, struct cordon_error *err)
{
	struct open_how how = { .flags = O_PATH | O_CLOEXEC,
				.resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS };
	_cleanup_close_ int path = (int)syscall(SYS_openat2, AT_FDCWD, src, &how, sizeof(how));
	_cleanup_close_ int fd = -1;
	uint64_t attr = MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | (rw ? 0 : MOUNT_ATTR_RDONLY);

	if (path < 0 && errno == ELOOP)
		return cd_fail(err, ELOOP, "mount", "%s: a symlink appeared in its path while "
						   "cordon was starting", src);
	if (path < 0)
		return mount_fail(err, errno, "open", src);
	fd = sys_open_tree(path, "", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_RECURSIVE |
					     AT_EMPTY_PATH);
	if (fd < 0)
		return mount_fail(err, errno, "clone the mount of", src);
	if (set_attr(fd, attr, true) < 0)
		return mount_fail(err, errno, rw ? "set nosuid,nodev on" : "make read-only", src);
	*ret = CD_TAKE_FD(fd);
	return 0;
}

/* The workdir or a --ro-bind source, looked up again here (pid 1 of an unprivileged caller
 * cannot clone the host's mounts from the launcher's descriptor): by its canonical path, where
 * no symlink may appear, and only if it is still what the launcher checked. */
static int open_checked(const struct cd_mnt *m, bool rw, int *ret, struct cordon_error *err)
{
	const char *step = m->kind == CD_MNT_WORKDIR ? "workdir" : "ro-bind";
	struct open_how how = { .flags = O_PATH | O_CLOEXEC,
				.resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS };
	_cleanup_close_ int fd = (int)syscall(SYS_openat2, AT_FDCWD, m->src, &how, sizeof(how));
	struct mount_attr top = { .attr_clr = MOUNT_ATTR_RDONLY };
	struct stat st;

	if (fd < 0 && errno == ELOOP)
		return cd_fail(err, ELOOP, step,
			       "%s: a symlink appeared in its path while cordon was starting", m->src);
	if (fd < 0 || fstat(fd, &st) < 0)
		return cd_fail_errno(err, errno, step, "%s", m->src);
	if (st.st_dev != m->dev || st.st_ino != m->ino)
		return cd_fail(err, ESTALE, step,
			       "%s: replaced by another file while cordon was starting", m->src);
	*ret = sys_open_tree(fd, "", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_RECURSIVE |
					     AT_EMPTY_PATH);
	if (*ret < 0)
		return mount_fail(err, errno, "clone the mount of", m->src);
	/* every mount below the workdir stays read-only: it is the one writable place */
	if (set_attr(*ret, MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV, true) < 0)
		return mount_fail(err, errno, "make read-only", m->src);
	if (rw && mount_setattr(*ret, "", AT_EMPTY_PATH, &top, sizeof(top)) < 0)
		return mount_fail(err, errno, "make writable", m->src);
	return 0;
}

/* phase 1; takes ownership of workdir_fd */
static int open_sources(struct mount_ctx *ctx, int workdir_fd, struct cordon_error *err)
{
	struct cd_mount_plan *p = ctx->plan;
	int r;

	for (size_t i = 0; i < p->n; i++) {
		struct cd_mnt *m = &p->m[i];
		bool workdir = m->kind == CD_MNT_WORKDIR;

		if (workdir) {
			r = workdir_fd >= 0 ? (m->fd = CD_TAKE_FD(workdir_fd), 0)
					    : open_checked(m, true, &m->fd, err);
			if (r < 0)
				return r;
			continue;
		}
		if (m->kind != CD_MNT_BIND && !(m->kind == CD_MNT_SYSFS && !p->fresh_sysfs))
			continue;
		if (m->fd >= 0)
			continue; /* cloned by the supervisor from what it checked (sync 2) */
		if (m->kind == CD_MNT_BIND && m->user)
			r = open_checked(m, false, &m->fd, err);
		else
			r = clone_source(m->src, false, &m->fd, err);
		if (r < 0)
			return r;
	}
	cd_closep(&workdir_fd);
	for (size_t i = 0; i < CD_ELEMENTSOF(dev_nodes); i++) {
		char path[32];
		int fd;

		snprintf(path, sizeof(path), "/dev/%s", dev_nodes[i]);
		fd = sys_open_tree(AT_FDCWD, path, OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC);
		if (fd < 0)
			return mount_fail(err, errno, "clone", path);
		ctx->dev_src[i] = fd;
		if (set_attr(fd, MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NOEXEC, false) < 0)
			return mount_fail(err, errno, "make read-only", path);
	}
	return 0;
}

/* phase 2: the new root, a tmpfs over /tmp of our private copy of the host's tree. */
static int attach_root(struct mount_ctx *ctx, struct cordon_error *err)
{
	_cleanup_close_ int fd = -1;
	int r;

	/* nothing we mount may propagate back to the host */
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
		return mount_fail(err, errno, "make private", "/");
	r = tmpfs_new(ctx, CD_ROOT_TMPFS_SIZE, 0755, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV,
		      &ctx->root, err);
	if (r < 0)
		return r;
	if (move_mount(ctx->root, "", AT_FDCWD, "/tmp", MOVE_MOUNT_F_EMPTY_PATH) < 0)
		return mount_fail(err, errno, "attach the new root on", "/tmp");
	fd = openat(ctx->root, EMPTY_FILE, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0444);
	if (fd < 0)
		return cd_fail_errno(err, errno, "mount", "create %s", EMPTY_FILE);
	ctx->empty = openat(ctx->root, EMPTY_FILE, O_PATH | O_CLOEXEC);
	if (ctx->empty < 0)
		return cd_fail_errno(err, errno, "mount", "open %s", EMPTY_FILE);
	if (mkdirat(ctx->root, EMPTY_DIR, 0555) < 0)
		return cd_fail_errno(err, errno, "mount", "create %s", EMPTY_DIR);
	ctx->empty_dir = openat(ctx->root, EMPTY_DIR, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (ctx->empty_dir < 0)
		return cd_fail_errno(err, errno, "mount", "open %s", EMPTY_DIR);
	return 0;
}

/* Cover `target` (an O_PATH fd) with a bind of the empty file or directory, read-only. */
static int mask_with(int empty, int target, const char *dst, struct cordon_error *err)
{
	_cleanup_close_ int m = sys_open_tree(empty, "",
					      OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH);

	if (m < 0)
		return mount_fail(err, errno, "clone the empty file for", dst);
	if (set_attr(m, MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV |
				MOUNT_ATTR_NOEXEC,
		     false) < 0)
		return mount_fail(err, errno, "make read-only", dst);
	return attach(m, target, dst, err);
}

static int mask_file(struct mount_ctx *ctx, int target, const char *dst, struct cordon_error *err)
{
	return mask_with(ctx->empty, target, dst, err);
}

static int mask_dir(struct mount_ctx *ctx, int target, const char *dst, struct cordon_error *err)
{
	return mask_with(ctx->empty_dir, target, dst, err);
}

/* --hide of a directory: an empty tmpfs of its own, since a later option may mount below it;
 * *ret_fd gets it to be made read-only in phase 4. */
static int hide_dir(struct mount_ctx *ctx, int target, const char *dst, int *ret_fd,
		    struct cordon_error *err)
{
	_cleanup_close_ int m = -1;
	int r;

	r = tmpfs_new(ctx, 64 << 10, 0755, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC,
		      &m, err);
	if (r < 0)
		return r;
	r = attach(m, target, dst, err);
	if (r < 0)
		return r;
	*ret_fd = CD_TAKE_FD(m);
	return 0;
}

/* Mask or re-mount read-only what is under an attached proc. */
static int proc_lockdown(struct mount_ctx *ctx, int proc, struct cordon_error *err)
{
	int r;

	for (size_t i = 0; i < CD_ELEMENTSOF(proc_masked_files); i++) {
		_cleanup_close_ int t = openat(proc, proc_masked_files[i],
					       O_PATH | O_NOFOLLOW | O_CLOEXEC);

		if (t < 0)
			continue; /* not in this kernel */
		r = mask_file(ctx, t, proc_masked_files[i], err);
		if (r < 0)
			return r;
	}
	for (size_t i = 0; i < CD_ELEMENTSOF(proc_masked_dirs); i++) {
		_cleanup_close_ int t = openat(proc, proc_masked_dirs[i],
					       O_PATH | O_NOFOLLOW | O_DIRECTORY | O_CLOEXEC);

		if (t < 0)
			continue;
		r = mask_dir(ctx, t, proc_masked_dirs[i], err);
		if (r < 0)
			return r;
	}
	for (size_t i = 0; i < CD_ELEMENTSOF(proc_readonly); i++) {
		_cleanup_close_ int t = -1, m = -1;

		t = openat(proc, proc_readonly[i], O_PATH | O_NOFOLLOW | O_CLOEXEC);
		if (t < 0)
			continue;
		m = sys_open_tree(t, "", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH);
		if (m < 0)
			return mount_fail(err, errno, "clone /proc/", proc_readonly[i]);
		if (set_attr(m, MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV |
					MOUNT_ATTR_NOEXEC,
			     false) < 0)
			return mount_fail(err, errno, "make read-only /proc/", proc_readonly[i]);
		r = attach(m, t, proc_readonly[i], err);
		if (r < 0)
			return r;
	}
	return 0;
}

int cd_mount_fresh_proc(int *ret, struct cordon_error *err)
{
	return fs_new("proc", NULL, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC, ret,
		      err);
}

static int place_proc(struct mount_ctx *ctx, struct cd_mnt *m, int target,
		      struct cordon_error *err)
{
	_cleanup_close_ int proc = -1;
	int r;

	if (ctx->proc >= 0) {
		proc = CD_TAKE_FD(ctx->proc); /* pid 1's (child.c): already fresh */
	} else {
		r = cd_mount_fresh_proc(&proc, err);
		if (r < 0)
			return r;
	}
	r = attach(proc, target, m->dst, err);
	if (r < 0)
		return r;
	return proc_lockdown(ctx, proc, err);
}

static int place_sysfs(struct mount_ctx *ctx, struct cd_mnt *m, int target,
		       struct cordon_error *err)
{
	const uint64_t ro = MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV |
			    MOUNT_ATTR_NOEXEC;
	_cleanup_close_ int sys = -1, cg = -1, t = -1;
	int r;

	if (!ctx->plan->fresh_sysfs) /* --net host: the host's, read-only (phase 1) */
		return attach(m->fd, target, m->dst, err);
	r = fs_new("sysfs", NULL, ro, &sys, err);
	if (r < 0)
		return r;
	r = attach(sys, target, m->dst, err);
	if (r < 0)
		return r;
	/* placed last, once the mask sources are gone: empty tmpfs mounts of their own over the
	 * firmware's tables and the energy counters (RAPL: a side channel on what the host runs) */
	for (size_t i = 0; i < CD_ELEMENTSOF(sys_masked_dirs); i++) {
		_cleanup_close_ int d = openat(sys, sys_masked_dirs[i],
					       O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		_cleanup_close_ int fw = -1;

		if (d < 0)
			continue;
		r = tmpfs_new(ctx, 4096, 0555, ro, &fw, err);
		if (r < 0)
			return r;
		r = attach(fw, d, sys_masked_dirs[i], err);
		if (r < 0)
			return r;
	}
	/* our own cgroup (the cgroup namespace's root), read-only; absent when the host has no
	 * cgroup2 hierarchy, which hides nothing */
	close(CD_TAKE_FD(t));
	t = openat(sys, "fs/cgroup", O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (t >= 0 && fs_new("cgroup2", NULL, ro, &cg, err) == 0)
		return attach(cg, t, "/sys/fs/cgroup", err);
	cd_error_clear(err);
	return 0;
}

static int place_dev(struct mount_ctx *ctx, struct cd_mnt *m, int target,
		     struct cordon_error *err)
{
	static const char *const links[][2] = {
		{ "ptmx", "pts/ptmx" },          { "fd", "/proc/self/fd" },
		{ "stdin", "/proc/self/fd/0" },  { "stdout", "/proc/self/fd/1" },
		{ "stderr", "/proc/self/fd/2" },
	};
#define PTY_MAX_(n) "max=" #n
#define PTY_MAX(n)  PTY_MAX_(n)
	/* max=: the ptys of every devpts instance but the host's come from one pool */
	static const char *const pts_opts[] = { "newinstance", "ptmxmode=0666", "mode=620",
						PTY_MAX(CORDON_PTY_MAX), NULL };
	_cleanup_close_ int pts = -1, shm = -1;
	int r;

	/* a directory of the root tmpfs (nosuid, nodev, read-only in phase 4): the nodes are binds,
	 * mounts of their own */
	m->fd = fcntl(target, F_DUPFD_CLOEXEC, 3);
	if (m->fd < 0)
		return cd_fail_errno(err, errno, "mount", "open /dev");
	for (size_t i = 0; i < CD_ELEMENTSOF(dev_nodes); i++) {
		if (mknodat(m->fd, dev_nodes[i], S_IFREG | 0666, 0) < 0)
			return cd_fail_errno(err, errno, "mount", "create /dev/%s", dev_nodes[i]);
		r = attach_in_new(ctx->dev_src[i], m->fd, dev_nodes[i], dev_nodes[i], err);
		if (r < 0)
			return r;
	}
	for (size_t i = 0; i < CD_ELEMENTSOF(links); i++)
		if (symlinkat(links[i][1], m->fd, links[i][0]) < 0)
			return cd_fail_errno(err, errno, "mount", "symlink /dev/%s", links[i][0]);
	if (mkdirat(m->fd, "pts", 0755) < 0 || mkdirat(m->fd, "shm", 01777) < 0)
		return cd_fail_errno(err, errno, "mount", "create /dev/pts, /dev/shm");
	r = fs_new("devpts", pts_opts, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NOEXEC, &pts, err);
	if (r >= 0)
		r = attach_in_new(pts, m->fd, "pts", "/dev/pts", err);
	if (r >= 0)
		r = tmpfs_new(ctx, ctx->plan->tmp_size, 01777, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV,
			      &shm, err);
	return r < 0 ? r : attach_in_new(shm, m->fd, "shm", "/dev/shm", err);
}

static int place_hide(struct mount_ctx *ctx, struct cd_mnt *m, struct cordon_error *err)
{
	_cleanup_close_ int t = -1;
	struct stat st;
	int r;

	r = openat2_in(ctx->root, m->dst, O_PATH, &t);
	if (r == -ENOENT)
		return 0; /* nothing there, nothing to hide */
	if (r < 0)
		return cd_fail_errno(err, -r, "mount", "hide %s", m->dst);
	if (fstat(t, &st) < 0)
		return cd_fail_errno(err, errno, "mount", "hide %s", m->dst);
	if (!S_ISDIR(st.st_mode))
		return mask_file(ctx, t, m->dst, err);
	/* cordon's own (git's template hooks): nothing is mounted below it, the empty directory
	 * will do; --hide's is a tmpfs, where later options may mount */
	if (!m->user)
		return mask_dir(ctx, t, m->dst, err);
	m->ro = true;
	return hide_dir(ctx, t, m->dst, &m->fd, err);
}

static int place_symlink(struct mount_ctx *ctx, struct cd_mnt *m, struct cordon_error *err)
{
	_cleanup_close_ int parent = -1;
	const char *name = top_level(m->dst);
	int r = 0;

	if (!name)
		r = open_parent(ctx, m->dst, &parent, &name, err);
	if (r < 0)
		return r;
	if (symlinkat(m->src, parent >= 0 ? parent : ctx->root, name) < 0)
		return cd_fail_errno(err, errno, "mount", "symlink %s -> %s", m->dst, m->src);
	return 0;
}

/* A file cordon seeds into a fresh tmpfs (HOME's .gitconfig): the sandbox's own to change. */
static int seed_file(struct mount_ctx *ctx, struct cd_mnt *m, struct cordon_error *err)
{
	_cleanup_close_ int parent = -1, fd = -1;
	const char *name;
	int r = open_parent(ctx, m->dst, &parent, &name, err);

	if (r < 0)
		return r;
	fd = openat(parent, name, O_CREAT | O_EXCL | O_WRONLY | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0)
		return cd_fail_errno(err, errno, "mount", "create %s", m->dst);
	r = cd_write_all(fd, m->content, m->content_len);
	return r < 0 ? cd_fail_errno(err, -r, "mount", "write %s", m->dst) : 0;
}

/* A file cordon made (the account files): written into the new root's tmpfs, bound read-only
 * over dst, which must exist; the staged name is removed at once (the mount holds the file). */
static int place_file(struct mount_ctx *ctx, struct cd_mnt *m, struct cordon_error *err)
{
	static const char staged[] = ".cordon-file";
	_cleanup_close_ int t = -1, fd = -1, src = -1;
	int r;

	if (!m->ro)
		return seed_file(ctx, m, err);
	r = openat2_in(ctx->root, m->dst, O_PATH, &t);
	if (r < 0)
		return cd_fail_errno(err, -r, "mount", "%s", m->dst);
	fd = openat(ctx->root, staged, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0644);
	if (fd < 0)
		return cd_fail_errno(err, errno, "mount", "create the new %s", m->dst);
	r = cd_write_all(fd, m->content, m->content_len);
	if (r < 0)
		return cd_fail_errno(err, -r, "mount", "write the new %s", m->dst);
	src = openat(ctx->root, staged, O_PATH | O_CLOEXEC);
	if (src < 0)
		return cd_fail_errno(err, errno, "mount", "open the new %s", m->dst);
	r = mask_with(src, t, m->dst, err);
	if (r >= 0 && unlinkat(ctx->root, staged, 0) < 0)
		r = cd_fail_errno(err, errno, "mount", "remove the staged %s", m->dst);
	return r;
}

/* --- the copy-on-write workdir and protected paths --- */

/* The layer's tmpfs holds the overlay's upper and work directories. Deleting a directory of the
 * workdir and making one of that name marks it opaque with a user.* extended attribute, which
 * tmpfs has since Linux 6.6: without, the copy-on-write workdir is refused. */
static int layer_dirs(int t, int lower, int *ret_upper, int *ret_work, struct cordon_error *err)
{
	_cleanup_close_ int upper = -1;
	struct stat st;

	if (mkdirat(t, "upper", 0755) < 0 || mkdirat(t, "work", 0700) < 0)
		return cd_fail_errno(err, errno, "cow", "make the layer's directories");
	upper = openat(t, "upper", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	*ret_work = openat(t, "work", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (upper < 0 || *ret_work < 0)
		return cd_fail_errno(err, errno, "cow", "open the layer's directories");
	if (fsetxattr(upper, "user.cordon", "1", 1, 0) < 0)
		return cd_fail(err, errno, "cow",
			       "this kernel's tmpfs has no user extended attributes (%s; Linux "
			       "6.6 and later have them), which the copy-on-write workdir needs "
			       "to record deleted directories; run without --cow",
			       strerror(errno));
	(void)fremovexattr(upper, "user.cordon");
	/* the workdir's root as the sandbox sees it: the overlay's root is the upper's */
	if (fstat(lower, &st) == 0) {
		if (fchmod(upper, st.st_mode & 07777) < 0)
			return cd_fail_errno(err, errno, "cow", "give the layer the workdir's mode");
		/* an owner this namespace does not map (EINVAL) leaves the layer the sandbox's */
		if (fchown(upper, st.st_uid, st.st_gid) < 0 && errno != EINVAL)
			return cd_fail_errno(err, errno, "cow", "give the layer the workdir's owner");
	}
	*ret_upper = CD_TAKE_FD(upper);
	return 0;
}

/* The supervisor keeps the upper (to save it when the sandbox ends) and may seed it (a layer
 * to start from) before the overlay is made. */
static int hand_over_upper(struct mount_ctx *ctx, int upper, struct cordon_error *err)
{
	struct cd_msg m;
	int r = cd_msg_send(ctx->plan->sync_sock, CD_MSG_LAYER, 0, NULL, upper);

	if (r < 0)
		return cd_fail_errno(err, -r, "cow", "hand the layer to the supervisor");
	r = cd_msg_recv(ctx->plan->sync_sock, &m, NULL);
	if (r <= 0 || m.type != CD_MSG_LAYER || m.value != 0)
		return cd_fail(err, r < 0 ? -r : EPROTO, "cow",
			       "the supervisor could not prepare the layer");
	return 0;
}

static int ovl_fd(int fs, const char *key, int fd)
{
	if (fsconfig(fs, FSCONFIG_SET_FD, key, NULL, fd) == 0)
		return 0;
	return -errno;
}

/* overlay: [placeholders,] the workdir's tree below, the layer's upper on top */
static int overlay_new(int skel, int lower, int upper, int work, int *ret,
		       struct cordon_error *err)
{
	_cleanup_close_ int fs = fsopen("overlay", FSOPEN_CLOEXEC);
	char detail[256] = "";
	int r = 0;
	ssize_t n;

	if (fs < 0)
		return cd_fail(err, errno, "cow", "overlayfs: %s (the copy-on-write workdir needs it)",
			       strerror(errno));
	if (skel >= 0)
		r = ovl_fd(fs, "lowerdir+", skel);
	if (r == 0)
		r = ovl_fd(fs, "lowerdir+", lower);
	if (r == 0)
		r = ovl_fd(fs, "upperdir", upper);
	if (r == 0)
		r = ovl_fd(fs, "workdir", work);
	if (r == 0 && fsconfig(fs, FSCONFIG_SET_FLAG, "userxattr", NULL, 0) < 0)
		r = -errno;
	if (r == 0 && fsconfig(fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0)
		r = -errno;
	if (r < 0) {
		n = read(fs, detail, sizeof(detail) - 1);
		detail[n > 0 ? n - (detail[n - 1] == '\n') : 0] = '\0';
		return cd_fail(err, -r, "cow",
			       "overlayfs over the workdir: %s%s%s%s", strerror(-r),
			       detail[0] ? " (" : "", detail, detail[0] ? ")" : "");
	}
	*ret = fsmount(fs, FSMOUNT_CLOEXEC, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV);
	if (*ret < 0)
		return mount_fail(err, errno, "fsmount", "the copy-on-write workdir");
	return 0;
}

/* overlayfs takes private clones of its layers, which must be mounts of our namespace: each is
 * attached at a staging directory of the new root first, and detached once the overlay exists */
static const char *const staging[] = { ".cordon-lower", ".cordon-layer", ".cordon-skel" };

static int stage(struct mount_ctx *ctx, size_t i, int mnt, int *ret, struct cordon_error *err)
{
	_cleanup_close_ int dir = -1;
	int r;

	if (mkdirat(ctx->root, staging[i], 0700) < 0)
		return cd_fail_errno(err, errno, "cow", "create %s", staging[i]);
	dir = openat(ctx->root, staging[i], O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (dir < 0)
		return cd_fail_errno(err, errno, "cow", "open %s", staging[i]);
	r = attach(mnt, dir, staging[i], err);
	if (r < 0)
		return r;
	*ret = openat(ctx->root, staging[i], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	return *ret < 0 ? cd_fail_errno(err, errno, "cow", "open %s", staging[i]) : 0;
}

static int unstage(struct mount_ctx *ctx, size_t i, int *fd, struct cordon_error *err)
{
	char path[64];

	if (*fd < 0)
		return 0;
	snprintf(path, sizeof(path), "/proc/self/fd/%d", *fd);
	if (umount2(path, MNT_DETACH) < 0)
		return mount_fail(err, errno, "detach", staging[i]);
	*fd = cd_safe_close(*fd);
	if (unlinkat(ctx->root, staging[i], AT_REMOVEDIR) < 0)
		return cd_fail_errno(err, errno, "cow", "remove %s", staging[i]);
	return 0;
}

static int cow_layers(struct mount_ctx *ctx, struct cd_mnt *m, int st[3], int *ret,
		      struct cordon_error *err)
{
	_cleanup_close_ int layer = -1, upper = -1, work = -1;
	int r;

	r = stage(ctx, 0, m->fd, &st[0], err);
	if (r >= 0)
		r = tmpfs_new(ctx, ctx->plan->cow_size, 0755, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV,
			      &layer, err);
	if (r >= 0)
		r = stage(ctx, 1, layer, &st[1], err);
	if (r >= 0)
		r = layer_dirs(st[1], st[0], &upper, &work, err);
	if (r >= 0)
		r = hand_over_upper(ctx, upper, err);
	if (r >= 0)
		r = overlay_new(st[2], st[0], upper, work, ret, err);
	return r;
}

static int cow_workdir(struct mount_ctx *ctx, struct cd_mnt *m, int *ret,
		       struct cordon_error *err)
{
	int st[3] = { -1, -1, -1 };
	int r = cow_layers(ctx, m, st, ret, err);

	for (size_t i = 3; i-- > 0;) {
		int u = unstage(ctx, i, &st[i], err);

		r = r < 0 ? r : u;
	}
	return r;
}

/* A path of the workdir as placed in the new root, no symlink followed. */
static int open_in_workdir(struct mount_ctx *ctx, const char *rel, int *ret)
{
	struct open_how how = { .flags = O_PATH | O_CLOEXEC,
				.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_SYMLINKS |
					   RESOLVE_NO_MAGICLINKS };
	char path[PATH_MAX];
	int fd;

	if (snprintf(path, sizeof(path), "%s/%s", ctx->plan->workdir_target + 1, rel) >=
	    (int)sizeof(path))
		return -ENAMETOOLONG;
	fd = (int)syscall(SYS_openat2, ctx->root, path, &how, sizeof(how));
	if (fd < 0)
		return -errno;
	*ret = fd;
	return 0;
}

static size_t depth(const char *rel)
{
	size_t d = 0;

	for (; *rel; rel++)
		d += *rel == '/';
	return d;
}

/* Bound onto itself: it can no longer be renamed, removed or replaced (EBUSY). */
static int pin(struct mount_ctx *ctx, const char *rel, struct cordon_error *err)
{
	_cleanup_close_ int t = -1, m = -1;
	int r = open_in_workdir(ctx, rel, &t);

	if (r == -ENOENT || r == -ELOOP || r == -ENOTDIR)
		return 0; /* changed since the plan: the path below it is checked on its own */
	if (r < 0)
		return cd_fail_errno(err, -r, "protect", "%s", rel);
	m = sys_open_tree(t, "", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH);
	if (m < 0)
		return mount_fail(err, errno, "pin", rel);
	return attach(m, t, rel, err);
}

static int protect_path(struct mount_ctx *ctx, const struct cd_protect_path *g,
			struct cordon_error *err)
{
	_cleanup_close_ int t = -1, m = -1;
	struct stat st;
	int r;

	/* nothing to mount on: a path missing at the start stays missing inside (no placeholder
	 * changes what a program sees: `test -d .git`); what the sandbox makes there is refused
	 * by cordon apply (--cow) or swept after the run (direct; protect.h) */
	if (g->state != CD_PROTECT_EXISTS)
		return 0;
	r = open_in_workdir(ctx, g->rel, &t);
	if (r < 0)
		return cd_fail_errno(err, -r, "protect", "%s", g->rel);
	if (fstat(t, &st) < 0)
		return cd_fail_errno(err, errno, "protect", "%s", g->rel);
	if (g->deny)
		return S_ISDIR(st.st_mode) ? mask_dir(ctx, t, g->rel, err)
					   : mask_file(ctx, t, g->rel, err);
	m = sys_open_tree(t, "", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH |
					 AT_RECURSIVE);
	if (m < 0)
		return mount_fail(err, errno, "protect", g->rel);
	if (set_attr(m, MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV, true) < 0)
		return mount_fail(err, errno, "make read-only", g->rel);
	return attach(m, t, g->rel, err);
}

/* Pins outermost first, then the protected paths, outermost first: a later mount goes on top. */
static int place_protect(struct mount_ctx *ctx, struct cordon_error *err)
{
	const struct cd_protect_plan *gp = &ctx->plan->protect;
	int r = 0;

	for (size_t d = 0; r >= 0 && d < PATH_MAX / 2; d++) {
		bool more = false;

		for (char **s = gp->pins; r >= 0 && s && *s; s++)
			if (depth(*s) == d)
				r = pin(ctx, *s, err);
			else if (depth(*s) > d)
				more = true;
		if (!more)
			break;
	}
	for (size_t d = 0; r >= 0 && d < PATH_MAX / 2; d++) {
		bool more = false;

		for (size_t i = 0; r >= 0 && i < gp->n; i++)
			if (depth(gp->paths[i].rel) == d)
				r = protect_path(ctx, &gp->paths[i], err);
			else if (depth(gp->paths[i].rel) > d)
				more = true;
		if (!more)
			break;
	}
	return r;
}

static int place_workdir(struct mount_ctx *ctx, struct cd_mnt *m, int t,
			 struct cordon_error *err)
{
	_cleanup_close_ int ovl = -1;
	int r;

	if (ctx->plan->cow) {
		r = cow_workdir(ctx, m, &ovl, err);
		if (r < 0)
			return r;
	}
	r = attach(ovl >= 0 ? ovl : m->fd, t, m->dst, err);
	ctx->workdir_placed = r == 0;
	if (r == 0) {
		struct statx stx;

		/* the mount it now is (the one writable host mount: those below it are read-only) */
		if (statx(ovl >= 0 ? ovl : m->fd, "", AT_EMPTY_PATH, STATX_MNT_ID, &stx) == 0 &&
		    (stx.stx_mask & STATX_MNT_ID))
			ctx->workdir_mnt_id = stx.stx_mnt_id;
	}
	return r < 0 ? r : place_protect(ctx, err);
}

static int place(struct mount_ctx *ctx, struct cd_mnt *m, struct cordon_error *err)
{
	_cleanup_close_ int t = -1;
	int r;

	switch (m->kind) {
	case CD_MNT_SYMLINK:
		return place_symlink(ctx, m, err);
	case CD_MNT_HIDE:
		return place_hide(ctx, m, err);
	case CD_MNT_FILE:
		return place_file(ctx, m, err);
	case CD_MNT_BIND:
		if (!m->is_dir) {
			r = open_file_p(ctx, m->dst, &t, err);
			return r < 0 ? r : attach(m->fd, t, m->dst, err);
		}
		break;
	case CD_MNT_DIR: /* a top-level one made in one call; what is there already is checked */
		if (!top_level(m->dst))
			break;
		if (mkdirat(ctx->root, m->dst + 1, 0755) == 0)
			return 0;
		if (errno != EEXIST)
			return cd_fail_errno(err, errno, "mount", "create %s", m->dst);
		break;
	default:
		break;
	}
	r = open_dir_p(ctx, m->dst, &t, err);
	if (r < 0)
		return r;
	switch (m->kind) {
	case CD_MNT_DIR:
		return 0;
	case CD_MNT_PROC:
		return place_proc(ctx, m, t, err);
	case CD_MNT_SYSFS:
		return place_sysfs(ctx, m, t, err);
	case CD_MNT_DEV:
		return place_dev(ctx, m, t, err);
	case CD_MNT_TMPFS:
		r = tmpfs_new(ctx, m->size, m->mode, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV, &m->fd,
			      err);
		return r < 0 ? r : attach(m->fd, t, m->dst, err);
	case CD_MNT_WORKDIR:
		return place_workdir(ctx, m, t, err);
	default:
		return attach(m->fd, t, m->dst, err);
	}
}

/* The directory dst exists, for a mount placed later. */
static int prepare_mount_point(struct mount_ctx *ctx, const char *dst, struct cordon_error *err)
{
	int fd, r = open_dir_p(ctx, dst, &fd, err);

	if (r == 0)
		close(fd);
	return r;
}

/* phase 4 */
static int make_read_only(struct mount_ctx *ctx, struct cordon_error *err)
{
	struct cd_mount_plan *p = ctx->plan;

	for (size_t i = 0; i < p->n; i++) {
		struct cd_mnt *m = &p->m[i];

		if (!m->ro || m->fd < 0 || m->kind == CD_MNT_BIND)
			continue;
		if (set_attr(m->fd, MOUNT_ATTR_RDONLY, false) < 0)
			return mount_fail(err, errno, "make read-only", m->dst);
	}
	if (unlinkat(ctx->root, EMPTY_FILE, 0) < 0 || unlinkat(ctx->root, EMPTY_DIR, AT_REMOVEDIR) < 0)
		return cd_fail_errno(err, errno, "mount", "remove the mask sources");
	if (set_attr(ctx->root, MOUNT_ATTR_RDONLY, false) < 0)
		return mount_fail(err, errno, "make read-only", "/");
	return 0;
}

/* phase 5 */
static int enter_root(struct mount_ctx *ctx, struct cordon_error *err)
{
	if (fchdir(ctx->root) < 0)
		return cd_fail_errno(err, errno, "mount", "chdir to the new root");
	/* the old root ends up on top of the new one, then goes */
	if (syscall(SYS_pivot_root, ".", ".") < 0)
		return mount_fail(err, errno, "pivot_root into", "the new root");
	if (umount2(".", MNT_DETACH) < 0)
		return mount_fail(err, errno, "detach", "the old root");
	if (chdir("/") < 0)
		return cd_fail_errno(err, errno, "mount", "chdir /");
	return 0;
}

static void close_all(struct mount_ctx *ctx)
{
	for (size_t i = 0; i < ctx->plan->n; i++)
		cd_closep(&ctx->plan->m[i].fd);
	for (size_t i = 0; i < CD_ELEMENTSOF(dev_nodes); i++)
		cd_closep(&ctx->dev_src[i]);
	cd_closep(&ctx->empty);
	cd_closep(&ctx->empty_dir);
	cd_closep(&ctx->proc);
	cd_closep(&ctx->root);
}

int cd_mount_setup(struct cd_mount_plan *p, int workdir_fd, int proc_fd, struct cordon_error *err)
{
	struct mount_ctx ctx = { .plan = p, .root = -1, .empty = -1, .empty_dir = -1,
				 .proc = proc_fd };
	int r;

	for (size_t i = 0; i < CD_ELEMENTSOF(ctx.dev_src); i++)
		ctx.dev_src[i] = -1;
	r = open_sources(&ctx, workdir_fd, err);
	cd_timing("pid 1: sources opened");
	if (r >= 0)
		r = attach_root(&ctx, err);
	cd_timing("pid 1: root attached");
	for (size_t i = 0; r >= 0 && i < p->n; i++)
		if (p->m[i].kind != CD_MNT_SYSFS)
			r = place(&ctx, &p->m[i], err);
		else
			r = prepare_mount_point(&ctx, p->m[i].dst, err);
	cd_timing("pid 1: placed");
	if (r >= 0)
		r = make_read_only(&ctx, err);
	cd_timing("pid 1: read-only");
	/* /sys last, on a directory of the read-only root (a fresh sysfs shows the network
	 * namespace of its mounter: pid 1's own since the clone) */
	for (size_t i = 0; r >= 0 && i < p->n; i++)
		if (p->m[i].kind == CD_MNT_SYSFS)
			r = place(&ctx, &p->m[i], err);
	if (r >= 0)
		r = enter_root(&ctx, err);
	close_all(&ctx);
	return r;
}
