/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* snapshot.h - the workdir's tree before and after the run, and what changed between them
 * (the audit trail's file events). Cost: one lstat per entry and a SHA-256 of every regular
 * file up to the size cap, at start and at end, within the bounds below. Supervisor side. */
#pragma once

#include <stdbool.h>
#include <sys/types.h>

#include "util.h"

#define CD_SNAPSHOT_HASH_CAP (16ull << 20) /* larger files: no hash */

/* The bounds of one walk (docs/audit.md). The walk runs outside the sandbox's cgroup and after
 * its timeout, over a tree the sandbox wrote: each bound keeps what a hostile tree costs cordon
 * small. Past one, entries are not listed or not hashed, and the walk says which it hit. */
#define CD_SNAPSHOT_MAX_ENTRIES 200000
#define CD_SNAPSHOT_MAX_DEPTH   256           /* directories this deep are not entered */
#define CD_SNAPSHOT_MAX_PATH    4095          /* bytes of a path relative to the workdir */
#define CD_SNAPSHOT_MAX_NAMES   (32ull << 20) /* bytes of paths and link targets kept */
#define CD_SNAPSHOT_MAX_HASHED  (256ull << 20) /* bytes read to hash */
#define CD_SNAPSHOT_MAX_MS      10000         /* wall time: a backstop (docs/audit.md) */

enum cd_walk_bound {
	CD_WALK_ENTRIES,
	CD_WALK_DEPTH,
	CD_WALK_PATH,
	CD_WALK_NAMES,
	CD_WALK_HASHED,
	CD_WALK_TIME,
	CD_WALK_NBOUNDS,
};

struct cd_walk_bound_info {
	const char *name; /* "entries", "depth", ... as in the limit event */
	uint64_t max;
	const char *action; /* what happens past it */
	bool counted; /* count is how many entries it left out (else: the walk stopped) */
};
const struct cd_walk_bound_info *cd_walk_bound(enum cd_walk_bound b);

struct cd_fentry {
	char *path; /* relative to the workdir */
	mode_t mode;
	uid_t uid;
	uint64_t size;
	int64_t mtime_ns, ctime_ns;
	ino_t ino;
	bool hashed;
	bool listed; /* a directory whose every entry was read and is in the snapshot */
	char sha256[65];
	char *link; /* symlink target */
};

/* Files cordon itself writes in the workdir (the audit log, the report, captures): skipped. */
struct cd_file_id {
	dev_t dev;
	ino_t ino;
};

struct cd_snapshot {
	struct cd_fentry *e;
	size_t n, cap;
	bool listed; /* the workdir itself: every entry read */
	unsigned hit; /* bit (1 << enum cd_walk_bound) per bound the walk reached */
	uint64_t count[CD_WALK_NBOUNDS]; /* entries each left out, for those counted */
	uint64_t hashed_bytes, name_bytes;
	uint64_t deadline_ns;
	void *inodes; /* tsearch tree: digests of files with other links, by (dev, ino) */
	const struct cd_file_id *skip;
	size_t n_skip;
};

int cd_snapshot_take(const char *dir, const struct cd_file_id *skip, size_t n_skip,
		     struct cd_snapshot *s);
void cd_snapshot_done(struct cd_snapshot *s);

enum cd_change { CD_CREATED, CD_MODIFIED, CD_DELETED };

/* Calls fn for each difference, in path order; e is the entry after (created, modified) or
 * before (deleted). An entry one walk did not reach (a bound, an unreadable directory) is
 * neither created nor deleted: only what a walk read whole is compared. 0 or -ENOMEM. */
int cd_snapshot_diff(const struct cd_snapshot *before, const struct cd_snapshot *after,
		     void (*fn)(enum cd_change what, const struct cd_fentry *e, void *data),
		     void *data);
const char *cd_fentry_type(mode_t mode);
