/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* sysinfo.h - why the host refuses what cordon needs, in words a user can act on. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

/* What decides the hint: the sysctls (-1 where the file does not exist), who we are, and
 * AppArmor's view of us. */
struct cd_userns_facts {
	long unprivileged_userns_clone;	/* kernel.unprivileged_userns_clone (Debian's) */
	long max_user_namespaces;	/* user.max_user_namespaces */
	long apparmor_restrict;		/* kernel.apparmor_restrict_unprivileged_userns */
	bool privileged;		/* root: no restriction applies */
	bool under_profile;		/* our AppArmor label is one of cordon's profiles */
	bool profile_installed;		/* CORDON_APPARMOR_PROFILE exists */
	bool exe_attached;		/* we run from the path the profile attaches to */
};

/* The hint for `f` in buf (size bytes, NUL-ended, cut if short), or false when there is none.
 * `profile` is the profile's file, `attach` the program it attaches to. Pure. */
bool cd_sysinfo_userns_advice(const struct cd_userns_facts *f, const char *profile,
			      const char *attach, char *buf, size_t size);

/* When user namespaces are disabled or restricted on this host: what to change, in buf, else
 * false. Reads the sysctls below /proc/sys and /proc/self; call it while the host's /proc is
 * visible. */
bool cd_sysinfo_userns_hint(char *buf, size_t size);
/* The same from inside the sandbox's user namespace (pid 1): only what can refuse there still
 * (AppArmor's restriction strips the namespace's capabilities). */
bool cd_sysinfo_userns_hint_inside(char *buf, size_t size);
