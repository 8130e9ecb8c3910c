/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * protect_git.h - what git runs from the workdir, protected with the default set (protect_git.c),
 * and the helpers of protect.c it plans with. Supervisor side.
 *
 * git runs programs a repository names: its hooks, what its config says (core.fsmonitor at
 * every git status, a pager, filters: gitconfig.h), and the same of every repository it enters:
 * the submodules its index has gitlinks for, where their directory holds a .git. Which
 * repositories those are is in files the sandbox can write (a .git file naming the git
 * directory, the index, a new .git), so:
 *  - at the start: a .git file (the workdir's, a submodule's) is protected like a config; the
 *    repositories found through .git files, gitlinks and .gitmodules have their git directory's
 *    config, hooks and what the config names protected as the workdir's own; each writable
 *    index is recorded (cd_protect_repo);
 *  - after a direct run (cd_protect_git_sweep): an index that changed is read again; a .git where
 *    a gitlink (or a sparse directory) now is, and was not at the start, is moved aside;
 *  - with --cow (cd_protect_git_layer, when the layer is saved): a new or replaced .git below the
 *    top, the .git of a gitlink an index of the layer adds, and the parts the layer brings of a
 *    bare repository (HEAD, objects, refs, commondir, config of a directory git would take for
 *    a git directory, the top included) become protected globs of the layer, which cordon
 *    apply then refuses.
 * A new repository at the top of a workdir that had none is the sandbox's (README).
 */
#pragma once

#include "protect.h"

struct cd_layer;

/* protect.c */
/* One literal path protected by a rule of cordon's making: g ("dir/" for a directory); create:
 * protected while missing too (swept, or refused at apply); placeholder: with --cow a read-only
 * directory holds its place. A path below a directory already read-only is left to it. */
int cd_protect_literal(struct cd_protect_plan *p, int workdir_fd, const char *g, bool create,
		       bool placeholder, struct cordon_error *err);
/* Is rel below a directory the plan makes read-only or hides? */
bool cd_protect_covered(const struct cd_protect_plan *p, const char *rel);
/* A regular file of the workdir, whole (malloc'd, NUL-ended), no symlink followed, never a
 * FIFO's open: -ENOENT when missing or not regular, -EFBIG over max bytes */
int cd_protect_read(int workdir_fd, const char *rel, size_t max, char **ret, size_t *ret_len);
/* base/rel as a normalized path relative to the workdir, ".." taken lexically: -EXDEV when it
 * leaves the workdir */
int cd_protect_join(const char *base, const char *rel, char *out, size_t size);
/* name in parent renamed to NAME.cordon-moved-aside (or .1, .2, ...): 2, or -errno */
int cd_protect_move_aside(int parent, const char *name, char *aside, size_t size);

/* protect_git.c */
int cd_protect_git_plan(struct cd_protect_plan *p, int workdir_fd, const char *workdir_path,
			struct cordon_error *err);
int cd_protect_git_sweep(const struct cd_protect_plan *p, int workdir_fd,
			 cd_protect_notice_fn notice, void *data);
void cd_protect_repos_free(struct cd_protect_plan *p);
/* A --cow layer being saved (its changes sorted, upper_fd: the upper directory they are in):
 * the globs it must carry besides the plan's, appended to *globs. 0 or -errno (err filled). */
int cd_protect_git_layer(const struct cd_protect_plan *p, const struct cd_layer *l, int upper_fd,
			 int workdir_fd, char ***globs, struct cordon_error *err);
