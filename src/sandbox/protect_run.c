/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * protect_run.c - a run's protected paths, in the supervisor (protect_run.h): the plan made and
 * told before anything starts, the sweep after a direct run, a --cow layer's git repositories.
 */
#include <fcntl.h>

#include "events.h"
#include "layer.h"
#include "protect_git.h"
#include "protect_run.h"

/* git's template hooks: hidden where .git/hooks is protected, so that `git init` inside copies
 * none into a .git/hooks it cannot write (and fails) */
#define CD_GIT_TEMPLATE_HOOKS "/usr/share/git-core/templates/hooks"

/* -v: what the git index cache did at the start (idxcache.h) */
static void log_idxcache(const struct cd_sandbox *sb)
{
	const struct cd_idxcache *x = &sb->cow.idxcache;

	if (x->why[0])
		cd_log_line(&sb->c->log, "protect: git index cache: not used: %s", x->why);
	else if (x->hits || x->misses)
		cd_log_line(&sb->c->log,
			    "protect: git index cache: %u from the cache, %u read (%u kept)",
			    x->hits, x->misses, x->stored);
}

int cd_protect_run_plan(struct cd_sandbox *sb, struct cordon_error *err)
{
	const struct cordon_config *c = sb->c;
	_cleanup_close_ int dir = openat(sb->wd.fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	int r;

	if (dir < 0)
		return cd_fail_errno(err, errno, "workdir", "%s", sb->wd.path);
	cd_idxcache_init(&sb->cow.idxcache, &sb->wd, &sb->marks);
	r = cd_protect_plan_build_cached(&c->protect, dir, sb->wd.path, &sb->cow.idxcache,
					 &sb->plan.protect, err);
	sb->cow.idxcache.marks = NULL; /* they go once the run is prepared: the directory is open */
	sb->cow.idxcache.tried = true; /* or never */
	if (r < 0)
		return r;
	log_idxcache(sb);
	for (size_t i = 0; i < sb->plan.protect.n; i++) {
		const struct cd_protect_path *g = &sb->plan.protect.paths[i];
		static const char *const states[] = { "there", "not there", "behind a symlink" };

		cd_log_line(&c->log, "protect: %-7s %s (%s; %s)", g->deny ? "deny" : "ro", g->rel,
			    g->glob, states[g->state]);
	}
	if (sb->plan.protect.git_hooks)
		return cd_mount_plan_add_hide(&sb->plan, CD_GIT_TEMPLATE_HOOKS, err);
	return 0;
}

static void notice_removed(void *data, enum cd_protect_why why, const char *rel, const char *glob,
			   const char *aside)
{
	struct cd_sandbox *sb = data;

	if (why == CD_PROTECT_SUBMODULE)
		cd_log_notice(&sb->c->log,
			      "protect: moved %s aside to %s: git would enter it as a submodule, "
			      "which the run made or added to the index (git status would run what "
			      "its config says); review it before you rename it back",
			      rel, aside);
	else if (why == CD_PROTECT_INDEX)
		cd_log_notice(&sb->c->log,
			      "protect: moved %s aside to %s: the sandbox left an index cordon "
			      "cannot read, which could make git enter submodules of its making; "
			      "review it before you rename it back",
			      rel, aside);
	else if (aside)
		cd_log_notice(&sb->c->log,
			      "protect: moved %s aside to %s: the sandbox made it at a protected "
			      "path (%s), and it holds files of another owner",
			      rel, aside, glob);
	else
		cd_log_notice(&sb->c->log,
			      "protect: removed %s, which the sandbox made at a protected "
			      "path (%s)",
			      rel, glob);
	cd_event_protect(&sb->rec.audit, rel,
			 why == CD_PROTECT_SWEPT ? glob
			 : why == CD_PROTECT_INDEX ? "(a git index)" : "(a git submodule)",
			 aside ? "moved-aside" : "removed");
}

void cd_protect_run_sweep(struct cd_sandbox *sb)
{
	_cleanup_close_ int dir = -1;
	int n;

	if (sb->c->cow.on)
		return; /* the layer's save refuses instead: the workdir was never written */
	dir = openat(sb->wd.fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dir < 0)
		return;
	n = cd_protect_sweep(&sb->plan.protect, dir, sb->wd.st.st_uid, notice_removed, sb);
	if (n > 0)
		sb->res->protect_removed = (uint64_t)n;
}

/* A layer's git repositories (protect_git.h): a .git the run made below the top, the .git of
 * a submodule it registered, refused by apply like the protected paths */
int cd_protect_run_layer_git(void *data, const struct cd_layer *l, int upper_fd, char ***globs,
			     struct cordon_error *err)
{
	struct cd_sandbox *sb = data;
	_cleanup_close_ int lower = openat(sb->wd.fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (lower < 0)
		return cd_fail_errno(err, errno, "cow", "open the workdir %s", sb->wd.path);
	return cd_protect_git_layer(&sb->plan.protect, l, upper_fd, lower, globs, err);
}
