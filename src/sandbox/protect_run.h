/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * protect_run.h - a run's protected paths, in the supervisor (protect_run.c): planned through the
 * workdir's descriptor before anything starts (and told with -v), git's template hooks hidden
 * where .git/hooks is protected; after a direct run, what the sandbox made at a protected path
 * swept; with --cow, the layer's new git repositories refused (a callback of the layer's save).
 * What pid 1 mounts for them is mount.c's; the planning itself is protect.c's and protect_git.c's.
 */
#pragma once

#include "sandbox.h"

struct cd_layer;

/* The plan (sb->plan.protect), git's indexes read through the run's cache (idxcache.h). */
int cd_protect_run_plan(struct cd_sandbox *sb, struct cordon_error *err);
/* Every process of the sandbox is gone: with a direct workdir, remove or move aside what it made
 * at a protected path, each told as a notice and an audit event (nothing to do with --cow). */
void cd_protect_run_sweep(struct cd_sandbox *sb);
/* A cd_layer_protect_fn (data: the sandbox): the globs a --cow layer must carry for the git
 * repositories it made or registered (protect_git.h), appended to *globs. */
int cd_protect_run_layer_git(void *data, const struct cd_layer *l, int upper_fd, char ***globs,
			     struct cordon_error *err);
