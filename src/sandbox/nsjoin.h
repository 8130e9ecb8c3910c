/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* nsjoin.h - namespaces made by someone else (an engine's pod), joined by descriptor: network,
 * ipc, uts. The check runs in the caller (cordon_config_join_ns), the join in the supervisor. */
#pragma once

#include <stdbool.h>

#include "config.h" /* enum cd_join */

/* CLONE_NEWNET, CLONE_NEWIPC, CLONE_NEWUTS: its slot; any other: -1. */
int cd_nsjoin_slot(int nstype);
/* "net", "ipc", "uts" */
const char *cd_nsjoin_name(enum cd_join slot);
/* The CLONE_NEW* flag of a slot. */
int cd_nsjoin_flag(enum cd_join slot);

/* fd is a namespace file (nsfs) of type nstype, open for setns (not O_PATH), and neither the
 * caller's own namespace of that type nor pid 1's (the host's, where /proc/1 can be read).
 * 0: it is; <0: it is not, or could not be checked (*err says which). */
int cd_nsjoin_check(int fd, int nstype, struct cordon_error *err);
/* fd is the same namespace as /proc/self/ns/<slot's name> or /proc/1/ns/<...> (1), or not (0). */
int cd_nsjoin_is_host(int fd, enum cd_join slot);

/* Around the clone: the calling thread enters the joined namespaces (fds[slot] >= 0), and comes
 * back to its own (saved before) after. The clone between omits their CLONE_NEW* flags. Enter
 * before the thread changes its ids (cd_userns_owner_enter): setns wants CAP_SYS_ADMIN over the
 * namespace's owner. leave comes back where it may: not where the thread's own namespace
 * belongs to a user namespace above the one it runs in (setns EPERM: rootless podman's runtime):
 * then it stays in the joined one (a bit by slot in *ret_stayed); any other failure is an error
 * (the run should end). */
struct cd_nsjoin_saved {
	int home[CD_JOIN_N];
};
int cd_nsjoin_enter(const int fds[CD_JOIN_N], struct cd_nsjoin_saved *saved,
		    struct cordon_error *err);
int cd_nsjoin_leave(struct cd_nsjoin_saved *saved, unsigned *ret_stayed, struct cordon_error *err);
