/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * protect.h - protected paths inside the workdir (--protect, --deny, the default set): which
 * paths they are when the run starts, looked up by the supervisor through the workdir's
 * descriptor (protect.c), and what pid 1 mounts for them (mount.c: protect mounts):
 *  - a path that exists: a read-only clone of it (protect) or an empty mask (deny) over it;
 *  - the directories above it (and a file standing where a directory of the path would be, as
 *    a linked worktree's .git): each bound onto itself, so that none can be renamed, removed or
 *    replaced while the sandbox runs (a mount point cannot be: EBUSY);
 *  - a literal path that does not exist: nothing (it stays missing inside: no placeholder that
 *    changes what a program sees); with a copy-on-write workdir, cordon apply refuses a layer
 *    that made it (the manifest's globs); with a direct workdir the supervisor looks after the
 *    run and removes what was made there (cd_protect_sweep).
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "config.h"
#include "protect_glob.h"

enum cd_protect_state {
	CD_PROTECT_EXISTS,  /* the path is there (a directory, a file) */
	CD_PROTECT_ABSENT,  /* it, or a directory above it, is missing */
	CD_PROTECT_BLOCKED, /* a symlink stands in its path: nothing to mount on; swept after */
};

struct cd_idxcache;

struct cd_protect_path {
	char *rel;    /* relative to the workdir, normalized */
	char *glob;   /* the rule it came from (borrowed from the config or the default set) */
	bool deny;    /* hidden rather than read-only */
	bool dir;     /* a directory (as found, or as the rule says for a placeholder) */
	bool create;  /* a literal path protected against being created too */
	bool placeholder; /* the list says refuse (not drop): kept for -v and the unit tests; no
			   * placeholder is made any more (a missing path stays missing inside) */
	enum cd_protect_state state;
	size_t exist_len; /* ABSENT, BLOCKED: rel[0..exist_len) were directories (pinned) */
	dev_t link_dev;   /* BLOCKED: the symlink that stood in the path (the user's: kept) */
	ino_t link_ino;
};

/* A repository git enters from the workdir whose index the sandbox can write (protect_git.c): the
 * workdir's own, and its submodules' and nested repositories' found through the indexes (their
 * gitlinks) and .gitmodules. After a direct run, an index that changed is read again, and a
 * repository the sandbox put where git would now enter one is moved aside; with --cow, the save
 * refuses it (cd_protect_git_layer). */
struct cd_protect_repo {
	char *top;      /* its worktree's top, relative to the workdir ("": the workdir) */
	char *index;    /* its index, relative to the workdir */
	char *gitdir;   /* its git directory (where a split index's shared index is) */
	size_t hash_len; /* its object names' length: 20, or 32 (extensions.objectFormat sha256) */
	bool index_there;
	struct stat index_st; /* the index when the run started (as it was read) */
	bool index_racy; /* ... stamped within a tick of that reading: a change during the run may
			  * have left index_st as it is (idxcache.h), so it is read again after */
	bool index_split; /* ... a split index: its shared index is another file, read again after */
	char **links;   /* its gitlinks then, relative to top, sorted (NULL: none) */
	char **present; /* of them (and .gitmodules's paths), those whose .git was there, sorted */
	char **sparse;  /* its sparse directories (an index's "dir/" entries), sorted */
};

/* One entry of the default set (protected-paths/default.list). */
struct cd_protect_rule {
	char *glob;
	bool deny;
	bool create;         /* refuse or drop: protected while it does not exist too */
	bool no_placeholder; /* drop: nothing holds its place (see struct cd_protect_path) */
	unsigned line, col;  /* where the list says it */
};

struct cd_protect_list {
	struct cd_protect_rule *r;
	size_t n;
	char *source; /* the file it was read from, or "built-in:default.list" */
};

struct cd_protect_plan {
	struct cd_protect_path *paths;
	size_t n;
	char **pins;    /* relative paths bound onto themselves, outermost first */
	char **globs;   /* every rule in force (for the layer's manifest), NULL-ended */
	char **new_globs; /* patterns (one name, at the top) whose new matches are swept */
	bool git_hooks; /* .git/hooks is protected: git's template hooks are hidden inside */
	struct cd_protect_list defaults; /* the default set in force: the paths' globs point in */
	struct cd_protect_repo *repos;   /* with the default set: git's repositories (above) */
	size_t n_repos;
	struct cd_idxcache *idxcache;    /* borrowed (NULL: none): git indexes' readings kept */
};

/* The rules of c (its own, then the default set unless turned off: cd_protect_list_load(NULL))
 * against the workdir, then, with the default set, what git runs from it (protect_git.c)
 * (workdir_fd: the supervisor's descriptor; workdir_path: its host path, for the paths a git
 * config or a .git file names). Bad globs were refused by the setter; a glob that matches more
 * than CD_PROTECT_MAX paths fails here. */
#define CD_PROTECT_MAX 4096
int cd_protect_plan_build(const struct cd_protect_opts *o, int workdir_fd, const char *workdir_path,
			  struct cd_protect_plan *ret, struct cordon_error *err);
/* The same, git's indexes read through cache (idxcache.h; borrowed by the plan, for its sweep,
 * until cd_protect_plan_done) */
int cd_protect_plan_build_cached(const struct cd_protect_opts *o, int workdir_fd,
				 const char *workdir_path, struct cd_idxcache *cache,
				 struct cd_protect_plan *ret, struct cordon_error *err);
void cd_protect_plan_done(struct cd_protect_plan *p);

/* The default set, as data: protected-paths/default.list (its README says the format). Parse
 * one (pure): 0, or -EINVAL with "name:line:col: why". A pattern (*, ?, [...]) cannot refuse
 * (a placeholder needs a name), and drops new matches only as one name at the top. */
int cd_protect_list_parse(const char *text, size_t len, const char *name,
			  struct cd_protect_list *ret, struct cordon_error *err);
/* The list in force: dir/default.list (dir NULL: the installed directory, cd_protect_list_dir())
 * where it exists, else the one compiled into the binary. A copy that is there but unreadable,
 * malformed, or writable by another user than root or the caller fails. */
int cd_protect_list_load(const char *dir, struct cd_protect_list *ret, struct cordon_error *err);
void cd_protect_list_done(struct cd_protect_list *l);
const char *cd_protect_list_dir(void);

/* After a run with a direct workdir: remove what the sandbox made at a protected path that did not
 * exist (or stood behind a symlink) when it started, and the new matches of a pattern that
 * drops them, through descriptors, never following a symlink. Only what is owned by owner (the
 * workdir's: whom the sandbox's files belong to on the host) is removed; a tree holding anything
 * else (as root, files of an owner the sandbox could not remove, moved in with their directory)
 * is renamed aside, NAME.cordon-moved-aside, out of the protected path. Then git's repositories
 * (cd_protect_git_sweep): a .git the sandbox put where git would enter a submodule, and an index
 * cordon cannot read, are renamed aside, never removed. Each is told to notice() (aside: the new
 * path, or NULL when removed; why: what it was). Returns how many paths were removed or moved,
 * or -errno. */
enum cd_protect_why {
	CD_PROTECT_SWEPT,     /* made at a protected path (glob: the rule) */
	CD_PROTECT_SUBMODULE, /* a repository where the index has a gitlink: git would enter it */
	CD_PROTECT_INDEX,     /* an index cordon cannot read: it could name such submodules */
};
typedef void (*cd_protect_notice_fn)(void *data, enum cd_protect_why why, const char *rel,
				     const char *glob, const char *aside);
int cd_protect_sweep(const struct cd_protect_plan *p, int workdir_fd, uid_t owner,
		     cd_protect_notice_fn notice, void *data);
