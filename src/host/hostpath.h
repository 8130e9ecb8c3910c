/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * hostpath.h - host paths the launcher opens, resolved once and safely, then used as file
 * descriptors. Supervisor side.
 *
 * A path the caller gives may lead through directories that a sandbox wrote (an earlier run's
 * workdir), where it could have left symlinks: followed by the launcher, run as root, they would
 * aim a mount or a write anywhere. So a path is walked one component at a time with
 * O_PATH|O_NOFOLLOW, and a symlink is followed only when its owner is root or the caller; the
 * result is an O_PATH descriptor, its canonical path (the kernel's, from the descriptor) and its
 * stat, and every later step (ownership, identity, mounts, writes) uses the descriptor.
 */
#pragma once

#include <stdbool.h>
#include <sys/stat.h>

#include "marks.h"
#include "util.h"

struct cd_hostpath {
	int fd;           /* O_PATH, O_CLOEXEC; -1 when not open */
	char *path;       /* canonical absolute path */
	struct stat st;
	unsigned links;   /* symlinks followed on the way */
	uid_t link_owner; /* the owner of the last one followed */
};

enum {
	CD_HOSTPATH_DIR = 1 << 0,     /* must be a directory */
	CD_HOSTPATH_NOFOLLOW = 1 << 1, /* refuse a symlink as the last component */
	CD_HOSTPATH_CANONICAL = 1 << 2, /* a canonical path: refuse any symlink (it changed) */
};

/* Resolve path (relative: from the current directory's canonical path, walked as well). step
 * names the option in messages. marks (may be NULL): the earlier workdirs; below one of them no
 * symlink is followed, whoever owns it (a sandbox may have planted it). */
int cd_hostpath_open(const char *path, unsigned flags, const char *step,
		     const struct cd_marks *marks, struct cd_hostpath *ret,
		     struct cordon_error *err);
/* The same for a directory already open (the current directory, say): canonical path, stat.
 * Takes ownership of fd (a failed open's -1 is reported with errno). */
int cd_hostpath_from_fd(int fd, const char *step, struct cd_hostpath *ret,
			struct cordon_error *err);
void cd_hostpath_done(struct cd_hostpath *p);

/* For a file to be created: its directory, resolved as above (must exist), and the last name
 * (into *ret_name, malloc'd; neither empty nor "." nor ".."). */
int cd_hostpath_open_parent(const char *path, const char *step, const struct cd_marks *marks,
			    struct cd_hostpath *ret_dir, char **ret_name, struct cordon_error *err);

/* Is the directory dirfd the directory anc, or below it, by whatever mount? Both its path
 * within its filesystem (the mount's root and the path below it) and its ancestors' device and
 * inode (walking up with "..") are compared, so that a bind mount of anc, or of a directory
 * below anc, is recognized too. 1, 0, or -errno. */
int cd_hostpath_within(int dirfd, const struct cd_hostpath *anc);

/* A new file, name in dirfd, created with O_EXCL under a temporary name and renamed over name:
 * whatever was there (a symlink, a hard link to another file, a FIFO) is replaced, never opened.
 * With ret_tmp, it stays under the temporary name (*ret_tmp, malloc'd), to be renamed later (an
 * atomic report). Returns the O_WRONLY fd, or -errno. */
int cd_hostpath_create(int dirfd, const char *name, mode_t mode, char **ret_tmp);
