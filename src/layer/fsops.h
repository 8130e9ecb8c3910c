/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * fsops.h - what every part of src/layer does on files: open a relative path beneath a
 * directory without following a symlink or leaving its filesystem (however long the path),
 * hash and copy content, make directories. 0 / a descriptor, or -errno; no messages.
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "layer.h"

/* path (relative, checked by cd_layer_path_valid, or "" for dirfd itself) beneath dirfd:
 * openat2 RESOLVE_BENEATH|RESOLVE_NO_SYMLINKS|RESOLVE_NO_XDEV, in pieces when longer than
 * the kernel takes at once. flags get O_CLOEXEC|O_NOFOLLOW. */
int cd_lfs_open(int dirfd, const char *path, int flags, mode_t mode);
/* The directory holding path, opened as above (O_RDONLY|O_DIRECTORY); *ret_name: its last
 * component (points into path). */
int cd_lfs_open_parent(int dirfd, const char *path, const char **ret_name);
/* Every directory of dir (relative, "" for dirfd) made when missing (mode), opened. */
int cd_lfs_mkdirs(int dirfd, const char *dir, mode_t mode);

/* Content of fd: size and sha256 (read to its end). */
int cd_lfs_hash_fd(int fd, uint64_t *ret_size, uint8_t ret_sha[32]);
/* in to out (out -1: hashing only) from offset 0, keeping holes (every copy of src/layer: save
 * into tree/ and base/, apply into the workdir, seed into an upper): only data extents
 * (SEEK_DATA/SEEK_HOLE) are read and written (at their offsets), out is truncated to the size,
 * holes are hashed as zeros. -E2BIG when the content reaches past max_size (checked first on
 * st_size, then as it is read); budget (or NULL): bytes of data that may still be written,
 * lessened by what is, -EFBIG past it. ENOSPC and EDQUOT as they are. */
int cd_lfs_copy_sparse(int in, int out, uint64_t max_size, uint64_t *budget, uint64_t *ret_size,
		       uint8_t ret_sha[32]);
/* The symlink name in dirfd: its target (malloc'd, NUL-ended), size and sha256. */
int cd_lfs_readlink(int dirfd, const char *name, char **ret, uint64_t *ret_size,
		    uint8_t ret_sha[32]);
/* A name for a temporary entry: ".cordon-" and 12 random hex digits. */
void cd_lfs_tmpname(char ret[32]);
/* Random layer id. */
int cd_layer_new_id(char ret[CD_LAYER_ID_LEN + 1]);
/* A directory of cordon's on the host (the store, the key's directory), by its absolute path
 * (store.c): walked from "/" one component at a time, never through a symlink (-ELOOP, with
 * how->fix), each missing component made (how->mode, whatever the umask) when how->make, else
 * -ENOENT (err untouched); refused (-EPERM) below a directory that was a sandbox's workdir
 * (how->marks; NULL: the caller's, loaded here) and, with how->ctx, in the run's workdir by any
 * mount: both checked on the deepest directory that exists before anything is made. The
 * descriptor (O_RDONLY|O_DIRECTORY), or -errno with err filled. */
struct cd_output_ctx;
struct cd_marks;
struct cd_layer_place {
	const char *what; /* names it in messages: "layer store" */
	const char *fix;  /* what to do about a symlink on the way */
	bool make;
	mode_t mode;
	const struct cd_output_ctx *ctx;
	const struct cd_marks *marks;
};
int cd_layer_dir_open(const char *path, const struct cd_layer_place *how,
		      struct cordon_error *err);
/* Remove STORE/.ID.tmp, if there (store.c). */
int cd_layer_tmp_remove(int store_fd, const char *id);
