/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * holder_int.h - the holder's state, shared by its loop (holder.c) and its requests
 * (holder_req.c). Runs in the holder.
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "runtime.h"

#define OCI_MAX_CLIENTS 64

/* A peer on the control socket: a request to answer, or exec's proxy (proc: its process) */
struct oci_client {
	int fd;
	struct cordon_process *proc;
};

struct holder {
	struct oci_holder_args *a;
	struct cordon_session *s;
	struct cordon_process *init; /* the container's process, once started */
	enum oci_status status;
	struct oci_state st; /* what state.json says */
	int stdio[3];	     /* the engine's fds 0-2, until start */
	int lfd;	     /* the control socket */
	int sigfd;
	int end_status; /* >= 0: end now, as this wait status says */
	bool hooks_begun; /* create's hooks ran (some): a failure then runs poststop */
	struct oci_client clients[OCI_MAX_CLIENTS];
	size_t n_clients;
};

/* The state JSON as the hooks get it: h's, with status (pid 0 when stopped); malloc'd. */
char *oci_holder_state_json(struct holder *h, enum oci_status status);
int oci_holder_start(struct holder *h, struct cordon_error *err);
int oci_holder_kill(struct holder *h, int sig, bool all, struct cordon_error *err);
int oci_holder_freeze(struct holder *h, bool frozen, struct cordon_error *err);
int oci_holder_reply_error(int fd, const struct cordon_error *err);
int oci_holder_reply_ok(int fd, const void *p, size_t len);
/* Read and answer client i's request: 1 keep the client (an exec), 0 or -errno close it. */
int oci_holder_request(struct holder *h, size_t i);
/* A pidfd of the container's pid 1 (cordon-init), its host pid in *ret_pid; or -errno. The
 * pid is checked to name that process after the pidfd is taken: not one that reused it. */
int oci_holder_pid1(struct holder *h, pid_t *ret_pid);
/* The host pids of the container's processes (those started in it and their children). */
int oci_holder_pids(struct holder *h, int32_t *ret, size_t max, size_t *ret_n);
