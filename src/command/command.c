/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * command.c - a command run in a sandbox, from the supervisor's side. Runs in the caller's
 * process: signals are passed on, the terminal is lent and taken back as a shell does with a
 * job, the deadline is pid 1's to enforce with a backstop here, and the outcome is read from
 * what pid 1 reports (sync.h: RUNNING, EXIT, STOPPED, TIMEOUT).
 */
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/timerfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include "command.h"
#include "env.h"
#include "events.h"
#include "rlimits.h"
#include "timing.h"

/* Signals cordon passes on to the command. */
static const int forwarded[] = { SIGHUP, SIGINT, SIGQUIT, SIGTERM, SIGUSR1, SIGUSR2, SIGWINCH };

/* --- preparation --- */

/* What --capture keeps per stream: CD_CAPTURE_MAX, or less if the file size limit says so */
static uint64_t capture_max(const struct cd_limits_opts *lim)
{
	const struct cd_rlimit *f = &lim->rlimits[RLIMIT_FSIZE];

	return f->set && f->soft < CD_CAPTURE_MAX ? f->soft : CD_CAPTURE_MAX;
}

int cd_command_open(struct cd_command *cmd, const struct cd_sandbox *sb, const char *capture_dir,
		    struct cordon_error *err)
{
	const struct cd_output_ctx ctx = { .workdir = &sb->wd, .marks = &sb->marks };

	if (cmd->o->chdir && cmd->o->chdir_relative)
		cmd->chdir = cd_strdup_printf("%s%s%s", sb->workdir_target,
					      cmd->o->chdir[0] && strcmp(sb->workdir_target, "/") ?
						      "/" : "",
					      cmd->o->chdir);
	else
		cmd->chdir = strdup(cmd->o->chdir ? cmd->o->chdir : sb->workdir_target);
	if (!cmd->chdir)
		return cd_fail(err, ENOMEM, "workdir", "out of memory");
	if (capture_dir)
		return cd_capture_open(capture_dir, &ctx, capture_max(cmd->lim), &cmd->capture,
				       err);
	return 0;
}

int cd_command_prepare(struct cd_command *cmd, const struct cd_sandbox *sb,
		       const struct cd_net_opts *net, const char *hostname,
		       struct cordon_error *err)
{
	int r = cd_env_build(cmd->o, net, hostname, cmd->log, &sb->id, &sb->plan, &cmd->envp,
			     &cmd->path_dropped, err);

	if (r < 0)
		return r;
	for (char **e = cmd->envp; *e; e++)
		cd_log_line(cmd->log, "env: %.*s", (int)strcspn(*e, "="), *e);
	return 0;
}

/* --- start --- */

/* Why `tty` says "not a tty" inside (-v): the command gets the caller's terminal itself, whose
 * name is in the host's devpts; the sandbox has a devpts instance of its own (its ptys are its
 * own, the host's are not listed), where that name is not, and glibc's ttyname() answers ENODEV
 * for a pty of another instance. isatty(), /dev/tty, job control and the window size work. */
static void log_terminal(const struct cd_command *cmd)
{
	char name[64];

	if (cmd->term.fd < 0 || ttyname_r(STDIN_FILENO, name, sizeof(name)) != 0)
		return;
	cd_log_line(cmd->log,
		    "terminal: %s, the caller's, is the command's own (not a copy): it has no name "
		    "inside (the sandbox's devpts is its own): `tty` says \"not a tty\", isatty() "
		    "and /dev/tty work", name);
}

static int block_signals(struct cd_command *cmd, struct cordon_error *err)
{
	sigset_t set;

	sigemptyset(&set);
	for (size_t i = 0; i < CD_ELEMENTSOF(forwarded); i++)
		sigaddset(&set, forwarded[i]);
	/* and SIGTTOU, in every thread for the whole run, as a shell blocks it: a write to the
	 * terminal from the background (a notice, -v, --capture's copy) must not stop cordon while
	 * the sandbox goes on (the command can set TOSTOP) */
	sigaddset(&set, SIGTTOU);
	if (pthread_sigmask(SIG_BLOCK, &set, &cmd->signals.old_mask) != 0)
		return cd_fail(err, EINVAL, "signals", "cannot block signals");
	cmd->signals.mask_set = true;
	sigdelset(&set, SIGTTOU);
	cmd->signals.sigfd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
	if (cmd->signals.sigfd < 0)
		return cd_fail_errno(err, errno, "signals", "signalfd");
	return 0;
}

/* at an absolute CLOCK_MONOTONIC time */
static int arm_timer(struct cd_command *cmd, uint64_t at_ns)
{
	struct itimerspec its = { .it_value = { (time_t)(at_ns / NSEC_PER_SEC),
						(long)(at_ns % NSEC_PER_SEC) } };

	if (at_ns == 0)
		its.it_value.tv_nsec = 1; /* 0 would disarm: fire at once */
	return timerfd_settime(cmd->deadline.timerfd, TFD_TIMER_ABSTIME, &its, NULL) < 0 ? -errno
											 : 0;
}

static uint64_t deadline(const struct cd_command *cmd)
{
	return cmd->lim->timeout_ns ? cmd->deadline.t_start + cmd->lim->timeout_ns : 0;
}

static void child_args(const struct cd_command *cmd, struct cd_sandbox *sb,
		       struct cd_child_args *a)
{
	*a = (struct cd_child_args){
		.sock = -1,
		.command.argv = cmd->argv,
		.command.envp = cmd->envp,
		.command.path = cd_env_get(cmd->envp, "PATH"),
		.command.chdir = cmd->chdir,
		.command.stdout_fd = cmd->session ? cmd->session->null_fd
						  : cd_capture_fd(&cmd->capture, 0),
		.command.stderr_fd = cmd->session ? cmd->session->null_fd
						  : cd_capture_fd(&cmd->capture, 1),
		.command.exec_fd = cmd->session ? cmd->session->exec_fd : -1,
		.command.tty_fd = cmd->term.fd,
		.command.take_tty = cmd->term.lent,
		.command.deadline_ns = deadline(cmd),
		.command.kill_after_ns = cmd->lim->kill_after_ns,
	};
	cd_sandbox_child_args(sb, a);
}

static void on_message(void *data, const struct cd_msg *m);

int cd_command_start(struct cd_command *cmd, struct cd_sandbox *sb, struct cordon_error *err)
{
	struct cd_child_args args;
	int r;

	r = block_signals(cmd, err);
	if (r < 0)
		return r;
	cd_terminal_open(&cmd->term);
	log_terminal(cmd);
	cmd->deadline.timerfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	if (cmd->deadline.timerfd < 0)
		return cd_fail_errno(err, errno, "timeout", "timerfd");
	/* the wall clock counts from cordon_run(), setup included */
	if (cmd->lim->timeout_ns && arm_timer(cmd, deadline(cmd)) < 0)
		return cd_fail_errno(err, errno, "timeout", "arm the timer");
	child_args(cmd, sb, &args);
	cmd->sb = sb;
	sb->hooks.on_msg = on_message;
	sb->hooks.on_msg_data = cmd;
	r = cd_sandbox_start(sb, &args, err);
	/* pid 1 holds the write ends now */
	cd_capture_started(&cmd->capture);
	/* without the proof that TIOCSTI is denied, the command gets a session of its own
	 * instead (child.c): the terminal is not lent */
	cmd->term.lent = cmd->term.lent && sb->sec.baseline.blocks_tiocsti;
	return r;
}

/* --- sync 3 and 4 --- */

/* Job control: the command was stopped (Ctrl-Z, or a read from the terminal in the background).
 * With a controlling terminal, cordon does as a shell job does: the terminal back to our group,
 * and it stops itself with the same kind of signal, so that the caller's shell sees the job
 * stopped; once continued, the command is too, with the terminal if we are its foreground.
 * Meanwhile pid 1 keeps the deadline: stopping cordon does not stop the clock. */
static void stop_self(int sig)
{
	sigset_t set, old;

	sigemptyset(&set);
	sigaddset(&set, sig);
	kill(getpid(), sig);
	pthread_sigmask(SIG_UNBLOCK, &set, &old); /* delivered here: stopped until continued */
	pthread_sigmask(SIG_SETMASK, &old, NULL);
}

static void suspend(struct cd_command *cmd, struct cd_sandbox *sb, int sig)
{
	bool fg;

	cd_log_line(cmd->log, "job control: the command was stopped (%s)", strsignal(sig));
	/* only as a job of a shell with job control (a process group of its own in a session led
	 * by another): without a terminal, or as a session's leader (ssh -t, script, a CI's pty),
	 * nobody would continue cordon, and the command stays stopped until the deadline */
	if (cmd->term.fd < 0 || getpgrp() == getsid(0))
		return;
	cd_terminal_reclaim(&cmd->term);
	/* a stop signal the kernel drops in an orphaned process group: never SIGSTOP; SIGTTOU,
	 * blocked for the run, is let through for this one stop */
	stop_self(sig == SIGTTIN || sig == SIGTTOU ? sig : SIGTSTP);
	/* continued */
	fg = cd_terminal_ours(&cmd->term);
	cmd->term.lent = fg && sb->sec.baseline.blocks_tiocsti;
	cd_log_line(cmd->log, "job control: continued in the %s",
		      fg ? "foreground" : "background");
	cd_sandbox_send(sb, CD_MSG_CONT, cmd->term.lent);
}

/* pid 1 enforces the deadline (phase 1: SIGTERM to every process, 2: SIGKILL) */
static void timed_out(struct cd_command *cmd, struct cd_sandbox *sb, int phase)
{
	if (phase == 1 && !cmd->deadline.timed_out) {
		cmd->deadline.timed_out = true;
		cd_log_line(cmd->log, "timeout: SIGTERM to every process in the sandbox");
		cd_event_limit(&sb->rec.audit, "timeout", "SIGTERM to every process in the sandbox",
			       0);
	} else if (phase == 2 && !cmd->deadline.killed) {
		cmd->deadline.killed = true;
		cd_log_line(cmd->log, "timeout: SIGKILL to the sandbox");
		cd_event_limit(&sb->rec.audit, "kill-after", "SIGKILL to the sandbox", 0);
		cd_sandbox_kill_cgroup(sb);
	}
}

/* What pid 1 says of the command (the sandbox's own messages are the sandbox's). */
static void on_message(void *data, const struct cd_msg *m)
{
	struct cd_command *cmd = data;

	switch (m->type) {
	case CD_MSG_RUNNING:
		cmd->status.running = true;
		cd_timing("RUNNING received");
		cmd->deadline.t_running = cd_now_ns();
		cd_log_line(
		    cmd->log, "sandbox: command running (pid %d inside), setup took %llu us",
		    m->value,
		    (unsigned long long)(cmd->deadline.t_running - cmd->deadline.t_start) / 1000);
		if (cmd->session)
			cmd->session->on_running(cmd->session->data);
		break;
	case CD_MSG_EXIT:
		cd_timing("EXIT received");
		cmd->status.got_exit = true;
		cmd->status.exit_status = m->value;
		cmd->status.usage = m->usage;
		break;
	case CD_MSG_STOPPED:
		suspend(cmd, cmd->sb, m->value);
		break;
	case CD_MSG_RLIMITS:
		cd_rlimits_received(&cmd->status.rlimits_got, m);
		break;
	case CD_MSG_TIMEOUT:
		timed_out(cmd, cmd->sb, m->value);
		break;
	default:
		break;
	}
}

static void on_signal(struct cd_command *cmd, struct cd_sandbox *sb)
{
	struct signalfd_siginfo si;

	while (read(cmd->signals.sigfd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
		/* the command has a process group of its own (Ctrl-C reaches it, not us, when it has
		 * the terminal): what cordon receives, it passes on */
		cd_log_line(cmd->log, "signal: forwarding %s", strsignal((int)si.ssi_signo));
		cd_event_signal(&sb->rec.audit, (int)si.ssi_signo, (int)si.ssi_pid);
		cd_sandbox_send(sb, CD_MSG_SIGNAL, (int32_t)si.ssi_signo);
	}
}

/* The deadline is pid 1's to enforce (child.c): nothing in the sandbox can stop it, while
 * cordon itself may be stopped (job control) or busy. Here: a timeout during setup, and a
 * backstop if pid 1 has not ended the sandbox a second after SIGKILL was due. */
static void on_timer(struct cd_command *cmd, struct cd_sandbox *sb)
{
	uint64_t ticks;

	if (read(cmd->deadline.timerfd, &ticks, sizeof(ticks)) != (ssize_t)sizeof(ticks))
		return;
	if (!cmd->status.running) {
		timed_out(cmd, sb, 1);
		cd_log_line(cmd->log, "timeout: during setup");
		cd_sandbox_kill(sb);
		return;
	}
	if (!cmd->deadline.backstop) {
		cmd->deadline.backstop = true;
		arm_timer(cmd, deadline(cmd) + cmd->lim->kill_after_ns + NSEC_PER_SEC);
		return;
	}
	timed_out(cmd, sb, 1);
	timed_out(cmd, sb, 2);
	cd_log_line(cmd->log, "timeout: pid 1 did not end the sandbox: SIGKILL to it");
	cd_sandbox_kill(sb);
}

enum { W_SIG = CD_SANDBOX_NPOLL, W_TIMER, W_HOLDER, W_CAPTURE, W_N = W_CAPTURE + 4 };

/* one poll: false once pid 1 is gone */
static bool watch_once(struct cd_command *cmd, struct cd_sandbox *sb)
{
	struct pollfd p[W_N] = {
		[W_SIG] = { cmd->signals.sigfd, POLLIN, 0 },
		[W_TIMER] = { cmd->deadline.timerfd, POLLIN, 0 },
		[W_HOLDER] = { cmd->session && !cmd->status.holder_done ? cmd->session->holder_fd
									: -1,
			       POLLIN, 0 },
	};

	cd_sandbox_poll(sb, p);
	for (int i = 0; i < 2; i++)
		cd_capture_poll(&cmd->capture, i, &p[W_CAPTURE + 2 * i], &p[W_CAPTURE + 2 * i + 1]);
	if (poll(p, W_N, -1) < 0)
		return errno == EINTR;
	cd_sandbox_serve(sb, p);
	for (int i = 0; i < 2; i++)
		if (p[W_CAPTURE + 2 * i].revents || p[W_CAPTURE + 2 * i + 1].revents)
			cd_capture_pump(&cmd->capture, i);
	if (p[W_SIG].revents)
		on_signal(cmd, sb);
	if (p[W_TIMER].revents)
		on_timer(cmd, sb);
	if (p[W_HOLDER].revents)
		cmd->session->on_holder(cmd->session->data, sb);
	return !p[CD_SANDBOX_POLL_PIDFD].revents;
}

void cd_command_watch(struct cd_command *cmd, struct cd_sandbox *sb)
{
	while (watch_once(cmd, sb))
		if (cmd->status.got_exit && cmd->o->fast_exit) {
			/* nothing of the sandbox runs any more: leave pid 1 to finish exiting */
			cd_capture_drain(&cmd->capture, 2000);
			cd_sandbox_leave(sb);
			return;
		}
	cd_sandbox_drain(sb); /* EXIT is sent before pid 1 exits: it is there */
	cd_capture_drain(&cmd->capture, 2000);
	cd_sandbox_reap(sb);
}

/* --- the outcome --- */

static int exec_exit_code(int e)
{
	if (e == ENOENT || e == ENOTDIR || e == ELOOP || e == ENAMETOOLONG)
		return CORDON_EXIT_NOTFOUND;
	return CORDON_EXIT_NOEXEC;
}

/* A command not found that one of PATH's dropped directories has on the host: say which, once,
 * without -v (it would otherwise be a puzzle: the same command runs outside). The caller's own
 * PATH, looked at on the host: nothing of the sandbox's is read. */
static void hint_dropped(const struct cd_command *cmd, struct cordon_error *e)
{
	const char *name = cmd->argv[0];
	char path[PATH_MAX];

	if (strcmp(e->step, "exec") != 0 || e->code != ENOENT || strchr(name, '/'))
		return;
	for (char **d = cmd->path_dropped; d && *d; d++)
		if (snprintf(path, sizeof(path), "%s/%s", *d, name) < (int)sizeof(path) &&
		    access(path, X_OK) == 0) {
			snprintf(e->msg, sizeof(e->msg),
				 "%.64s: not found: PATH's %.200s was dropped (the sandbox "
				 "does not have it: hidden, or not bound; --ro-bind it to keep it)",
				 name, *d);
			return;
		}
}

/* The command exited 127, a shell's "not found" (sh -c 'mytool'; the shell's own line named the
 * command): the first dropped directory there on the host, and how many more, in a notice */
static void hint_127(const struct cd_command *cmd)
{
	const char *first = NULL;
	char more[48] = "";
	unsigned n = 0;
	struct stat st;

	if (cmd->res->outcome != CORDON_OUTCOME_EXITED || cmd->res->status != 127)
		return;
	for (char **d = cmd->path_dropped; d && *d; d++) {
		bool again = false;

		for (char **e = cmd->path_dropped; e < d && !again; e++)
			again = strcmp(*e, *d) == 0;
		if (!again && stat(*d, &st) == 0 && S_ISDIR(st.st_mode) && n++ == 0)
			first = *d;
	}
	if (!first)
		return;
	if (n > 1)
		snprintf(more, sizeof(more), " (and %u more: -v lists them)", n - 1);
	cd_log_notice(cmd->log,
		      "exit 127 (a command not found?): PATH's %s%s was dropped (the sandbox does "
		      "not have it: hidden, or not bound; --ro-bind it to keep it)",
		      first, more);
}

static void set_outcome(const struct cd_command *cmd, const struct cd_sandbox *sb)
{
	struct cordon_result *res = cmd->res;
	int st = cmd->status.got_exit ? cmd->status.exit_status : sb->pid1.status;

	if (cmd->status.failed || sb->failed) {
		res->outcome = CORDON_OUTCOME_SETUP_ERROR;
		res->exit_code = strcmp(res->error.step, "exec") == 0
					 ? exec_exit_code(res->error.code)
					 : CORDON_EXIT_FAILURE;
		hint_dropped(cmd, &res->error);
	} else if (cmd->deadline.timed_out) {
		res->outcome = CORDON_OUTCOME_TIMEOUT;
		res->exit_code = CORDON_EXIT_TIMEOUT;
		res->signal = WIFSIGNALED(st) ? WTERMSIG(st) : 0;
	} else if (!cmd->status.running) {
		res->outcome = CORDON_OUTCOME_SETUP_ERROR;
		res->exit_code = CORDON_EXIT_FAILURE;
		cd_fail(&res->error, 0, "init", "the sandbox ended during setup (%s %d)",
			WIFSIGNALED(st) ? "signal" : "status",
			WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st));
	} else if (WIFSIGNALED(st)) {
		/* the command, or pid 1 itself when no EXIT came (killed from outside) */
		res->outcome = CORDON_OUTCOME_SIGNALED;
		res->signal = WTERMSIG(st);
		res->exit_code = CORDON_EXIT_SIGNAL_BASE + res->signal;
	} else {
		res->outcome = CORDON_OUTCOME_EXITED;
		res->status = WEXITSTATUS(st);
		res->exit_code = res->status;
	}
}

static uint64_t tv_ns(struct timeval tv)
{
	return (uint64_t)tv.tv_sec * NSEC_PER_SEC + (uint64_t)tv.tv_usec * NSEC_PER_USEC;
}

static void set_usage(const struct cd_command *cmd, const struct cd_sandbox *sb)
{
	struct cordon_result *res = cmd->res;

	/* pid 1 reaped every process of the sandbox: its own and its children's usage covers them
	 * all; without EXIT (killed), what wait4() says of it */
	if (cmd->status.got_exit) {
		res->user_ns = cmd->status.usage.user_us * NSEC_PER_USEC;
		res->system_ns = cmd->status.usage.system_us * NSEC_PER_USEC;
		res->max_rss_kb = cmd->status.usage.max_rss_kb;
	} else {
		res->user_ns = tv_ns(sb->pid1.ru.ru_utime);
		res->system_ns = tv_ns(sb->pid1.ru.ru_stime);
		res->max_rss_kb = (uint64_t)sb->pid1.ru.ru_maxrss;
	}
}

static void set_capture(const struct cd_command *cmd)
{
	struct cordon_result *res = cmd->res;
	const struct cd_capture *cap = &cmd->capture;

	if (!cap->on)
		return;
	res->has_capture = 1;
	res->capture_bytes[0] = cap->s[0].bytes;
	res->capture_bytes[1] = cap->s[1].bytes;
	res->capture_truncated = cap->s[0].truncated || cap->s[1].truncated;
	if (res->capture_truncated)
		cd_log_line(cmd->log,
			    "capture: a copy reached its bound (%llu bytes), the rest was "
			    "only passed on",
			    (unsigned long long)cap->max);
}

void cd_command_finish(struct cd_command *cmd, const struct cd_sandbox *sb)
{
	struct cordon_result *res = cmd->res;
	uint64_t now = cd_now_ns();

	/* the terminal first: what follows may write to it (-v), and must find it as it was */
	cd_terminal_restore(&cmd->term);
	set_outcome(cmd, sb);
	hint_127(cmd);
	res->startup_ns =
	    (cmd->status.running ? cmd->deadline.t_running : now) - cmd->deadline.t_start;
	res->wall_ns = cmd->status.running ? now - cmd->deadline.t_running : 0;
	set_usage(cmd, sb);
	set_capture(cmd);
}

/* drop what arrived but was not read before unblocking */
static void restore_signals(struct cd_command *cmd)
{
	struct timespec zero = { 0 };
	sigset_t pending;

	sigpending(&pending);
	for (size_t i = 0; i < CD_ELEMENTSOF(forwarded); i++)
		if (sigismember(&pending, forwarded[i]) &&
		    !sigismember(&cmd->signals.old_mask, forwarded[i])) {
			sigset_t one;

			sigemptyset(&one);
			sigaddset(&one, forwarded[i]);
			sigtimedwait(&one, NULL, &zero);
		}
	pthread_sigmask(SIG_SETMASK, &cmd->signals.old_mask, NULL);
}

void cd_command_done(struct cd_command *cmd)
{
	cd_closep(&cmd->signals.sigfd);
	cd_closep(&cmd->deadline.timerfd);
	if (cmd->signals.mask_set)
		restore_signals(cmd);
	cd_terminal_restore(&cmd->term);
	cd_strv_free(cmd->envp);
	cd_strv_free(cmd->path_dropped);
	cd_capture_done(&cmd->capture);
	free(cmd->chdir);
}
