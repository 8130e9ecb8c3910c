/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * timing.h - CORDON_TIMING=1: one line per step of a run, with the monotonic clock in
 * microseconds, the process and its page faults, so that bench/phases can tell where each
 * millisecond of a cold start goes (bench/README.md, bench/startup.md). Off, a step costs one
 * test of a flag.
 *
 * Where a line goes is the calling thread's sink. In the caller's process it is a function: the
 * library's log callback (cd_run() sets the config's for the run it does; none: nowhere), so that
 * the library writes nothing itself; the CLI's own, which prints the lines as they are. The
 * sandbox's own processes (pid 1, cordon-init, the command's process before its exec) write
 * theirs on their stderr, the command's (the caller's, or --capture's pipe): the caller's
 * callback is not theirs to call (pid 1 closed the descriptors it may write to, and reuses
 * their numbers).
 */
#pragma once

#include <stdbool.h>

/* Every line starts so: "cordon-timing <µs> <pid> <page faults so far> <step>" (no newline),
 * which is how a log callback tells one from its other lines. */
#define CD_TIMING_PREFIX "cordon-timing "

typedef void (*cd_timing_fn)(void *data, const char *line);
struct cd_timing_sink {
	cd_timing_fn fn; /* NULL: nowhere (a thread's sink until it is given one) */
	void *data;
};

/* The step's line to the calling thread's sink; steps are string literals. Async-signal-safe
 * enough for a child between clone and exec (snprintf and system calls). */
void cd_timing(const char *step);
/* Is a step timed: CORDON_TIMING set (the environment read once), and a sink to time it to? */
bool cd_timing_on(void);
/* The calling thread's sink from now on; returns the one before, to put back. */
struct cd_timing_sink cd_timing_sink_swap(struct cd_timing_sink to);
/* The sandbox's own processes: their lines on their stderr from now on, when on (else off).
 * pid 1, a fork of the supervisor, passes cd_timing_on(); cordon-init, whose environment is
 * empty, what its spec says. */
void cd_timing_to_stderr(bool on);
