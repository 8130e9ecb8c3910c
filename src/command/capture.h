/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* capture.h - --capture DIR: the sandbox's stdout and stderr go through pipes to the
 * supervisor, which passes them on to its own stdout and stderr byte for byte and keeps a copy
 * in DIR/stdout and DIR/stderr. Supervisor side.
 *
 * The copy is written as the bytes arrive; passing them on never blocks the supervisor, whose
 * loop is also the watchdog's: a caller that reads slowly (or never) holds at most
 * CD_CAPTURE_BUFFER bytes per stream in cordon, and then the sandbox's pipe fills and its
 * writes wait, as they would on the caller's own pipe.
 *
 * What the caller sees stays what it would see without --capture: when its stdout is a terminal,
 * the command's is a pseudo-terminal (it sees a terminal); when its stdout and stderr are one
 * file, pipe or terminal (2>&1), one channel carries both, in the order written, and DIR/stdout
 * holds both (DIR/stderr stays empty). */
#pragma once

#include <poll.h>
#include <stdbool.h>
#include <sys/stat.h>

#include "output.h"
#include "util.h"

#define CD_CAPTURE_BUFFER (256u << 10)
#define CD_CAPTURE_MAX    (1ull << 30) /* kept per stream, unless --fsize says less */

struct cd_capture_stream {
	int rd;    /* our end of the pipe; -1 at EOF */
	int wr;    /* the sandbox's end, given to pid 1 as fd 1 or 2; closed after clone */
	int file;  /* the copy */
	int out;   /* where it is passed on: 1 or 2 */
	int out_nb; /* the same file, opened again non-blocking; -1: out never blocks (a file) */
	bool out_gone; /* the caller's end is closed: the copy is still kept */
	bool pty;   /* rd is a pseudo-terminal's master, wr its peer: the caller's is a terminal */
	char *buf;  /* bytes read, not yet passed on */
	size_t len;
	uint64_t bytes;   /* kept in the file */
	bool truncated;   /* the file reached max: the rest was only passed on */
};

struct cd_capture {
	bool on;
	uint64_t max;  /* bytes kept per stream */
	bool merged; /* the caller's stdout and stderr are one file: one channel, s[0], for both */
	struct cd_capture_stream s[2]; /* stdout, stderr */
};

/* DIR made if missing, DIR/stdout and DIR/stderr created anew, outside the workdir (output.h). */
int cd_capture_open(const char *dir, const struct cd_output_ctx *ctx, uint64_t max,
		    struct cd_capture *cap, struct cordon_error *err);
/* What the sandbox gets as fd 1 (i 0) or 2 (i 1), or -1. */
int cd_capture_fd(const struct cd_capture *cap, int i);
/* After clone: the sandbox holds the write ends. */
void cd_capture_started(struct cd_capture *cap);
/* The poll entries of stream i: its pipe (while there is room to read into) and the caller's
 * end (while bytes wait for it). */
void cd_capture_poll(const struct cd_capture *cap, int i, struct pollfd *in, struct pollfd *out);
/* Move what can be moved on stream i without blocking. */
void cd_capture_pump(struct cd_capture *cap, int i);
/* Pass on what is left until every writer is gone and every byte is passed on, or timeout_ms:
 * a caller that does not read loses what it did not read (DIR keeps it). */
void cd_capture_drain(struct cd_capture *cap, int timeout_ms);
void cd_capture_done(struct cd_capture *cap);
