/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* libexec.c - cordon's helper programs, found and checked (libexec.h). Runs in the caller. */
#include <fcntl.h>
#include <limits.h>
#include <string.h>
#include <sys/stat.h>

#include "libexec.h"

#ifndef CORDON_LIBEXECDIR
#define CORDON_LIBEXECDIR "/usr/local/libexec"
#endif

/* The owner of the program running (whoever could change it owns us already); -1 unknown. */
static uid_t exe_owner(void)
{
	struct stat st;

	return stat("/proc/self/exe", &st) < 0 ? (uid_t)-1 : st.st_uid;
}

/* A program that any user but root, us and the owner of the program running could have written
 * is not run. The last is for uid 0 in a user namespace of its own (rootless podman runs its OCI
 * runtime so): there root's files, cordon's installed ones, show as the overflow uid, as the
 * runtime's own binary does; but so do every other user's, so the owner of the program counts
 * only in a directory that group and others cannot write (owner_ok): nobody but its owner, who
 * could as well replace the program itself, put the helper there. */
static int check_program(int fd, const char *path, bool owner_ok, struct cordon_error *err)
{
	struct stat st;

	if (fstat(fd, &st) < 0)
		return cd_fail_errno(err, errno, "libexec", "stat %s", path);
	if (!S_ISREG(st.st_mode))
		return cd_fail(err, EACCES, "libexec", "%s is not a regular file", path);
	if (st.st_uid != 0 && st.st_uid != geteuid() && !(owner_ok && st.st_uid == exe_owner()))
		return cd_fail(err, EACCES, "libexec",
			       "%s belongs to uid %u, neither root, us nor the owner of the "
			       "program running (in a directory only its owner writes): not run "
			       "in a sandbox",
			       path, (unsigned)st.st_uid);
	if (st.st_mode & (S_IWGRP | S_IWOTH))
		return cd_fail(err, EACCES, "libexec",
			       "%s is writable by group or others: not run in a sandbox", path);
	return 0;
}

/* name in dir, opened through the directory, whose mode says whether the owner of the program
 * running is trusted there */
static int open_checked(const char *dir, const char *name, const char *path,
			struct cordon_error *err)
{
	_cleanup_close_ int dfd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	_cleanup_close_ int fd = -1;
	struct stat st;
	int r;

	if (dfd < 0 || fstat(dfd, &st) < 0)
		return -errno;
	fd = openat(dfd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return -errno;
	r = check_program(fd, path, !(st.st_mode & (S_IWGRP | S_IWOTH)), err);
	return r < 0 ? r : CD_TAKE_FD(fd);
}

int cd_libexec_open(const char *name, const char *env, struct cordon_error *err)
{
	const char *given = env ? getenv(env) : NULL;
	char exe[PATH_MAX], path[PATH_MAX + 64];
	ssize_t n;
	int fd;

	if (given && *given) {
		/* the caller's own choice: a symlink it names is followed */
		_cleanup_close_ int f = open(given, O_RDONLY | O_CLOEXEC);

		if (f < 0)
			return cd_fail_errno(err, errno, "libexec", "open %s (%s)", given, env);
		fd = check_program(f, given, true, err);
		return fd < 0 ? fd : CD_TAKE_FD(f);
	}
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n > 0) {
		exe[n] = '\0';
		*strrchr(exe, '/') = '\0';
		snprintf(path, sizeof(path), "%s/%s", exe, name);
		fd = open_checked(exe, name, path, err);
		if (fd != -ENOENT)
			return fd < 0 ? cd_fail_errno(err, -fd, "libexec", "open %s", path) : fd;
	}
	snprintf(path, sizeof(path), "%s/%s", CORDON_LIBEXECDIR, name);
	fd = open_checked(CORDON_LIBEXECDIR, name, path, err);
	if (fd == -ENOENT)
		return cd_fail(err, ENOENT, "libexec",
			       "cannot find %s beside %s or in %s%s%s%s", name,
			       n > 0 ? exe : "the program", CORDON_LIBEXECDIR, env ? " (set " : "",
			       env ? env : "", env ? ")" : "");
	return fd < 0 ? cd_fail_errno(err, -fd, "libexec", "open %s", path) : fd;
}
