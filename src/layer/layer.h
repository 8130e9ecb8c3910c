/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * layer.h - a copy-on-write workdir's changes, kept on the host until applied or discarded.
 *
 * During a run with a copy-on-write workdir the sandbox sees an overlay: the real workdir as
 * its lower layer, a tmpfs of the sandbox's as the upper one (mount.c). When the sandbox has
 * ended (every process of it gone: nothing changes the upper any more), the supervisor saves
 * the upper into the layer store, comparing with the real workdir as it goes; from then on
 * `cordon diff`, `cordon apply` and `cordon discard` work on the stored layer.
 *
 * The store (one per user): $CORDON_LAYER_DIR, or --layer-dir, or by default
 * $XDG_STATE_HOME/cordon/layers (~/.local/state/cordon/layers), and /var/lib/cordon/layers for
 * root. Ours, mode 0700, not a symlink, checked at every open; created (0700) if missing. Never
 * within a sandbox's reach: a run refuses a store in its workdir (by any mount), and every open
 * refuses one reached through a symlink or below a directory that was a sandbox's workdir. A
 * store someone else could write anyway (a path nobody foresaw) still cannot hand cordon a
 * manifest: each carries a MAC under a key kept outside every store (mac.h), checked with the
 * ownership and modes of the layer's directory and manifest at every read (cd_layer_load).
 *
 *   STORE/ID/            one layer, ID = 16 lower-case hex digits (random)
 *   STORE/ID/manifest    what changed, relative to the workdir when saved (format below)
 *   STORE/ID/tree/       the new content: regular files, directories and symlinks, at their
 *                        paths; nothing else. Modes without setuid/setgid.
 *   STORE/ID/base/       the workdir's old content of every M and D file and symlink (so a
 *                        diff needs nothing but the layer, and shows what the run saw)
 * A layer is written as STORE/.ID.tmp and renamed into place: a layer is there whole or not.
 *
 * The manifest: text lines. First "cordon-layer 2". Then header lines "KEY VALUE":
 *   workdir PATH        the host workdir (escaped, as paths below): shown, never written to
 *   workdir-id DEV INO  its device and inode: apply writes only into the directory it is
 *                       asked to (or the current one), and only when it is this one
 *   created UNIXTIME    saved UNIXTIME
 *   bytes N             what tree/ holds
 *   protect GLOB        one per protected glob in force during the run (apply refuses them)
 * then one line per change, after the line "changes":
 *   OP TYPE MODE SIZE SHA256 BASETYPE BASEMODE BASESIZE BASESHA256 PATH
 * OP: A (added), M (modified: content, type or mode), D (deleted). TYPE/BASETYPE: f file,
 * d dir, l symlink, - none (TYPE is - for D, BASETYPE is - for A). MODE octal (0777 and the
 * sticky bit at most). SIZE decimal. SHA256: 64 hex of the content (file) or the target
 * (symlink), "-" for a dir or none. PATH: relative to the workdir, never empty, no "." or ".."
 * component, no leading or doubled "/"; bytes below 0x21, "\" and 0x7f and above written as
 * \ooo (three octal digits). Changes are sorted by path (bytewise); apply makes deletions
 * deepest first and additions parents first. Last, "mac HEX": the manifest's MAC (mac.h), over
 * every byte before that line. Format 1 (an earlier cordon's) had none: such a layer is not
 * read, only discarded.
 *
 * What a save records, from the overlay's upper layer (userxattr: whiteouts are 0:0 character
 * devices, opaque directories carry user.overlay.opaque="y"):
 *  - a whiteout: D for the workdir's entry there, and for a directory D for everything below it
 *    too (each file listed: a deletion is reviewed like any change);
 *  - an opaque directory: the directory (A or M) and D for everything of the workdir's below it
 *    that the upper does not have;
 *  - a file, symlink or directory the workdir has not there: A (and for a directory, A for all
 *    below it);
 *  - one the workdir has: M when type, mode or content differ; a directory the overlay only
 *    copied up to hold a change below it is no change of its own;
 *  - FIFOs, sockets and devices other than whiteouts: not kept; counted in `skipped`.
 * BASE* describe the workdir's entry at save time; apply refuses a change whose path no longer
 * matches its BASE (a conflict) unless it already matches the new state.
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "cordon.h"

#define CD_LAYER_ID_LEN 16

enum cd_layer_op { CD_LAYER_ADD = 'A', CD_LAYER_MODIFY = 'M', CD_LAYER_DELETE = 'D' };
enum cd_layer_type {
	CD_LT_NONE = '-',
	CD_LT_FILE = 'f',
	CD_LT_DIR = 'd',
	CD_LT_SYMLINK = 'l',
};

struct cd_layer_state {
	enum cd_layer_type type;
	mode_t mode;
	uint64_t size;
	uint8_t sha256[32]; /* file content or symlink target; zero for dir/none */
};

struct cd_layer_change {
	enum cd_layer_op op;
	struct cd_layer_state now;  /* in tree/ (type NONE for D) */
	struct cd_layer_state base; /* in the workdir when saved (type NONE for A) */
	char *path;
};

struct cd_layer {
	char id[CD_LAYER_ID_LEN + 1];
	char *workdir;
	dev_t workdir_dev;
	ino_t workdir_ino;
	int64_t created, saved;
	uint64_t bytes;
	uint64_t skipped;
	char **protect; /* NULL-ended */
	struct cd_layer_change *changes;
	size_t n_changes;
};

struct cd_output_ctx;
struct cd_layer_key;

/* The store: open (creating it 0700 if missing, with its parents) and check it: a directory of
 * ours, 0700, reached from "/" through no symlink and through no directory that was a
 * sandbox's workdir (marks.h); with ctx (a run's: its workdir and marks), neither the run's
 * workdir nor below it by any mount (output.h), checked before anything is made. dir NULL:
 * the default above. ret_path: the path used (malloc'd; may be NULL). */
int cd_layer_store_open(const char *dir, const struct cd_output_ctx *ctx, int *ret_fd,
			char **ret_path, struct cordon_error *err);

/* What a save takes from an upper at most. The upper is a tmpfs of --cow-size bytes the sandbox
 * wrote; a save must not cost the host much more than that, whatever the sandbox made there:
 *  - CD_SAVE_SLACK: the data tree/ gets (bytes of the files' data extents written; holes are
 *    kept holes, a hard-linked inode is copied once and its other names linked to that copy)
 *    may not exceed what the upper's filesystem has in use ((f_blocks - f_bfree) * f_bsize,
 *    read when the save starts and, for a live upper, again before each file) plus this;
 *    past it: -EFBIG, nothing kept.
 *  - CD_SAVE_SIZE_FACTOR, CD_SAVE_MAX_BYTES: the layer's files and symlinks total at most
 *    CD_SAVE_SIZE_FACTOR times the size of the upper's filesystem (f_blocks * f_bsize, that is
 *    --cow-size), nor CD_SAVE_MAX_BYTES, counted at their apparent size and once per name (the
 *    manifest's "bytes"): what apply writes into a workdir, what a diff reads. A sparse file
 *    costs the tmpfs nothing and a hard link costs it no data, but apply makes each name a file
 *    of its own and a filesystem without holes (or a tool that reads them) pays the apparent
 *    size; past it: -EFBIG, nothing kept. A layer without holes or hard links never comes
 *    near it. With the default --cow-size of 1G: 2 GiB.
 *  - CD_SAVE_MAX_PATH: a change's path is at most PATH_MAX - 1 bytes (what apply can open);
 *    longer: -ENAMETOOLONG. CD_SAVE_MAX_DEPTH follows from it: a path of 4095 bytes has at most
 *    2048 components.
 *  - CD_SAVE_MAX_CHANGES changes, CD_SAVE_MAX_PATH_BYTES bytes of paths kept in memory (and
 *    written to the manifest), and no more names of directories held at once while walking
 *    than CD_SAVE_MAX_CHANGES: past them -E2BIG, nothing kept.
 * Each refusal's message names the limit. An upper on a filesystem that states no size (a tmpfs
 * without size=; cordon always gives one, --cow-size) is bounded by CD_SAVE_MAX_BYTES only. */
#define CD_SAVE_SLACK          (1ull << 20)
#define CD_SAVE_SIZE_FACTOR    2
#define CD_SAVE_MAX_BYTES      (1ull << 40)
#define CD_SAVE_MAX_PATH       4095
#define CD_SAVE_MAX_DEPTH      2048
#define CD_SAVE_MAX_CHANGES    1000000
#define CD_SAVE_MAX_PATH_BYTES (256ull << 20)

/* Save the upper layer (upper_fd: its root directory) against the workdir (lower_fd: the real
 * workdir, opened by the supervisor) as a new layer of the store; the manifest's header from
 * *meta (id filled here: ret_id gets it). Everything read through descriptors, no symlink
 * followed, the upper treated as hostile (any name, any depth, any mode, hard links, sparse
 * files, entries that are not files; the limits above). Fails with -ENOSPC (a clear message)
 * when the store's filesystem fills: nothing half-written is left.
 * live: the sandbox is still running (a checkpoint): an upper entry the sandbox closed to us
 * (not root) and that we opened up (chmod) to read gets its mode back as soon as it has been
 * read (a directory: when the walk leaves it, since its entries are looked up through it), and
 * an entry that vanishes or changes type while the walk reaches it is left out instead of
 * failing the save. Not live (the sandbox has ended): the upper is thrown away afterwards and
 * any such change is an error. */
int cd_layer_save(int store_fd, int upper_fd, int lower_fd, const struct cd_layer *meta,
		  bool live, char ret_id[CD_LAYER_ID_LEN + 1], struct cordon_error *err);
/* The same, with protect_fn called once the changes are known (sorted), before the manifest is
 * written: it may add globs to *protect, which apply then refuses (protect_run.c: a git
 * repository the run made below the top, or registered as a submodule: protect_git.h). 0, or
 * -errno with err filled: nothing kept. */
typedef int (*cd_layer_protect_fn)(void *data, const struct cd_layer *l, int upper_fd,
				   char ***protect, struct cordon_error *err);
int cd_layer_save_protected(int store_fd, int upper_fd, int lower_fd, const struct cd_layer *meta,
			    cd_layer_protect_fn protect_fn, void *data, bool live,
			  char ret_id[CD_LAYER_ID_LEN + 1], struct cordon_error *err);

/* Load a stored layer, once it is checked to be cordon's own: the store still ours and 0700;
 * STORE/ID a directory and STORE/ID/manifest a file, both ours, writable by no one else, not
 * symlinks, the manifest of one name (else -EPERM or -ELOOP); the manifest's MAC matching under
 * the caller's key (mac.h; else -EBADMSG: an earlier cordon's layer without a MAC, a changed
 * manifest, no key); then parsed and checked (malformed: -EBADMSG with where). Every message
 * says the layer can be discarded. _with: under a key already read (cd_layer_key_get). */
int cd_layer_load(int store_fd, const char *id, struct cd_layer **ret, struct cordon_error *err);
int cd_layer_load_with(int store_fd, const struct cd_layer_key *key, const char *id,
		       struct cd_layer **ret, struct cordon_error *err);
void cd_layer_free(struct cd_layer *l);
static inline void cd_layer_freep(struct cd_layer **l)
{
	if (*l)
		cd_layer_free(*l);
}

/* Every entry of the store named like a layer: those that load, newest first, with their header
 * (l: no changes nor globs, n_changes counting them); then those that do not (l NULL, why says
 * why), by id. */
struct cd_layer_entry {
	char id[CD_LAYER_ID_LEN + 1];
	struct cd_layer *l;
	struct cordon_error why;
};
int cd_layer_list(int store_fd, struct cd_layer_entry **ret, size_t *ret_n,
		  struct cordon_error *err);
void cd_layer_entries_free(struct cd_layer_entry *v, size_t n);

/* Remove a stored layer, or whatever is at its name in the store (never followed). */
int cd_layer_discard(int store_fd, const char *id, struct cordon_error *err);

/* Copy a stored layer into an empty upper directory (upper_fd, on the tmpfs of a sandbox that
 * has not started): files, dirs and symlinks from tree/, whiteouts (mknod 0:0) for D entries,
 * user.overlay.opaque="y" on directories that replaced a workdir directory; every entry made
 * owned by uid:gid (host ids of the sandbox). For a session forked from another's changes. */
int cd_layer_seed(int store_fd, const char *id, int upper_fd, uid_t uid, gid_t gid,
		  struct cordon_error *err);

struct cd_audit;
/* The audit trail's "file" events: one per change the layer holds (from its manifest: no walk);
 * nothing when the audit is off. */
void cd_layer_audit_files(const struct cd_audit *a, const struct cd_layer *l);

/* Apply the layer to its workdir (workdir_fd: opened by the caller where it was asked to write,
 * and checked to be the layer's workdir by device and inode; never the path the manifest
 * records): every change checked against its BASE first (a conflict: -EEXIST naming
 * the path, nothing changed); changes matching a protected glob refused the same way; then
 * written through descriptors beneath workdir_fd (no symlink followed in the workdir), files
 * replaced atomically (a temporary file renamed over), modes without setuid/setgid, owned by
 * the caller (as root: by the workdir's owner). */
int cd_layer_apply(const struct cd_layer *l, int store_fd, int workdir_fd,
		   struct cordon_error *err);
/* The same; the refs the run's commits were fetched as (cd_layer_git_fetch) in *ret_refs. */
int cd_layer_apply_git(const struct cd_layer *l, int store_fd, int workdir_fd, char ***ret_refs,
		       struct cordon_error *err);

/* diff (diff.c): what changed, to out.
 * CD_DIFF_STAT: one line per change ("A path", "M path", "D path", "R old -> new",
 *   "mode 100644 -> 100755 path", a "(binary)" mark), then a count line.
 * CD_DIFF_PATCH: a git-style patch (diff --git, new/deleted file mode, old/new mode, rename
 *   from/to, unified hunks for text, GIT binary patch for binary) that `git apply --check`
 *   accepts against the workdir as it was saved.
 * The old content comes from base/, the new from tree/: the workdir is not read. A file of
 * more than CD_DIFF_MAX_LOAD bytes is never held in memory: it is read through in pieces (its
 * size and SHA-256 checked, git's blob id computed for the patch) and is binary to the diff,
 * "Binary files a/P and b/P differ" in the patch (git's core.bigFileThreshold; `git apply`
 * cannot apply that part, `cordon apply` can). Memory: at most two sides of CD_DIFF_MAX_LOAD
 * and what a text diff of them takes. */
#define CD_DIFF_MAX_LOAD (8u << 20)
enum { CD_DIFF_STAT = 1, CD_DIFF_PATCH = 2 };
int cd_layer_diff(const struct cd_layer *l, int store_fd, unsigned flags, FILE *out,
		  struct cordon_error *err);

/* git's metadata in a layer (gitref.c): a path with a ".git" component is the sandbox's git
 * state, never a change of the work tree: diff shows it not, apply writes it not. The commits
 * the run made (the layer's new objects, its branches' and a detached HEAD's new values, read
 * as data) are put in a temporary bare repository of ours whose alternates name the workdir's
 * objects; git, with no system or global config, no hooks, no fsmonitor and the file protocol
 * only, lists them (cd_layer_git_log: to out, one block per ref moved, and a line counting the
 * git files dropped) or fetches them into the workdir's repository, objects checked, as
 * refs/cordon/ID/BRANCH and refs/cordon/ID/HEAD (cd_layer_git_fetch: *ret_refs, NULL-ended,
 * NULL when none). workdir_fd: the workdir the layer is of (-1: not there, for a diff). */
bool cd_layer_git_path(const char *path);	/* manifest.c: a pure path test */
size_t cd_layer_git_count(const struct cd_layer *l);
int cd_layer_git_log(const struct cd_layer *l, int store_fd, int workdir_fd, FILE *out,
		     struct cordon_error *err);
int cd_layer_git_fetch(const struct cd_layer *l, int store_fd, int workdir_fd, char ***ret_refs,
		       struct cordon_error *err);
