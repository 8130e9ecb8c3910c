/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* libexec.h - cordon's helper programs (cordon-init, cordon-agent): found and opened on the host,
 * executed inside the sandbox from the descriptor. Runs in the caller's process. */
#pragma once

#include "util.h"

/* Open the helper program `name` (read-only, close-on-exec): $env when set, else beside the
 * running program (an uninstalled build), else in $libexecdir. It must be a regular file owned by
 * root or by us that neither group nor others may write: it runs in every sandbox, and a copy a
 * sandbox could have rewritten must not run in the next one. The descriptor, or -errno. */
int cd_libexec_open(const char *name, const char *env, struct cordon_error *err);
