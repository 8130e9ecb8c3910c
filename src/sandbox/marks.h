/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * marks.h - the directories cordon gave a sandbox as its workdir, remembered, so that no later
 * run follows a symlink inside one. Supervisor side.
 *
 * A sandbox can leave symlinks in its workdir, owned by the caller (or by root, in the
 * id-mapped mode): the owners hostpath.c otherwise trusts. A later run given a path through that
 * directory (its subdirectory as the next workdir, an output, a bind source) must not follow
 * them. So every workdir is recorded (device and inode) in a file of the caller's, out of any
 * sandbox's reach: /var/lib/cordon/workdirs for root (readable by every user, whose runs consult
 * it too: root may have run a sandbox in a user's directory), $XDG_STATE_HOME/cordon/workdirs
 * (default ~/.local/state) for others; the walk refuses a symlink once it is below one of them.
 */
#pragma once

#include <stdbool.h>
#include <sys/stat.h>

#include "util.h"

/* Past this many, the list drops the directories that are gone, then the oldest (to 3/4). */
#define CD_MARKS_MAX 65536

/* A directory: device, inode, and its birth time where the filesystem keeps one (an inode
 * number is reused once the directory is gone; its birth time tells the new one apart). */
struct cd_mark {
	uint64_t dev;
	uint64_t ino;
	int64_t btime_sec; /* 0: not known */
	uint32_t btime_nsec;
};

struct cd_marks {
	struct cd_mark *v;
	char **paths;   /* where each was: to tell, when the list is too long, which are gone */
	size_t n;
	size_t cap;     /* room in v and paths */
	char *path;     /* the file; NULL: no place to keep it (the reason in why) */
	char why[160];
};

/* Read the file (a missing or unusable one is an empty list: why says so). */
void cd_marks_load(struct cd_marks *m);
/* The mark of the directory fd: 0 or -errno. */
int cd_mark_of(int fd, struct cd_mark *ret);
bool cd_marks_has(const struct cd_marks *m, const struct cd_mark *d);
/* Record a workdir (its mark and canonical path) in the caller's list, under a lock, read again
 * under it: 0, or -errno (the run goes on; the log says it could not be recorded). */
int cd_marks_add(struct cd_marks *m, const struct cd_mark *d, const char *path);
void cd_marks_done(struct cd_marks *m);
