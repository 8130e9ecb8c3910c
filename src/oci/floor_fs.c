/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * floor_fs.c - cordon's floor under an OCI config's filesystem: mounts (cordon's own /proc,
 * /sys, /dev; tmpfs; read-only binds; one read-write directory, the workdir; read-write file
 * binds clamped read-only), maskedPaths, readonlyPaths, linux.devices. Each refusal names
 * mounts[i] or the field. Runs in cordon-runtime, before anything starts.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "specdata.h"

/* cordon's own masks of /proc and /sys (src/sandbox/mount.c: a front end cannot see them; keep
 * in step): maskedPaths there need nothing more. */
static const char *const cordon_masked[] = {
    "/proc/kallsyms",	"/proc/kcore",	     "/proc/keys",	    "/proc/kpagecgroup",
    "/proc/kpagecount", "/proc/kpageflags",  "/proc/latency_stats", "/proc/sched_debug",
    "/proc/timer_list", "/proc/timer_stats", "/proc/vmallocinfo",   "/proc/acpi",
    "/proc/asound",	"/proc/scsi",	     "/sys/firmware",	    "/sys/devices/virtual/powercap",
};
/* and its read-only ones (all of /sys is read-only) */
static const char *const cordon_readonly[] = {
    "/proc/bus", "/proc/fs", "/proc/irq", "/proc/sys", "/proc/sysrq-trigger",
};

/* The rootfs's top-level entries cordon replaces with a directory of its own (mountplan.c's
 * hidden_top; keep in step): a mount point below one is made there, in cordon's root. */
static const char *const cordon_hidden_top[] = {
    "boot", "home", "lost+found", "media", "mnt", "root", "run", "snap", "srv", "var",
};
/* Of those, the ones an image's own data lives in (not a host's secrets here: the image is the
 * container's system), shown read-only as they are in the image. Not /home and /root (HOME, a
 * fresh tmpfs, goes there), not /run (runtime state: the engine's tmpfs or binds). */
static const char *const image_top[] = {"boot", "media", "mnt", "srv", "var"};

static bool in_list(const char *p, const char *const *list, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(p, list[i]))
			return true;
	return false;
}

static bool has_option(char *const *opts, const char *o)
{
	for (; opts && *opts; opts++)
		if (!strcmp(*opts, o))
			return true;
	return false;
}

static bool managed(const char *dest)
{
	return cd_path_startswith(dest, "/proc") || cd_path_startswith(dest, "/sys") ||
	       cd_path_startswith(dest, "/dev");
}

/* A mount on /proc, /sys or /dev: one of the engines' usual ones, which cordon makes its own
 * way, or refused. */
static int own_mount(const struct oci_floor *f, size_t i, const struct oci_mount *m)
{
	static const char *const own[][2] = {
	    {"/proc", "proc"},
	    {"/sys", "sysfs"},
	    {"/dev", "tmpfs"},
	    {"/dev/pts", "devpts"},
	    {"/sys/fs/cgroup", "cgroup"},
	    {"/sys/fs/cgroup", "cgroup2"},
	};
	const char *type = m->type ? m->type : "";
	bool bind = has_option(m->options, "bind") || has_option(m->options, "rbind");

	for (size_t j = 0; j < CD_ELEMENTSOF(own); j++)
		if (!strcmp(m->dest, own[j][0]) && !strcmp(type, own[j][1]))
			return 0;
	if (!strcmp(m->dest, "/sys") && bind && m->source && !strcmp(m->source, "/sys")) {
		oci_floor_say(f,
			      "mounts[%zu]: /sys: the host's /sys bound: cordon's own read-only "
			      "/sys instead",
			      i);
		return 0;
	}
	if (!strcmp(m->dest, "/dev/shm") && (bind || !strcmp(type, "tmpfs"))) {
		if (bind)
			oci_floor_say(f,
				      "mounts[%zu]: /dev/shm: the engine's directory is not "
				      "shared: cordon's own /dev/shm (a tmpfs)",
				      i);
		return 0;
	}
	if (!strcmp(m->dest, "/dev/mqueue") && !strcmp(type, "mqueue")) {
		oci_floor_say(f,
			      "mounts[%zu]: /dev/mqueue: not mounted (POSIX message queues work "
			      "without it)",
			      i);
		return 0;
	}
	return oci_floor_refuse(f,
				"mounts[%zu]: %s: /proc, /sys and /dev are cordon's own (only "
				"their usual mounts are accepted): refused",
				i, m->dest);
}

static const char *writable_below(const struct oci_spec *s, const char *p, bool strict);

/* Whether the floor shows the image's top-level name (image_top) as it is: a directory there
 * (not a symlink: cordon's root has its own top level). */
static bool image_dir(int root, const char *name)
{
	struct stat st;

	return in_list(name, image_top, CD_ELEMENTSOF(image_top)) &&
	       fstatat(root, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode);
}

/* Whether the image has a /var/tmp directory, where image_dirs() mounts a fresh tmpfs. */
static bool image_var_tmp(int root)
{
	struct stat st;

	return image_dir(root, "var") && fstatat(root, "var/tmp", &st, AT_SYMLINK_NOFOLLOW) == 0 &&
	       S_ISDIR(st.st_mode);
}

/* Whether dest must be made in the rootfs itself, which cordon mounts read-only, and is not
 * there: a mount point below a top-level directory the image has, neither one cordon replaces
 * nor below a tmpfs or the read-write directory of the config. Looked up inside the rootfs (its
 * symlinks resolve in it). */
static bool missing_in_rootfs(const struct oci_floor *f, const char *dest)
{
	const char *rest = dest + strspn(dest, "/");
	size_t top = strcspn(rest, "/");
	char name[256];
	struct open_how how = {.flags = O_PATH | O_CLOEXEC, .resolve = RESOLVE_IN_ROOT};
	_cleanup_close_ int root = -1;
	int fd;

	if (!rest[top] || top >= sizeof(name) || writable_below(f->s, dest, true))
		return false;
	memcpy(name, rest, top);
	name[top] = '\0';
	root = open(f->s->rootfs, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (root < 0)
		return false; /* cordon_config_set_rootfs() said why */
	if (in_list(name, cordon_hidden_top, CD_ELEMENTSOF(cordon_hidden_top)) &&
	    !image_dir(root, name))
		return false;
	if (cd_path_startswith(dest, "/var/tmp") && strcmp(dest, "/var/tmp") && image_var_tmp(root))
		return false; /* below image_dirs()'s tmpfs */
	/* a top-level entry the image lacks is made in cordon's own root, with what is below */
	fd = (int)syscall(SYS_openat2, root, name, &how, sizeof(how));
	if (fd < 0)
		return false;
	close(fd);
	fd = (int)syscall(SYS_openat2, root, rest, &how, sizeof(how));
	if (fd >= 0) {
		close(fd);
		return false;
	}
	return errno == ENOENT;
}

/* Where dest lands inside the rootfs once the image's symlinks are followed in it, as the
 * mount's target is (dangling ones too: the image's /proc is empty), component by component:
 * whether that is on or below /proc, /sys or /dev ("x -> /proc/sys" makes /x/kernel a mount
 * there). cur holds no symlink, so fstatat() from the root follows none but the last's. */
static bool lands_managed(const struct oci_floor *f, const char *dest)
{
	_cleanup_close_ int root = open(f->s->rootfs, O_PATH | O_DIRECTORY | O_CLOEXEC);
	char cur[4096] = "", rest[8192], target[4096];
	unsigned hops = 0;

	if (root < 0 || strlen(dest) >= sizeof(rest))
		return false;
	snprintf(rest, sizeof(rest), "%s", dest);
	for (char *p = rest; *p;) {
		size_t len = strcspn(p + strspn(p, "/"), "/"), c = strlen(cur);
		struct stat st;
		ssize_t n;

		p += strspn(p, "/");
		if (!len)
			break;
		if ((len == 1 && p[0] == '.') || (len == 2 && !strncmp(p, "..", 2))) {
			if (len == 2 && strrchr(cur, '/'))
				*strrchr(cur, '/') = '\0';
			p += len;
			continue;
		}
		if (c + 1 + len >= sizeof(cur))
			return false;
		cur[c] = '/';
		memcpy(cur + c + 1, p, len);
		cur[c + 1 + len] = '\0';
		p += len;
		if (fstatat(root, cur + 1, &st, AT_SYMLINK_NOFOLLOW) < 0) {
			/* not in the image: the rest is made as written */
			snprintf(target, sizeof(target), "%s%s", cur, p);
			return managed(target);
		}
		if (!S_ISLNK(st.st_mode))
			continue;
		n = readlinkat(root, cur + 1, target, sizeof(target) - 1);
		if (n <= 0 || ++hops > 40)
			return false;
		target[n] = '\0';
		cur[c] = '\0';
		if (target[0] == '/')
			cur[0] = '\0';
		if (strlen(target) + 1 + strlen(p) >= sizeof(rest))
			return false;
		/* the link's text, then what was left after it */
		memmove(rest + strlen(target) + 1, p, strlen(p) + 1);
		memcpy(rest, target, strlen(target));
		rest[strlen(target)] = '/';
		p = rest;
	}
	return managed(cur[0] ? cur : "/");
}

/* tmpfs's size= option: bytes, or 0 (cordon's default) for none or a percentage. */
static int tmpfs_size(const struct oci_floor *f, size_t i, const struct oci_mount *m, uint64_t *ret)
{
	*ret = 0;
	for (char *const *o = m->options; *o; o++) {
		const char *v = *o;
		char *end;
		unsigned long long n;
		int shift = 0;

		if (strncmp(v, "size=", 5) != 0)
			continue;
		errno = 0;
		n = strtoull(v + 5, &end, 10);
		if (*end == '%') {
			oci_floor_say(f, "mounts[%zu]: %s: %s: cordon's default size instead", i,
				      m->dest, v);
			continue;
		}
		if (*end && end[1] == '\0' && strchr("kKmMgG", *end))
			shift = *end == 'k' || *end == 'K'   ? 10
				: *end == 'm' || *end == 'M' ? 20
							     : 30;
		else if (*end)
			n = 0, errno = EINVAL;
		if (errno || end == v + 5 || n > (UINT64_MAX >> shift))
			return cd_fail(f->err, 0, "config",
				       "mounts[%zu].options: \"%s\" is not a "
				       "size",
				       i, v);
		*ret = (uint64_t)n << shift;
	}
	return 0;
}

static int tmpfs_mount(const struct oci_floor *f, size_t i, const struct oci_mount *m)
{
	struct cordon_error e = {0};
	char path[OCI_PATH_MAX];
	uint64_t size;
	int r = tmpfs_size(f, i, m, &size);

	if (r < 0)
		return r;
	if (missing_in_rootfs(f, m->dest)) {
		/* podman --read-only's /var/tmp in an image whose /var has none: runc makes the
		 * mount point in the image, cordon's root is read-only; scratch not there is
		 * said, the container still runs (as an image without /var/tmp does) */
		oci_floor_say(f,
			      "mounts[%zu]: %s: no such directory in the rootfs, which cordon "
			      "mounts read-only: tmpfs not mounted",
			      i, m->dest);
		return 0;
	}
	r = cordon_config_add_tmpfs(f->c, m->dest, size, &e);
	snprintf(path, sizeof(path), "mounts[%zu]", i);
	return r < 0 ? oci_floor_relay(f, r, &e, path) : 0;
}

/* The one read-write directory: the workdir, at dest. */
static int workdir_mount(struct oci_floor *f, const char *path, const char *src, const char *dest)
{
	struct cordon_error e = {0};
	int r;

	if (f->workdir_from[0])
		return oci_floor_refuse(f,
					"%s: %s: a second read-write directory: refused (cordon's "
					"container has one, %s)",
					path, dest, f->workdir_from);
	r = cordon_config_set_workdir(f->c, src, &e);
	if (r >= 0)
		r = cordon_config_set_workdir_target(f->c, dest, &e);
	if (r < 0)
		return oci_floor_relay(f, r, &e, path);
	snprintf(f->workdir_from, sizeof(f->workdir_from), "%s", path);
	return 0;
}

/* The kernel's own filesystems: the host's processes, devices, kernel state. A bind of one (or
 * of a directory above one: binds are recursive) would hand the container the host's /proc,
 * /sys or /dev, which its own, masked, replace. */
static bool kernel_fs(const char *type)
{
	static const char *const kinds[] = {
	    "proc",    "sysfs",	 "devtmpfs",  "devpts",	    "debugfs",	"tracefs", "securityfs",
	    "bpf",     "cgroup", "cgroup2",   "efivarfs",   "configfs", "pstore",  "binfmt_misc",
	    "fusectl", "mqueue", "hugetlbfs", "rpc_pipefs", "nsfs",
	};

	return in_list(type, kinds, CD_ELEMENTSOF(kinds));
}

/* mountinfo's octal escapes (\040 for a space) undone in place */
static void mountinfo_unescape(char *p)
{
	char *o = p;

	for (; *p; p++, o++) {
		if (p[0] == '\\' && p[1] >= '0' && p[1] <= '3' && p[2] >= '0' && p[2] <= '7' &&
		    p[3] >= '0' && p[3] <= '7') {
			*o = (char)((p[1] - '0') * 64 + (p[2] - '0') * 8 + (p[3] - '0'));
			p += 3;
		} else {
			*o = *p;
		}
	}
	*o = '\0';
}

/* The host's /proc, /sys, /dev (or a kernel filesystem at or below real, the source's real
 * path): its mount point in where, true. */
static bool kernel_fs_below(const char *real, char *where, size_t size)
{
	_cleanup_(cd_fclosep) FILE *f = NULL;
	_cleanup_free_ char *line = NULL;
	size_t cap = 0;

	if (cd_path_startswith(real, "/proc") || cd_path_startswith(real, "/sys") ||
	    cd_path_startswith(real, "/dev")) {
		snprintf(where, size, "%.200s", real);
		return true;
	}
	f = fopen("/proc/self/mountinfo", "re");
	if (!f) {
		snprintf(where, size, "/proc/self/mountinfo unreadable");
		return true; /* cannot tell: refused */
	}
	while (getline(&line, &cap, f) > 0) {
		char mnt[4096], type[64];
		const char *dash = strstr(line, " - ");

		if (!dash || sscanf(line, "%*s %*s %*s %*s %4095s", mnt) != 1 ||
		    sscanf(dash + 3, "%63s", type) != 1)
			continue;
		mountinfo_unescape(mnt);
		if (kernel_fs(type) && cd_path_startswith(mnt, real)) {
			snprintf(where, size, "%.200s (%s)", mnt, type);
			return true;
		}
	}
	return false;
}

static int bind_mount(struct oci_floor *f, const struct oci_mount *m, const char *path)
{
	_cleanup_free_ char *src = NULL, *real = NULL;
	char where[300];
	struct cordon_error e = {0};
	struct stat st;
	int r;

	if (!m->source || !*m->source)
		return cd_fail(f->err, 0, "config", "%s.source: missing", path);
	if (m->has_idmap)
		return oci_floor_refuse(f, "%s: an id-mapped bind is not built yet: refused", path);
	src = m->source[0] == '/' ? strdup(m->source)
				  : cd_strdup_printf("%s/%s", f->s->bundle, m->source);
	if (!src)
		return cd_fail(f->err, ENOMEM, "config", "out of memory");
	if (stat(src, &st) < 0)
		return cd_fail_errno(f->err, errno, "config", "%s: %s", path, src);
	real = realpath(src, NULL);
	if (!real)
		return cd_fail_errno(f->err, errno, "config", "%s: %s", path, src);
	if (kernel_fs_below(real, where, sizeof(where)))
		return oci_floor_refuse(f,
					"%s: %s: the host's %s: refused (the container's /proc, "
					"/sys and /dev are cordon's own)",
					path, m->source, where);
	if (missing_in_rootfs(f, m->dest)) {
		/* podman binds /etc/hostname, /etc/hosts, /etc/resolv.conf into any image; runc
		 * makes their mount points in the image, cordon's root is read-only */
		if (S_ISDIR(st.st_mode))
			return oci_floor_refuse(f,
						"%s: %s: no such directory in the rootfs, which "
						"cordon mounts read-only: refused (make it in "
						"the image)",
						path, m->dest);
		oci_floor_say(f,
			      "%s: %s: no such file in the rootfs, which cordon mounts "
			      "read-only: not bound",
			      path, m->dest);
		return 0;
	}
	if (has_option(m->options, "ro")) {
		r = cordon_config_add_ro_bind(f->c, src, m->dest, &e);
		return r < 0 ? oci_floor_relay(f, r, &e, path) : 0;
	}
	if (S_ISDIR(st.st_mode))
		return workdir_mount(f, path, src, m->dest);
	/* podman's /etc/hosts, /etc/resolv.conf, /etc/hostname, /run/.containerenv: it writes
	 * them before start; the container reads them */
	oci_floor_say(f, "%s: %s: a read-write file: clamped to read-only", path, m->dest);
	r = cordon_config_add_ro_bind(f->c, src, m->dest, &e);
	return r < 0 ? oci_floor_relay(f, r, &e, path) : 0;
}

/* Options cordon's mounts do not take: said, never silently dropped (its own are always nosuid
 * and nodev). */
static void unapplied_options(const struct oci_floor *f, const struct oci_mount *m,
			      const char *path)
{
	static const char *const unapplied[] = {"noexec",     "sync",	     "dirsync",	 "noatime",
						"nodiratime", "strictatime", "lazytime", "mand"};

	for (char *const *o = m->options; *o; o++)
		if (in_list(*o, unapplied, CD_ELEMENTSOF(unapplied)) || !strncmp(*o, "mode=", 5) ||
		    !strncmp(*o, "uid=", 4) || !strncmp(*o, "gid=", 4))
			oci_floor_say(f,
				      "%s: %s: option %s not applied (cordon's mounts are nosuid, "
				      "nodev)",
				      path, m->dest, *o);
}

static int one_mount(struct oci_floor *f, size_t i, const struct oci_mount *m, const char *path)
{
	const char *type = m->type ? m->type : "";
	bool bind = has_option(m->options, "bind") || has_option(m->options, "rbind");

	if (managed(m->dest))
		return own_mount(f, i, m);
	if (lands_managed(f, m->dest))
		return oci_floor_refuse(
		    f,
		    "%s: %s: the image's symbolic links lead it into /proc, /sys "
		    "or /dev, which are cordon's own: refused",
		    path, m->dest);
	if (!strcmp(m->dest, "/"))
		return oci_floor_refuse(f, "%s: a mount on /: refused (root.path is the root)",
					path);
	if (!strcmp(type, "tmpfs")) {
		unapplied_options(f, m, path);
		return tmpfs_mount(f, i, m);
	}
	if (!strcmp(type, "bind") || (bind && (!*type || !strcmp(type, "none")))) {
		unapplied_options(f, m, path);
		return bind_mount(f, m, path);
	}
	return oci_floor_refuse(f, "%s: %s: type \"%s\" there: refused (bind and tmpfs only)", path,
				m->dest, type);
}

static bool config_mounts_on(const struct oci_spec *s, const char *dest)
{
	for (size_t i = 0; i < s->n_mounts; i++)
		if (!strcmp(s->mounts[i].dest, dest))
			return true;
	return false;
}

/* The image's /var, /srv, /mnt, ... read-only (cordon would hide them as it does a host's),
 * with a fresh /var/tmp where the image has one, as cordon gives a host root. */
static int image_dirs(const struct oci_floor *f)
{
	_cleanup_close_ int root = open(f->s->rootfs, O_PATH | O_DIRECTORY | O_CLOEXEC);
	struct cordon_error e = {0};
	int r;

	if (root < 0)
		return cd_fail_errno(f->err, errno, "config", "root.path: %s", f->s->rootfs);
	for (size_t i = 0; i < CD_ELEMENTSOF(image_top); i++) {
		_cleanup_free_ char *src = NULL, *dst = NULL;

		if (!image_dir(root, image_top[i]))
			continue;
		src = cd_strdup_printf("%s/%s", f->s->rootfs, image_top[i]);
		dst = cd_strdup_printf("/%s", image_top[i]);
		if (!src || !dst)
			return cd_fail(f->err, ENOMEM, "config", "out of memory");
		r = cordon_config_add_ro_bind(f->c, src, dst, &e);
		if (r < 0)
			return oci_floor_relay(f, r, &e, "root.path");
	}
	if (!image_var_tmp(root) || config_mounts_on(f->s, "/var/tmp"))
		return 0; /* the config's own /var/tmp (podman --read-only's tmpfs) replaces it */
	r = cordon_config_add_tmpfs(f->c, "/var/tmp", 256u << 20, &e);
	return r < 0 ? oci_floor_relay(f, r, &e, "root.path") : 0;
}

int oci_floor_mounts(struct oci_floor *f, const char *scratch_dir)
{
	int r = image_dirs(f);

	if (r < 0)
		return r;

	for (size_t i = 0; i < f->s->n_mounts; i++) {
		char path[OCI_PATH_MAX];

		snprintf(path, sizeof(path), "mounts[%zu]", i);
		r = one_mount(f, i, &f->s->mounts[i], path);
		if (r < 0)
			return r;
	}
	if (f->workdir_from[0])
		return 0;
	/* cordon's sandbox always has one read-write directory: without a bind asking for one,
	 * the lifecycle's empty scratch directory, out of the way */
	if (!scratch_dir)
		return oci_floor_refuse(f, "mounts: no read-write directory and no scratch "
					   "directory for cordon's workdir");
	r = workdir_mount(f, "the scratch workdir", scratch_dir, OCI_SCRATCH_TARGET);
	if (r >= 0)
		oci_floor_say(f, "mounts: no read-write directory: an empty one at %s",
			      OCI_SCRATCH_TARGET);
	return r;
}

/* The config's writable mount that p is in (strictly below it when strict): a tmpfs, or the
 * read-write bind of a directory (the workdir); NULL: none. */
static const char *writable_below(const struct oci_spec *s, const char *p, bool strict)
{
	for (size_t i = 0; i < s->n_mounts; i++) {
		const struct oci_mount *m = &s->mounts[i];
		bool bind = has_option(m->options, "bind") || has_option(m->options, "rbind") ||
			    (m->type && !strcmp(m->type, "bind"));
		bool w = m->type && !strcmp(m->type, "tmpfs");
		struct stat st;

		if (managed(m->dest) || !cd_path_startswith(p, m->dest) ||
		    (strict && !strcmp(p, m->dest)))
			continue;
		if (!w && bind && !has_option(m->options, "ro") && m->source &&
		    m->source[0] == '/' && stat(m->source, &st) == 0)
			w = S_ISDIR(st.st_mode);
		if (w)
			return m->dest;
	}
	return NULL;
}

static int masked_paths(const struct oci_floor *f)
{
	for (size_t i = 0; f->s->masked && f->s->masked[i]; i++) {
		const char *p = f->s->masked[i];
		struct cordon_error e = {0};
		char path[OCI_PATH_MAX];
		int r;

		snprintf(path, sizeof(path), "linux.maskedPaths[%zu]", i);
		if (in_list(p, cordon_masked, CD_ELEMENTSOF(cordon_masked)))
			continue;
		if (managed(p)) {
			oci_floor_say(f,
				      "%s: %s: not masked (cordon's /proc, /sys and /dev are its "
				      "own, /sys read-only, with their own masks)",
				      path, p);
			continue;
		}
		r = cordon_config_add_hide(f->c, p, &e);
		if (r < 0)
			return oci_floor_relay(f, r, &e, path);
	}
	return 0;
}

int oci_floor_paths(struct oci_floor *f)
{
	int r = masked_paths(f);

	if (r < 0)
		return r;
	for (size_t i = 0; f->s->readonly && f->s->readonly[i]; i++) {
		const char *p = f->s->readonly[i], *w = writable_below(f->s, p, false);

		if (w)
			return oci_floor_refuse(f,
						"linux.readonlyPaths[%zu]: %s: below the writable "
						"%s: a read-only path there is not built yet: "
						"refused",
						i, p, w);
		if (cd_path_startswith(p, "/proc") &&
		    !in_list(p, cordon_readonly, CD_ELEMENTSOF(cordon_readonly)) &&
		    !in_list(p, cordon_masked, CD_ELEMENTSOF(cordon_masked)))
			oci_floor_say(f,
				      "linux.readonlyPaths[%zu]: %s: not made read-only (cordon's "
				      "/proc has its own list)",
				      i, p);
	}
	return 0;
}

/* linux.devices: the nodes cordon's /dev has anyway; any other refused. */
int oci_floor_devices(struct oci_floor *f)
{
	static const char *const std[] = {"/dev/full", "/dev/null",    "/dev/random",
					  "/dev/tty",  "/dev/urandom", "/dev/zero"};

	for (size_t i = 0; i < f->s->n_devices; i++)
		if (!in_list(f->s->devices[i].path, std, CD_ELEMENTSOF(std)))
			return oci_floor_refuse(f,
						"linux.devices[%zu]: %s: refused (cordon's /dev "
						"has only null, zero, full, random, urandom, "
						"tty)",
						i, f->s->devices[i].path);
	return 0;
}
