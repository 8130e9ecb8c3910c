/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* procs.h - a process of a sandbox as the server keeps it: its pump (a thread reading its
 * output and its end into a bounded log of events) and the streams that follow the log. */
#pragma once

#include <json-c/json.h>
#include <pthread.h>

#include "registry.h"

#define SRV_PROC_RING_EVENTS  2048
#define SRV_PROC_RING_BYTES   (4u << 20)
#define SRV_PROC_MAX_SUBS     8
#define SRV_SANDBOX_MAX_PROCS 256
/* host terminals (pty.create()) a sandbox holds at once: each is one of the host's
 * kernel.pty.max, shared with every login and container of the host */
#define SRV_SANDBOX_MAX_PTYS 16
/* The logs of all of a sandbox's processes together, past which a log that holds an event
 * takes no more until its stream reads: the server holds at most this, plus one event (48 KiB)
 * a process, for a tenant's output, whatever it runs. */
#define SRV_SANDBOX_LOG_BYTES (16u << 20)
/* a stream that reads nothing for this long stops holding the process back (and the server's
 * memory): it loses events until it reads again */
#define SRV_PROC_STALL_NS (30 * NSEC_PER_SEC)
/* input a process does not take within this is refused (SendInput, the terminal's ^D) */
#define SRV_PROC_INPUT_STALL_NS (10 * NSEC_PER_SEC)
/* Connect's cursor: from the events to come (set under the log's lock, so none is missed) */
#define SRV_PROC_TAIL UINT64_MAX

struct srv_proc {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	unsigned refs;
	struct srv_sandbox *sb;	  /* the pump's reference, until it ends */
	struct cordon_process *p; /* the pump's; NULL once ended */
	uint32_t pid;
	char *tag;
	json_object *config;		 /* ProcessConfig, for List */
	int out_fd, err_fd;		 /* the pump's */
	int in_fd;			 /* stdin's write end or -1; in_lock */
	int pty_fd;			 /* a terminal's master side (O_NONBLOCK) or -1; in_lock */
	bool pty;			 /* it has (had) a terminal */
	pthread_mutex_t in_lock;	 /* in_fd, pty_fd: held briefly, never across a wait */
	pthread_mutex_t write_lock;	 /* one input at a time, in order (a bounded wait) */
	char *ring[SRV_PROC_RING_EVENTS]; /* ProcessEvent JSON texts */
	uint64_t first, next;		 /* ring holds events first..next-1 */
	size_t bytes;
	uint64_t *acct; /* the sandbox's log_bytes, while the pump runs; NULL after */
	bool followed;	/* a stream subscribed once: events every stream has read go */
	bool ended;
	uint64_t *subs[SRV_PROC_MAX_SUBS];   /* the streams' cursors: the log waits for them */
	uint64_t read_ns[SRV_PROC_MAX_SUBS]; /* when each last read (CLOCK_MONOTONIC) */
	struct srv_proc *next_in_sb;	     /* sb->procs, sb->lock */
	uint64_t kill_at_ns;		  /* CLOCK_MONOTONIC; 0: none; set before the pump */
};

struct srv_proc_start {
	const char *const *argv;
	const char *const *env;
	const char *cwd;
	bool want_stdin;
	int pty_rows, pty_cols; /* 0: no terminal */
	const char *tag;
	json_object *config; /* taken */
	uint64_t kill_at_ns; /* the request's deadline (the SDK's timeoutMs): the process group is
			      * killed then, whoever follows it; 0: none */
	uint64_t *cursor;    /* the starting stream's, subscribed before the pump runs, so that it
			      * reads the start event first whatever the log's budget (a stream
			      * subscribed after could find it dropped for the process's output);
			      * NULL: none */
};

/* Start it and its pump; *ret: a reference. */
int srv_proc_start(struct srv_sandbox *sb, struct srv_proc_start *ps, struct srv_proc **ret,
		   struct cordon_error *err);
/* A running process by pid (tag NULL) or tag; a reference, or NULL. */
struct srv_proc *srv_proc_find(struct srv_sandbox *sb, uint32_t pid, const char *tag);
void srv_proc_unref(struct srv_proc *p);
/* Follow p with *cursor (the stream's own; SRV_PROC_TAIL: from the next event): while the log
 * is full, the pump waits for the slowest stream (unless it read nothing for SRV_PROC_STALL_NS),
 * so that the process, not the stream, is held back. Once a stream followed it, the log keeps only
 * events a stream has still to read. -EBUSY: SRV_PROC_MAX_SUBS streams already. */
int srv_proc_subscribe(struct srv_proc *p, uint64_t *cursor);
void srv_proc_unsubscribe(struct srv_proc *p, uint64_t *cursor);
/* The event at *cursor: 1 and *ret (a copy) and *cursor advanced (events the log dropped
 * before this stream read them come as one marker: a stderr or pty data event saying so);
 * 0: none within timeout_ms; -EPIPE: it ended and every event was read. */
int srv_proc_next(struct srv_proc *p, uint64_t *cursor, char **ret, int timeout_ms);
/* Input for the process: a bounded wait (SRV_PROC_INPUT_STALL_NS, or dying_fd readable). */
int srv_proc_write_stdin(struct srv_proc *p, const void *data, size_t len, bool pty, int dying_fd,
			 struct cordon_error *err);
int srv_proc_close_stdin(struct srv_proc *p, int dying_fd, struct cordon_error *err);
int srv_proc_signal(struct srv_proc *p, int sig, struct cordon_error *err);
int srv_proc_resize(struct srv_proc *p, int rows, int cols, struct cordon_error *err);
/* The live processes' ProcessInfo list. */
json_object *srv_procs_list(struct srv_sandbox *sb);
/* The sandbox is dying (srv_reg_on_death): its pumps have ended, the list's references go. */
void srv_procs_on_death(struct srv_sandbox *sb, void *ctx);
/* Write all of buf to fd (O_NONBLOCK), a descriptor a sandbox reads: 0; -ETIMEDOUT when it
 * takes nothing for stall_ns; -ECANCELED once dying_fd is readable; -ECONNRESET when the
 * client of conn_fd went away (-1: none); else -errno. Never blocks for longer. */
int srv_write_bounded(int fd, const void *buf, size_t len, int dying_fd, int conn_fd,
		      uint64_t stall_ns);
