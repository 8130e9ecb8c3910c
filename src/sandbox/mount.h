/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * mount.h - the sandbox's filesystem: a plan computed by the supervisor (mountplan.c) and
 * carried out by the child (mount.c). Paths in the plan are absolute; `dst` is inside the
 * sandbox, `src` on the host.
 */
#pragma once

#include <sys/stat.h>
#include <sys/types.h>

#include "config.h"
#include "marks.h"
#include "protect.h"
#include "userns.h"

enum cd_mnt_kind {
	CD_MNT_BIND,     /* read-only recursive bind of host src (a directory or a file) */
	CD_MNT_WORKDIR,  /* the one read-write bind */
	CD_MNT_SYMLINK,  /* dst -> src */
	CD_MNT_DIR,      /* an empty directory in the read-only root: a hidden top-level entry */
	CD_MNT_TMPFS,    /* size, mode; ro: read-only once what lies below is in place */
	CD_MNT_PROC,     /* fresh proc, with the kernel's knobs masked */
	CD_MNT_SYSFS,    /* fresh sysfs, read-only (the host's, read-only, with --net host) */
	CD_MNT_DEV,      /* minimal /dev */
	CD_MNT_HIDE,     /* --hide: empty read-only directory or file over what is there */
	CD_MNT_FILE,     /* a file made by cordon (content), read-only over the existing dst */
};

struct cd_mnt {
	enum cd_mnt_kind kind;
	char *src;
	char *dst;
	uint64_t size;
	mode_t mode;
	bool ro;
	bool is_dir;
	bool user; /* from an option rather than the defaults */
	dev_t dev; /* WORKDIR, user BIND: what the launcher checked, which pid 1 must find */
	ino_t ino;
	int host_fd; /* supervisor: the source it opened (O_PATH), to clone it from; -1 */
	char *content; /* FILE */
	size_t content_len;
	int fd;    /* child: the source tree opened before the root is replaced */
};

struct cd_mount_plan {
	struct cd_mnt *m;
	size_t n;
	const char *workdir_target; /* borrowed from one of m[] */
	uid_t uid;                  /* inside ids, owners of the tmpfs mounts */
	gid_t gid;
	uint64_t tmp_size;
	bool fresh_sysfs; /* own network namespace: a sysfs of our own can be mounted */
	struct cd_protect_plan protect; /* protected paths in the workdir */
	bool cow;                    /* the workdir is an overlay: its upper on a tmpfs of cow_size */
	uint64_t cow_size;
	int sync_sock;               /* child: where the layer's upper goes (cow), and the go-on */
};

/* supervisor */
/* fs: the mounts asked for; hostname (NULL: the default) for /etc/hosts; own_net: a network
 * namespace of its own (a fresh sysfs). */
int cd_mount_plan_build(const struct cd_fs_opts *fs, const char *hostname, bool own_net,
			const char *workdir,
			const struct stat *workdir_st, const char *workdir_target,
			const struct cd_identity *id, const struct cd_marks *marks,
			struct cd_mount_plan *ret, struct cordon_error *err);
void cd_mount_plan_done(struct cd_mount_plan *p);
const char *cd_mnt_kind_name(enum cd_mnt_kind k);
/* Will the sandbox have this absolute path from the host (a directory of a bound tree, the
 * workdir), rather than nothing or an empty place (hidden, a fresh tmpfs)? */
bool cd_mount_plan_visible(const struct cd_mount_plan *p, const char *path);

/* A hidden path (as --hide) cordon adds itself: git's template hooks where .git/hooks is
 * protected (a `git init` inside copies none into a directory it cannot write). */
int cd_mount_plan_add_hide(struct cd_mount_plan *p, const char *dst, struct cordon_error *err);

/* child, pid 1: a fresh procfs of its pid namespace, detached (nosuid, nodev, noexec), as a
 * mount fd in *ret: 0, or -errno with *err (a host /proc partly covered: what to do). */
int cd_mount_fresh_proc(int *ret, struct cordon_error *err);

/* child, pid 1 of the new namespaces, before pivot_root: build the new root and enter it.
 * workdir_fd: a detached tree of the workdir made by the launcher (ownership taken), or -1 to
 * look it up here: by its canonical path, following no symlink, and only if it is the directory
 * the launcher checked (same device and inode). proc_fd: a fresh, detached procfs pid 1 made
 * (ownership taken: the first /proc placed is it), or -1 to make one there. */
int cd_mount_setup(struct cd_mount_plan *p, int workdir_fd, int proc_fd, struct cordon_error *err);
