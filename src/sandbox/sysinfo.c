/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * sysinfo.c - the host settings behind the failures users of user-namespace sandboxes hit most.
 * Runs in the supervisor (clone failed) and in the child before pivot_root (a mount was refused).
 *
 * Ubuntu 23.10 and later restrict user namespaces with AppArmor: an unconfined program's new user
 * namespace has no capabilities in it (or cannot be made), so the clone or the first mount fails
 * with EPERM or EACCES. cordon's profile (apparmor/cordon.in) lifts that for the installed
 * programs only, by path: the hint says which of the three is missing (installed, loaded, this
 * program being the installed one) and the command that fixes it.
 */
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hostroot.h"
#include "sysinfo.h"
#include "util.h"

#ifndef CORDON_APPARMOR_PROFILE
#define CORDON_APPARMOR_PROFILE "/etc/apparmor.d/cordon"
#endif
#ifndef CORDON_BINDIR
#define CORDON_BINDIR "/usr/local/bin"
#endif

#define RESTRICT_SYSCTL "kernel.apparmor_restrict_unprivileged_userns"

/* Up to size - 1 bytes of a small /proc file, NUL-ended; -1 when it cannot be read. */
static ssize_t read_small(const char *path, char *buf, size_t size)
{
	ssize_t n;
	_cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -1;
	n = read(fd, buf, size - 1);
	if (n < 0)
		return -1;
	buf[n] = '\0';
	return n;
}

/* The integer in a /proc/sys file, or -1 when it does not exist. */
static long read_sysctl(const char *path)
{
	char buf[32];

	if (read_small(path, buf, sizeof(buf)) <= 0)
		return -1;
	return strtol(buf, NULL, 10);
}

/* Is our AppArmor label one of cordon's profiles ("cordon (unconfined)")? */
static bool label_is_cordons(void)
{
	char label[128];
	size_t n;

	if (read_small("/proc/self/attr/apparmor/current", label, sizeof(label)) <= 0 &&
	    read_small("/proc/self/attr/current", label, sizeof(label)) <= 0)
		return false;
	n = strcspn(label, " \n");
	return (n == 6 && !strncmp(label, "cordon", 6)) ||
	       (n == 12 && !strncmp(label, "cordon-serve", 12));
}

/* Do we run from one of the paths the profile attaches to (the installed cordon, cordon-serve)? */
static bool exe_is_attached(void)
{
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	if (n < 0)
		return false;
	exe[n] = '\0';
	return !strcmp(exe, CORDON_BINDIR "/cordon") ||
	       !strcmp(exe, CORDON_LIBEXECDIR "/cordon-serve");
}

/* The AppArmor part of the advice: restricted, and we are not under cordon's profile. */
static void apparmor_advice(const struct cd_userns_facts *f, const char *profile,
			    const char *attach, char *buf, size_t size)
{
	const char *head = "AppArmor restricts unprivileged user namespaces (" RESTRICT_SYSCTL
			   "=1, Ubuntu 23.10+)";
	const char *tail = "; or for every program: sudo sysctl -w " RESTRICT_SYSCTL "=0";

	if (!f->exe_attached)
		snprintf(buf, size, "%s and cordon's profile (%s) is for %s only: run that one, "
			 "with the profile loaded (sudo apparmor_parser -r %s)%s",
			 head, profile, attach, profile, tail);
	else if (!f->profile_installed)
		snprintf(buf, size, "%s and cordon's profile %s is not installed: install it "
			 "(meson setup -Dapparmor=enabled; README: Install), then "
			 "sudo apparmor_parser -r %s%s", head, profile, profile, tail);
	else
		snprintf(buf, size, "%s and cordon's profile is not loaded: "
			 "sudo apparmor_parser -r %s%s", head, profile, tail);
}

bool cd_sysinfo_userns_advice(const struct cd_userns_facts *f, const char *profile,
			      const char *attach, char *buf, size_t size)
{
	if (f->unprivileged_userns_clone == 0 && !f->privileged)
		snprintf(buf, size, "unprivileged user namespaces are disabled: "
			 "sysctl -w kernel.unprivileged_userns_clone=1");
	else if (f->max_user_namespaces == 0)
		snprintf(buf, size,
			 "user namespaces are disabled: sysctl -w user.max_user_namespaces=15000");
	else if (f->apparmor_restrict == 1 && !f->privileged && !f->under_profile)
		apparmor_advice(f, profile, attach, buf, size);
	else
		return false;
	return true;
}

static bool userns_hint(bool inside, char *buf, size_t size)
{
	/* inside a user namespace cordon made, the first two cannot have refused it (and
	 * user.max_user_namespaces reads that namespace's own 0, which pid 1 wrote) */
	struct cd_userns_facts f = {
		.unprivileged_userns_clone =
			inside ? -1 : read_sysctl("/proc/sys/kernel/unprivileged_userns_clone"),
		.max_user_namespaces =
			inside ? -1 : read_sysctl("/proc/sys/user/max_user_namespaces"),
		.apparmor_restrict =
			read_sysctl("/proc/sys/kernel/apparmor_restrict_unprivileged_userns"),
		.privileged = cd_host_root(),
	};

	if (f.apparmor_restrict == 1) {
		f.under_profile = label_is_cordons();
		f.profile_installed = faccessat(AT_FDCWD, CORDON_APPARMOR_PROFILE, F_OK,
						AT_EACCESS) == 0;
		f.exe_attached = exe_is_attached();
	}
	return cd_sysinfo_userns_advice(&f, CORDON_APPARMOR_PROFILE, CORDON_BINDIR "/cordon", buf,
					size);
}

bool cd_sysinfo_userns_hint(char *buf, size_t size)
{
	return userns_hint(false, buf, size);
}

bool cd_sysinfo_userns_hint_inside(char *buf, size_t size)
{
	return userns_hint(true, buf, size);
}
