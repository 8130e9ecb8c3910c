/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * sync.h - the supervisor/pid 1 protocol: one message a frame (frame.h) over a SOCK_SEQPACKET
 * socketpair. A message is fixed-size, nothing to parse on the receiving side; LISTENER alone
 * adds a path. The numbered steps are marked "sync N" on both sides (sandbox.c and command.c;
 * child.c, then init.c once pid 1 is cordon-init):
 *
 *  supervisor                                   pid 1
 *  1 clone3(NEWUSER|NEWNS|NEWPID|...)     ->    1 PDEATHSIG; lo up; wait for GO (EOF: _exit)
 *    (the programs compiled, the spec for
 *    cordon-init in a memfd, before)
 *  2 id maps; (root) each --ro-bind tree: ->    2 (kept for the mount plan's entry n)
 *    TREE n + the tree's fd
 *    GO [+ the checked workdir's tree]    ->      cgroup ns, the sandbox's ids, mounts:
 *    (--cow) keeps the upper, seeds it    <-      LAYER + the layer's upper (mount.c)
 *    LAYER 0: it is ready                 ->      (waits for it, then the overlay)
 *    (--allow-net) accepts on it          <-      PROXY + the listening socket's fd
 *                                                 hostname, caps; exec cordon-init (init.c),
 *                                                 which goes on:
 *    START (the audit's snapshot taken)   ->      (waits for it before the command)
 *                                               3 vfork the command; before its exec it sends
 *    keeps them for the report            <-      RLIMITS: every rlimit it got
 *    (audit) reads the exec events        <-      LISTENER + the filter's listener, path: the
 *                                                 file it execs (pid 1 may be unreadable)
 *  3 RUNNING or ERROR                     <-      RUNNING pid once exec succeeded, else ERROR
 *  4 SIGNAL n, KILL_ALL n                 ->    4 kill(command, n), kill(-1, n)
 *    CONT lent (job control)              ->      the terminal back if lent; SIGCONT
 *    follows it (job control)             <-      STOPPED n: the command was stopped
 *    logs it (the audit's limit event)    <-      TIMEOUT 1: SIGTERM to all; 2: SIGKILL
 *    EXIT status, usage                   <-      the command ended: pid 1 has killed and
 *                                                 reaped every other process, then exits
 *  ERROR can come instead at any step of pid 1's: the supervisor kills it and reports.
 */
#pragma once

#include <limits.h>
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
	CD_MSG_LISTENER, /* fd: the seccomp notification listener (the audit trail); path */
	CD_MSG_PROXY,    /* fd: the socket the egress proxy listens on, inside (--allow-net) */
	CD_MSG_START,    /* after GO: the command may start (the audit's snapshot is taken) */
	CD_MSG_STOPPED,  /* value: the signal that stopped the command (job control) */
	CD_MSG_CONT,     /* value: 1 when the command gets the terminal back; SIGCONT to it */
	CD_MSG_TIMEOUT,  /* value: 1 SIGTERM sent to every process, 2 SIGKILL */
	CD_MSG_TREE,     /* before GO: fd a --ro-bind source cloned by root; value: its plan index */
	CD_MSG_RLIMITS,  /* rlim: every rlimit of the command's process, as it will exec */
	CD_MSG_LAYER,    /* sync 2, --cow: fd the layer's upper; back: value 0 once it is ready */
	CD_MSG_DNS,      /* fd: the sandbox's resolver's socket, inside (own network); value 0:
			  * UDP, 1: TCP, listening */
};

/* CPU and memory of every process of the sandbox, pid 1 included */
struct cd_usage {
	uint64_t user_us;
	uint64_t system_us;
	uint64_t max_rss_kb;
};

/* type is the frame's; value to err go whole, path as far as its NUL (frame.h's payload) */
struct cd_msg {
	uint32_t type;
	int32_t value;
	struct cd_usage usage; /* EXIT */
	uint64_t rlim[RLIM_NLIMITS][2]; /* RLIMITS: soft and hard of each RLIMIT_* */
	struct cordon_error err; /* ERROR */
	char path[PATH_MAX]; /* LISTENER: the file the command is executed from */
};

/* 0 or -errno (frame.h). fd: passed along when >= 0. */
int cd_msg_send(int sock, uint32_t type, int32_t value, const struct cordon_error *err, int fd);
int cd_msg_send_msg(int sock, const struct cd_msg *m, int fd);
/* 1: a message, and *ret_fd its descriptor or -1 (ret_fd NULL: a message with one is refused);
 * 0: EOF; -errno (frame.h: a malformed message is an error, nothing of it left open). */
int cd_msg_recv(int sock, struct cd_msg *m, int *ret_fd);
