/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * textdiff.h - a line diff of two buffers as unified hunks, in the form `git apply` reads (the
 * lines after "---"/"+++"). Pure: no I/O but writing to the FILE* it is given. Used by
 * `cordon diff` (diff.c, patch.c), in the CLI's process.
 */
#pragma once

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define CD_TEXTDIFF_CONTEXT 3

struct cd_textdiff_count {
	uint64_t added;   /* "+" lines */
	uint64_t removed; /* "-" lines */
};

/* Lines are split after each "\n" (a "\r" stays part of its line); a last line without one is
 * followed by "\ No newline at end of file". Hunks "@@ -a,b +c,d @@" (",1" left out, as git
 * does; "-0,0" for an empty side), 3 lines of context, hunks closer than 6 lines merged.
 * Identical buffers: nothing. out NULL: only count. Myers' O(ND) diff in linear space; lines
 * that the other side does not have at all are changes before it runs, and an edit budget
 * (per split and in all) bounds the time: past it the result is still a correct diff, only
 * not the shortest. 0, -ENOMEM, or -EFBIG past
 * 500 million lines a side. A write error stays in ferror(out). */
int cd_textdiff_hunks(const char *a, size_t a_len, const char *b, size_t b_len, FILE *out,
		      struct cd_textdiff_count *ret_count);
