/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * init.c - cordon-init: pid 1 of a sandbox once it is set up. Runs inside, as the sandbox's uid,
 * without capabilities. A program of its own (static, libc only), executed by pid 1 (child.c) from
 * a descriptor opened on the host, with nothing of the process that made the sandbox: its argv is
 * "cordon-init", its environment empty, and it learns what to do from the spec on fd 3
 * (initspec.h). So /proc/1/cmdline, the one file of pid 1 every process of the sandbox may read,
 * and pid 1's memory hold no argv, environment or heap of a server or a harness.
 *
 * It waits for START, starts the command (vfork, then in the child: signals reset, a process
 * group of its own, rlimits, chdir, the seccomp programs, exec), and stays as a small init: it
 * reaps every process that ends, forwards the signals the supervisor sends, keeps the deadline,
 * and exits when the command does, which makes the kernel kill whatever is left in the pid
 * namespace. PR_SET_PDEATHSIG (kept across exec) still ties it to the supervisor.
 */
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <sys/wait.h>
#include <termios.h>
#include <time.h>

#include "initspec.h"
#include "rlimits.h"
#include "sigreset.h"
#include "sync.h"
#include "timing.h"

struct init {
	struct cd_init_spec s;
	int sock;
	int tty_fd;   /* -1 without a terminal */
	int exec_fd;  /* -1: argv[0] is looked up */
	int sigfd;    /* SIGCHLD */
	int timerfd;  /* the timeout, enforced here too: nothing inside can stop pid 1 */
	int phase;    /* 0, then 1 once SIGTERM went to everything, 2 once SIGKILL did */
	bool stop_told; /* a STOPPED the supervisor has not answered (CONT) yet: one at a time, so
			 * that a command stopping itself over and over cannot fill the socket and
			 * block pid 1, the deadline's keeper */
	pid_t command;
};

/* --- the command's process --- */

/* argv[0], looked up in the sandbox's PATH unless it has a slash, into buf: 0, or the errno
 * that describes the failure best (as execvp: EACCES wins over a later ENOENT). The lookup
 * comes first and the exec once, so that the audit trail sees one exec of the command. */
static int resolve_command(const struct cd_init_spec *s, char *buf, size_t size)
{
	const char *file = s->argv[0], *dir = s->path;
	bool eacces = false;
	struct stat st;

	if (strchr(file, '/'))
		return snprintf(buf, size, "%s", file) < (int)size ? 0 : ENAMETOOLONG;
	while (dir) {
		const char *end = strchrnul(dir, ':');
		int len = (int)(end - dir);

		if (snprintf(buf, size, "%.*s/%s", len ? len : 1, len ? dir : ".", file) <
		    (int)size) {
			if (stat(buf, &st) == 0) {
				if (S_ISREG(st.st_mode) && faccessat(AT_FDCWD, buf, X_OK, AT_EACCESS) == 0)
					return 0;
				eacces = true; /* there, but not an executable file */
			} else if (errno == EACCES) {
				eacces = true;
			}
		}
		dir = *end ? end + 1 : NULL;
	}
	return eacces ? EACCES : ENOENT;
}

/* Install a filter; with the audit trail, hand its notification listener to the supervisor
 * (pid 1 is suspended in vfork: the socket is ours alone) and keep no copy of it. */
static int install_filter(const struct init *in, const struct cd_filter *f, const char *path,
			  struct cordon_error *err)
{
	struct cd_msg m = { .type = CD_MSG_LISTENER };
	_cleanup_close_ int listener = -1;
	int r = cd_filter_install(f);

	if (r < 0)
		return cd_fail(err, -r, "seccomp", "install the %s filter: %s",
			       f->baseline ? "baseline" : "policy's", strerror(-r));
	if (!f->notify)
		return 0;
	listener = r;
	/* the path the command is about to be executed from: the supervisor may not be able to
	 * read it from our memory (pid 1's, not dumpable) */
	snprintf(m.path, sizeof(m.path), "%s", path);
	if (cd_msg_send_msg(in->sock, &m, listener) < 0)
		return cd_fail(err, EIO, "audit", "cannot hand the exec listener to the supervisor");
	return 0;
}

/* The terminal's foreground becomes pgrp (pid 1 and the command are in the background of it
 * when this is called: SIGTTOU blocked, as a shell does). */
static void give_terminal(int tty, pid_t pgrp)
{
	sigset_t ttou, old;

	sigemptyset(&ttou);
	sigaddset(&ttou, SIGTTOU);
	sigprocmask(SIG_BLOCK, &ttou, &old);
	tcsetpgrp(tty, pgrp);
	sigprocmask(SIG_SETMASK, &old, NULL);
}

/* A process group of its own: no signal the command sends to its group (kill(0, ...)) reaches
 * the caller's processes or cordon. In the caller's session, so that job control works, and the
 * terminal's foreground when the caller was. Without a filter proven to deny TIOCSTI, a session
 * of its own instead, without a controlling terminal, keeps keystrokes out of the caller's
 * terminal (but costs job control). */
static int own_group(const struct init *in, struct cordon_error *err)
{
	if (!in->s.baseline.blocks_tiocsti)
		return setsid() < 0 ? cd_fail_errno(err, errno, "init", "setsid") : 0;
	if (setpgid(0, 0) < 0)
		return cd_fail_errno(err, errno, "init", "setpgid");
	if (in->s.take_tty && in->tty_fd >= 0)
		give_terminal(in->tty_fd, getpid());
	return 0;
}

/* The command's last steps before exec, a checklist (a vfork() child sharing our memory: system
 * calls only, no allocation): 0, or -errno with *err filled. */
static int command_setup(const struct init *in, char *path, size_t size, int errfd,
			 struct cordon_error *err)
{
	int r, e;

	cd_reset_signals();
	r = own_group(in, err);
	if (r < 0)
		return r;
	r = cd_rlimits_apply(in->s.rlimits, err);
	if (r < 0)
		return r;
	/* sync 3: what the command gets, read back for the report (pid 1 is suspended in vfork:
	 * the socket is ours alone); exec keeps them */
	r = cd_rlimits_send(in->sock, err);
	if (r < 0)
		return r;
	if (chdir(in->s.chdir) < 0)
		return cd_fail_errno(err, errno, "chdir", "%s", in->s.chdir);
	/* a session's agent comes from the descriptor cordon opened: nothing to look up */
	e = in->exec_fd >= 0 ? (snprintf(path, size, "%s", in->s.argv[0]), 0)
			     : resolve_command(&in->s, path, size);
	if (e > 0)
		return cd_fail(err, e, "exec", "%s: %s", in->s.argv[0], strerror(e));
	/* the last steps before exec: from here on every syscall is filtered; the kernel runs
	 * both programs and the strictest answer wins */
	r = install_filter(in, &in->s.baseline, path, err);
	if (r >= 0 && in->s.has_filter)
		r = install_filter(in, &in->s.filter, path, err);
	if (r < 0)
		return r;
	/* the command keeps 0, 1 and 2, the exec status pipe (close-on-exec) and its program */
	for (int fd = 3; fd < errfd; fd++)
		if (fd != in->exec_fd)
			close(fd);
	syscall(SYS_close_range, (unsigned)errfd + 1, ~0u, 0); /* musl has no wrapper */
	return 0;
}

_Noreturn static void command_exec(const struct init *in, int errfd)
{
	struct cordon_error err = { 0 };
	char path[4096];

	cd_timing("command: set up"); /* not after: its filter may allow no write */
	if (command_setup(in, path, sizeof(path), errfd, &err) == 0) {
		int e;

		if (in->exec_fd >= 0)
			syscall(SYS_execveat, in->exec_fd, "", in->s.argv, in->s.envp, AT_EMPTY_PATH);
		else
			execve(path, in->s.argv, in->s.envp);
		e = errno;
		cd_fail(&err, e, "exec", "%s: %s", in->s.argv[0], strerror(e));
	}
	cd_write_all(errfd, &err, sizeof(err));
	_exit(CORDON_EXIT_FAILURE);
}

/* sync 3: fork the command and learn whether its exec worked (the pipe closes on exec). The
 * pipe's write end goes above every descriptor the command keeps, so that closing the rest is
 * two ranges. */
static int start_command(struct init *in, struct cordon_error *err)
{
	struct cordon_error child_err;
	int pipefd[2], wr;
	ssize_t n;
	pid_t pid;

	if (pipe2(pipefd, O_CLOEXEC) < 0)
		return cd_fail_errno(err, errno, "init", "pipe");
	wr = fcntl(pipefd[1], F_DUPFD_CLOEXEC, CD_INIT_FD_EXEC + 1);
	close(pipefd[1]);
	if (wr < 0) {
		close(pipefd[0]);
		return cd_fail_errno(err, errno, "init", "pipe");
	}
	/* vfork: nothing of pid 1's memory is copied, and pid 1 waits until the exec */
	pid = vfork();
	if (pid < 0)
		return cd_fail_errno(err, errno, "init", "fork the command");
	if (pid == 0)
		command_exec(in, wr);
	close(wr);
	do
		n = read(pipefd[0], &child_err, sizeof(child_err));
	while (n < 0 && errno == EINTR);
	close(pipefd[0]);
	if (n == (ssize_t)sizeof(child_err)) {
		*err = child_err;
		return -(child_err.code ? child_err.code : EINVAL);
	}
	if (n != 0)
		return cd_fail(err, EIO, "init", "lost the command's exec status");
	in->command = pid;
	return 0;
}

/* --- pid 1 --- */

static uint64_t tv_us(struct timeval tv)
{
	return (uint64_t)tv.tv_sec * 1000000 + (uint64_t)tv.tv_usec;
}

/* The command ended: nothing else may outlive it. Kill and reap every process left, so that when
 * the supervisor hears EXIT no process of the sandbox runs any more, then report the usage of all
 * of them (the kernel frees the namespaces after pid 1 exits, without anyone waiting for it). */
_Noreturn static void end_sandbox(int sock, int status)
{
	struct cd_msg m = { .type = CD_MSG_EXIT, .value = status };
	struct rusage self, children;

	cd_timing("pid 1: command ended");
	kill(-1, SIGKILL);
	while (waitpid(-1, NULL, 0) > 0 || errno == EINTR)
		;
	cd_timing("pid 1: all reaped");
	getrusage(RUSAGE_SELF, &self);
	getrusage(RUSAGE_CHILDREN, &children);
	m.usage.user_us = tv_us(self.ru_utime) + tv_us(children.ru_utime);
	m.usage.system_us = tv_us(self.ru_stime) + tv_us(children.ru_stime);
	m.usage.max_rss_kb = (uint64_t)(self.ru_maxrss > children.ru_maxrss ? self.ru_maxrss
									     : children.ru_maxrss);
	cd_msg_send_msg(sock, &m, -1);
	_exit(0);
}

static int arm(int timerfd, uint64_t at_ns)
{
	struct itimerspec its = { .it_value = { (time_t)(at_ns / 1000000000),
						(long)(at_ns % 1000000000) } };

	if (!at_ns) /* 0 would disarm */
		its.it_value.tv_nsec = 1;
	return timerfd_settime(timerfd, TFD_TIMER_ABSTIME, &its, NULL);
}

/* The deadline passed: SIGTERM to every process but pid 1, then SIGKILL after kill_after. The
 * supervisor hears of each step (it may be stopped, or blocked on a slow reader: the sandbox
 * ends on time all the same). */
static void on_deadline(struct init *in)
{
	uint64_t ticks;

	if (read(in->timerfd, &ticks, sizeof(ticks)) != (ssize_t)sizeof(ticks) || in->phase >= 2)
		return;
	in->phase++;
	/* told first: a session's caller sees its agent die of the SIGTERM and may end the
	 * sandbox (SIGKILL to us) before a TIMEOUT sent after it, and the session's outcome
	 * would be SIGNALED. The supervisor reads all we send: a handful of datagrams never
	 * fill its socket, so the kill is not delayed */
	cd_msg_send(in->sock, CD_MSG_TIMEOUT, in->phase, NULL, -1);
	kill(-1, in->phase == 1 ? SIGTERM : SIGKILL);
	if (in->phase == 1)
		arm(in->timerfd, in->s.deadline_ns + in->s.kill_after_ns);
}

static void reap(struct init *in)
{
	struct signalfd_siginfo si;
	int status;
	pid_t pid;

	while (read(in->sigfd, &si, sizeof(si)) > 0)
		;
	while ((pid = waitpid(-1, &status, WNOHANG | WUNTRACED)) > 0) {
		if (pid != in->command)
			continue;
		if (!WIFSTOPPED(status))
			end_sandbox(in->sock, status);
		if (!in->stop_told) { /* job control: the supervisor follows it */
			in->stop_told = true;
			cd_msg_send(in->sock, CD_MSG_STOPPED, WSTOPSIG(status), NULL, -1);
		}
	}
}

static void on_message(struct init *in, const struct cd_msg *m)
{
	switch (m->type) {
	case CD_MSG_SIGNAL:
		kill(in->command, m->value);
		break;
	case CD_MSG_KILL_ALL:
		kill(-1, m->value); /* every process in the namespace but pid 1 */
		break;
	case CD_MSG_CONT:
		in->stop_told = false;
		if (m->value && in->tty_fd >= 0)
			give_terminal(in->tty_fd, in->command);
		kill(-in->command, SIGCONT);
		break;
	default:
		break;
	}
}

_Noreturn static void loop(struct init *in)
{
	for (;;) {
		struct pollfd p[3] = { { in->sigfd, POLLIN, 0 }, { in->sock, POLLIN, 0 },
				       { in->timerfd, POLLIN, 0 } };
		struct cd_msg m;

		if (poll(p, 3, -1) < 0)
			continue;
		if (p[2].revents) /* the deadline first, whatever else is going on */
			on_deadline(in);
		if (p[0].revents)
			reap(in);
		if (!p[1].revents)
			continue;
		if (cd_msg_recv(in->sock, &m, NULL) <= 0)
			_exit(CORDON_EXIT_FAILURE); /* supervisor gone */
		on_message(in, &m);
	}
}

/* sync 2's end: START (the supervisor's audit snapshot is taken), or the supervisor is gone */
static int wait_start(int sock, struct cordon_error *err)
{
	struct cd_msg m;
	int r = cd_msg_recv(sock, &m, NULL);

	if (r <= 0)
		_exit(CORDON_EXIT_FAILURE); /* the supervisor gave up (it reports why) */
	if (m.type != CD_MSG_START)
		return cd_fail(err, EPROTO, "sync", "expected START from the supervisor");
	return 0;
}

/* The spec from its memfd, whole (it stays in our memory: the strings and programs point there) */
static int read_spec(struct init *in, struct cordon_error *err)
{
	const char *why = NULL;
	struct stat st;
	void *buf;
	int r;

	if (fstat(CD_INIT_FD_SPEC, &st) < 0 || st.st_size <= 0 || st.st_size > CD_INIT_SPEC_MAX)
		return cd_fail(err, EINVAL, "init", "no spec on fd %d", CD_INIT_FD_SPEC);
	buf = malloc((size_t)st.st_size);
	if (!buf)
		return cd_fail(err, ENOMEM, "init", "out of memory");
	if (pread(CD_INIT_FD_SPEC, buf, (size_t)st.st_size, 0) != st.st_size)
		return cd_fail_errno(err, errno, "init", "read the spec");
	close(CD_INIT_FD_SPEC);
	r = cd_init_spec_unpack(buf, (size_t)st.st_size, &in->s, &why);
	if (r < 0)
		return cd_fail(err, -r, "init", "the spec: %s", why ? why : strerror(-r));
	in->tty_fd = in->s.has_tty ? CD_INIT_FD_TTY : -1;
	in->exec_fd = in->s.has_exec ? CD_INIT_FD_EXEC : -1;
	/* ours, not the command's: an exec from its descriptor works close-on-exec too */
	for (int fd = CD_INIT_FD_SOCK; fd <= CD_INIT_FD_EXEC; fd++)
		if (fcntl(fd, F_SETFD, FD_CLOEXEC) < 0 && errno != EBADF)
			return cd_fail_errno(err, errno, "init", "close-on-exec fd %d", fd);
	return 0;
}

/* After START: the child's end of SIGCHLD, the deadline's timer, the command. */
static int start(struct init *in, struct cordon_error *err)
{
	sigset_t chld;
	int r = wait_start(in->sock, err);

	cd_timing("pid 1: START");
	if (r < 0)
		return r;
	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	in->sigfd = signalfd(-1, &chld, SFD_CLOEXEC | SFD_NONBLOCK);
	if (in->sigfd < 0)
		return cd_fail_errno(err, errno, "init", "signalfd");
	if (in->s.deadline_ns) {
		in->timerfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
		if (in->timerfd < 0 || arm(in->timerfd, in->s.deadline_ns) < 0)
			return cd_fail_errno(err, errno, "timeout", "arm the timer");
	}
	return start_command(in, err);
}

int main(void)
{
	struct init in = { .sock = CD_INIT_FD_SOCK, .sigfd = -1, .timerfd = -1 };
	struct cordon_error err = { 0 };
	int r;

	/* first: the command runs as our uid, and must neither ptrace nor read pid 1 (exec made
	 * us dumpable again). SIGCHLD and the stop signals stay blocked as pid 1 left them. */
	prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
	r = prctl(PR_GET_DUMPABLE, 0, 0, 0, 0) == 0
		    ? 0
		    : cd_fail_errno(&err, errno, "init", "make pid 1 non-dumpable");
	prctl(PR_SET_NAME, "cordon-init", 0, 0, 0);
	if (r >= 0)
		r = read_spec(&in, &err);
	if (r >= 0) {
		cd_timing_to_stderr(in.s.timing);
		cd_timing("pid 1: cordon-init");
		r = start(&in, &err);
	}
	if (r < 0) {
		cd_msg_send(in.sock, CD_MSG_ERROR, 0, &err, -1);
		_exit(CORDON_EXIT_FAILURE);
	}
	cd_timing("pid 1: command exec'd");
	cd_msg_send(in.sock, CD_MSG_RUNNING, in.command, NULL, -1);
	/* we only wait now, as long as the sandbox lives: the stack pages the command's start
	 * dirtied (its vfork child ran on our stack) go back to the kernel */
	cd_stack_trim();
	loop(&in);
}
