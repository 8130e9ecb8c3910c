/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * nsjoin.c - a network, ipc or uts namespace an engine made (a Kubernetes pod's, podman's bridge
 * network), joined by descriptor instead of made. The check runs in the caller when the config is
 * given the descriptor; the join in the supervisor, around the clone of pid 1 (sandbox.c).
 *
 * The sandbox's own user namespace is still made by that clone, below the caller's: the joined
 * namespace stays owned by the user namespace that owned it (the host's, an engine's), over
 * which the sandbox holds no capability. So inside, nothing of it can be configured: no address,
 * route or link, no sethostname; what the engine set up is used as it is.
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <linux/magic.h>
#include <linux/nsfs.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/vfs.h>

#include "nsjoin.h"

static const struct {
	int flag;
	const char *name;
} slots[CD_JOIN_N] = {
    [CD_JOIN_NET] = {CLONE_NEWNET, "net"},
    [CD_JOIN_IPC] = {CLONE_NEWIPC, "ipc"},
    [CD_JOIN_UTS] = {CLONE_NEWUTS, "uts"},
};

int cd_nsjoin_slot(int nstype)
{
	for (int i = 0; i < CD_JOIN_N; i++)
		if (slots[i].flag == nstype)
			return i;
	return -1;
}

const char *cd_nsjoin_name(enum cd_join slot)
{
	return slots[slot].name;
}

int cd_nsjoin_flag(enum cd_join slot)
{
	return slots[slot].flag;
}

static const char *type_name(int nstype)
{
	static const struct {
		int flag;
		const char *name;
	} all[] = {{CLONE_NEWNET, "network"},	{CLONE_NEWIPC, "ipc"},
		   {CLONE_NEWUTS, "uts"},	{CLONE_NEWUSER, "user"},
		   {CLONE_NEWPID, "pid"},	{CLONE_NEWNS, "mount"},
		   {CLONE_NEWCGROUP, "cgroup"}, {0x00000080 /* CLONE_NEWTIME */, "time"}};

	for (size_t i = 0; i < CD_ELEMENTSOF(all); i++)
		if (all[i].flag == nstype)
			return all[i].name;
	return "unknown";
}

/* the same file as /proc/<who>/ns/<name>; a /proc/1 we may not read is not compared */
static bool same_as(const struct stat *st, const char *who, const char *name)
{
	char path[64];
	struct stat o;

	snprintf(path, sizeof(path), "/proc/%s/ns/%s", who, name);
	return stat(path, &o) == 0 && o.st_dev == st->st_dev && o.st_ino == st->st_ino;
}

int cd_nsjoin_is_host(int fd, enum cd_join slot)
{
	struct stat st;

	if (fstat(fd, &st) < 0)
		return -errno;
	return same_as(&st, "thread-self", slots[slot].name) || same_as(&st, "1", slots[slot].name);
}

int cd_nsjoin_check(int fd, int nstype, struct cordon_error *err)
{
	int slot = cd_nsjoin_slot(nstype), fl, type, host;
	struct statfs sfs;

	if (slot < 0)
		return cd_fail(err, 0, "namespaces",
			       "a %s namespace cannot be joined (only "
			       "network, ipc and uts: the sandbox's others are always its own)",
			       type_name(nstype));
	fl = fcntl(fd, F_GETFL);
	if (fl < 0)
		return cd_fail(err, EBADF, "namespaces", "%d is not an open file descriptor", fd);
	if (fstatfs(fd, &sfs) < 0)
		return cd_fail_errno(err, errno, "namespaces", "fstatfs");
	if (sfs.f_type != NSFS_MAGIC)
		return cd_fail(err, 0, "namespaces", "not a namespace file");
	if (fl & O_PATH)
		return cd_fail(err, 0, "namespaces",
			       "opened with O_PATH: setns needs it open "
			       "for reading");
	type = ioctl(fd, NS_GET_NSTYPE);
	if (type < 0)
		return cd_fail_errno(err, errno, "namespaces",
				     "the namespace's type (NS_GET_NSTYPE)");
	if (type != nstype)
		return cd_fail(err, 0, "namespaces", "a namespace of type %s, not %s",
			       type_name(type), type_name(nstype));
	host = cd_nsjoin_is_host(fd, (enum cd_join)slot);
	if (host < 0)
		return cd_fail_errno(err, -host, "namespaces", "fstat");
	if (host)
		return cd_fail(err, 0, "namespaces",
			       "the host's own %s namespace (the caller's, "
			       "or pid 1's): joining it is no isolation",
			       type_name(nstype));
	return 0;
}

int cd_nsjoin_enter(const int fds[CD_JOIN_N], struct cd_nsjoin_saved *saved,
		    struct cordon_error *err)
{
	for (int i = 0; i < CD_JOIN_N; i++)
		saved->home[i] = -1;
	for (int i = 0; i < CD_JOIN_N; i++) {
		char path[64];

		if (fds[i] < 0)
			continue;
		/* the thread's own: setns changes the calling thread's namespaces alone */
		snprintf(path, sizeof(path), "/proc/thread-self/ns/%s", slots[i].name);
		saved->home[i] = open(path, O_RDONLY | O_CLOEXEC);
		if (saved->home[i] < 0) {
			int e = errno;

			cd_nsjoin_leave(saved, NULL, NULL);
			return cd_fail_errno(err, e, "namespaces", "open %s", path);
		}
		if (setns(fds[i], slots[i].flag) < 0) {
			int e = errno;

			cd_nsjoin_leave(saved, NULL, NULL);
			return cd_fail_errno(err, e, "namespaces", "join the %s namespace given%s",
					     slots[i].name,
					     e == EPERM ? " (setns needs CAP_SYS_ADMIN "
							  "over the user namespace that owns it)"
							: "");
		}
	}
	return 0;
}

int cd_nsjoin_leave(struct cd_nsjoin_saved *saved, unsigned *ret_stayed, struct cordon_error *err)
{
	unsigned stayed = 0;
	int r = 0;

	for (int i = 0; i < CD_JOIN_N; i++) {
		if (saved->home[i] < 0)
			continue;
		/* EPERM: the caller's own namespace belongs to a user namespace above the one it
		 * runs in (rootless podman's runtime, in podman's user namespace, joining a
		 * network namespace that one owns): no way back; nothing of the supervisor's
		 * after the clone depends on it (no proxy or resolver with a joined network) */
		if (setns(saved->home[i], slots[i].flag) < 0) {
			if (errno == EPERM)
				stayed |= 1u << i;
			else if (r == 0)
				r = cd_fail_errno(err, errno, "namespaces",
						  "come back to the "
						  "caller's %s namespace",
						  slots[i].name);
		}
		cd_closep(&saved->home[i]);
	}
	if (ret_stayed)
		*ret_stayed = stayed;
	return r;
}
