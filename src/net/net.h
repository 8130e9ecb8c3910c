/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* net.h - the sandbox's network namespace. Child side. */
#pragma once

#include "cordon.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

/* Bring the loopback interface of the current network namespace up (rtnetlink, libmnl). */
int cd_net_loopback_up(struct cordon_error *err);

/* A new network namespace costs the kernel about as much as the whole filesystem setup, so a
 * thread of pid 1 makes it (with lo up) while pid 1 builds the mounts, and pid 1 joins it after:
 * two cores do the work of one. */
struct cd_netns_job {
	pthread_t thread;
	bool started;
	uint16_t proxy_port; /* non-zero: also listen on 127.0.0.1:proxy_port (--allow-net) */
	int fd;              /* the new namespace, once the thread is done */
	int proxy_fd;        /* the listening socket for the egress proxy, or -1 */
	struct cordon_error err;
};

/* Start the thread (job->proxy_port set by the caller). Needs CAP_SYS_ADMIN and CAP_NET_ADMIN in the current user namespace. */
int cd_netns_start(struct cd_netns_job *job, struct cordon_error *err);
/* Wait for the thread and setns() into its network namespace. */
int cd_netns_join(struct cd_netns_job *job, struct cordon_error *err);
/* Wait for the thread if it still runs, and close what it left: the job must outlive the
 * thread, whatever step of pid 1's setup failed (the cleanup of the job's owner). */
void cd_netns_done(struct cd_netns_job *job);
