/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * proto.h - the session protocol: the caller's process (session.c) and cordon's agent inside the
 * sandbox (agent.c), over SOCK_SEQPACKET sockets: one message a frame (frame.h): a fixed header
 * and at most CD_SP_MAX bytes of data, at most CD_SP_MAXFD descriptors passed along.
 *
 * One socket is the session's: on it the caller only sends CHANNEL, a new socketpair's end.
 * Every operation has a channel of its own, so that threads need no demultiplexing:
 *
 *   caller                                      agent
 *   CHANNEL + fd            (session socket) ->  polls the channel
 *   EXEC + fds 0-2, argv, env, cwd         ->  fork, exec
 *                                          <-  STARTED pid, or ERROR errno + text
 *   SIGNAL sig (group: flags 1)            ->  kill
 *                                          <-  EXITED wait status (then the channel closes)
 *   STAT/LIST/OPEN/WRITE/MKDIR/REMOVE/RENAME ->  a worker process of the agent does it
 *                                          <-  ENTRY..., then OK (+ fd for OPEN) or ERROR
 *   WATCH path                             ->  a worker watches it (inotify)
 *                                          <-  OK, then EVENTS... (until the channel closes)
 *   CONNECT port                           ->  socket + non-blocking connect to 127.0.0.1
 *                                          <-  OK + the socket, or ERROR
 *   FILTER flags, a seccomp program        ->  kept for every later EXEC (once, first)
 *                                          <-  OK, or ERROR
 *
 * Used by both sides; the agent links this file and frame.c alone (no allocation, no other
 * module). What the agent sends is untrusted: cd_sp_recv() (frame.c) checks sizes, counts
 * descriptors and closes any it did not ask for.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define CD_SP_MAX   (60u * 1024) /* data bytes of one message */
#define CD_SP_MAXFD 3

enum cd_sp_type {
	CD_SP_CHANNEL = 1, /* fd: a new channel (session socket only) */
	CD_SP_EXEC,        /* flags CD_SP_EXEC_*; arg: argc | envc << 32; data: argv, env, cwd:
			    * NUL-terminated strings (cwd "" for none); fds: those in flags */
	CD_SP_STARTED,     /* value: the pid inside */
	CD_SP_EXITED,      /* value: the wait status */
	CD_SP_SIGNAL,      /* value: signal; flags 1: to the process group */
	CD_SP_ERROR,       /* value: errno; data: what failed (text) */
	CD_SP_OK,          /* value: MKDIR 1 when made; arg: WRITE bytes; fd: OPEN */
	CD_SP_STAT,        /* data: path */
	CD_SP_LIST,        /* value: depth; arg: most entries (+1 is sent: too many); data: path */
	CD_SP_ENTRY,       /* struct cd_sp_entry, then path and link target (NUL-terminated) */
	CD_SP_OPEN,        /* data: path */
	CD_SP_WRITE,       /* value: mode; data: path; fd: the pipe to read */
	CD_SP_MKDIR,       /* data: path */
	CD_SP_REMOVE,      /* data: path */
	CD_SP_RENAME,      /* data: from, to */
	CD_SP_WATCH,       /* value: CD_SP_WATCH_*; data: path. OK, then EVENTS until the caller
			    * closes the channel (agent_watch.c) */
	CD_SP_EVENTS,      /* flags CD_SP_EVENTS_OVERFLOW (the last message); data: records, each
			    * a type byte (enum cordon_watch_type) and a NUL-terminated name */
	CD_SP_USAGE,       /* value: window (ms); data: "/proc". OK with struct cd_sp_usage
			    * (agent_usage.c) */
	CD_SP_CONNECT,     /* value: a TCP port of the sandbox's loopback (agent_ports.c) -> OK +
			    * the connected socket (value 0), or one still connecting (value
			    * EINPROGRESS), or ERROR (ECONNREFUSED: nothing listens) */
	CD_SP_FILTER,      /* flags: seccomp(2)'s; data: sock_filter instructions, installed by
			    * every EXEC's process from then on, just before its exec. Once, before
			    * any EXEC (cordon_session_create) -> OK, or ERROR */
};

/* USAGE's answer: the sandbox's processes, as /proc inside says */
struct cd_sp_usage {
	uint64_t cpu_ns;    /* their CPU time within the window */
	uint64_t window_ns;
	uint64_t rss_bytes; /* resident memory, summed */
	uint32_t procs;
	uint32_t pad;
};

#define CD_SP_WATCH_RECURSIVE   0x1u
#define CD_SP_EVENTS_OVERFLOW   0x1u

/* EXEC's flags: which of fds 0-2 come with it (in that order), and the terminal */
#define CD_SP_EXEC_FD0 0x1u
#define CD_SP_EXEC_FD1 0x2u
#define CD_SP_EXEC_FD2 0x4u
#define CD_SP_EXEC_TTY 0x8u

/* type and len are the frame's; value, flags and arg its payload's fixed part, data the rest */
struct cd_sp_hdr {
	uint32_t type;
	uint32_t len; /* bytes of data after the header */
	int32_t value;
	uint32_t flags;
	uint64_t arg;
};

struct cd_sp_entry {
	uint32_t type; /* enum cordon_file_type */
	uint32_t mode;
	uint32_t uid, gid;
	uint64_t size;
	int64_t mtime_ns;
};

struct cd_sp_msg {
	struct cd_sp_hdr h;
	char data[CD_SP_MAX + 1]; /* one NUL past the data, always */
	int fd[CD_SP_MAXFD];
	unsigned n_fd;
};

/* 0 or -errno (-E2BIG: more than CD_SP_MAX bytes or CD_SP_MAXFD descriptors). fds: n of them
 * passed along. */
int cd_sp_send(int sock, const struct cd_sp_hdr *h, const void *data, const int *fds,
	       unsigned n);
/* A header and data in one go (len from data's size). */
int cd_sp_send_simple(int sock, uint32_t type, int32_t value, uint64_t arg, const void *data,
		      size_t len, int fd);
/* 1: a message in *m (descriptors in m->fd, close-on-exec, at most max_fd); 0: EOF; -errno
 * (frame.h: -EBADMSG, -EMSGSIZE, -EPROTO for a malformed message, nothing of it left open). */
int cd_sp_recv(int sock, struct cd_sp_msg *m, unsigned max_fd);
/* Close the descriptors a message brought. */
void cd_sp_msg_close(struct cd_sp_msg *m);
/* The n-th NUL-terminated string of data after *pos: the next one, or NULL when data ends
 * without one (a malformed message). */
const char *cd_sp_next(const struct cd_sp_msg *m, size_t *pos);
