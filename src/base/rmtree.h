/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * rmtree.h - remove a directory tree a sandbox made, on the host, as whoever cordon runs as:
 * through descriptors only, never following a symlink, never leaving the filesystem the tree
 * is on, however deep the tree (one directory open at a time). For after the sandbox has ended:
 * nothing may be changing the tree meanwhile.
 */
#pragma once

#include <sys/stat.h>

/* Everything inside the directory dirfd (not the directory itself). 0, or the first -errno
 * (what could be removed is). */
int cd_rmtree_contents(int dirfd);
/* The directory at path, and everything in it, provided it is still the directory st
 * describes (device and inode) and path's parent resolves without a symlink. */
int cd_rmtree_path(const char *path, const struct stat *st);
