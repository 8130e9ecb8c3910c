/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * sync.h - the supervisor/child protocol: fixed-size datagrams over a SOCK_SEQPACKET socketpair,
 * nothing to parse on the receiving side. The numbered steps are marked "sync N" on both sides
 * (sandbox.c and command.c, child.c):
 *
 *  supervisor                                   child (pid 1)
 *  1 clone3(NEWUSER|NEWNS|NEWPID|...)     ->    1 PDEATHSIG; wait for GO (EOF: _exit)
 *    (the programs compiled, the spec for
 *    cordon-init in a memfd, before)
 *  2 id maps; GO [+ id-mapped workdir fd] ->    2 mounts, hostname, lo, drop privileges
 *    (--allow-net) accept on it            <-      PROXY + the listening socket's fd
 *                                                  exec cordon-init (init.c), which goes on:
 *    START (the audit's snapshot taken)    ->      (waits for it before the command)
 *                                               3 fork the command; it execs
 *    keeps them for the report            <-      RLIMITS: what the command got, before exec
 *  3 RUNNING or ERROR                     <-      RUNNING once exec succeeded, else ERROR
 *  4 SIGNAL n, KILL_ALL n                 ->    4 kill(command, n), kill(-1, n)
 *    EXIT status, usage                   <-      the command ended: pid 1 has killed and
 *                                                 reaped every other process, then exits
 */
#pragma once

#include <stdint.h>
#include <sys/resource.h>

#include "cordon.h"

enum cd_msg_type {
	CD_MSG_GO = 1,
	CD_MSG_ERROR,    /* err */
	CD_MSG_RUNNING,  /* value: the command's pid inside */
	CD_MSG_EXIT,     /* value: the command's wait status */
	CD_MSG_SIGNAL,   /* value: a signal for the command */
	CD_MSG_KILL_ALL, /* value: a signal for every process in the sandbox */
	CD_MSG_LISTENER, /* fd: the seccomp notification listener (the audit trail) */
	CD_MSG_PROXY,    /* fd: the socket the egress proxy listens on, inside (--allow-net) */
	CD_MSG_START,    /* after GO: the command may start (the audit's snapshot is taken) */
	CD_MSG_STOPPED,  /* value: the signal that stopped the command (job control) */
	CD_MSG_CONT,     /* value: 1 when the command gets the terminal back; SIGCONT to it */
	CD_MSG_TIMEOUT,  /* value: 1 SIGTERM sent to every process, 2 SIGKILL */
	CD_MSG_TREE,     /* before GO: fd a --ro-bind source cloned by root; value: its plan index */
	CD_MSG_RLIMITS,  /* rlim: every rlimit of the command's process, as it will exec */
	CD_MSG_LAYER,    /* sync 2, --cow: fd the layer's upper; back: value 0 once it is ready */
};

/* CPU and memory of every process of the sandbox, pid 1 included */
struct cd_usage {
	uint64_t user_us;
	uint64_t system_us;
	uint64_t max_rss_kb;
};

struct cd_msg {
	uint32_t type;
	int32_t value;
	struct cd_usage usage; /* EXIT */
	uint64_t rlim[RLIM_NLIMITS][2]; /* RLIMITS: soft and hard of each RLIMIT_* */
	struct cordon_error err;
};

/* 0 or -errno. fd: passed along (SCM_RIGHTS) when >= 0. */
int cd_msg_send(int sock, uint32_t type, int32_t value, const struct cordon_error *err, int fd);
int cd_msg_send_msg(int sock, const struct cd_msg *m, int fd);
/* 1: a message (and *ret_fd a passed fd or -1, when ret_fd is given); 0: EOF; -errno. */
int cd_msg_recv(int sock, struct cd_msg *m, int *ret_fd);
