/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* hostroot.c - is the caller the host's root (hostroot.h). Runs in the caller. */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <unistd.h>

#include "hostroot.h"
#include "util.h"

/* Where our uid 0 goes in the parent user namespace: 0 in the initial namespace (the map "0 0
 * 4294967295") and in one that maps root to root (unshare -r by root), whose processes are the
 * host's root to every file they can reach; another id (rootless podman maps 0 to the user
 * that runs it) is an unprivileged user. Unreadable or not found: root, the careful answer
 * (root's paths refuse what they cannot lease). */
static bool zero_maps_to_zero(void)
{
	_cleanup_close_ int fd = open("/proc/self/uid_map", O_RDONLY | O_CLOEXEC);
	unsigned long inside, outside, count;
	char buf[1024];
	ssize_t n;

	if (fd < 0 || (n = read(fd, buf, sizeof(buf) - 1)) <= 0)
		return true;
	buf[n] = '\0';
	for (const char *l = buf; l && *l; l = strchr(l, '\n'), l = l ? l + 1 : NULL)
		if (sscanf(l, "%lu %lu %lu", &inside, &outside, &count) == 3 && inside == 0 &&
		    count > 0)
			return outside == 0;
	return true;
}

/* The kernel's one anonymous inode (an eventfd's) belongs to the host's root, and no mount can
 * stand in for it: it shows as our uid 0 exactly when we are the host's root. The nearest map
 * alone cannot tell (root's namespace mapping its 0 to 4242, and inside it one mapping 0 to 4242,
 * is the host's root behind a map "0 4242 1"; the other way, a user's namespace mapping 0 to 0 is
 * that user). 1 root, 0 not, -1 unknown (no eventfd): the map decides. */
static int anon_inode_is_ours(void)
{
	_cleanup_close_ int fd = eventfd(0, EFD_CLOEXEC);
	struct stat st;

	if (fd < 0 || fstat(fd, &st) < 0)
		return -1;
	return st.st_uid == 0;
}

bool cd_host_root(void)
{
	/* the answer cannot change for a process of uid 0 (setns into another user namespace needs
	 * a single-threaded caller with privileges cordon never asks for): asked once */
	static int known = -1;

	if (geteuid() != 0)
		return false;
	if (known < 0)
		known = anon_inode_is_ours();
	if (known < 0)
		known = zero_maps_to_zero();
	return known;
}
