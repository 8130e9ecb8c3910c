/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* snapshot.h - the workdir's tree before and after the run, and what changed between them
 * (the audit trail's file events). Cost: one lstat per entry and a SHA-256 of every regular
 * file up to the size cap, at start and at end. Supervisor side. */
#pragma once

#include <stdbool.h>
#include <sys/types.h>

#include "util.h"

#define CD_SNAPSHOT_HASH_CAP    (16ull << 20) /* larger files: no hash */
#define CD_SNAPSHOT_MAX_ENTRIES 200000

struct cd_fentry {
	char *path; /* relative to the workdir */
	mode_t mode;
	uid_t uid;
	uint64_t size;
	int64_t mtime_ns;
	ino_t ino;
	bool hashed;
	char sha256[65];
	char *link; /* symlink target */
};

struct cd_snapshot {
	struct cd_fentry *e;
	size_t n, cap;
	bool truncated; /* more than CD_SNAPSHOT_MAX_ENTRIES */
	const struct cd_file_id *skip;
	size_t n_skip;
};

/* Files cordon itself writes in the workdir (the audit log, the report, captures): skipped. */
struct cd_file_id {
	dev_t dev;
	ino_t ino;
};

int cd_snapshot_take(const char *dir, const struct cd_file_id *skip, size_t n_skip,
		     struct cd_snapshot *s);
void cd_snapshot_done(struct cd_snapshot *s);

enum cd_change { CD_CREATED, CD_MODIFIED, CD_DELETED };

/* Calls fn for each difference, in path order; e is the entry after (created, modified) or
 * before (deleted). */
void cd_snapshot_diff(const struct cd_snapshot *before, const struct cd_snapshot *after,
		      void (*fn)(enum cd_change what, const struct cd_fentry *e, void *data),
		      void *data);
const char *cd_fentry_type(mode_t mode);
