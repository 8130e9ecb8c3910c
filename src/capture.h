/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* capture.h - --capture DIR: the sandbox's stdout and stderr go through pipes to the
 * supervisor, which passes them on to its own stdout and stderr byte for byte and keeps a copy
 * in DIR/stdout and DIR/stderr. Supervisor side. */
#pragma once

#include <stdbool.h>
#include <sys/stat.h>

#include "util.h"

struct cd_capture_stream {
	int rd;    /* our end of the pipe; -1 at EOF */
	int wr;    /* the sandbox's end, given to pid 1 as fd 1 or 2; closed after clone */
	int file;  /* the copy */
	int out;   /* where it is passed on: 1 or 2 */
	uint64_t bytes;
};

struct cd_capture {
	bool on;
	struct cd_capture_stream s[2]; /* stdout, stderr */
};

/* DIR made if missing, DIR/stdout and DIR/stderr created anew, outside the workdir (output.h). */
int cd_capture_open(const char *dir, const struct stat *workdir, struct cd_capture *cap,
		    struct cordon_error *err);
/* After clone: the sandbox holds the write ends. */
void cd_capture_started(struct cd_capture *cap);
/* Move what is readable on stream i; false at EOF. */
bool cd_capture_pump(struct cd_capture *cap, int i);
/* Pass on what is left until EOF (every writer gone) or timeout_ms. */
void cd_capture_drain(struct cd_capture *cap, int timeout_ms);
void cd_capture_done(struct cd_capture *cap);
