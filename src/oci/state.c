/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * state.c - where containers live: --root (checked, made 0700), container ids, a container's
 * directory ROOT/ID/ (0700: state.json, the holder's socket; its lock is the directory's flock,
 * held by the holder for its life), state.json read and written atomically, the engine's pid
 * file. Runs in cordon-runtime's commands and in the holder.
 */
#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "json.h"
#include "runtime.h"
#include "util.h"

#define STATE_FILE "state.json"
#define STATE_TMP  "state.json.tmp"
/* state.json's own fields (not in `state`'s output): the holder's start time, the container's
 * pid 1 and its start time */
#define HOLDER_START "cordonHolderStart"
#define INIT_PID     "cordonInit"
#define INIT_START   "cordonInitStart"

static const char *const status_names[] = {
    [OCI_CREATED] = "created",
    [OCI_RUNNING] = "running",
    [OCI_PAUSED] = "paused",
    [OCI_STOPPED] = "stopped",
};

const char *oci_status_name(enum oci_status s)
{
	return (unsigned)s < CD_ELEMENTSOF(status_names) ? status_names[s] : "unknown";
}

void oci_now_rfc3339(char buf[40])
{
	struct timespec ts;
	struct tm tm;
	char day[24];

	clock_gettime(CLOCK_REALTIME, &ts);
	gmtime_r(&ts.tv_sec, &tm);
	strftime(day, sizeof(day), "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(buf, 40, "%s.%09ldZ", day, ts.tv_nsec);
}

void oci_state_clear(struct oci_state *st)
{
	free(st->id);
	free(st->bundle);
	free(st->rootfs);
	free(st->created);
	for (size_t i = 0; i < st->n_ann; i++) {
		free(st->ann_keys[i]);
		free(st->ann_values[i]);
	}
	free(st->ann_keys);
	free(st->ann_values);
	memset(st, 0, sizeof(*st));
}

int oci_id_check(const char *id, struct cordon_error *err)
{
	size_t n = strlen(id);

	if (n == 0 || n > 255 || !strcmp(id, ".") || !strcmp(id, ".."))
		return cd_fail(err, EINVAL, "id", "\"%.64s\": not a container id", id);
	if (strspn(id, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-") != n)
		return cd_fail(err, EINVAL, "id",
			       "\"%.64s\": not a container id (letters, digits, _ . - only)", id);
	return 0;
}

/* uid 0 of the first user namespace: /proc/self/uid_map is "0 0 4294967295" */
static bool initial_root(void)
{
	_cleanup_(cd_fclosep) FILE *f = NULL;
	unsigned long a, b, c;

	if (geteuid() != 0)
		return false;
	f = fopen("/proc/self/uid_map", "re");
	if (!f || fscanf(f, "%lu %lu %lu", &a, &b, &c) != 3)
		return false;
	return a == 0 && b == 0 && c == 4294967295ul;
}

char *oci_root_default(struct cordon_error *err)
{
	const char *xdg = getenv("XDG_RUNTIME_DIR");
	char *r;

	/* rootless podman calls us as uid 0 of its own user namespace, where /run is not ours */
	if (initial_root())
		r = strdup("/run/cordon-runtime");
	else if (xdg && xdg[0] == '/')
		r = cd_strdup_printf("%s/cordon-runtime", xdg);
	else {
		cd_fail(err, EINVAL, "--root",
			"no default: XDG_RUNTIME_DIR is not set (give --root)");
		return NULL;
	}
	if (!r)
		cd_fail(err, ENOMEM, "--root", "out of memory");
	return r;
}

static int root_check(int fd, const char *root, bool foreign_ok, struct cordon_error *err)
{
	struct stat st;

	if (fstat(fd, &st) < 0)
		return cd_fail_errno(err, errno, "--root", "%s", root);
	if (st.st_mode & (S_IWGRP | S_IWOTH))
		return cd_fail(err, EPERM, "--root",
			       "%s: writable by group or others (mode %04o): refused", root,
			       st.st_mode & 07777);
	if (st.st_uid != geteuid() && !(foreign_ok && geteuid() == 0))
		return cd_fail(err, EPERM, "--root",
			       "%s: owned by uid %u, not by the caller: refused", root, st.st_uid);
	return 0;
}

/* One directory above root, under dirfd, entered (made 0700 first when make and missing, as
 * runc makes them): a symbolic link only in a directory that root or the caller alone may
 * change (/var/run in /var). Root acting on a user's --root (Slurm), or making its own below a
 * user's directory, must not be led by that user's links to another's tree. */
static int parent_step(int dirfd, const char *name, bool make, const char *shown,
		       struct cordon_error *err)
{
	struct stat st;
	int fd;

	if (make && mkdirat(dirfd, name, 0700) < 0 && errno != EEXIST)
		return cd_fail_errno(err, errno, "--root", "mkdir %s", shown);
	fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd >= 0)
		return fd;
	/* O_NOFOLLOW with O_DIRECTORY: a symbolic link is ELOOP or ENOTDIR */
	if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISLNK(st.st_mode))
		return cd_fail_errno(err, errno ? errno : ENOTDIR, "--root", "%s", shown);
	if (fstat(dirfd, &st) < 0 || (st.st_mode & (S_IWGRP | S_IWOTH)) ||
	    (st.st_uid != 0 && st.st_uid != geteuid()))
		return cd_fail(
		    err, ELOOP, "--root",
		    "%s: a symbolic link in a directory another user may change: refused", shown);
	fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	return fd >= 0 ? fd : cd_fail_errno(err, errno, "--root", "%s", shown);
}

/* The directory that holds root's last component (p: root's copy, cut there), walked by
 * descriptor from "/" */
static int parent_open(char *p, bool make, struct cordon_error *err)
{
	_cleanup_close_ int dirfd = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	char *name = *p ? p + 1 : p; /* "": root's parent is / */

	if (dirfd < 0)
		return cd_fail_errno(err, errno, "--root", "/");
	while (*name) {
		char *s = strchrnul(name, '/'), c = *s;

		*s = '\0';
		if (strcmp(name, ".")) {
			int fd = parent_step(dirfd, name, make, p, err);

			if (fd < 0)
				return fd;
			cd_closep(&dirfd);
			dirfd = fd;
		}
		*s = c;
		name = c ? s + 1 : s;
	}
	return CD_TAKE_FD(dirfd);
}

int oci_root_open(const char *root, bool make, bool foreign_ok, struct cordon_error *err)
{
	_cleanup_close_ int parent = -1, fd = -1;
	_cleanup_free_ char *p = NULL;
	size_t len = strlen(root);
	struct stat st;
	char *last;

	if (root[0] != '/')
		return cd_fail(err, EINVAL, "--root", "%s: not an absolute path", root);
	p = strdup(root);
	if (!p)
		return cd_fail(err, ENOMEM, "--root", "out of memory");
	while (len > 1 && p[len - 1] == '/') /* "dir/" is dir: its last component checked too */
		p[--len] = '\0';
	last = strrchr(p, '/');
	*last++ = '\0';
	if (!*last || !strcmp(last, ".") || !strcmp(last, ".."))
		return cd_fail(err, EINVAL, "--root",
			       "%s: ends in \"%s\": name the directory itself", root, last);
	parent = parent_open(p, make, err);
	if (parent < 0)
		return parent;
	if (make && mkdirat(parent, last, 0700) < 0 && errno != EEXIST)
		return cd_fail_errno(err, errno, "--root", "mkdir %s", root);
	fd = openat(parent, last, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 && fstatat(parent, last, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode))
		return cd_fail(err, ELOOP, "--root", "%s: a symbolic link: refused", root);
	if (fd < 0)
		return cd_fail_errno(err, errno, "--root", "%s", root);
	if (root_check(fd, root, foreign_ok, err) < 0)
		return -EPERM;
	return CD_TAKE_FD(fd);
}

int oci_dir_open(int rootfd, const char *id, struct cordon_error *err)
{
	int fd = openat(rootfd, id, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

	if (fd < 0 && (errno == ENOENT || errno == ENOTDIR || errno == ELOOP))
		return cd_fail(err, ENOENT, "container", "%s: container does not exist", id);
	if (fd < 0)
		return cd_fail_errno(err, errno, "container", "%s", id);
	return fd;
}

int oci_holder_alive(int dirfd)
{
	/* a lock of our own on another description of the directory: free only when no holder has
	 * one (the kernel drops the holder's when it exits, however it exits) */
	_cleanup_close_ int fd = openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (fd < 0)
		return 0;
	if (flock(fd, LOCK_SH | LOCK_NB) < 0)
		return errno == EWOULDBLOCK ? 1 : 0;
	return 0;
}

static char *json_str(json_object *o, const char *key)
{
	json_object *v;

	if (!json_object_object_get_ex(o, key, &v) || !json_object_is_type(v, json_type_string))
		return NULL;
	return strdup(json_object_get_string(v));
}

static int state_annotations(json_object *o, struct oci_state *st)
{
	json_object *a;
	size_t n;

	if (!json_object_object_get_ex(o, "annotations", &a) ||
	    !json_object_is_type(a, json_type_object))
		return 0;
	n = (size_t)json_object_object_length(a);
	st->ann_keys = calloc(n + 1, sizeof(char *));
	st->ann_values = calloc(n + 1, sizeof(char *));
	if (!st->ann_keys || !st->ann_values)
		return -ENOMEM;
	json_object_object_foreach(a, k, v)
	{
		st->ann_keys[st->n_ann] = strdup(k);
		st->ann_values[st->n_ann] = strdup(json_object_get_string(v));
		st->n_ann++;
	}
	return 0;
}

static int state_parse(const char *text, struct oci_state *st, struct cordon_error *err)
{
	json_object *o = json_tokener_parse(text), *v;
	const char *status;
	int r = 0;

	if (!o || !json_object_is_type(o, json_type_object)) {
		json_object_put(o);
		return cd_fail(err, EBADMSG, "state", "state.json: not a JSON object");
	}
	st->id = json_str(o, "id");
	st->bundle = json_str(o, "bundle");
	st->rootfs = json_str(o, "rootfs");
	st->created = json_str(o, "created");
	if (json_object_object_get_ex(o, "pid", &v))
		st->pid = (pid_t)json_object_get_int(v);
	if (json_object_object_get_ex(o, HOLDER_START, &v) && json_object_is_type(v, json_type_int))
		st->start = (unsigned long long)json_object_get_uint64(v);
	if (json_object_object_get_ex(o, INIT_PID, &v) && json_object_is_type(v, json_type_int))
		st->init = (pid_t)json_object_get_int(v);
	if (json_object_object_get_ex(o, INIT_START, &v) && json_object_is_type(v, json_type_int))
		st->init_start = (unsigned long long)json_object_get_uint64(v);
	status = json_object_object_get_ex(o, "status", &v) ? json_object_get_string(v) : "";
	st->status = OCI_STOPPED;
	for (size_t i = 0; i < CD_ELEMENTSOF(status_names); i++)
		if (!strcmp(status, status_names[i]))
			st->status = (enum oci_status)i;
	if (state_annotations(o, st) < 0 || !st->id || !st->bundle || !st->created)
		r = cd_fail(err, EBADMSG, "state", "state.json: a field is missing");
	json_object_put(o);
	return r;
}

/* /proc/PID/name's text (its first size - 1 bytes) into buf, NUL-ended: 0, or -errno */
static int proc_text(pid_t pid, const char *name, char *buf, size_t size)
{
	char path[48];
	_cleanup_close_ int fd = -1;
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%d/%s", (int)pid, name);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, size - 1);
	if (n <= 0)
		return n < 0 ? -errno : -EIO;
	buf[n] = '\0';
	return 0;
}

/* Field `field` (1-based, 3 on) of /proc/PID/stat, a number */
static int proc_stat_field(pid_t pid, int field, unsigned long long *ret)
{
	char buf[1024], *p;
	int r = proc_text(pid, "stat", buf, sizeof(buf));

	if (r < 0)
		return r;
	/* after the name's ')' (the name may hold one): field 3 on */
	p = strrchr(buf, ')');
	for (int f = 2; p && f < field; f++)
		p = strchr(p + 1, ' ');
	if (!p || sscanf(p + 1, "%llu", ret) != 1)
		return -EIO;
	return 0;
}

int oci_proc_start(pid_t pid, unsigned long long *ret)
{
	return proc_stat_field(pid, 22, ret);
}

int oci_proc_ppid(pid_t pid, pid_t *ret)
{
	unsigned long long v;
	int r = proc_stat_field(pid, 4, &v);

	if (r < 0)
		return r;
	*ret = (pid_t)v;
	return 0;
}

/* the real uid of pid (/proc/PID/status: whatever its dumpable flag says of /proc/PID) */
static int proc_uid(pid_t pid, uid_t *ret)
{
	char buf[4096], *p;
	unsigned long uid;
	int r = proc_text(pid, "status", buf, sizeof(buf));

	if (r < 0)
		return r;
	p = strstr(buf, "\nUid:");
	if (!p || sscanf(p + 5, "%lu", &uid) != 1)
		return -EIO;
	*ret = (uid_t)uid;
	return 0;
}

/* Is st->pid the holder that wrote st: alive, started when st says, of the directory's owner */
static int holder_check(int dirfd, const struct oci_state *st, struct cordon_error *err)
{
	unsigned long long start = 0;
	struct stat d;
	uid_t uid;

	if (st->pid <= 0 || !st->start)
		return cd_fail(err, ESRCH, "state", "%s: no holder pid and start time: refused",
			       st->id);
	if (fstat(dirfd, &d) < 0)
		return cd_fail_errno(err, errno, "state", "%s", st->id);
	if (oci_proc_start(st->pid, &start) < 0 || start != st->start)
		return cd_fail(err, ESRCH, "state",
			       "%s: pid %d is not its holder (a pid reused, or state.json written "
			       "by another): refused",
			       st->id, (int)st->pid);
	if (proc_uid(st->pid, &uid) < 0 || uid != d.st_uid)
		return cd_fail(err, ESRCH, "state", "%s: pid %d is not uid %u's: refused", st->id,
			       (int)st->pid, d.st_uid);
	return 0;
}

int oci_holder_pidfd(int dirfd, const struct oci_state *st, struct cordon_error *err)
{
	_cleanup_close_ int pidfd = -1;
	int r;

	if (st->pid <= 0)
		return cd_fail(err, ESRCH, "state", "%s: no holder", st->id);
	pidfd = (int)syscall(SYS_pidfd_open, st->pid, 0);
	if (pidfd < 0)
		return cd_fail_errno(err, errno, "state", "%s: pidfd of pid %d", st->id,
				     (int)st->pid);
	/* the fd pins a process; that the pid still names it, checked after: the same one */
	r = holder_check(dirfd, st, err);
	if (r < 0)
		return r;
	return CD_TAKE_FD(pidfd);
}

/* The directory and the file: its owner's (the --root owner's), nobody else's to write */
static int entry_check(int dirfd, int fd, struct cordon_error *err)
{
	_cleanup_close_ int rootfd = openat(dirfd, "..", O_PATH | O_DIRECTORY | O_CLOEXEC);
	struct stat d, f, r;

	if (rootfd < 0 || fstat(rootfd, &r) < 0 || fstat(dirfd, &d) < 0 || fstat(fd, &f) < 0)
		return cd_fail_errno(err, errno, "state", "state.json");
	if ((d.st_mode | f.st_mode) & (S_IWGRP | S_IWOTH))
		return cd_fail(err, EPERM, "state",
			       "state.json or its directory: writable by group or others: refused");
	if (d.st_uid != r.st_uid || f.st_uid != r.st_uid)
		return cd_fail(
		    err, EPERM, "state",
		    "state.json or its directory: not uid %u's (the --root owner): refused",
		    r.st_uid);
	return 0;
}

/* Is st->init the container's pid 1: started when st says, a child of the session's supervisor,
 * itself a child of the holder (checked first): a state.json another wrote cannot make `state`
 * name a process outside the container */
static bool init_check(const struct oci_state *st)
{
	unsigned long long start = 0;
	pid_t sup = 0, holder = 0;

	return st->init > 0 && oci_proc_start(st->init, &start) == 0 && start == st->init_start &&
	       oci_proc_ppid(st->init, &sup) == 0 && oci_proc_ppid(sup, &holder) == 0 &&
	       holder == st->pid;
}

int oci_state_read(int dirfd, struct oci_state *st, struct cordon_error *err)
{
	/* root reads a user's --root (Slurm): a FIFO there must not hang it */
	_cleanup_close_ int fd =
	    openat(dirfd, STATE_FILE, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	_cleanup_free_ char *buf = NULL;
	size_t len = 0, cap = 0;
	struct stat sb;
	int r;

	memset(st, 0, sizeof(*st));
	if (fd < 0)
		return cd_fail_errno(err, errno, "state", "state.json");
	if (fstat(fd, &sb) < 0)
		return cd_fail_errno(err, errno, "state", "state.json");
	if (!S_ISREG(sb.st_mode))
		return cd_fail(err, EBADMSG, "state", "state.json: not a regular file");
	r = entry_check(dirfd, fd, err);
	if (r < 0)
		return r;
	for (;;) {
		ssize_t n;

		if (len + 4096 + 1 > cap) {
			char *nb = realloc(buf, cap = (cap ? cap * 2 : 8192));

			if (!nb)
				return cd_fail(err, ENOMEM, "state", "out of memory");
			buf = nb;
		}
		n = read(fd, buf + len, cap - len - 1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return cd_fail_errno(err, errno, "state", "state.json");
		if (n == 0)
			break;
		len += (size_t)n;
		if (len > (1u << 20))
			return cd_fail(err, EFBIG, "state", "state.json: too large");
	}
	buf[len] = '\0';
	r = state_parse(buf, st, err);
	if (r < 0) {
		oci_state_clear(st);
		return r;
	}
	/* a holder gone is a container stopped, whatever it could not write on its way out */
	if (st->status != OCI_STOPPED && !oci_holder_alive(dirfd))
		st->status = OCI_STOPPED;
	if (st->status == OCI_STOPPED)
		st->pid = 0;
	else if ((r = holder_check(dirfd, st, err)) < 0) {
		oci_state_clear(st);
		return r;
	}
	if (st->status == OCI_STOPPED || !init_check(st))
		st->init = 0;
	return 0;
}

static char *state_json(const struct oci_state *st, bool file)
{
	struct cd_json j = {0};

	cd_json_object_begin(&j);
	cd_json_kv_string(&j, "ociVersion", "1.2.0");
	cd_json_kv_string(&j, "id", st->id);
	cd_json_kv_string(&j, "status", oci_status_name(st->status));
	/* the spec's pid: the container's process as the host sees it (its pid 1); the file keeps
	 * the holder's, who wrote it (the pid file's, which engines wait on) */
	cd_json_kv_int(&j, "pid",
		       st->status == OCI_STOPPED ? 0
		       : !file && st->init > 0	 ? st->init
						 : st->pid);
	cd_json_kv_string(&j, "bundle", st->bundle);
	cd_json_kv_string(&j, "rootfs", st->rootfs ? st->rootfs : "");
	cd_json_kv_string(&j, "created", st->created);
	cd_json_kv_string(&j, "owner", "");
	cd_json_key(&j, "annotations");
	cd_json_object_begin(&j);
	for (size_t i = 0; i < st->n_ann; i++)
		cd_json_kv_string(&j, st->ann_keys[i], st->ann_values[i]);
	cd_json_object_end(&j);
	if (file) {
		cd_json_kv_int(&j, HOLDER_START, (long long)st->start);
		if (st->init > 0) {
			cd_json_kv_int(&j, INIT_PID, st->init);
			cd_json_kv_int(&j, INIT_START, (long long)st->init_start);
		}
	}
	cd_json_object_end(&j);
	return cd_json_steal(&j);
}

char *oci_state_json(const struct oci_state *st)
{
	return state_json(st, false);
}

int oci_state_write(int dirfd, const struct oci_state *st, struct cordon_error *err)
{
	_cleanup_free_ char *text = state_json(st, true);
	_cleanup_close_ int fd = -1;
	int r;

	if (!text)
		return cd_fail(err, ENOMEM, "state", "out of memory");
	fd = openat(dirfd, STATE_TMP, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return cd_fail_errno(err, errno, "state", "%s", STATE_TMP);
	r = cd_write_all(fd, text, strlen(text));
	if (r < 0)
		return cd_fail_errno(err, -r, "state", "%s", STATE_TMP);
	if (renameat(dirfd, STATE_TMP, dirfd, STATE_FILE) < 0)
		return cd_fail_errno(err, errno, "state", "rename %s", STATE_TMP);
	return 0;
}

int oci_dir_remove(int rootfd, const char *id, struct cordon_error *err)
{
	static const char *const files[] = {STATE_FILE, STATE_TMP, OCI_SOCK_NAME, "scratch",
					    OCI_HOOKS_FILE};
	_cleanup_close_ int dirfd = oci_dir_open(rootfd, id, err);

	if (dirfd < 0)
		return dirfd;
	oci_scratch_remove_noted(dirfd);
	for (size_t i = 0; i < CD_ELEMENTSOF(files); i++)
		if (unlinkat(dirfd, files[i], 0) < 0 && errno != ENOENT)
			return cd_fail_errno(err, errno, "delete", "%s/%s", id, files[i]);
	if (unlinkat(rootfd, id, AT_REMOVEDIR) < 0)
		return cd_fail_errno(err, errno, "delete", "%s", id);
	return 0;
}

/* The pid file's directory, and its name there: the temporary file and the rename stay in that
 * one directory, whatever becomes of its path meanwhile */
static int pid_file_dir(const char *path, const char **ret_base, struct cordon_error *err)
{
	_cleanup_free_ char *dir = NULL;
	const char *slash = strrchr(path, '/');
	int fd;

	if (!slash) {
		*ret_base = path;
		dir = strdup(".");
	} else {
		*ret_base = slash + 1;
		dir = slash == path ? strdup("/") : strndup(path, (size_t)(slash - path));
	}
	if (!dir)
		return cd_fail(err, ENOMEM, "--pid-file", "out of memory");
	if (!**ret_base)
		return cd_fail(err, EINVAL, "--pid-file", "%s: not a file name", path);
	fd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return cd_fail_errno(err, errno, "--pid-file", "%s", dir);
	return fd;
}

int oci_pid_file_write(const char *path, pid_t pid, struct cordon_error *err)
{
	_cleanup_close_ int dirfd = -1, fd = -1;
	_cleanup_free_ char *tmp = NULL;
	const char *base;
	char text[24], rnd[33];
	int r;

	dirfd = pid_file_dir(path, &base, err);
	if (dirfd < 0)
		return dirfd;
	r = cd_random_id(rnd);
	if (r < 0)
		return cd_fail_errno(err, -r, "--pid-file", "random name");
	/* a name nobody can plant first, made by us (O_EXCL): root may write this in a directory
	 * a user or a container controls, where a FIFO, a symlink or a hard link could wait */
	tmp = cd_strdup_printf(".%.200s.%s", base, rnd);
	if (!tmp)
		return cd_fail(err, ENOMEM, "--pid-file", "out of memory");
	fd = openat(dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0)
		return cd_fail_errno(err, errno, "--pid-file", "%s", path);
	snprintf(text, sizeof(text), "%d", (int)pid);
	r = cd_write_all(fd, text, strlen(text));
	if (r < 0 || renameat(dirfd, tmp, dirfd, base) < 0) {
		int e = r < 0 ? -r : errno;

		unlinkat(dirfd, tmp, 0);
		return cd_fail_errno(err, e, "--pid-file", "%s", path);
	}
	return 0;
}
