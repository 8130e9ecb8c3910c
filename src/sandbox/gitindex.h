/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * gitindex.h - what a git index (.git/index) makes git enter: its gitlinks. `git status` at the
 * top of a repository runs git in every gitlink (a submodule) whose directory holds a .git, with
 * that repository's config (core.fsmonitor, ...). Supervisor side, pure (gitindex.c): read as
 * git's read-cache.c reads an index, versions 2, 3 and 4.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct cd_gitindex {
	char **paths;       /* the gitlinks' paths (CD_GITINDEX_ALL: every entry's), in the index's
			     * order, NULL-ended (NULL: none); a reading by IEOT's blocks (below)
			     * adds its own after */
	size_t n;
	unsigned version;   /* 2, 3 or 4 */
	bool split;         /* a split index: its "link" extension names a shared index */
	uint8_t shared[32]; /* ... that one's hash: $GIT_DIR/sharedindex.HEX */
	bool nameless;      /* a gitlink without a name: in a split index, it takes the name of the
			     * entry of the shared index it replaces (git's replace bitmap) */
	bool sparse;        /* sparse directory entries (mode 040000): what they hold is in git's
			     * objects, not in the index */
	char **dirs;        /* ... their paths ("dir/"), NULL-ended (NULL: none) */
	size_t n_dirs;
};

enum {
	CD_GITINDEX_ALL = 1 << 0, /* every entry's path, not only the gitlinks' */
};

/* git maps the index: an entry that runs past the end of the file reads the zeros of the rest
 * of its last page, CD_GITINDEX_PAGE bytes; past that git faults (and dies): refused */
#define CD_GITINDEX_PAGE 4096u

/* Where an index is read from: len bytes, of which pread() gives n at off (fewer only at the
 * end; -errno on failure). The reader asks for pieces of at most 64 KiB at a time (a longer
 * name aside), so that an index of a million paths costs no buffer of its size. */
struct cd_gitindex_src {
	ssize_t (*pread)(void *ctx, void *buf, size_t n, uint64_t off);
	void *ctx;
	uint64_t len;
};

/* Read an index of a repository whose object names are hash_len bytes (20: SHA-1; 32:
 * extensions.objectFormat = sha256). The entries are read one after the other as git reads them
 * by default, and, where an end-of-index-entries extension says where an offset table (IEOT) is,
 * also block by block as a git with index.threads reads them: the paths of both readings are
 * given. No checksum is verified (git does not, outside fsck). 0; -EINVAL: not an index git
 * reads, or one where git's reading is undefined (signature, version, an entry past the page or
 * a name not ended by a NUL, a v4 name removing more than the previous one had, an unknown
 * extension git refuses, the readings disagreeing on the shared index), or one no checkout
 * has: a name of PATH_MAX bytes or more (no path git can lstat(); only `git update-index
 * --cacheinfo` writes one), paths to keep of more than 64 MiB (version 4's names grow from one
 * another: N small entries could name N long paths);
 * -ENOMEM; the source's -errno. */
int cd_gitindex_read(const struct cd_gitindex_src *src, size_t hash_len, unsigned flags,
		     struct cd_gitindex *ret);
/* The same from memory */
int cd_gitindex_parse(const void *buf, size_t len, size_t hash_len, unsigned flags,
		      struct cd_gitindex *ret);
void cd_gitindex_done(struct cd_gitindex *x);

/* "sharedindex.HEX": the name of a split index's shared index in its git directory */
void cd_gitindex_shared_name(const struct cd_gitindex *x, size_t hash_len, char ret[80]);
