/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * caps.c - drop privileges. Runs in the child (pid 1) after the mounts, before the command is
 * forked, so that nothing the command can reach holds a capability, even in its own namespace.
 *
 * The capability sets are emptied with libcap-ng; the bounding set by prctl (drop_bounding()).
 * Order matters: the securebits and the bounding set need CAP_SETPCAP, the id change needs
 * CAP_SETUID/CAP_SETGID, so those go first, and the capability sets are emptied last.
 */
#include <cap-ng.h>
#include <grp.h>
#include <linux/capability.h>
#include <linux/securebits.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>

#include "caps.h"
#include "util.h"

/* libcap-ng's capng_apply() codes, in words */
static const char *capng_reason(int rc)
{
	switch (rc) {
	case -5:
		return "capset failed";
	case -6:
	case -7:
	case -8:
		return "clearing the ambient set failed";
	case -9:
		return "reading the process's capabilities failed";
	default:
		return "libcap-ng failed";
	}
}

static int apply(capng_select_t what, const char *which, struct cordon_error *err)
{
	int rc;

	capng_clear(what);
	rc = capng_apply(what);
	if (rc < 0)
		return cd_fail(err, errno ? errno : EPERM, "caps", "empty the %s: %s (%d)", which,
			       capng_reason(rc), rc);
	return 0;
}

/* Every capability out of the bounding set, up to the running kernel's last (which may be newer
 * than our headers: the first one it does not know ends the loop). By prctl directly: libcap-ng's
 * capng_apply() reads /proc/self/status three times around the same calls. */
static int drop_bounding(struct cordon_error *err)
{
	for (int cap = 0; cap < 64; cap++)
		if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) < 0) {
			if (errno == EINVAL && cap > 0)
				return 0;
			return cd_fail_errno(err, errno, "caps", "drop capability %d from the bounding "
								 "set", cap);
		}
	return 0;
}

/* Everything must read back empty; otherwise the run stops. */
static int verify(struct cordon_error *err)
{
	struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3];

	/* straight from the kernel (capget), not /proc */
	if (syscall(SYS_capget, &hdr, data) < 0)
		return cd_fail_errno(err, errno, "caps", "read back the capabilities");
	for (size_t i = 0; i < CD_ELEMENTSOF(data); i++)
		if (data[i].effective || data[i].permitted || data[i].inheritable)
			return cd_fail(err, EPERM, "caps", "capabilities remain after dropping them");
	/* up to the running kernel's last capability, which may be newer than our headers. The
	 * ambient set needs no check of its own: the kernel keeps it within permitted and
	 * inheritable, both read back empty above */
	for (int cap = 0; cap < 64; cap++) {
		int in_bounding = prctl(PR_CAPBSET_READ, cap, 0, 0, 0);

		if (in_bounding < 0)
			break;
		if (in_bounding == 1)
			return cd_fail(err, EPERM, "caps", "capability %d remains in the bounding set",
				       cap);
	}
	if (prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0) != 1)
		return cd_fail(err, EPERM, "caps", "no_new_privs did not stick");
	return 0;
}

int cd_caps_drop(uid_t uid, gid_t gid, bool clear_groups, struct cordon_error *err)
{
	/* uid 0 inside gets no capabilities back at exec, ambient ones can never be raised */
	const unsigned long bits = SECBIT_NOROOT | SECBIT_NOROOT_LOCKED |
				   SECBIT_NO_CAP_AMBIENT_RAISE | SECBIT_NO_CAP_AMBIENT_RAISE_LOCKED |
				   SECBIT_KEEP_CAPS_LOCKED;
	int r;

	if (prctl(PR_SET_SECUREBITS, bits, 0, 0, 0) < 0)
		return cd_fail_errno(err, errno, "caps", "set securebits");
	if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0)
		return cd_fail_errno(err, errno, "caps", "clear the ambient set");
	r = drop_bounding(err);
	if (r < 0)
		return r;
	/* a root caller's child still carries root's groups (gid 0 among them) */
	if (clear_groups && setgroups(0, NULL) < 0)
		return cd_fail_errno(err, errno, "caps", "clear supplementary groups");
	if (setresgid(gid, gid, gid) < 0)
		return cd_fail_errno(err, errno, "caps", "setresgid %u", gid);
	if (setresuid(uid, uid, uid) < 0)
		return cd_fail_errno(err, errno, "caps", "setresuid %u", uid);
	r = apply(CAPNG_SELECT_CAPS, "capability sets", err);
	if (r < 0)
		return r;
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		return cd_fail_errno(err, errno, "caps", "set no_new_privs");
	return verify(err);
}
