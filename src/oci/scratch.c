/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * scratch.c - a container's scratch directory: cordon's sandbox always has one read-write
 * directory (its workdir); a config that binds none gets this empty one (spec.h,
 * oci_spec_config_scratch), /var/tmp/cordon-runtime-UID-RANDOM (0700, ours; UID the caller's
 * host uid, also under rootless podman's user namespace; RANDOM 32 hex digits: made in the sticky
 * /var/tmp itself, a name nobody can take first, where a fixed parent of ours could be squatted
 * by any user before our first container), named in ROOT/ID/scratch and removed with the
 * container. Runs in cordon-runtime's create, run and delete.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rmtree.h"
#include "runtime.h"
#include "util.h"

#define SCRATCH_FILE "scratch"

/* our euid as the initial user namespace knows it (uid_map's line holding it) */
static unsigned long host_uid(void)
{
	_cleanup_(cd_fclosep) FILE *f = fopen("/proc/self/uid_map", "re");
	unsigned long in, out, n, uid = geteuid();

	while (f && fscanf(f, "%lu %lu %lu", &in, &out, &n) == 3)
		if (uid >= in && uid - in < n)
			return out + (uid - in);
	return uid;
}

/* "/var/tmp/cordon-runtime-UID-": what every scratch of ours starts with */
static void scratch_prefix(char *buf, size_t size)
{
	snprintf(buf, size, "/var/tmp/cordon-runtime-%lu-", host_uid());
}

int oci_scratch_make(char **ret, struct cordon_error *err)
{
	char prefix[64], id[33];
	char *path;
	int r;

	scratch_prefix(prefix, sizeof(prefix));
	r = cd_random_id(id);
	if (r < 0)
		return cd_fail_errno(err, -r, "scratch", "random id");
	path = cd_strdup_printf("%s%s", prefix, id);
	if (!path)
		return cd_fail(err, ENOMEM, "scratch", "out of memory");
	/* a new directory, or nothing: mkdir does not follow a planted symlink */
	if (mkdir(path, 0700) < 0) {
		r = cd_fail_errno(err, errno, "scratch", "mkdir %s", path);
		free(path);
		return r;
	}
	*ret = path;
	return 0;
}

int oci_scratch_note(int dirfd, const char *path, struct cordon_error *err)
{
	_cleanup_close_ int fd =
	    openat(dirfd, SCRATCH_FILE, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	int r;

	if (fd < 0)
		return cd_fail_errno(err, errno, "scratch", "%s", SCRATCH_FILE);
	r = cd_write_all(fd, path, strlen(path));
	return r < 0 ? cd_fail_errno(err, -r, "scratch", "%s", SCRATCH_FILE) : 0;
}

/* the name oci_scratch_make() gives: 32 lowercase hex digits (never "..", never a slash) */
static bool scratch_name(const char *name)
{
	return strlen(name) == 32 && strspn(name, "0123456789abcdef") == 32;
}

void oci_scratch_remove(const char *path)
{
	char prefix[64];
	struct stat st;
	size_t n;

	/* only what we made: a directory of ours named as we name them (in the sticky /var/tmp
	 * nobody else can rename or remove it) */
	scratch_prefix(prefix, sizeof(prefix));
	n = strlen(prefix);
	if (strncmp(path, prefix, n) || !scratch_name(path + n) || lstat(path, &st) < 0 ||
	    !S_ISDIR(st.st_mode) || st.st_uid != geteuid())
		return;
	if (cd_rmtree_path(path, &st) < 0)
		oci_log("warning", "scratch: %s: not removed", path);
}

void oci_scratch_remove_noted(int dirfd)
{
	_cleanup_close_ int fd =
	    openat(dirfd, SCRATCH_FILE, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	char path[256];
	struct stat st;
	ssize_t n;

	/* root deletes in a user's --root (Slurm): a note the user wrote, naming one of root's
	 * directories (another container's workdir), is not ours to follow; ours is written by us
	 */
	if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_uid != geteuid())
		return;
	n = read(fd, path, sizeof(path) - 1);
	if (n <= 0)
		return;
	path[n] = '\0';
	oci_scratch_remove(path);
}
