/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * agent.c - cordon-agent: a session's command (README "Sessions"). It runs inside the sandbox
 * like any command, with the sandbox's identity, seccomp filters and limits, and does what the
 * caller asks over fd 0, the session socket (proto.h): start commands, pass signals on, tell
 * their end, and do file operations, each in a worker process of its own, so that nothing the
 * sandbox does (a FIFO, a huge tree) can stall the agent. A seccomp program of the caller's
 * (FILTER: an OCI config's profile) is installed by each command's process before its exec,
 * never by the agent. When the session socket closes, the
 * agent exits, and pid 1 then ends the sandbox. Linked statically, libc only: it runs whatever
 * the root inside is (--rootfs).
 *
 * The sandbox's own code may take the agent over (same uid): the caller trusts nothing it says.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/filter.h>
#include <linux/seccomp.h>

#include "cordon.h"
#include "proto.h"
#include "sigreset.h"
#include "util.h"

#define MAX_CHANNELS 4096

/* A channel: waiting for its request, or a started command's (pid > 0). */
struct chan {
	int fd;
	pid_t pid;
};

static struct chan chans[MAX_CHANNELS];
static size_t n_chans;
static int session_fd = 0;
static int sigfd = -1;

/* FILTER: the commands' own seccomp program (the caller's: an OCI config's profile), installed
 * by each command's process as its last step before exec; the agent itself never runs it (a
 * profile that denies write or socket would stop the agent) */
static struct sock_filter prog[BPF_MAXINSNS];
static unsigned short prog_len;
static unsigned prog_flags;
static bool started_any; /* FILTER comes before the first EXEC, or never */

static int reply_error(int fd, int e, const char *what)
{
	char text[512];
	int n = snprintf(text, sizeof(text), "%s: %s", what, strerror(e));

	return cd_sp_send_simple(fd, CD_SP_ERROR, e, 0, text, n < 0 ? 0 : strlen(text), -1);
}

/* --- commands --- */

/* The environment: ours, with the request's KEY=VALUE added or replacing ours. */
static char **merge_env(char **add, size_t n_add)
{
	extern char **environ;
	size_t n = 0, k = 0;
	char **env;

	while (environ[n])
		n++;
	env = calloc(n + n_add + 1, sizeof(*env));
	if (!env)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		size_t key = strcspn(environ[i], "=");
		bool replaced = false;

		for (size_t j = 0; j < n_add && !replaced; j++)
			replaced = strncmp(add[j], environ[i], key + 1) == 0;
		if (!replaced)
			env[k++] = environ[i];
	}
	for (size_t j = 0; j < n_add; j++)
		env[k++] = add[j];
	return env;
}

struct exec_req {
	char *argv[1024 + 1];
	char *env[1024 + 1];
	size_t n_env;
	const char *cwd;
	int fd[3];
	bool tty;
};

/* The request's strings into r; false when malformed. */
static bool parse_exec(struct cd_sp_msg *m, struct exec_req *r)
{
	size_t argc = (size_t)(m->h.arg & 0xffffffffu), envc = (size_t)(m->h.arg >> 32), pos = 0;
	unsigned next_fd = 0;

	if (argc == 0 || argc > 1024 || envc > 1024)
		return false;
	for (size_t i = 0; i < argc; i++)
		if (!(r->argv[i] = (char *)cd_sp_next(m, &pos)))
			return false;
	r->argv[argc] = NULL;
	for (size_t i = 0; i < envc; i++)
		if (!(r->env[i] = (char *)cd_sp_next(m, &pos)) || !strchr(r->env[i], '='))
			return false;
	r->n_env = envc;
	r->cwd = cd_sp_next(m, &pos);
	if (!r->cwd || pos != m->h.len)
		return false;
	for (int i = 0; i < 3; i++)
		r->fd[i] = (m->h.flags & (CD_SP_EXEC_FD0 << i)) ? (next_fd < m->n_fd ? m->fd[next_fd++]
										      : -2)
								: -1;
	r->tty = m->h.flags & CD_SP_EXEC_TTY;
	return next_fd == m->n_fd && r->fd[0] != -2 && r->fd[1] != -2 && r->fd[2] != -2;
}

/* In the child: fds 0-2 as asked (/dev/null for those not given), nothing else open. */
static int child_fds(const struct exec_req *r)
{
	int fd[3];

	for (int i = 0; i < 3; i++) {
		fd[i] = r->fd[i] >= 0 ? fcntl(r->fd[i], F_DUPFD_CLOEXEC, 10)
				      : open("/dev/null", O_RDWR | O_CLOEXEC);
		if (fd[i] < 0)
			return -errno;
	}
	for (int i = 0; i < 3; i++)
		if (dup2(fd[i], i) < 0)
			return -errno;
	return 0;
}

/* The caller's program, in the calling process (no_new_privs: cordon set it for the sandbox) */
static int install_prog(void)
{
	struct sock_fprog fp = { .len = prog_len, .filter = prog };

	return (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, prog_flags, &fp);
}

/* FILTER: checked (the kernel checks the instructions when a command installs them), kept */
static void set_filter(int fd, const struct cd_sp_msg *m)
{
	const unsigned known = SECCOMP_FILTER_FLAG_LOG | SECCOMP_FILTER_FLAG_SPEC_ALLOW;
	size_t n = m->h.len / sizeof(struct sock_filter);

	if (prog_len || started_any)
		reply_error(fd, EEXIST, "a program after the first, or after a command");
	else if (m->n_fd || m->h.len % sizeof(struct sock_filter) || n == 0 || n > BPF_MAXINSNS ||
		 (m->h.flags & ~known))
		reply_error(fd, EINVAL, "malformed program");
	else if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) < 0) /* see below */
		reply_error(fd, errno, "PR_SET_DUMPABLE");
	else {
		/* the commands run under the program and the agent does not: none of them may
		 * ptrace it or write its memory (same uid) to start one without it. Each command
		 * is dumpable again after its exec. */
		memcpy(prog, m->data, m->h.len);
		prog_len = (unsigned short)n;
		prog_flags = m->h.flags;
		cd_sp_send_simple(fd, CD_SP_OK, 0, 0, NULL, 0, -1);
	}
}

_Noreturn static void child_exec(const struct exec_req *r, int errpipe)
{
	extern char **environ;
	const char *step = "exec";
	int e = 0;

	cd_reset_signals();
	if ((r->tty ? setsid() : setpgid(0, 0)) < 0)
		e = errno, step = "session";
	if (!e && child_fds(r) < 0)
		e = errno, step = "descriptors";
	if (!e && r->tty && ioctl(0, TIOCSCTTY, 0) < 0)
		e = errno, step = "terminal";
	if (!e && *r->cwd && chdir(r->cwd) < 0)
		e = errno, step = "cwd";
	if (!e) {
		char **env = merge_env((char **)r->env, r->n_env);

		if (!env) {
			e = ENOMEM;
		} else {
			environ = env; /* execvp looks PATH up in it */
			/* last: from here on the caller's program filters every call too (after
			 * cordon's own, inherited: the strictest answer wins) */
			if (prog_len && install_prog() < 0) {
				e = errno, step = "seccomp";
			} else {
				execvp(r->argv[0], r->argv);
				e = errno;
			}
		}
	}
	dprintf(errpipe, "%d %s", e, step);
	_exit(127);
}

/* fork and exec; 0 with *ret, or -errno and a reply already sent */
static int start_command(int fd, struct cd_sp_msg *m, pid_t *ret)
{
	struct exec_req r;
	char buf[64] = "";
	int pipefd[2], e = 0;
	char step[32] = "exec";
	ssize_t n;
	pid_t pid;

	if (!parse_exec(m, &r))
		return reply_error(fd, EPROTO, "malformed request"), -EPROTO;
	started_any = true;
	if (pipe2(pipefd, O_CLOEXEC) < 0)
		return reply_error(fd, errno, "pipe"), -EIO;
	pid = fork();
	if (pid < 0) {
		e = errno;
		close(pipefd[0]);
		close(pipefd[1]);
		return reply_error(fd, e, "fork"), -e;
	}
	if (pid == 0) {
		close(pipefd[0]);
		child_exec(&r, pipefd[1]);
	}
	close(pipefd[1]);
	do
		n = read(pipefd[0], buf, sizeof(buf) - 1);
	while (n < 0 && errno == EINTR);
	close(pipefd[0]);
	if (n > 0) {
		buf[n] = '\0';
		if (sscanf(buf, "%d %31s", &e, step) != 2 || e <= 0)
			e = EIO;
		waitpid(pid, NULL, 0);
		return reply_error(fd, e, strcmp(step, "exec") ? step : r.argv[0]), -e;
	}
	*ret = pid;
	return cd_sp_send_simple(fd, CD_SP_STARTED, pid, 0, NULL, 0, -1) < 0 ? -EIO : 0;
}

/* --- files: in a worker process (files.c's functions return 0 or -errno) --- */

int cd_agent_file_op(int fd, const struct cd_sp_msg *m);
int cd_agent_connect(int fd, const struct cd_sp_msg *m); /* agent_ports.c */

static void close_chan(size_t i)
{
	close(chans[i].fd);
	chans[i] = chans[--n_chans];
}

/* A channel's first message: the request. */
static void on_request(size_t i)
{
	struct cd_sp_msg m;
	int fd = chans[i].fd, r = cd_sp_recv(fd, &m, CD_SP_MAXFD);
	pid_t pid = 0;

	if (r <= 0) {
		close_chan(i);
		return;
	}
	if (m.h.type == CD_SP_EXEC) {
		r = start_command(fd, &m, &pid);
		cd_sp_msg_close(&m);
		if (r < 0)
			close_chan(i);
		else
			chans[i].pid = pid;
		return;
	}
	if (m.h.type == CD_SP_FILTER) {
		set_filter(fd, &m);
		cd_sp_msg_close(&m);
		close_chan(i);
		return;
	}
	if (m.h.type == CD_SP_CONNECT) { /* non-blocking: no worker needed */
		cd_agent_connect(fd, &m);
		cd_sp_msg_close(&m);
		close_chan(i);
		return;
	}
	pid = fork();
	if (pid == 0) { /* the worker keeps its channel and the request's descriptor */
		for (size_t j = 0; j < n_chans; j++)
			if (chans[j].fd != fd && chans[j].fd >= 0)
				close(chans[j].fd);
		close(session_fd);
		close(sigfd);
		_exit(cd_agent_file_op(fd, &m) < 0 ? 1 : 0);
	}
	if (pid < 0)
		reply_error(fd, errno, "fork");
	cd_sp_msg_close(&m);
	close_chan(i); /* the worker has it */
}

/* A started command's channel: a signal for it, or the caller let go of it. */
static void on_command_channel(size_t i)
{
	struct cd_sp_msg m;
	int r = cd_sp_recv(chans[i].fd, &m, 0);

	if (r <= 0) { /* the caller forgot it: it runs on, unwatched */
		chans[i].fd = cd_safe_close(chans[i].fd);
		return;
	}
	if (m.h.type == CD_SP_SIGNAL && m.h.value > 0 && m.h.value < NSIG)
		kill(m.h.flags & 1 ? -chans[i].pid : chans[i].pid, m.h.value);
}

static void reap(void)
{
	struct signalfd_siginfo si;
	int status;
	pid_t pid;

	while (read(sigfd, &si, sizeof(si)) > 0)
		;
	while ((pid = waitpid(-1, &status, WNOHANG)) > 0)
		for (size_t i = 0; i < n_chans; i++) {
			if (chans[i].pid != pid)
				continue;
			if (chans[i].fd >= 0)
				cd_sp_send_simple(chans[i].fd, CD_SP_EXITED, status, 0, NULL, 0, -1);
			if (chans[i].fd >= 0)
				close(chans[i].fd);
			chans[i] = chans[--n_chans];
			break;
		}
}

static void new_channel(void)
{
	struct cd_sp_msg m;
	int r = cd_sp_recv(session_fd, &m, 1);

	if (r == 0 || (r < 0 && r != -EPROTO && r != -EAGAIN))
		exit(0); /* the session is over */
	if (r < 0)
		return;
	if (m.h.type != CD_SP_CHANNEL || m.n_fd != 1 || n_chans >= MAX_CHANNELS) {
		cd_sp_msg_close(&m);
		return;
	}
	chans[n_chans++] = (struct chan){ .fd = m.fd[0], .pid = 0 };
}

static struct pollfd polls[MAX_CHANNELS + 2];

int main(void)
{
	sigset_t chld;

	/* the caller's signals are its own to send, per command */
	signal(SIGPIPE, SIG_IGN);
	signal(SIGINT, SIG_IGN);
	signal(SIGHUP, SIG_IGN);
	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	sigprocmask(SIG_BLOCK, &chld, NULL);
	sigfd = signalfd(-1, &chld, SFD_CLOEXEC | SFD_NONBLOCK);
	if (sigfd < 0 || fcntl(session_fd, F_SETFD, FD_CLOEXEC) < 0)
		return 125;
	for (;;) {
		size_t n = n_chans;

		polls[0] = (struct pollfd){ session_fd, POLLIN, 0 };
		polls[1] = (struct pollfd){ sigfd, POLLIN, 0 };
		for (size_t i = 0; i < n; i++)
			polls[2 + i] = (struct pollfd){ chans[i].fd, POLLIN, 0 };
		if (poll(polls, n + 2, -1) < 0)
			continue;
		if (polls[1].revents)
			reap();
		/* channels from the end: closing one moves the last into its place */
		for (size_t i = n; i-- > 0;) {
			if (!polls[2 + i].revents || i >= n_chans || chans[i].fd != polls[2 + i].fd)
				continue;
			if (chans[i].pid)
				on_command_channel(i);
			else
				on_request(i);
		}
		if (polls[0].revents)
			new_channel();
	}
}
