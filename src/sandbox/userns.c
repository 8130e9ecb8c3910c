/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * userns.c - identity and id maps. Runs in the supervisor.
 *
 * Unprivileged callers run as themselves: one uid and one gid mapped, inside = outside, which an
 * unprivileged process may write to its child's maps itself (no newuidmap: cordon never maps more
 * than one id).
 *
 * A root caller must not hand the sandbox host uid 0 (bubblewrap and nsjail run as root let the
 * sandbox read root's 0600 files), nor an id another sandbox or a user has: each sandbox runs as a
 * host id of its own from CORDON_ROOT_HOST_ID's range (idrange.h), and its user namespace is made
 * by a thread holding that id (cd_userns_owner_enter), so that what the kernel counts per user is
 * counted for it alone. Inside it is the workdir's owner (its uid and group) when that is not
 * root, else the ordinary uid and gid CORDON_SANDBOX_ID (never 0 unless asked: a uid 0 without
 * capabilities makes tar, python's tarfile and the like try to chown and fail). The workdir is
 * mounted with an id mapping (mount_setattr MOUNT_ATTR_IDMAP) under which its owner on disk
 * appears as the sandbox's id: inside, the workdir is the sandbox's own, and on the host, files
 * the sandbox creates belong to the workdir's owner. Where the range is not mapped (cordon as root
 * in a container that maps fewer ids) the sandbox runs as before ranges: as the workdir's owner,
 * or a single dedicated id for a root-owned workdir.
 */
#include <fcntl.h>
#include <pwd.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <linux/securebits.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "hostroot.h"
#include "passwd.h"
#include "rawsys.h"
#include "sysinfo.h"
#include "userns.h"

#define NOBODY_ID 65534u

/* Is host id `id` mapped in our own user namespace (/proc/self/uid_map or gid_map)? */
static bool id_mapped_here(const char *map, unsigned id)
{
	char path[64], line[128];
	FILE *f;
	bool found = false;

	snprintf(path, sizeof(path), "/proc/self/%s", map);
	f = fopen(path, "re");
	if (!f)
		return false;
	while (!found && fgets(line, sizeof(line), f)) {
		unsigned long first, outside, count;

		if (sscanf(line, "%lu %lu %lu", &first, &outside, &count) == 3)
			found = id >= first && id - first < count;
	}
	fclose(f);
	return found;
}

/* The host id a root caller's sandbox runs as when the workdir is root's. */
static int pick_root_host_id(unsigned *ret, struct cordon_error *err)
{
	static const unsigned candidates[] = { CORDON_ROOT_HOST_ID, NOBODY_ID };

	for (size_t i = 0; i < CD_ELEMENTSOF(candidates); i++)
		if (id_mapped_here("uid_map", candidates[i]) &&
		    id_mapped_here("gid_map", candidates[i])) {
			*ret = candidates[i];
			return 0;
		}
	return cd_fail(err, 0, "identity",
		       "no unprivileged host id to run the sandbox as: neither %u nor %u is mapped "
		       "in this user namespace (chown the workdir to an unprivileged user)",
		       CORDON_ROOT_HOST_ID, NOBODY_ID);
}

/* The group files of a workdir not root's come out with: its own, else its owner's (group 0 would
 * open root's group-readable files to the sandbox) */
static gid_t owner_group(const struct stat *st)
{
	struct passwd *pw = st->st_gid == 0 ? getpwuid(st->st_uid) : NULL;
	gid_t g = st->st_gid != 0 ? st->st_gid : pw ? pw->pw_gid : NOBODY_ID;

	return g != 0 ? g : NOBODY_ID;
}

/* A host id of its own from the range (idrange.h), the workdir id-mapped onto it */
static int ranged_identity(const struct stat *st, struct cd_identity *id,
			   struct cordon_error *err)
{
	int r = cd_idrange_acquire(&id->lease, err);

	if (r < 0)
		return r;
	id->host_uid = id->host_gid = CORDON_ROOT_HOST_ID + id->lease.slot;
	id->disk_uid = st->st_uid;
	id->disk_gid = st->st_uid != 0 ? owner_group(st) : 0;
	id->inside_uid = st->st_uid != 0 ? id->disk_uid : CORDON_SANDBOX_ID;
	id->inside_gid = st->st_uid != 0 ? id->disk_gid : CORDON_SANDBOX_ID;
	id->idmap_workdir = true;
	id->own_ids = true;
	return 0;
}

static int root_identity(const struct stat *st, struct cd_identity *id, struct cordon_error *err)
{
	unsigned host = 0;
	int r;

	id->setgroups_allowed = true;
	if (cd_idrange_usable())
		return ranged_identity(st, id, err);
	if (st->st_uid != 0) {
		id->host_uid = st->st_uid;
		id->host_gid = owner_group(st);
		id->inside_uid = id->host_uid;
		id->inside_gid = id->host_gid;
		return 0;
	}
	r = pick_root_host_id(&host, err);
	if (r < 0)
		return r;
	id->host_uid = host;
	id->host_gid = host;
	id->disk_uid = id->disk_gid = 0;
	id->inside_uid = CORDON_SANDBOX_ID;
	id->inside_gid = CORDON_SANDBOX_ID;
	id->idmap_workdir = true;
	return 0;
}

/* The account of uid as the sandbox sees it: in /etc/passwd, the file bound inside. NSS only for
 * the caller's own uid (a directory service's account): its modules are slow to load (systemd's:
 * bench/startup.md, item 3) and reach nothing from inside anyway. */
static int lookup_account(uid_t uid, char **ret_name, char **ret_home)
{
	_cleanup_free_ char *home = NULL;
	struct passwd *pw;
	int r = cd_passwd_find("/etc/passwd", uid, ret_name, &home);

	if (r == 0 && uid == getuid() && (pw = getpwuid(uid))) {
		*ret_name = strdup(pw->pw_name);
		home = strdup(pw->pw_dir);
		r = *ret_name && home ? 1 : -ENOMEM;
	}
	/* a home that is no clean absolute path (empty, relative, with "..") is none: the
	 * sandbox gets /home/NAME instead (pick_home) */
	if (r > 0 && !(*ret_home = cd_path_normalize(home)) && errno == ENOMEM)
		r = -ENOMEM;
	return r;
}

/* Where HOME may not be: it must neither cover nor sit inside the workdir (but be it, for an
 * account given), nor be a directory cordon manages. */
static bool home_clashes(const char *home, const char *workdir_target)
{
	return strcmp(home, "/") == 0 || cd_path_startswith(home, workdir_target) ||
	       cd_path_startswith(home, "/proc") || cd_path_startswith(home, "/sys") ||
	       cd_path_startswith(home, "/dev") || cd_path_startswith(home, "/tmp");
}

/* The caller's account (cordon_config_set_account): its name and home, whatever the root says */
static int given_account(const struct cd_identity_opts *who, struct cd_identity *id,
			 const char *workdir_target, struct cordon_error *err)
{
	id->account = true;
	id->home_is_workdir = strcmp(who->account_home, workdir_target) == 0;
	if (!id->home_is_workdir && home_clashes(who->account_home, workdir_target))
		return cd_fail(err, 0, "account",
			       "home %s: not below the workdir target (%s) nor in /proc, /sys, "
			       "/dev or /tmp; it may be the workdir target itself",
			       who->account_home, workdir_target);
	id->user = strdup(who->account_name);
	id->home = strdup(who->account_home);
	if (!id->user || !id->home)
		return cd_fail(err, ENOMEM, "identity", "out of memory");
	return 0;
}

/* The caller's home path (its account's, NSS allowed: it is the caller's own uid), NULL when it
 * has none or no clean one: where `--ro-bind ~/.gitconfig` and `--tmpfs $HOME:SIZE` point. */
static char *caller_home(void)
{
	struct passwd *pw = getpwuid(getuid());

	return pw && pw->pw_dir ? cd_path_normalize(pw->pw_dir) : NULL;
}

static int pick_home(struct cd_identity *id, const char *workdir_target, struct cordon_error *err)
{
	_cleanup_free_ char *home = NULL;
	int r = lookup_account(id->inside_uid, &id->user, &home);

	if (r < 0)
		return cd_fail(err, ENOMEM, "identity", "out of memory");
	/* an id without an account gets one inside (mountplan.c adds it to /etc/passwd) */
	id->named = r == 0;
	if (r == 0) {
		/* its HOME is the caller's home path (root's sandbox uid: /root), as a shell
		 * expands ~ in cordon's own arguments */
		id->user = strdup(CD_SANDBOX_USER);
		home = caller_home();
		if (!home && errno == ENOMEM)
			return cd_fail(err, ENOMEM, "identity", "out of memory");
	}
	if (!home)
		home = cd_strdup_printf("/home/%s", id->user ? id->user : "user");
	if (!id->user || !home)
		return cd_fail(err, ENOMEM, "identity", "out of memory");
	/* HOME is an empty tmpfs: where it may not be, /tmp/home */
	if (home_clashes(home, workdir_target)) {
		free(home);
		home = strdup("/tmp/home");
		if (!home)
			return cd_fail(err, ENOMEM, "identity", "out of memory");
	}
	id->home = CD_TAKE_PTR(home);
	return 0;
}

int cd_identity_resolve(const struct cd_identity_opts *who, const struct stat *workdir,
			const char *workdir_target, struct cd_identity *ret,
			struct cordon_error *err)
{
	struct cd_identity id = { .lease = CD_ID_LEASE_INIT };
	int r;

	if (cd_host_root()) {
		r = root_identity(workdir, &id, err);
		if (r < 0)
			return r;
	} else {
		id.host_uid = geteuid();
		id.host_gid = getegid();
		id.inside_uid = id.host_uid;
		id.inside_gid = id.host_gid;
	}
	if (who->uid_set)
		id.inside_uid = who->uid;
	if (who->gid_set)
		id.inside_gid = who->gid;
	r = who->account_name ? given_account(who, &id, workdir_target, err)
			      : pick_home(&id, workdir_target, err);
	if (r < 0) {
		cd_identity_done(&id, true);
		return r;
	}
	*ret = id;
	return 0;
}

/* the idmap's holder (open_idmap_userns), gone by now */
static void reap_holder(struct cd_identity *id)
{
	siginfo_t si;

	if (!id->holding)
		return;
	/* by its pidfd: a caller's waitpid(-1) may have reaped it already (ECHILD), and its pid
	 * may be another process's since */
	while (waitid((idtype_t)P_PIDFD, (id_t)id->holder_pidfd, &si, WEXITED) < 0 &&
	       errno == EINTR)
		;
	close(id->holder_pidfd);
	free(CD_TAKE_PTR(id->holder_stack)); /* its stack, once it has exited */
	id->holding = false;
}

void cd_identity_done(struct cd_identity *id, bool pid1_gone)
{
	reap_holder(id);
	cd_idrange_release(&id->lease, pid1_gone);
	free(id->user);
	free(id->home);
	id->user = id->home = NULL;
}

static int write_proc(pid_t pid, const char *file, const char *content, struct cordon_error *err)
{
	char path[64], hint[400];
	int r;

	snprintf(path, sizeof(path), "/proc/%d/%s", pid, file);
	r = cd_write_file_at(AT_FDCWD, path, content);
	if (r == -EPERM && cd_sysinfo_userns_hint(hint, sizeof(hint)))
		return cd_fail(err, EPERM, "userns", "write \"%.*s\" to %s: %s (%s)",
			       (int)strcspn(content, "\n"), content, path, strerror(EPERM), hint);
	if (r < 0)
		return cd_fail_errno(err, -r, "userns", "write \"%.*s\" to %s",
				     (int)strcspn(content, "\n"), content, path);
	return 0;
}

static int write_id_maps(pid_t pid, uid_t inside_uid, uid_t host_uid, gid_t inside_gid,
			 gid_t host_gid, bool deny_setgroups, struct cordon_error *err)
{
	char line[64];
	int r;

	if (deny_setgroups) {
		/* required before an unprivileged process may write gid_map */
		r = write_proc(pid, "setgroups", "deny", err);
		if (r < 0)
			return r;
	}
	snprintf(line, sizeof(line), "%u %u 1\n", inside_uid, host_uid);
	r = write_proc(pid, "uid_map", line, err);
	if (r < 0)
		return r;
	snprintf(line, sizeof(line), "%u %u 1\n", inside_gid, host_gid);
	return write_proc(pid, "gid_map", line, err);
}

int cd_userns_write_maps(pid_t child, const struct cd_identity *id, struct cordon_error *err)
{
	return write_id_maps(child, id->inside_uid, id->host_uid, id->inside_gid, id->host_gid,
			     !id->setgroups_allowed, err);
}

/* The idmap's holder: a process in a new user namespace that waits for EOF on a pipe, then
 * exits. It shares our memory (CLONE_VM): making it copies no page table and its exit frees
 * none (a fork of the supervisor ran on the other core just when pid 1 needed it:
 * bench/startup.md, item 2).
 * Under valgrind, which knows no CLONE_VM with CLONE_NEWUSER, or without raw system calls
 * (rawsys.h), a fork. */
#define HOLDER_STACK (64 * 1024)

/* arg: the pipe's two ends, at the bottom of its own stack (ours may be gone by then). Raw
 * system calls only (rawsys.h): it shares our memory, heap, errno and all. */
_raw_child_ static int hold_userns(void *arg)
{
	const int *pipefd = arg;
	char c;

	cd_raw_syscall(SYS_close, pipefd[1]); /* its copy of the write end: EOF at our close */
	for (int i = 0; i < 1000; i++) /* EINTR aside, any answer ends it */
		if (cd_raw_syscall(SYS_read, pipefd[0], &c, 1) != -EINTR)
			break;
	return 0;
}

static pid_t start_holder(struct cd_identity *id, const int pipefd[2], int *pidfd)
{
	const unsigned long flags = CLONE_NEWUSER | CLONE_PIDFD | SIGCHLD;
	pid_t pid;

	if (!CD_HAVE_RAW_SYSCALL || cd_under_valgrind()) {
		pid = (pid_t)syscall(SYS_clone, flags, NULL, pidfd, NULL, NULL);
		if (pid == 0) {
			hold_userns((void *)pipefd);
			_exit(0);
		}
		return pid;
	}
	id->holder_stack = malloc(HOLDER_STACK);
	if (!id->holder_stack)
		return -1;
	memcpy(id->holder_stack, pipefd, 2 * sizeof(int));
	return cd_clone_shared(hold_userns, (char *)id->holder_stack + HOLDER_STACK, flags,
			       id->holder_stack, pidfd);
}

/* A user namespace that maps the workdir's owner (on disk) to the sandbox's host id, for the
 * mount's id mapping when the sandbox's own namespace maps some other inside id. The holder keeps the
 * namespace while we write its maps and open it; it is reaped at the end (waiting for it here
 * cost a scheduling round on a busy machine). */
static int open_idmap_userns(struct cd_identity *id, int *ret_fd, struct cordon_error *err)
{
	_cleanup_close_ int rd = -1, wr = -1;
	char path[64];
	int pipefd[2], pidfd = -1, fd, r;
	pid_t pid;

	if (pipe2(pipefd, O_CLOEXEC) < 0)
		return cd_fail_errno(err, errno, "userns", "pipe");
	rd = pipefd[0];
	wr = pipefd[1];
	pid = start_holder(id, pipefd, &pidfd);
	if (pid < 0) {
		free(CD_TAKE_PTR(id->holder_stack));
		return cd_fail_errno(err, errno, "userns", "clone a user namespace for the idmap");
	}
	id->holding = true;
	id->holder_pidfd = pidfd;
	r = write_id_maps(pid, id->disk_uid, id->host_uid, id->disk_gid, id->host_gid, false, err);
	snprintf(path, sizeof(path), "/proc/%d/ns/user", pid);
	fd = r < 0 ? -1 : open(path, O_RDONLY | O_CLOEXEC);
	if (r >= 0 && fd < 0)
		r = cd_fail_errno(err, errno, "userns", "open %s", path);
	if (r < 0)
		return r;
	*ret_fd = fd;
	return 0; /* our write end closes here: the holder reads EOF and exits */
}

/* A detached copy of a mount tree, from the descriptor the launcher checked. */
static int clone_tree(int fd, const char *path, const char *step, int *ret,
		      struct cordon_error *err)
{
	int tree = open_tree(fd, "", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_RECURSIVE |
					     AT_EMPTY_PATH);

	if (tree < 0)
		return cd_fail_errno(err, errno, step, "clone the mount of %s", path);
	*ret = tree;
	return 0;
}

/* Every mount of the tree read-only, nosuid, nodev; with rw, its top mount writable again: the
 * workdir is the one writable place, not the mounts below it (a bind of /etc in a build tree) */
static int lock_tree(int tree, bool rw, struct cordon_error *err, const char *step,
		     const char *path)
{
	struct mount_attr all = { .attr_set = MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID |
					      MOUNT_ATTR_NODEV };
	struct mount_attr top = { .attr_clr = MOUNT_ATTR_RDONLY };

	if (mount_setattr(tree, "", AT_EMPTY_PATH | AT_RECURSIVE, &all, sizeof(all)) < 0)
		return cd_fail_errno(err, errno, step, "make %s read-only", path);
	if (rw && mount_setattr(tree, "", AT_EMPTY_PATH, &top, sizeof(top)) < 0)
		return cd_fail_errno(err, errno, step, "make %s writable", path);
	return 0;
}

int cd_userns_tree(int fd, const char *path, bool ro, int *ret_fd, struct cordon_error *err)
{
	const char *step = ro ? "ro-bind" : "workdir";
	_cleanup_close_ int tree = -1;
	int r = clone_tree(fd, path, step, &tree, err);

	if (r >= 0)
		r = lock_tree(tree, !ro, err, step, path);
	if (r < 0)
		return r;
	*ret_fd = CD_TAKE_FD(tree);
	return 0;
}

bool cd_userns_idmap_is_own(const struct cd_identity *id)
{
	return id->inside_uid == id->disk_uid && id->inside_gid == id->disk_gid;
}

int cd_userns_idmapped_workdir(pid_t child, struct cd_identity *id, int workdir,
			       const char *path_str, int *ret_fd, struct cordon_error *err)
{
	_cleanup_close_ int nsfd = -1, tree = -1;
	struct mount_attr attr = { .attr_set = MOUNT_ATTR_IDMAP };
	char path[64];
	int r;

	if (cd_userns_idmap_is_own(id)) {
		/* the sandbox's own namespace maps exactly the owner -> host id */
		snprintf(path, sizeof(path), "/proc/%d/ns/user", child);
		nsfd = open(path, O_RDONLY | O_CLOEXEC);
		if (nsfd < 0)
			return cd_fail_errno(err, errno, "userns", "open %s", path);
	} else {
		r = open_idmap_userns(id, &nsfd, err);
		if (r < 0)
			return r;
	}
	r = clone_tree(workdir, path_str, "workdir", &tree, err);
	if (r < 0)
		return r;
	r = lock_tree(tree, true, err, "workdir", path_str);
	if (r < 0)
		return r;
	/* the id mapping on the top mount only: what is mounted below it stays as it is, and
	 * read-only (a bind of root's /etc there must not become the sandbox's to write) */
	attr.userns_fd = (uint64_t)nsfd;
	if (mount_setattr(tree, "", AT_EMPTY_PATH, &attr, sizeof(attr)) < 0) {
		int e = errno;

		if (e == EINVAL || e == EPERM || e == EOPNOTSUPP)
			return cd_fail(err, e, "workdir",
				       "%s: cannot mount it with an id mapping (%s): a root caller's "
				       "sandbox runs as a host id of its own and needs one to write "
				       "the workdir as its owner; use a workdir on a filesystem with "
				       "id-mapped mounts (ext4, xfs, btrfs, tmpfs), or run cordon as "
				       "the workdir's owner",
				       path_str, strerror(e));
		return cd_fail_errno(err, e, "workdir", "id-map the mount of %s", path_str);
	}
	*ret_fd = CD_TAKE_FD(tree);
	return 0;
}

/* Per thread: raw system calls (glibc's setresuid would change every thread of a library
 * caller's process), with SECBIT_NO_SETUID_FIXUP so that the effective capabilities stay (the
 * clone still needs them: CLONE_INTO_CGROUP's write of cgroup.procs). */
int cd_userns_owner_enter(const struct cd_identity *id, struct cd_owner_creds *saved,
			  struct cordon_error *err)
{
	int bits = prctl(PR_GET_SECUREBITS, 0, 0, 0, 0);

	saved->entered = false;
	if (!id->own_ids)
		return 0;
	if (bits < 0 || prctl(PR_SET_SECUREBITS, (unsigned long)bits | SECBIT_NO_SETUID_FIXUP,
			      0, 0, 0) < 0)
		return cd_fail_errno(err, errno, "identity", "keep capabilities across a change of id");
	saved->securebits = (unsigned long)bits;
	if (syscall(SYS_setresgid, -1, id->host_gid, -1) < 0 ||
	    syscall(SYS_setresuid, -1, id->host_uid, -1) < 0) {
		int e = errno;

		syscall(SYS_setresgid, -1, 0, -1);
		prctl(PR_SET_SECUREBITS, saved->securebits, 0, 0, 0);
		return cd_fail_errno(err, e, "identity", "own the sandbox's user namespace as %u",
				     id->host_uid);
	}
	saved->entered = true;
	return 0;
}

void cd_userns_owner_leave(struct cd_owner_creds *saved)
{
	uid_t ruid = (uid_t)syscall(SYS_getuid);
	gid_t rgid = (gid_t)syscall(SYS_getgid);

	if (!saved->entered)
		return;
	/* back to the real ids, root's unless another thread of the caller's changed the
	 * process's ids meanwhile (glibc's setuid() reaches every thread): then theirs, and root
	 * is not taken back */
	syscall(SYS_setresuid, -1, ruid, -1);
	syscall(SYS_setresgid, -1, rgid, -1);
	prctl(PR_SET_SECUREBITS, saved->securebits, 0, 0, 0);
	saved->entered = false;
}
