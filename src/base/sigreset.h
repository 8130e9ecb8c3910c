/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * sigreset.h - every signal back to its default disposition and none blocked, before an exec:
 * in pid 1 for the command, in cordon's agent for each command it starts. libc only (both are
 * static programs); no allocation (it runs after vfork).
 */
#pragma once

#include <stdint.h>

/* The signals this process ignores or catches, by /proc/self/status (SigIgn | SigCgt), or all
 * of them (UINT64_MAX) where that cannot be read; bit sig - 1 for signal sig */
uint64_t cd_signals_set(void);

/* Every disposition back to the default (an ignored one would outlive exec; a caught one would
 * run the parent's handler in the child until it), and nothing blocked: one system call for
 * each signal that is not at its default, not one for each of 64 */
void cd_reset_signals(void);
