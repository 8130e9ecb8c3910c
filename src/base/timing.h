/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * timing.h - CORDON_TIMING=1: one line on stderr per step of a run, with the monotonic clock in
 * microseconds and the process, so that bench/phases can tell where each millisecond of a cold
 * start goes (bench/README.md, bench/startup.md). Off, a step costs one test of a flag.
 */
#pragma once

#include <stdbool.h>

/* "cordon-timing <µs> <pid> <page faults so far> <step>"; steps are string literals.
 * Async-signal-safe enough for a child between clone and exec (snprintf and system calls). */
void cd_timing(const char *step);
/* Is it on (the environment read once)? */
bool cd_timing_on(void);
/* Set it without the environment: cordon-init, whose environment is empty, is told. */
void cd_timing_enable(bool on);
