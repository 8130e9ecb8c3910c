/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * command.h - a command run in a sandbox, seen from the supervisor: its environment and
 * directory, its standard streams (--capture), the caller's terminal lent to it, the signals
 * passed on to it, its deadline, and its outcome.
 *
 * Lifecycle: cd_command_open() and cd_command_prepare() between the sandbox's steps (the
 * directory depends on its workdir, the environment on its identity and mounts),
 * cd_command_start() (starts the sandbox with it as pid 1's command),
 * cd_command_watch() until the sandbox ends, cd_command_finish() (the outcome into the result),
 * and cd_command_done() always.
 */
#pragma once

#include <signal.h>

#include "capture.h"
#include "rlimits.h"
#include "sandbox.h"
#include "terminal.h"

/* A session's command, cordon's agent (src/session), differs from a run's in these. */
struct cd_command_session {
	int exec_fd;   /* the agent's binary: executed from this descriptor, not looked up */
	int null_fd;   /* /dev/null: the agent's (and pid 1's) stdout and stderr */
	int holder_fd; /* the session's caller: readable (a message, or closed) ends the session */
	void (*on_running)(void *data);              /* the agent runs: the session is ready */
	void (*on_holder)(void *data, struct cd_sandbox *sb); /* holder_fd is readable */
	void *data;
};

/* The signals it passes on. */
struct cd_command_signals {
	sigset_t old_mask;
	bool mask_set;
	int sigfd;
};

/* Its deadline: --timeout, then SIGKILL --kill-after later. */
struct cd_command_deadline {
	int timerfd;
	uint64_t t_start;           /* cordon_run() began: the deadline counts setup too */
	uint64_t t_running;
	bool timed_out;
	bool killed;                /* SIGKILL sent after the grace period */
	bool backstop;              /* the timer now waits for pid 1 to have ended the sandbox */
};

/* How it went. */
struct cd_command_status {
	bool running;               /* sync 3 passed */
	bool failed;                /* its start failed (the sandbox's own failures: sb->failed) */
	bool got_exit;
	int exit_status;            /* the command's wait status, from EXIT */
	struct cd_usage usage;      /* from EXIT: every process of the sandbox */
	struct cd_rlimits_got rlimits_got; /* what the command's process got (RLIMITS) */
	bool holder_done;           /* session: holder_fd was handled, no more polling it */
};

struct cd_command {
	const struct cd_command_opts *o; /* the config's slices it reads */
	const struct cd_limits_opts *lim;
	const struct cd_log *log;
	const struct cd_command_session *session; /* NULL: a run's command */
	struct cordon_result *res;
	struct cd_sandbox *sb;      /* the sandbox it runs in, once started (borrowed) */
	char *const *argv;          /* borrowed from the config */
	char **envp;
	char **path_dropped;        /* PATH's directories the sandbox does not have (env.c) */
	char *chdir;
	struct cd_capture capture;
	struct cd_terminal term;    /* the caller's controlling terminal: lent to the command */
	struct cd_command_signals signals;
	struct cd_command_deadline deadline;
	struct cd_command_status status;
};

#define CD_COMMAND_INIT(cfg, r, t0)                                                         \
	{ .o = &(cfg)->command, .lim = &(cfg)->limits, .log = &(cfg)->log, .res = (r),         \
	  .argv = (cfg)->command.argv, .term = { .fd = -1 }, .signals.sigfd = -1,              \
	  .deadline.timerfd = -1, .deadline.t_start = (t0) }

/* Decide the directory and create the capture files, once the sandbox has its workdir and
 * outputs (cd_sandbox_open); nothing runs yet. */
int cd_command_open(struct cd_command *cmd, const struct cd_sandbox *sb, const char *capture_dir,
		    struct cordon_error *err);
/* Build the environment, once the sandbox has its identity and mounts (cd_sandbox_prepare):
 * net and hostname say the proxy's variables. */
int cd_command_prepare(struct cd_command *cmd, const struct cd_sandbox *sb,
		       const struct cd_net_opts *net, const char *hostname,
		       struct cordon_error *err);
/* Block the signals passed on, borrow the terminal, arm the deadline, start the sandbox with
 * this command. */
int cd_command_start(struct cd_command *cmd, struct cd_sandbox *sb, struct cordon_error *err);
/* sync 3 and 4: serve the sandbox and the command until pid 1 is gone. */
void cd_command_watch(struct cd_command *cmd, struct cd_sandbox *sb);
/* The terminal as it was, the outcome, times, usage and capture figures into the result. */
void cd_command_finish(struct cd_command *cmd, const struct cd_sandbox *sb);
void cd_command_done(struct cd_command *cmd);
