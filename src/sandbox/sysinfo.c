/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * sysinfo.c - the host settings behind the failures users of user-namespace sandboxes hit most.
 * Runs in the supervisor (clone failed) and in the child before pivot_root (a mount was refused).
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>

#include "sysinfo.h"
#include "util.h"

/* The integer in a /proc/sys file, or -1 when it does not exist. */
static long read_sysctl(const char *path)
{
	char buf[32];
	ssize_t n;
	_cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	return strtol(buf, NULL, 10);
}

const char *cd_sysinfo_userns_hint(void)
{
	if (read_sysctl("/proc/sys/kernel/unprivileged_userns_clone") == 0 && geteuid() != 0)
		return "unprivileged user namespaces are disabled: "
		       "sysctl -w kernel.unprivileged_userns_clone=1";
	if (read_sysctl("/proc/sys/user/max_user_namespaces") == 0)
		return "user namespaces are disabled: sysctl -w user.max_user_namespaces=15000";
	if (read_sysctl("/proc/sys/kernel/apparmor_restrict_unprivileged_userns") == 1 &&
	    geteuid() != 0)
		return "AppArmor restricts unprivileged user namespaces (Ubuntu 23.10+): "
		       "install an AppArmor profile that allows userns for cordon (see README), "
		       "or sysctl -w kernel.apparmor_restrict_unprivileged_userns=0";
	return NULL;
}
