/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * child.c - runs inside the sandbox.
 *
 * pid 1 (the process clone() made) sets the sandbox up as a checklist while it holds every
 * capability of its new user namespace, then gives them all up, forks the command and stays as a
 * small init: it reaps every process that ends, forwards the signals the supervisor sends, and
 * exits when the command does, which makes the kernel kill whatever is left in the pid namespace.
 * It is tied to the supervisor by PR_SET_PDEATHSIG, so if cordon dies, even of SIGKILL, the
 * sandbox goes with it.
 *
 * pid 1 came from a raw clone(): glibc's idea of its thread id is the supervisor's, so it must not
 * use raise(), abort() or pthread_kill(). The command's process comes from fork() and is normal.
 */
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <sched.h>
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

#include "caps.h"
#include "child.h"
#include "rlimits.h"
#include "net.h"
#include "sync.h"
#include "timing.h"

/* Close every fd but 0, 1, 2 and those in keep[] (entries < 3 are ignored). */
static void close_other_fds(int *keep, size_t n)
{
	unsigned next = 3;

	for (size_t i = 1; i < n; i++) /* insertion sort: n is tiny */
		for (size_t j = i; j > 0 && keep[j - 1] > keep[j]; j--) {
			int t = keep[j];

			keep[j] = keep[j - 1];
			keep[j - 1] = t;
		}
	for (size_t i = 0; i < n; i++) {
		if (keep[i] < (int)next)
			continue;
		if ((unsigned)keep[i] > next)
			close_range(next, (unsigned)keep[i] - 1, 0);
		next = (unsigned)keep[i] + 1;
	}
	close_range(next, ~0u, 0);
}

/* Take the inside ids at once, capabilities kept: a root caller's child starts as host uid 0,
 * which this namespace does not map, so it could not even create a file in a tmpfs; and from
 * here on nothing is done with the host's root identity. */
static int become_sandbox_ids(const struct cd_identity *id, struct cordon_error *err)
{
	/* raw system calls: glibc's signal every thread of the process to change its ids too;
	 * pid 1 has no other, so they would only cost more */
	if (id->setgroups_allowed && syscall(SYS_setgroups, 0, NULL) < 0)
		return cd_fail_errno(err, errno, "init", "clear supplementary groups");
	if (syscall(SYS_setresgid, id->inside_gid, id->inside_gid, id->inside_gid) < 0)
		return cd_fail_errno(err, errno, "init", "setresgid %u", id->inside_gid);
	if (syscall(SYS_setresuid, id->inside_uid, id->inside_uid, id->inside_uid) < 0)
		return cd_fail_errno(err, errno, "init", "setresuid %u", id->inside_uid);
	return 0;
}

/* No user namespace below the sandbox's, whatever the seccomp policy (none, a learning mode, a
 * file without the rule): the root of a nested one holds CAP_SETFCAP over the files its mapped
 * ids own, and through the id-mapped workdir those are root's on the host: a file capability
 * written there would be a host one. The limit is per user namespace and ours is 0; only pid 1,
 * with the capabilities it is about to drop, can set it. */
static int no_nested_userns(struct cordon_error *err)
{
	int r = cd_write_file_at(AT_FDCWD, "/proc/sys/user/max_user_namespaces", "0\n");

	if (r < 0)
		return cd_fail_errno(err, -r, "init", "forbid nested user namespaces "
						      "(user.max_user_namespaces = 0 in the sandbox's)");
	return 0;
}

/* sync 1 and 2: wait for the supervisor, then the checklist. */
static int pid1_setup(const struct cd_child_args *a, struct cordon_error *err)
{
	_cleanup_close_ int proxy_fd = -1;
	struct cd_msg m;
	int workdir_fd = -1, r;

	/* sync 1: die with the supervisor; if it is already gone, GO never comes: EOF */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0)
		return cd_fail_errno(err, errno, "init", "set the parent-death signal");
	/* --capture: the sandbox writes into the supervisor's pipes */
	if (a->stdout_fd >= 0 && (dup2(a->stdout_fd, 1) < 0 || dup2(a->stderr_fd, 2) < 0))
		return cd_fail_errno(err, errno, "capture", "dup2");
	/* nothing of the supervisor's stays open in here but the terminal, which pid 1 alone keeps
	 * to hand it to the command */
	close_other_fds((int[]){ a->sock, a->tty_fd, a->exec_fd }, 3);
	cd_timing("pid 1: fds closed");
	/* the network namespace came with the clone (ours: it needs no id maps); lo up meanwhile */
	if (a->own_net) {
		r = cd_net_loopback_up(err);
		if (r < 0)
			return r;
		if (a->proxy_port && (proxy_fd = cd_net_proxy_listen(a->proxy_port, err)) < 0)
			return proxy_fd;
	}
	cd_timing("pid 1: lo up");
	/* sync 2: the --ro-bind trees a root supervisor cloned from what it checked, then GO */
	while ((r = cd_msg_recv(a->sock, &m, &workdir_fd)) > 0 && m.type == CD_MSG_TREE &&
	       m.value >= 0 && (size_t)m.value < a->plan->n && a->plan->m[m.value].fd < 0)
		a->plan->m[m.value].fd = CD_TAKE_FD(workdir_fd);
	if (r <= 0 || m.type != CD_MSG_GO)
		_exit(CORDON_EXIT_FAILURE);
	cd_timing("pid 1: GO");
	/* sync 2: id maps written, and we are in our cgroup: it becomes the root of our cgroup
	 * namespace (made here, not at clone, where it would be the supervisor's cgroup) */
	if (unshare(CLONE_NEWCGROUP) < 0)
		return cd_fail_errno(err, errno, "namespaces", "new cgroup namespace");
	r = become_sandbox_ids(a->id, err);
	if (r < 0)
		return r;
	/* a change of the effective ids clears the parent-death signal: set it again (the
	 * socket's EOF would end pid 1 too, but only where it reads the socket) */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0)
		return cd_fail_errno(err, errno, "init", "set the parent-death signal");
	r = no_nested_userns(err);
	if (r < 0)
		return r;
	a->plan->sync_sock = a->sock; /* --cow: the layer's upper goes to the supervisor */
	r = cd_mount_setup(a->plan, workdir_fd, err);
	cd_timing("pid 1: mounts made");
	if (r >= 0 && proxy_fd >= 0) {
		/* the supervisor accepts on it; nothing inside keeps a copy */
		r = cd_msg_send(a->sock, CD_MSG_PROXY, 0, NULL, proxy_fd);
		cd_closep(&proxy_fd);
		proxy_fd = -1;
		if (r < 0)
			return cd_fail_errno(err, -r, "net", "hand the proxy's socket to the supervisor");
	}
	if (r < 0)
		return r;
	if (sethostname(a->hostname, strlen(a->hostname)) < 0)
		return cd_fail_errno(err, errno, "hostname", "set hostname %s", a->hostname);
	r = cd_caps_drop(a->id->inside_uid, a->id->inside_gid, a->id->setgroups_allowed, err);
	if (r < 0)
		return r;
	/* the command runs as the same uid: it must not be able to ptrace or read pid 1 */
	if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) < 0)
		return cd_fail_errno(err, errno, "init", "make pid 1 non-dumpable");
	return 0;
}

/* The hexadecimal mask after `key` in a /proc/PID/status text, or false */
static bool status_mask(const char *text, const char *key, uint64_t *ret)
{
	const char *p = strstr(text, key);
	char *end;

	if (!p)
		return false;
	errno = 0;
	*ret = strtoull(p + strlen(key), &end, 16);
	return !errno && end != p + strlen(key) && *end == '\n';
}

/* The signals this process ignores or catches (/proc/self/status: the sandbox's /proc by now),
 * or all of them where that cannot be read. Into a buffer of the stack: no allocation here. */
static uint64_t signals_set(void)
{
	char buf[4096];
	uint64_t ign, cgt;
	ssize_t n = -1;
	int fd = open("/proc/self/status", O_RDONLY | O_CLOEXEC);

	if (fd >= 0) {
		n = read(fd, buf, sizeof(buf) - 1);
		close(fd);
	}
	if (n <= 0)
		return UINT64_MAX;
	buf[n] = '\0';
	return status_mask(buf, "\nSigIgn:\t", &ign) && status_mask(buf, "\nSigCgt:\t", &cgt)
		       ? ign | cgt
		       : UINT64_MAX;
}

/* Every disposition back to the default (an ignored one would outlive exec), and nothing
 * blocked: one system call for each signal that is not at its default, not one for each of 64 */
static void reset_signals(void)
{
	uint64_t set = signals_set();
	sigset_t none;

	for (int sig = 1; sig < NSIG && sig <= 64; sig++)
		if (set & (UINT64_C(1) << (sig - 1)))
			signal(sig, SIG_DFL); /* fails for SIGKILL, SIGSTOP and glibc's own: fine */
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
}

/* argv[0], looked up in the sandbox's PATH unless it has a slash, into buf: 0, or the errno
 * that describes the failure best (as execvp: EACCES wins over a later ENOENT). The lookup
 * comes first and the exec once, so that the audit trail sees one exec of the command. */
static int resolve_command(const struct cd_child_args *a, char *buf, size_t size)
{
	const char *file = a->argv[0], *dir = a->path;
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
static int install_filter(const struct cd_child_args *a, const struct cd_filter *f,
			  const char *path, struct cordon_error *err)
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
	snprintf(m.err.msg, sizeof(m.err.msg), "%.479s", path);
	if (cd_msg_send_msg(a->sock, &m, listener) < 0)
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
static int own_group(const struct cd_child_args *a, struct cordon_error *err)
{
	if (!a->baseline->blocks_tiocsti)
		return setsid() < 0 ? cd_fail_errno(err, errno, "init", "setsid") : 0;
	if (setpgid(0, 0) < 0)
		return cd_fail_errno(err, errno, "init", "setpgid");
	if (a->take_tty && a->tty_fd >= 0)
		give_terminal(a->tty_fd, getpid());
	return 0;
}

/* The command's process, a vfork() child sharing pid 1's memory: last steps with system calls
 * only (no allocation), then exec. Failures go to errfd, read by pid 1. */
/* The command's last steps before exec, a checklist: 0, or -errno with *err filled. */
static int command_setup(const struct cd_child_args *a, char *path, size_t size, int *errfd,
			 struct cordon_error *err)
{
	int r, e;

	reset_signals();
	r = own_group(a, err);
	if (r < 0)
		return r;
	r = cd_limits_apply(a->rlimits, err);
	if (r < 0)
		return r;
	/* sync 3: what the command gets, read back for the report (pid 1 is suspended in vfork:
	 * the socket is ours alone); exec keeps them */
	r = cd_limits_send(a->sock, err);
	if (r < 0)
		return r;
	if (chdir(a->chdir) < 0)
		return cd_fail_errno(err, errno, "chdir", "%s", a->chdir);
	/* a session's agent comes from the descriptor cordon opened: nothing to look up */
	e = a->exec_fd >= 0 ? (snprintf(path, size, "%s", a->argv[0]), 0)
			    : resolve_command(a, path, size);
	if (e > 0)
		return cd_fail(err, e, "exec", "%s: %s", a->argv[0], strerror(e));
	/* the last steps before exec: from here on every syscall is filtered; the kernel runs
	 * both programs and the strictest answer wins */
	r = install_filter(a, a->baseline, path, err);
	if (r < 0)
		return r;
	if (a->filter) {
		r = install_filter(a, a->filter, path, err);
		if (r < 0)
			return r;
	}
	close_other_fds((int[]){ *errfd, a->exec_fd }, 2);
	return 0;
}

_Noreturn static void command_exec(const struct cd_child_args *a, int errfd)
{
	struct cordon_error err = { 0 };
	char path[4096];

	cd_timing("command: set up"); /* not after: its filter may allow no write */
	if (command_setup(a, path, sizeof(path), &errfd, &err) == 0) {
		int e;

		if (a->exec_fd >= 0)
			syscall(SYS_execveat, a->exec_fd, "", a->argv, a->envp, AT_EMPTY_PATH);
		else
			execve(path, a->argv, a->envp);
		e = errno;
		cd_fail(&err, e, "exec", "%s: %s", a->argv[0], strerror(e));
	}
	cd_write_all(errfd, &err, sizeof(err));
	_exit(CORDON_EXIT_FAILURE);
}

/* sync 3: fork the command and learn whether its exec worked (the pipe closes on exec). */
static int start_command(const struct cd_child_args *a, pid_t *ret, struct cordon_error *err)
{
	struct cordon_error child_err;
	int pipefd[2];
	ssize_t n;
	pid_t pid;

	if (pipe2(pipefd, O_CLOEXEC) < 0)
		return cd_fail_errno(err, errno, "init", "pipe");
	/* vfork: nothing of pid 1's memory is copied, and pid 1 waits until the exec */
	pid = vfork();
	if (pid < 0)
		return cd_fail_errno(err, errno, "init", "fork the command");
	if (pid == 0) {
		close(pipefd[0]);
		command_exec(a, pipefd[1]);
	}
	close(pipefd[1]);
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
	*ret = pid;
	return 0;
}

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

/* pid 1 after the command started (sync 4). */
struct init {
	const struct cd_child_args *a;
	int sigfd;     /* SIGCHLD */
	int timerfd;   /* the timeout, enforced here too: nothing inside can stop pid 1 */
	int phase;     /* 0, then 1 once SIGTERM went to everything, 2 once SIGKILL did */
	bool stop_told; /* a STOPPED the supervisor has not answered (CONT) yet: one at a time, so
			 * that a command stopping itself over and over cannot fill the socket and
			 * block pid 1, the deadline's keeper */
	pid_t command;
};

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
	kill(-1, in->phase == 1 ? SIGTERM : SIGKILL);
	cd_msg_send(in->a->sock, CD_MSG_TIMEOUT, in->phase, NULL, -1);
	if (in->phase == 1)
		arm(in->timerfd, in->a->deadline_ns + in->a->kill_after_ns);
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
			end_sandbox(in->a->sock, status);
		if (!in->stop_told) { /* job control: the supervisor follows it */
			in->stop_told = true;
			cd_msg_send(in->a->sock, CD_MSG_STOPPED, WSTOPSIG(status), NULL, -1);
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
		if (m->value && in->a->tty_fd >= 0)
			give_terminal(in->a->tty_fd, in->command);
		kill(-in->command, SIGCONT);
		break;
	default:
		break;
	}
}

_Noreturn static void pid1_loop(struct init *in)
{
	for (;;) {
		struct pollfd p[3] = { { in->sigfd, POLLIN, 0 }, { in->a->sock, POLLIN, 0 },
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
		if (cd_msg_recv(in->a->sock, &m, NULL) <= 0)
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

_Noreturn void cd_child_main(const struct cd_child_args *args)
{
	struct cd_child_args copy = *args, *a = &copy;
	struct cordon_error err = { 0 };
	struct init in = { .a = a, .sigfd = -1, .timerfd = -1 };
	sigset_t chld, stops;
	int r;

	/* SIGCHLD to a signalfd, blocked before the command exists so none is lost; the
	 * forwarded signals stay blocked as the supervisor left them: pid 1 gets them by message.
	 * The terminal's stop signals too: pid 1 is in the caller's process group, which may be
	 * the terminal's foreground until the command takes it */
	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	sigprocmask(SIG_BLOCK, &chld, NULL);
	sigemptyset(&stops);
	sigaddset(&stops, SIGTSTP);
	sigaddset(&stops, SIGTTIN);
	sigaddset(&stops, SIGTTOU);
	sigprocmask(SIG_BLOCK, &stops, NULL);
	r = pid1_setup(a, &err);
	cd_timing("pid 1: set up");
	if (r >= 0)
		r = wait_start(a->sock, &err);
	cd_timing("pid 1: START");
	if (r >= 0) {
		in.sigfd = signalfd(-1, &chld, SFD_CLOEXEC | SFD_NONBLOCK);
		if (in.sigfd < 0)
			r = cd_fail_errno(&err, errno, "init", "signalfd");
	}
	if (r >= 0 && a->deadline_ns) {
		in.timerfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
		if (in.timerfd < 0 || arm(in.timerfd, a->deadline_ns) < 0)
			r = cd_fail_errno(&err, errno, "timeout", "arm the timer");
	}
	if (r >= 0)
		r = start_command(a, &in.command, &err);
	if (r < 0) {
		cd_msg_send(a->sock, CD_MSG_ERROR, 0, &err, -1);
		_exit(CORDON_EXIT_FAILURE);
	}
	cd_timing("pid 1: command exec'd");
	cd_msg_send(a->sock, CD_MSG_RUNNING, in.command, NULL, -1);
	pid1_loop(&in);
}
