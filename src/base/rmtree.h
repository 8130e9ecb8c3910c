/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * rmtree.h - remove a directory tree a sandbox made, on the host, as whoever cordon runs as:
 * through descriptors only, never following a symlink, never leaving the filesystem the tree
 * is on, however deep the tree (one directory open at a time). For after the sandbox has ended:
 * nothing may be changing the tree meanwhile.
 */
#pragma once

#include <stdint.h>
#include <sys/stat.h>

/* Everything inside the directory dirfd (not the directory itself). 0, or the first -errno
 * (what could be removed is). */
int cd_rmtree_contents(int dirfd);
/* The directory at path, and everything in it, provided it is still the directory st
 * describes (device and inode: what it holds is only ever reached through descriptors from
 * there). path's parent is resolved as given (a parent behind a symlink, /var/run's, works):
 * whatever it resolves to, only that directory's contents are removed, or nothing (-ESTALE);
 * then its name, by rmdir (which removes an empty directory or nothing). */
int cd_rmtree_path(const char *path, const struct stat *st);

/* What the tree below dirfd holds: bytes allocated (st_blocks) and entries, counted through
 * descriptors (no symlink followed, no other filesystem entered), down to max_depth levels and
 * up to max_entries: -E2BIG when either is passed (the counts so far are in the results). */
int cd_tree_usage(int dirfd, unsigned max_depth, uint64_t max_entries, uint64_t *ret_bytes,
		  uint64_t *ret_entries);
