/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * patch.h - one file's part of a git-style patch, in the form `git apply` reads: "diff --git"
 * and its extended headers, unified hunks for text (textdiff.h), "GIT binary patch" for binary
 * content. Pure: no I/O but writing to the FILE* it is given. Used by `cordon diff` (diff.c).
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include <nettle/sha1.h>

#include "textdiff.h"

#define CD_GIT_MODE_FILE    0100644
#define CD_GIT_MODE_EXEC    0100755
#define CD_GIT_MODE_SYMLINK 0120000

/* One side of a file's change. mode 0: the file is not on this side (an add or a delete);
 * else a git mode (a file's: 100644 or 100755; a symlink's: 120000, its target the data). */
struct cd_patch_side {
	const char *path;
	mode_t mode;
	const char *data; /* borrowed; NULL: not in memory (too big): binary, id given */
	size_t len;
	const char *id; /* git's blob id of the content, or NULL: computed from data */
};

/* git's mode for a file of permission bits perm: executable by its owner or not, as git
 * records it. */
mode_t cd_patch_file_mode(mode_t perm);

/* git's blob id of data: SHA-1 of "blob LEN\0" then the data; 40 hex digits and a NUL. */
void cd_patch_blob_id(const void *data, size_t len, char ret[41]);
/* The same in pieces: begin with the content's whole length, update, end. */
void cd_patch_blob_begin(struct sha1_ctx *ctx, uint64_t len);
void cd_patch_blob_end(struct sha1_ctx *ctx, char ret[41]);

/* git's test: a NUL in the first 8000 bytes. */
bool cd_patch_is_binary(const void *data, size_t len);

/* prefix + path, as git writes a name: in double quotes with C escapes (\n, \t, \", \\, \ooo
 * for other control bytes, 0x7f and bytes of 0x80 and above) when it has any of them. */
void cd_patch_put_name(FILE *out, const char *prefix, const char *path);

/* The patch of old -> new: an add (old->mode 0), a delete (new->mode 0), a change of content
 * or mode, or an exact rename (the paths differ: the data must be equal, -EINVAL if not). A
 * side not in memory (data NULL) makes the change binary: "Binary files a/P and b/P differ"
 * after the index line, as git writes past core.bigFileThreshold.
 * Both sides must be of one kind (file or symlink): a change of type is a delete and an add.
 * Nothing is written when git would see no change (same content, same git mode). Counts of
 * "+"/"-" lines to *ret_count (may be NULL; 0 for binary). 0, -EINVAL, -ENOMEM, -EFBIG (see
 * cd_textdiff_hunks); a write error stays in ferror(out). */
int cd_patch_file(FILE *out, const struct cd_patch_side *old, const struct cd_patch_side *new,
		  struct cd_textdiff_count *ret_count);

/* "GIT binary patch", "literal LEN" and new's content deflated in git's base85 lines, a blank
 * line, then the same for old (the reverse), as git writes with --binary --full-index. */
int cd_patch_binary(FILE *out, const void *old, size_t old_len, const void *new, size_t new_len);
