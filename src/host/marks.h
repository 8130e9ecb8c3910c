/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * marks.h - the directories cordon gave a sandbox as its workdir, remembered, so that no later
 * run follows a symlink inside one. Supervisor side.
 *
 * A sandbox can leave symlinks in its workdir, owned by the caller (or by root, in the
 * id-mapped mode): the owners hostpath.c otherwise trusts. A later run given a path through that
 * directory (its subdirectory as the next workdir, an output, a bind source) must not follow
 * them. So every workdir is recorded (device, inode, birth time) in a directory of the caller's,
 * out of any sandbox's reach: /var/lib/cordon/workdirs.d for root (readable by every user, whose
 * runs consult it too: root may have run a sandbox in a user's directory),
 * $XDG_STATE_HOME/cordon/workdirs.d (default ~/.local/state) for others; the walk refuses a
 * symlink once it is below one of them.
 *
 * One entry is one symlink, named after the mark, pointing at the directory's path (to tell,
 * when a bucket is full, which are gone), in one of 256 buckets by a hash of the mark. A lookup
 * is one fstatat (an entry that cannot be looked up counts as there), an addition one
 * symlinkat: a run costs the same with 10 or 65,536 entries (the list of earlier versions was
 * one file, read whole at every run, whose cost grew with every workdir: bench/startup.md,
 * item 1). Such a file, still there, is read and moved into the directory, under its writers'
 * lock. Root's directories are made 0755 whatever the umask: every user's runs read them.
 */
#pragma once

#include <stdbool.h>
#include <sys/stat.h>

#include "util.h"

/* A bucket past CD_MARKS_BUCKET_MAX entries drops the directories that are gone; those still
 * there are all kept. */
#define CD_MARKS_BUCKETS    256
#define CD_MARKS_BUCKET_MAX 256

/* A directory: device, inode, and its birth time where the filesystem keeps one (an inode
 * number is reused once the directory is gone; its birth time tells the new one apart). */
struct cd_mark {
	uint64_t dev;
	uint64_t ino;
	int64_t btime_sec; /* 0: not known */
	uint32_t btime_nsec;
};

struct cd_marks {
	int dir_fd;      /* the caller's list (O_PATH), -1 while it does not exist */
	int root_fd;     /* root's, for another caller; -1 if none */
	struct cd_mark *legacy; /* entries of an earlier version's list files, still there */
	size_t n_legacy;
	char *path;      /* the caller's list; NULL: no place to keep it (the reason in why) */
	char why[160];
};

/* The caller's state directory, which holds its list and the layers' key (src/layer/mac.h):
 * /var/lib/cordon for root, else $XDG_STATE_HOME/cordon or ~/.local/state/cordon (malloc'd;
 * NULL without a home directory). */
char *cd_marks_state_dir(void);
/* Open the lists (a missing or unusable one is an empty list: why says so). */
void cd_marks_load(struct cd_marks *m);
/* The mark of the directory fd: 0 or -errno. */
int cd_mark_of(int fd, struct cd_mark *ret);
bool cd_marks_has(const struct cd_marks *m, const struct cd_mark *d);
/* Can any directory be in the lists? (false: no lookup is needed) */
bool cd_marks_any(const struct cd_marks *m);
/* Record a workdir (its mark and canonical path) in the caller's list: 0, or -errno (the run
 * goes on; the log says it could not be recorded). */
int cd_marks_add(struct cd_marks *m, const struct cd_mark *d, const char *path);
void cd_marks_done(struct cd_marks *m);
