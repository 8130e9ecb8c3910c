/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* net.h - the sandbox's network namespace. Child side. */
#pragma once

#include "cordon.h"

#include <sys/types.h>

/* Bring the loopback interface of the current network namespace up (rtnetlink, libmnl). */
int cd_net_loopback_up(struct cordon_error *err);

/* A new network namespace costs the kernel about as much as the whole filesystem setup, so a
 * helper process makes it (with lo up) while pid 1 builds the mounts, and pid 1 joins it after:
 * two cores do the work of one. */
struct cd_netns_job {
	pid_t pid;
	int sock;
};

/* Fork the helper. Call with CAP_SYS_ADMIN and CAP_NET_ADMIN in the current user namespace. */
int cd_netns_start(struct cd_netns_job *job, struct cordon_error *err);
/* Wait for the helper and setns() into its network namespace. */
int cd_netns_join(struct cd_netns_job *job, struct cordon_error *err);
