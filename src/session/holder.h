/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * holder.h - a session's supervisor: the process cordon_session_create() forks, which runs the
 * sandbox with cordon's agent as its command (run.h) until the caller ends the session or goes
 * away. It talks to the caller over the holder socket, one message a frame (frame.h), no
 * descriptors:
 *
 *   caller (session.c)                       supervisor (holder.c)
 *                                      <-    READY id: the agent runs
 *   DESTROY                            ->    kills pid 1 (the caller's end closing does too)
 *   CHECKPOINT                         ->    saves the changes so far as a layer
 *                                      <-    CHECKPOINT ret, res.layer_id, err
 *   FREEZE ret: 1 freeze, 0 thaw       ->    cgroup.freeze, until cgroup.events says so
 *                                      <-    FREEZE ret, err
 *                                      <-    ENDED ret, res, err: the session is over (once)
 *   USAGE                              ->    reads the sandbox's cgroup
 *                                      <-    USAGE now (now.valid false: it has none)
 */
#pragma once

#include "cgroup.h"
#include "cordon.h"

struct cordon_config;

enum cd_holder_type {
	CD_HOLDER_READY = 1, /* the agent runs: id */
	CD_HOLDER_ENDED,     /* the session is over: ret, res, err */
	CD_HOLDER_DESTROY,   /* caller -> supervisor: end it now */
	CD_HOLDER_CHECKPOINT, /* caller -> supervisor: save the changes so far as a layer;
			       * back: ret, res.layer_id, err */
	CD_HOLDER_FREEZE,     /* caller -> supervisor: ret 1 freeze, 0 thaw; back: ret, err */
	CD_HOLDER_USAGE,      /* caller -> supervisor: the cgroup's figures now; back: now */
};

/* A freeze or thaw the kernel has not completed in this long fails (and a freeze is undone). */
#define CD_HOLDER_FREEZE_NS (5ull * NSEC_PER_SEC)

/* type is the frame's; the rest its payload, whole (both ends are one build) */
struct cd_holder_msg {
	uint32_t type;
	int32_t ret;
	struct cordon_result res;
	struct cordon_error err;
	struct cd_cgroup_now now; /* USAGE's answer */
};

/* Both ends. 0 or -errno; flags: MSG_DONTWAIT, or 0. */
int cd_holder_send(int fd, const struct cd_holder_msg *m, int flags);
/* 1: a message; 0: the other end closed; -errno (frame.h: a malformed one is an error). */
int cd_holder_recv(int fd, struct cd_holder_msg *m, int flags);

/* In the forked supervisor: fd 0 is the agent's end of the session socket; holder_fd the
 * caller's socket; exec_fd the agent's binary. Never returns. */
_Noreturn void cd_holder_main(const struct cordon_config *c, unsigned flags, int holder_fd,
			      int exec_fd);
