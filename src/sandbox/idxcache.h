/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * idxcache.h - what a git index told cordon, kept for the next run (idxcache.c). Supervisor
 * side: the run's protected paths read every index of the workdir's repositories at the start
 * (protect_git.c, gitindex.h), and a large one costs milliseconds to read (bench/startup.md, "A
 * large git index"). An index that has not changed since cordon last read it is not read again:
 * its reading is taken from STATE/gitindex.d (STATE: cd_marks_state_dir()), one file per index.
 *
 * An entry is trusted only when all of these hold, and the index is read otherwise:
 *  - the index's device, inode, size, mtime and ctime (in nanoseconds) are the entry's. A change
 *    of the file's content moves its mtime and ctime to the time of the change (write, truncate,
 *    fallocate, a write fault of a shared mapping: file_update_time); ctime cannot be set by a
 *    user (utimensat sets it to now); a file put in its place has another inode, or, reusing the
 *    inode number, a ctime of its making. Two exceptions, each closed below: a change in the
 *    timestamp tick of the reading, and a writer already at work while the index is read;
 *  - racy git index: a change in the same tick as the file's last one leaves mtime and ctime as
 *    they were (the kernel stamps files with a clock that moves one tick at a time, and the
 *    filesystem may keep less). So an entry is made only when mtime and ctime are older than
 *    the reading's start by the filesystem's granularity (the largest divisor of a second that
 *    divides both stamps: 2 s when both are whole seconds, as FAT's mtime) and two ticks of that
 *    clock; a change after the reading then gets a later stamp. The rule is checked again at
 *    every use;
 *  - nobody held the index open for writing when its reading started (a read lease could be
 *    taken; it is dropped at once), and its stat after the reading is the one before: a
 *    write() under way set the stamps at its start, and a shared writable mapping whose page
 *    is already dirty is written without a fault, so neither moves the stamps once the index is
 *    read. A writer that opens it later stamps it at its first write (a mapping faults);
 *  - the filesystem stamps files with this kernel's clock and stamps mapped writes: ext2/3/4,
 *    XFS, btrfs, F2FS. Not tmpfs (a mapped page is mapped writable at its first read, and later
 *    writes stamp nothing), nor a network or FUSE filesystem (stamps from a server, a daemon);
 *  - the index is at least CD_IDXCACHE_MIN bytes: a smaller one costs less to read than the
 *    cache does to check;
 *  - the entry is a regular file of the caller's, mode 0600, one link, under CD_IDXCACHE_FILE_MAX
 *    bytes, opened without following a symlink, and it parses strictly (cd_idxcache_parse),
 *    ending with the SHA-256 of what comes before (a torn write reads as no entry);
 *  - its directory, and STATE, are reached from "/" through no symlink, are the caller's (STATE
 *    may be root's) and writable by nobody else; the directory is not the workdir nor in it (by
 *    any mount), and neither it nor STATE is an earlier sandbox's workdir or below one: the
 *    checks of the layers' key's directory, STATE itself (mac.h), and more (a workdir may be
 *    made below STATE). No MAC: the layers' key lies in STATE, so whoever could write an entry
 *    could read the key; what keeps entries cordon's is that no sandbox and no other user can
 *    write there.
 * The reading after a direct run (the sweep) never takes an entry: it reads the index, and
 * stores its reading. An entry is written whole under a temporary name and renamed into place.
 * At most CD_IDXCACHE_ENTRIES entries: the oldest written go first. Left open, as for git: the
 * clock set back (by root) may give a later change the stamps of an earlier one.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

#include "gitindex.h"

struct cd_hostpath;
struct cd_marks;

#define CD_IDXCACHE_MIN        (256u << 10) /* about 3,000 paths */
#define CD_IDXCACHE_FILE_MAX   (256u << 10)
#define CD_IDXCACHE_PATHS_MAX  4096u        /* gitlinks and sparse directories of one entry */
#define CD_IDXCACHE_ENTRIES    64u
#define CD_IDXCACHE_DIR        "gitindex.d"

/* What identifies one state of an index file */
struct cd_idxcache_key {
	uint64_t dev, ino, size;
	int64_t mtime_sec, ctime_sec;
	uint32_t mtime_nsec, ctime_nsec;
	uint32_t hash_len; /* the reading's: 20 or 32 */
	uint32_t flags;    /* the reading's (CD_GITINDEX_ALL) */
};

/* An entry: the key, when its reading started (CLOCK_REALTIME), and the reading */
struct cd_idxcache_entry {
	struct cd_idxcache_key key;
	int64_t scanned_sec;
	uint32_t scanned_nsec;
};

/* ---- pure ---- */

void cd_idxcache_key_of(const struct stat *st, size_t hash_len, unsigned flags,
			struct cd_idxcache_key *ret);
bool cd_idxcache_key_eq(const struct cd_idxcache_key *a, const struct cd_idxcache_key *b);
/* Could the file have changed since the reading of entry e without its stamps moving? tick_ns:
 * the resolution of the clock the kernel stamps files with (CLOCK_REALTIME_COARSE) */
bool cd_idxcache_racy(const struct cd_idxcache_entry *e, int64_t tick_ns);
/* Is e's reading the index whose key is now? (the key the same, and not racy) */
bool cd_idxcache_trust(const struct cd_idxcache_entry *e, const struct cd_idxcache_key *now,
		       int64_t tick_ns);
/* An entry's file: e and x's gitlinks, sparse directories and shared index, then its SHA-256.
 * 0; -E2BIG past CD_IDXCACHE_FILE_MAX or CD_IDXCACHE_PATHS_MAX, or a path over PATH_MAX (such a
 * reading is not kept); -ENOMEM. */
int cd_idxcache_format(const struct cd_idxcache_entry *e, const struct cd_gitindex *x,
		       char **ret, size_t *ret_len);
/* The reverse, strictly: anything else (a byte changed, a number not canonical, a count past a
 * bound, a path with a NUL or empty) is -EBADMSG; -ENOMEM. */
int cd_idxcache_parse(const char *buf, size_t len, struct cd_idxcache_entry *ret_e,
		      struct cd_gitindex *ret_x);

/* ---- the cache of a run ---- */

enum cd_idxcache_mode {
	CD_IDXCACHE_USE,   /* take a trusted entry; store a reading */
	CD_IDXCACHE_STORE, /* read the index, store the reading (the sweep) */
};

struct cd_idxcache {
	const struct cd_hostpath *workdir; /* borrowed: the directory the cache must be outside */
	const struct cd_marks *marks;      /* borrowed, may go (NULL: loaded when needed) */
	int dir_fd;                        /* STATE/gitindex.d, checked; -1 */
	bool tried;                        /* opened, or found unusable (why) */
	char why[256];                     /* why it is not used, for -v */
	unsigned hits, misses, stored;
	int64_t tick_ns;
};

void cd_idxcache_init(struct cd_idxcache *c, const struct cd_hostpath *workdir,
		      const struct cd_marks *marks);
void cd_idxcache_done(struct cd_idxcache *c);

/* The index open at fd (st: its fstat, a regular file), read (gitindex.h) or taken from the
 * cache (c may be NULL: read; the directory is opened at the first index large enough, in
 * CD_IDXCACHE_USE only: while c->marks is live). *ret_racy: the reading is racy (its stamps
 * within a tick of it: cd_idxcache_racy), so that a change after it may have left st as it is:
 * whoever compares st later to tell whether the index changed must read it again. 0 or
 * cd_gitindex_read's -errno; the cache never fails it. */
int cd_idxcache_read(struct cd_idxcache *c, enum cd_idxcache_mode mode, int fd,
		     const struct stat *st, size_t hash_len, unsigned flags,
		     struct cd_gitindex *ret, bool *ret_racy);
