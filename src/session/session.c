/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * session.c - sessions (cordon.h), the caller's side. Runs in the caller's process, any thread.
 *
 * cordon_session_create() forks the session's supervisor (holder.c), which runs the sandbox
 * with cordon's agent (agent.c) as its command and tells when it is ready. Each operation then
 * opens a channel of its own to the agent (proto.h). Whatever comes from the agent is checked:
 * the sandbox's code can take it over.
 */
#include <fcntl.h>
#include <limits.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "config.h"
#include "holder.h"
#include "layer.h"
#include "libexec.h"
#include "proto.h"
#include "proxy.h"
#include "rmtree.h"
#include "sigreset.h"
#include "util.h"
#include "workdir.h"

#define MAX_LIST_DEPTH 64
/* The agent answers a request (a message of it: a listing's entries one by one) within this, or
 * the request fails: a worker the sandbox stopped (SIGSTOP) must not hold the caller for ever. */
#define REPLY_TIMEOUT_MS 60000
/* A listing's bytes of paths and link targets, at most: whatever max entries the caller asked
 * for, a taken-over agent must not make it hold gigabytes */
#define LIST_MAX_BYTES (64u << 20)

struct cordon_session {
	int ctl;    /* the session socket: CHANNEL messages to the agent */
	/* cordon_session_set_bounds(): set before the session is shared between threads */
	int cancel_fd;	   /* readable: every wait on the agent ends (ECANCELED); -1: none */
	uint64_t call_ns;  /* a whole call's deadline; 0: REPLY_TIMEOUT_MS a message */
	size_t list_bytes; /* a listing's paths, names and link targets, at most */
	int holder; /* the supervisor's socket */
	pid_t pid;  /* the supervisor */
	char id[33];
	pthread_mutex_t lock; /* the end, as the supervisor sent it */
	bool ended;
	struct cd_holder_msg end;
	/* CORDON_SESSION_REMOVE_WORKDIR: the workdir (resolved at create) and what it was, removed
	 * by cordon_session_destroy() when the supervisor died before it could; NULL: not ours */
	char *workdir;
	struct stat workdir_st;
};

struct cordon_process {
	int chan;
	pid_t pid;
	bool ended;
	int status;
};

struct cordon_upload {
	int chan;
	int cancel_fd;
	uint64_t call_ns;
};

/* How long one call may wait on the agent, and what cuts it short (cordon_session_set_bounds).
 * end_ns 0: each message gets REPLY_TIMEOUT_MS of its own. */
struct wait {
	int cancel_fd;
	uint64_t end_ns;
};

static struct wait wait_of(int cancel_fd, uint64_t call_ns)
{
	return (struct wait){ .cancel_fd = cancel_fd, .end_ns = call_ns ? cd_now_ns() + call_ns : 0 };
}

/* Until fd has events (1), the deadline passes (0) or the cancel fd is readable (-ECANCELED). */
static int wait_fd(const struct wait *w, int fd, short events)
{
	uint64_t end = w->end_ns ? w->end_ns : cd_now_ns() + REPLY_TIMEOUT_MS * NSEC_PER_MSEC;

	for (;;) {
		struct pollfd p[2] = { { fd, events, 0 }, { w->cancel_fd, POLLIN, 0 } };
		uint64_t now = cd_now_ns();
		int r;

		if (now >= end)
			return 0;
		r = poll(p, w->cancel_fd >= 0 ? 2 : 1, (int)((end - now) / NSEC_PER_MSEC) + 1);
		if (r < 0 && errno != EINTR)
			return -errno;
		if (r > 0 && p[1].revents)
			return -ECANCELED;
		if (r > 0 && p[0].revents)
			return 1;
	}
}

/* --- create, destroy --- */

static void session_free(struct cordon_session *s)
{
	if (!s)
		return;
	cd_closep(&s->ctl);
	cd_closep(&s->holder);
	pthread_mutex_destroy(&s->lock);
	free(s->workdir);
	free(s);
}

/* With CORDON_SESSION_REMOVE_WORKDIR: the workdir as it is now (a relative path resolved
 * against our current directory, as the supervisor forked now resolves it), for
 * cordon_session_destroy() to remove when the supervisor could not (killed alone: SIGKILL, the
 * OOM killer). cordon_session_export() drops it: the importer does not hold the workdir. */
static int remember_workdir(struct cordon_session *s, const struct cordon_config *c,
			    unsigned flags, struct cordon_error *err)
{
	if (!(flags & CORDON_SESSION_REMOVE_WORKDIR))
		return 0;
	/* resolved as the supervisor resolves it (cd_workdir_open: a symlink only of root's or
	 * ours, never the last name, the refused places refused), never by realpath(), which
	 * follows anyone's symlink: what another user's symlink pointed at when we looked is
	 * not the sandbox's workdir */
	struct cd_marks marks;
	struct cd_hostpath hp = { .fd = -1 };
	int r;

	cd_marks_load(&marks);
	r = cd_workdir_open(c->fs.workdir, &marks, &hp, err);
	cd_marks_done(&marks);
	if (r < 0)
		return r;
	s->workdir = CD_TAKE_PTR(hp.path);
	s->workdir_st = hp.st;
	cd_hostpath_done(&hp);
	return 0;
}

/* In the forked child: a session of its own (no terminal's signals), default signals, fd 0 the
 * agent's socket, 3 and 4 the holder's and the agent's program, 5.. the namespaces the config
 * joins (its descriptors, moved there in our copy of it), nothing else of the caller's open. */
_Noreturn static void become_supervisor(const struct cordon_config *cfg, unsigned flags,
					int agent_end, int holder_end, int exec_fd)
{
	struct cordon_config copy = *cfg, *c = &copy;
	const int high = 5 + CD_JOIN_N; /* above every fixed number */
	int join[CD_JOIN_N];

	setsid();
	cd_reset_signals(); /* the caller's own handlers and ignored signals are not ours */
	/* out of the way first: each may be any of 0, 3 and 4 */
	agent_end = fcntl(agent_end, F_DUPFD_CLOEXEC, high);
	holder_end = fcntl(holder_end, F_DUPFD_CLOEXEC, high);
	exec_fd = fcntl(exec_fd, F_DUPFD_CLOEXEC, high);
	for (int i = 0; i < CD_JOIN_N; i++) {
		join[i] = c->ns.join[i] < 0 ? -1 : fcntl(c->ns.join[i], F_DUPFD_CLOEXEC, high);
		if (c->ns.join[i] >= 0 && join[i] < 0)
			_exit(CORDON_EXIT_FAILURE);
	}
	if (agent_end < 0 || holder_end < 0 || exec_fd < 0 || dup2(agent_end, 0) < 0 ||
	    dup2(holder_end, 3) != 3 || dup2(exec_fd, 4) != 4)
		_exit(CORDON_EXIT_FAILURE);
	fcntl(3, F_SETFD, FD_CLOEXEC);
	fcntl(4, F_SETFD, FD_CLOEXEC);
	for (int i = 0; i < CD_JOIN_N; i++) {
		c->ns.join[i] = join[i] < 0 ? -1 : dup3(join[i], 5 + i, O_CLOEXEC);
		if (join[i] >= 0 && c->ns.join[i] != 5 + i)
			_exit(CORDON_EXIT_FAILURE);
	}
	close_range((unsigned)high, ~0u, 0);
	cd_holder_main(c, flags, 3, 4);
}

static int reap_supervisor(pid_t pid)
{
	int status = 0;

	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	return status;
}

static int open_channel(struct cordon_session *s, const struct wait *w, struct cordon_error *err);
static int recv_reply(int chan, struct cd_sp_msg *m, unsigned max_fd, const struct wait *w,
		      const char *step, struct cordon_error *err);

/* The commands' own seccomp program (cordon_config_set_seccomp_bpf) to the agent, before any
 * command: it keeps it for every EXEC. */
static int send_filter(struct cordon_session *s, const struct cordon_config *c,
		       struct cordon_error *err)
{
	_cleanup_free_ struct cd_sp_msg *m = NULL;
	struct cd_sp_hdr h = { .type = CD_SP_FILTER, .len = (uint32_t)c->seccomp.bpf_len,
			       .flags = c->seccomp.bpf_flags };
	struct wait w = wait_of(-1, 0);
	int chan, r;

	if (!c->seccomp.bpf)
		return 0;
	m = malloc(sizeof(*m));
	if (!m)
		return cd_fail(err, ENOMEM, "seccomp", "out of memory");
	chan = open_channel(s, &w, err);
	if (chan < 0)
		return chan;
	r = cd_sp_send(chan, &h, c->seccomp.bpf, NULL, 0);
	if (r < 0)
		r = cd_fail(err, -r, "seccomp", "cannot send the commands' program to the agent");
	else
		r = recv_reply(chan, m, 0, &w, "seccomp", err);
	close(chan);
	if (r >= 0 && m->h.type != CD_SP_OK)
		r = cd_fail(err, EPROTO, "seccomp", "malformed reply from the sandbox's agent");
	return r < 0 ? r : 0;
}

int cordon_session_create(const struct cordon_config *c, unsigned flags,
			  struct cordon_session **ret, struct cordon_error *err)
{
	struct cordon_session *s = NULL;
	_cleanup_close_ int exec_fd = -1;
	int agent[2] = { -1, -1 }, holder[2] = { -1, -1 };
	struct cd_holder_msg m;
	pid_t pid;
	int r;

	cd_error_clear(err);
	if (!c || !ret || (flags & ~(CORDON_SESSION_REMOVE_WORKDIR | CORDON_SESSION_FREEZABLE)))
		return cd_fail(err, EINVAL, "session", "no config, or unknown flags");
	exec_fd = cd_libexec_open("cordon-agent", "CORDON_AGENT", err);
	if (exec_fd < 0)
		return exec_fd;
	s = calloc(1, sizeof(*s));
	if (!s)
		return cd_fail(err, ENOMEM, "session", "out of memory");
	s->ctl = s->holder = s->cancel_fd = -1;
	pthread_mutex_init(&s->lock, NULL);
	r = remember_workdir(s, c, flags, err);
	if (r < 0) {
		session_free(s);
		return r;
	}
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, agent) < 0 ||
	    socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, holder) < 0) {
		int e = errno;

		cd_closep(&agent[0]), cd_closep(&agent[1]);
		session_free(s);
		return cd_fail_errno(err, e, "session", "socketpair");
	}
	s->ctl = agent[0];
	s->holder = holder[0];
	pid = fork();
	if (pid == 0)
		become_supervisor(c, flags, agent[1], holder[1], exec_fd);
	close(agent[1]);
	close(holder[1]);
	if (pid < 0) {
		int e = errno;

		session_free(s);
		return cd_fail_errno(err, e, "session", "fork the session's supervisor");
	}
	s->pid = pid;
	r = cd_holder_recv(s->holder, &m, 0);
	if (r > 0 && m.type == CD_HOLDER_READY) {
		memcpy(s->id, m.res.id, sizeof(s->id));
		r = send_filter(s, c, err);
		if (r < 0) { /* our sockets close: the supervisor ends the sandbox */
			session_free(s);
			reap_supervisor(pid);
			return r;
		}
		*ret = s;
		return 0;
	}
	/* a setup failure: the supervisor said why, or died */
	reap_supervisor(pid);
	session_free(s);
	if (r > 0 && m.type == CD_HOLDER_ENDED && m.ret < 0) {
		if (err)
			*err = m.err;
		return m.ret;
	}
	return cd_fail(err, EIO, "session", "the session's supervisor ended during setup");
}

int cordon_session_export(struct cordon_session *s, int ret_fds[2], char ret_id[33],
			  pid_t *ret_pid)
{
	if (!s || s->ctl < 0 || s->holder < 0)
		return -EINVAL;
	ret_fds[0] = CD_TAKE_FD(s->ctl);
	ret_fds[1] = CD_TAKE_FD(s->holder);
	memcpy(ret_id, s->id, sizeof(s->id));
	*ret_pid = s->pid;
	session_free(s);
	return 0;
}

int cordon_session_import(const int fds[2], const char *id, pid_t pid,
			  struct cordon_session **ret, struct cordon_error *err)
{
	struct cordon_session *s;

	cd_error_clear(err);
	if (!fds || fds[0] < 0 || fds[1] < 0 || !id || strlen(id) != 32 || pid <= 0)
		return cd_fail(err, EINVAL, "session", "not an exported session");
	s = calloc(1, sizeof(*s));
	if (!s)
		return cd_fail(err, ENOMEM, "session", "out of memory");
	pthread_mutex_init(&s->lock, NULL);
	s->cancel_fd = -1;
	s->ctl = fds[0];
	s->holder = fds[1];
	s->pid = pid;
	memcpy(s->id, id, sizeof(s->id));
	*ret = s;
	return 0;
}

const char *cordon_session_id(const struct cordon_session *s)
{
	return s->id;
}

pid_t cordon_session_pid(const struct cordon_session *s)
{
	return s->pid;
}

int cordon_session_fd(const struct cordon_session *s)
{
	return s->holder;
}

int cordon_session_set_bounds(struct cordon_session *s, int cancel_fd, uint64_t call_ns,
			      size_t list_bytes)
{
	if (!s)
		return -EINVAL;
	s->cancel_fd = cancel_fd;
	s->call_ns = call_ns;
	s->list_bytes = list_bytes;
	return 0;
}

/* The supervisor kills pid 1 (the whole sandbox goes with it) as soon as it reads this; the
 * agent's end of every channel then closes, and each call waiting on it returns. */
int cordon_session_kill(struct cordon_session *s)
{
	struct cd_holder_msg m = { .type = CD_HOLDER_DESTROY };

	if (!s || s->holder < 0)
		return -EINVAL;
	return cd_holder_send(s->holder, &m, MSG_DONTWAIT);
}

int cordon_session_destroy(struct cordon_session *s, struct cordon_result *res,
			   struct cordon_error *err)
{
	struct cd_holder_msg m = { .type = CD_HOLDER_DESTROY };
	int status, r;

	cd_error_clear(err);
	if (!s)
		return 0;
	cd_holder_send(s->holder, &m, MSG_DONTWAIT);
	s->ctl = cd_safe_close(s->ctl); /* the agent sees the end too */
	if (s->ended) { /* a checkpoint's answer was the end */
		m = s->end;
		r = 1;
	} else {
		/* a supervisor that exited with our DESTROY unread leaves ECONNRESET before its
		 * ENDED: frame.c reads past it */
		do
			r = cd_holder_recv(s->holder, &m, 0);
		while (r > 0 && m.type != CD_HOLDER_ENDED);
	}
	status = reap_supervisor(s->pid);
	if (r > 0) {
		if (res)
			*res = m.res;
		if (m.ret < 0 && err)
			*err = m.err;
		r = m.ret < 0 ? m.ret : 0;
	} else {
		if (res)
			memset(res, 0, sizeof(*res));
		r = cd_fail(err, EIO, "session", "the session's supervisor ended without a result "
			    "(%s %d)", WIFSIGNALED(status) ? "signal" : "status",
			    WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
		/* it could not remove the workdir: every process of the sandbox died with it (pid
		 * 1's parent-death signal takes the pid namespace down) */
		if (s->workdir)
			cd_rmtree_path(s->workdir, &s->workdir_st);
	}
	session_free(s);
	return r;
}

/* One request to the supervisor and its answer (s->lock held across both, so that answers
 * never cross): 0 with m the answer of type want, or -ESRCH (the session has ended: an ENDED
 * message is kept for cordon_session_destroy()). timeout_ms < 0: no deadline. */
static int holder_call(struct cordon_session *s, struct cd_holder_msg *m, uint32_t want,
		       int timeout_ms)
{
	struct pollfd p = { s->holder, POLLIN, 0 };
	int r = -ESRCH;

	pthread_mutex_lock(&s->lock);
	if (!s->ended && cd_holder_send(s->holder, m, 0) >= 0 &&
	    (timeout_ms < 0 || poll(&p, 1, timeout_ms) > 0) && cd_holder_recv(s->holder, m, 0) > 0) {
		if (m->type == CD_HOLDER_ENDED) {
			s->ended = true; /* keep its result for cordon_session_destroy() */
			s->end = *m;
		} else if (m->type == want) {
			r = 0;
		}
	}
	pthread_mutex_unlock(&s->lock);
	return r;
}

int cordon_session_checkpoint(struct cordon_session *s, char ret_id[17],
			      struct cordon_error *err)
{
	struct cd_holder_msg m = { .type = CD_HOLDER_CHECKPOINT };

	cd_error_clear(err);
	if (!s || !ret_id)
		return cd_fail(err, EINVAL, "session", "no session");
	if (holder_call(s, &m, CD_HOLDER_CHECKPOINT, -1) < 0)
		return cd_fail(err, ESRCH, "session", "the session has ended");
	if (m.ret < 0) {
		if (err)
			*err = m.err;
		return m.ret;
	}
	memcpy(ret_id, m.res.layer_id, 17);
	return 0;
}

int cordon_session_freeze(struct cordon_session *s, int frozen, struct cordon_error *err)
{
	struct cd_holder_msg m = { .type = CD_HOLDER_FREEZE, .ret = frozen ? 1 : 0 };

	cd_error_clear(err);
	if (!s)
		return cd_fail(err, EINVAL, "session", "no session");
	if (holder_call(s, &m, CD_HOLDER_FREEZE, -1) < 0)
		return cd_fail(err, ESRCH, "session", "the session has ended");
	if (m.ret < 0 && err)
		*err = m.err;
	return m.ret < 0 ? m.ret : 0;
}

int cordon_session_fork(struct cordon_session *src, const struct cordon_config *c,
			unsigned flags, struct cordon_session **ret, struct cordon_error *err)
{
	struct cordon_config copy;
	char id[17];
	int r, fd;

	if (!c)
		return cd_fail(err, EINVAL, "session", "no config");
	r = cordon_session_checkpoint(src, id, err);
	if (r < 0)
		return r;
	copy = *c; /* shallow: the supervisor forked from us takes its own copy */
	copy.cow.on = true;
	copy.cow.from = id;
	r = cordon_session_create(&copy, flags, ret, err);
	/* seeded into the new session's layer (or not needed any more) */
	if (cd_layer_store_open(c->cow.layer_dir, NULL, &fd, NULL, NULL) >= 0) {
		(void)cd_layer_discard(fd, id, NULL);
		close(fd);
	}
	return r;
}

/* --- channels --- */

/* A new channel to the agent: our end. */
/* The agent is the sandbox's: one that reads nothing must not hold the caller's thread. Our
 * ends of its sockets are O_NONBLOCK, and a send waits for room within the call's deadline. */
static int send_channel(int ctl, int fd, const struct wait *w)
{
	int r;

	if (fcntl(ctl, F_SETFL, O_RDWR | O_NONBLOCK) < 0)
		return -errno;
	for (;;) {
		r = cd_sp_send_simple(ctl, CD_SP_CHANNEL, 0, 0, NULL, 0, fd);
		if (r != -EAGAIN)
			return r;
		r = wait_fd(w, ctl, POLLOUT);
		if (r <= 0)
			return r == 0 ? -ETIMEDOUT : r;
	}
}

static int open_channel(struct cordon_session *s, const struct wait *w, struct cordon_error *err)
{
	int sv[2], r;

	if (s->ctl < 0)
		return cd_fail(err, ESRCH, "session", "the session has ended");
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
		return cd_fail_errno(err, errno, "session", "socketpair");
	if (fcntl(sv[0], F_SETFL, O_RDWR | O_NONBLOCK) < 0) { /* ours only: see send_channel */
		r = -errno;
		close(sv[0]);
		close(sv[1]);
		return cd_fail_errno(err, -r, "session", "O_NONBLOCK");
	}
	r = send_channel(s->ctl, sv[1], w);
	close(sv[1]);
	if (r < 0)
		close(sv[0]);
	if (r == -ETIMEDOUT)
		return cd_fail(err, ETIMEDOUT, "session", "the sandbox's agent took no request in "
			       "time");
	if (r == -ECANCELED)
		return cd_fail(err, ECANCELED, "session", "the session is being ended");
	if (r < 0)
		return cd_fail(err, ESRCH, "session", "the session has ended (%s)", strerror(-r));
	return sv[0];
}

/* The agent's answer: 1 with *m; an ERROR becomes err (the errno inside); EOF: ESRCH. */
static int recv_reply(int chan, struct cd_sp_msg *m, unsigned max_fd, const struct wait *w,
		      const char *step, struct cordon_error *err)
{
	int r = wait_fd(w, chan, POLLIN);

	if (r == 0)
		return cd_fail(err, ETIMEDOUT, step, "the sandbox's agent did not answer in time");
	if (r == -ECANCELED)
		return cd_fail(err, ECANCELED, step, "the session is being ended");
	if (r < 0)
		return cd_fail_errno(err, -r, step, "poll");
	r = cd_sp_recv(chan, m, max_fd);
	if (r == 0 || r == -ECONNRESET || r == -EPIPE) /* the agent is gone */
		return cd_fail(err, ESRCH, step, "the session ended");
	if (r < 0) /* the frame's reasons (frame.h) are one to the caller: a malformed reply */
		return cd_fail(err, r == -EBADMSG || r == -EMSGSIZE ? EPROTO : -r, step,
			       "malformed reply from the sandbox's agent: %s", strerror(-r));
	if (m->h.type == CD_SP_ERROR) {
		int e = m->h.value > 0 && m->h.value < 4096 ? m->h.value : EIO;

		cd_sp_msg_close(m);
		return cd_fail(err, e, step, "%.400s", m->data);
	}
	return 1;
}

/* --- commands --- */

static int put(char *buf, size_t *len, const char *s)
{
	size_t n = strlen(s) + 1;

	if (*len + n > CD_SP_MAX)
		return -E2BIG;
	memcpy(buf + *len, s, n);
	*len += n;
	return 0;
}

static int pack_exec(const struct cordon_exec *e, char *buf, struct cd_sp_hdr *h,
		     struct cordon_error *err)
{
	size_t len = 0, argc = 0, envc = 0;
	int r = 0;

	for (; e->argv[argc] && r >= 0; argc++)
		r = put(buf, &len, e->argv[argc]);
	for (; e->env && e->env[envc] && r >= 0; envc++) {
		const char *eq = strchr(e->env[envc], '=');

		if (!eq || eq == e->env[envc])
			return cd_fail(err, EINVAL, "exec", "environment entry \"%.100s\" is not "
				       "KEY=VALUE", e->env[envc]);
		r = put(buf, &len, e->env[envc]);
	}
	if (r >= 0)
		r = put(buf, &len, e->cwd ? e->cwd : "");
	if (r < 0 || argc > 1024 || envc > 1024)
		return cd_fail(err, E2BIG, "exec", "the command, its environment and directory are "
			       "more than a session takes (%u KiB, 1024 arguments and variables)",
			       CD_SP_MAX / 1024);
	h->type = CD_SP_EXEC;
	h->len = (uint32_t)len;
	h->arg = (uint64_t)argc | (uint64_t)envc << 32;
	return 0;
}

int cordon_session_exec(struct cordon_session *s, const struct cordon_exec *e,
			struct cordon_process **ret, struct cordon_error *err)
{
	_cleanup_free_ char *buf = malloc(CD_SP_MAX);
	_cleanup_free_ struct cd_sp_msg *m = malloc(sizeof(*m));
	struct cd_sp_hdr h = { 0 };
	struct cordon_process *p;
	struct wait w;
	int fds[3], n = 0, chan, r;

	cd_error_clear(err);
	if (!buf || !m)
		return cd_fail(err, ENOMEM, "exec", "out of memory");
	if (!e || !e->argv || !e->argv[0] || !e->argv[0][0])
		return cd_fail(err, EINVAL, "exec", "no command given");
	if (e->flags & ~CORDON_EXEC_TTY)
		return cd_fail(err, EINVAL, "exec", "unknown flags");
	r = pack_exec(e, buf, &h, err);
	if (r < 0)
		return r;
	for (int i = 0; i < 3; i++)
		if (e->fd[i] >= 0) {
			h.flags |= CD_SP_EXEC_FD0 << i;
			fds[n++] = e->fd[i];
		}
	if (e->flags & CORDON_EXEC_TTY)
		h.flags |= CD_SP_EXEC_TTY;
	w = wait_of(s->cancel_fd, s->call_ns);
	chan = open_channel(s, &w, err);
	if (chan < 0)
		return chan;
	r = cd_sp_send(chan, &h, buf, fds, (unsigned)n);
	if (r < 0) {
		close(chan);
		return cd_fail(err, -r, "exec", "cannot send the command to the sandbox's agent");
	}
	r = recv_reply(chan, m, 0, &w, "exec", err);
	if (r < 0 || m->h.type != CD_SP_STARTED || m->h.value <= 0) {
		close(chan);
		return r < 0 ? r : cd_fail(err, EPROTO, "exec", "malformed reply from the agent");
	}
	p = calloc(1, sizeof(*p));
	if (!p) {
		close(chan);
		return cd_fail(err, ENOMEM, "exec", "out of memory");
	}
	*p = (struct cordon_process){ .chan = chan, .pid = m->h.value };
	*ret = p;
	return 0;
}

pid_t cordon_process_pid(const struct cordon_process *p)
{
	return p->pid;
}

int cordon_process_fd(const struct cordon_process *p)
{
	return p->chan;
}

int cordon_process_signal(struct cordon_process *p, int sig, int group, struct cordon_error *err)
{
	struct cd_sp_hdr h = { .type = CD_SP_SIGNAL, .value = sig, .flags = group ? 1 : 0 };
	int r;

	cd_error_clear(err);
	if (sig <= 0 || sig >= NSIG)
		return cd_fail(err, EINVAL, "signal", "%d is not a signal", sig);
	if (p->ended)
		return cd_fail(err, ESRCH, "signal", "the process has ended");
	r = cd_sp_send(p->chan, &h, NULL, NULL, 0); /* O_NONBLOCK (open_channel) */
	if (r == -EAGAIN)
		return cd_fail(err, EAGAIN, "signal", "the sandbox's agent reads no more signals");
	return r < 0 ? cd_fail(err, ESRCH, "signal", "the process has ended") : 0;
}

int cordon_process_wait(struct cordon_process *p, uint64_t timeout_ns, int *ret_status,
			struct cordon_error *err)
{
	struct pollfd pfd = { p->chan, POLLIN, 0 };
	struct cd_sp_msg *m;
	int ms, r;

	cd_error_clear(err);
	if (p->ended)
		goto ended;
	ms = timeout_ns == UINT64_MAX ? -1 : (int)(timeout_ns / NSEC_PER_MSEC > INT_MAX
						   ? INT_MAX : timeout_ns / NSEC_PER_MSEC);
	do
		r = poll(&pfd, 1, ms);
	while (r < 0 && errno == EINTR);
	if (r < 0)
		return cd_fail_errno(err, errno, "wait", "poll");
	if (r == 0)
		return 0;
	m = malloc(sizeof(*m));
	if (!m)
		return cd_fail(err, ENOMEM, "wait", "out of memory");
	r = cd_sp_recv(p->chan, m, 0);
	if (r > 0 && m->h.type == CD_SP_EXITED) {
		p->ended = true;
		p->status = m->h.value;
	}
	free(m);
	if (!p->ended)
		return cd_fail(err, ESRCH, "wait", "the session ended before the process did");
ended:
	if (ret_status)
		*ret_status = p->status;
	return 1;
}

void cordon_process_free(struct cordon_process *p)
{
	if (!p)
		return;
	cd_closep(&p->chan);
	free(p);
}

/* --- files --- */

/* One request on a channel of its own: the channel, or -errno. */
static int file_request(struct cordon_session *s, uint32_t type, int32_t value, uint64_t arg,
			const char *a, const char *b, int pass_fd, const struct wait *w,
			const char *step, struct cordon_error *err)
{
	char buf[2 * PATH_MAX + 2];
	size_t la, lb = b ? strlen(b) + 1 : 0, len;
	struct cd_sp_hdr h = { .type = type, .value = value, .arg = arg };
	int chan, r;

	if (!a || !*a || (b && !*b))
		return cd_fail(err, EINVAL, step, "no path given");
	la = strlen(a) + 1;
	if (la > PATH_MAX || lb > PATH_MAX)
		return cd_fail(err, ENAMETOOLONG, step, "%.100s...: path too long", a);
	memcpy(buf, a, la);
	if (b)
		memcpy(buf + la, b, lb);
	len = la + lb;
	h.len = (uint32_t)len;
	chan = open_channel(s, w, err);
	if (chan < 0)
		return chan;
	r = cd_sp_send(chan, &h, buf, &pass_fd, pass_fd >= 0 ? 1 : 0);
	if (r < 0) {
		close(chan);
		return cd_fail(err, ESRCH, step, "the session has ended");
	}
	return chan;
}

/* Wait for OK: 0 with *m, or -errno. */
static int file_done(int chan, struct cd_sp_msg *m, unsigned max_fd, const struct wait *w,
		     const char *step, struct cordon_error *err)
{
	int r = recv_reply(chan, m, max_fd, w, step, err);

	if (r < 0)
		return r;
	if (m->h.type != CD_SP_OK) {
		cd_sp_msg_close(m);
		return cd_fail(err, EPROTO, step, "malformed reply from the sandbox's agent");
	}
	return 0;
}

/* An ENTRY into *ret: 0, or -EPROTO */
static int parse_entry(const struct cd_sp_msg *m, struct cordon_file_info *ret)
{
	struct cd_sp_entry e;
	size_t pos = sizeof(e);
	const char *path, *target, *slash;

	if (m->h.type != CD_SP_ENTRY || m->h.len < sizeof(e) + 2)
		return -EPROTO;
	memcpy(&e, m->data, sizeof(e));
	path = cd_sp_next(m, &pos);
	target = path ? cd_sp_next(m, &pos) : NULL;
	if (!path || !target || pos != m->h.len || path[0] != '/' || e.type > CORDON_FILE_SYMLINK ||
	    strlen(path) >= PATH_MAX || strlen(target) >= PATH_MAX)
		return -EPROTO;
	slash = strrchr(path, '/');
	*ret = (struct cordon_file_info){
		.path = strdup(path), .name = strdup(slash[1] ? slash + 1 : "/"),
		.type = (enum cordon_file_type)e.type, .mode = e.mode, .size = e.size,
		.uid = e.uid, .gid = e.gid, .mtime_ns = e.mtime_ns,
		.link_target = e.type == CORDON_FILE_SYMLINK ? strdup(target) : NULL,
	};
	if (!ret->path || !ret->name || (e.type == CORDON_FILE_SYMLINK && !ret->link_target)) {
		cordon_file_info_clear(ret);
		return -ENOMEM;
	}
	return 0;
}

void cordon_file_info_clear(struct cordon_file_info *info)
{
	if (!info)
		return;
	free(info->path);
	free(info->name);
	free(info->link_target);
	*info = (struct cordon_file_info){ 0 };
}

void cordon_file_info_free(struct cordon_file_info *v, size_t n)
{
	for (size_t i = 0; v && i < n; i++)
		cordon_file_info_clear(&v[i]);
	free(v);
}

int cordon_session_stat(struct cordon_session *s, const char *path, struct cordon_file_info *ret,
			struct cordon_error *err)
{
	_cleanup_free_ struct cd_sp_msg *m = malloc(sizeof(*m));
	_cleanup_close_ int chan = -1;
	struct cordon_file_info info = { 0 };
	struct wait w;
	int r;

	cd_error_clear(err);
	if (!m)
		return cd_fail(err, ENOMEM, "stat", "out of memory");
	w = wait_of(s->cancel_fd, s->call_ns);
	chan = file_request(s, CD_SP_STAT, 0, 0, path, NULL, -1, &w, "stat", err);
	if (chan < 0)
		return chan;
	r = recv_reply(chan, m, 0, &w, "stat", err);
	if (r < 0)
		return r;
	r = parse_entry(m, &info);
	if (r < 0)
		return cd_fail(err, -r, "stat", "malformed reply from the sandbox's agent");
	r = file_done(chan, m, 0, &w, "stat", err);
	if (r < 0) {
		cordon_file_info_clear(&info);
		return r;
	}
	*ret = info;
	return 0;
}

static int by_path(const void *a, const void *b)
{
	return strcmp(((const struct cordon_file_info *)a)->path,
		      ((const struct cordon_file_info *)b)->path);
}

int cordon_session_list(struct cordon_session *s, const char *path, unsigned depth, size_t max,
			struct cordon_file_info **ret, size_t *ret_n, struct cordon_error *err)
{
	_cleanup_free_ struct cd_sp_msg *m = malloc(sizeof(*m));
	_cleanup_close_ int chan = -1;
	struct cordon_file_info *v = NULL;
	size_t n = 0, cap = 0, bytes = 0, max_bytes = s->list_bytes ? s->list_bytes : LIST_MAX_BYTES;
	struct wait w;
	int r;

	cd_error_clear(err);
	if (!m)
		return cd_fail(err, ENOMEM, "list", "out of memory");
	if (depth == 0 || depth > MAX_LIST_DEPTH)
		return cd_fail(err, EINVAL, "list", "depth %u: from 1 to %d", depth, MAX_LIST_DEPTH);
	w = wait_of(s->cancel_fd, s->call_ns);
	chan = file_request(s, CD_SP_LIST, (int32_t)depth, max, path, NULL, -1, &w, "list", err);
	if (chan < 0)
		return chan;
	for (;;) {
		r = recv_reply(chan, m, 0, &w, "list", err);
		if (r < 0 || m->h.type == CD_SP_OK)
			break;
		if (n == max) {
			r = cd_fail(err, E2BIG, "list", "%s: more than %zu entries", path, max);
			break;
		}
		if (n == cap) {
			struct cordon_file_info *nv = realloc(v, (cap = cap ? 2 * cap : 64) * sizeof(*v));

			if (!nv) {
				r = cd_fail(err, ENOMEM, "list", "out of memory");
				break;
			}
			v = nv;
		}
		r = parse_entry(m, &v[n]);
		if (r < 0) {
			r = cd_fail(err, -r, "list", "malformed reply from the sandbox's agent");
			break;
		}
		/* what we hold: the path, the name (a copy) and the target */
		bytes += strlen(v[n].path) + strlen(v[n].name) +
			 (v[n].link_target ? strlen(v[n].link_target) : 0);
		n++;
		if (bytes > max_bytes) {
			r = cd_fail(err, E2BIG, "list", "%s: more than %zu KiB of names", path,
				    max_bytes >> 10);
			break;
		}
	}
	if (r < 0) {
		cordon_file_info_free(v, n);
		return r;
	}
	if (n)
		qsort(v, n, sizeof(*v), by_path);
	*ret = v;
	*ret_n = n;
	return 0;
}

int cordon_session_open_read(struct cordon_session *s, const char *path, int *ret_fd,
			     struct cordon_error *err)
{
	_cleanup_free_ struct cd_sp_msg *m = malloc(sizeof(*m));
	_cleanup_close_ int chan = -1;
	struct stat st;
	struct wait w;
	int r;

	cd_error_clear(err);
	if (!m)
		return cd_fail(err, ENOMEM, "read", "out of memory");
	w = wait_of(s->cancel_fd, s->call_ns);
	chan = file_request(s, CD_SP_OPEN, 0, 0, path, NULL, -1, &w, "read", err);
	if (chan < 0)
		return chan;
	r = file_done(chan, m, 1, &w, "read", err);
	if (r < 0)
		return r;
	/* only a regular file's descriptor: nothing that could block us or act on the host */
	if (m->n_fd != 1 || fstat(m->fd[0], &st) < 0 || !S_ISREG(st.st_mode) ||
	    (fcntl(m->fd[0], F_GETFL) & O_ACCMODE) != O_RDONLY) {
		cd_sp_msg_close(m);
		return cd_fail(err, EPROTO, "read", "%s: the agent did not give a regular file", path);
	}
	*ret_fd = m->fd[0];
	return 0;
}

int cordon_session_write(struct cordon_session *s, const char *path, uint32_t mode,
			 struct cordon_upload **ret, int *ret_fd, struct cordon_error *err)
{
	struct wait w = wait_of(s->cancel_fd, s->call_ns);
	struct cordon_upload *u;
	int p[2], chan;

	cd_error_clear(err);
	if (mode & ~07777u)
		return cd_fail(err, EINVAL, "write", "mode %o: permission bits only", mode);
	if (pipe2(p, O_CLOEXEC) < 0)
		return cd_fail_errno(err, errno, "write", "pipe");
	chan = file_request(s, CD_SP_WRITE, (int32_t)mode, 0, path, NULL, p[0], &w, "write", err);
	close(p[0]);
	u = chan >= 0 ? calloc(1, sizeof(*u)) : NULL;
	if (!u) {
		close(p[1]);
		cd_closep(&chan);
		return chan < 0 ? chan : cd_fail(err, ENOMEM, "write", "out of memory");
	}
	u->chan = chan;
	u->cancel_fd = s->cancel_fd;
	u->call_ns = s->call_ns;
	*ret = u;
	*ret_fd = p[1];
	return 0;
}

int cordon_upload_finish(struct cordon_upload *u, uint64_t *ret_bytes, struct cordon_error *err)
{
	_cleanup_free_ struct cd_sp_msg *m = malloc(sizeof(*m));
	struct wait w;
	int r;

	cd_error_clear(err);
	if (!u)
		return cd_fail(err, EINVAL, "write", "no upload");
	w = wait_of(u->cancel_fd, u->call_ns);
	r = m ? file_done(u->chan, m, 0, &w, "write", err)
	      : cd_fail(err, ENOMEM, "write", "out of memory");
	if (r >= 0 && ret_bytes)
		*ret_bytes = m->h.arg;
	close(u->chan);
	free(u);
	return r;
}

static int simple_op(struct cordon_session *s, uint32_t type, const char *a, const char *b,
		     const char *step, int32_t *ret_value, struct cordon_error *err)
{
	_cleanup_free_ struct cd_sp_msg *m = malloc(sizeof(*m));
	_cleanup_close_ int chan = -1;
	struct wait w;
	int r;

	cd_error_clear(err);
	if (!m)
		return cd_fail(err, ENOMEM, step, "out of memory");
	w = wait_of(s->cancel_fd, s->call_ns);
	chan = file_request(s, type, 0, 0, a, b, -1, &w, step, err);
	if (chan < 0)
		return chan;
	r = file_done(chan, m, 0, &w, step, err);
	if (r >= 0 && ret_value)
		*ret_value = m->h.value;
	return r;
}

int cordon_session_mkdir(struct cordon_session *s, const char *path, int *ret_made,
			 struct cordon_error *err)
{
	int32_t made = 0;
	int r = simple_op(s, CD_SP_MKDIR, path, NULL, "mkdir", &made, err);

	if (r >= 0 && ret_made)
		*ret_made = made == 1;
	return r;
}

int cordon_session_remove(struct cordon_session *s, const char *path, struct cordon_error *err)
{
	return simple_op(s, CD_SP_REMOVE, path, NULL, "remove", NULL, err);
}

int cordon_session_rename(struct cordon_session *s, const char *from, const char *to,
			  struct cordon_error *err)
{
	if (!to)
		return cd_fail(err, EINVAL, "rename", "no destination given");
	return simple_op(s, CD_SP_RENAME, from, to, "rename", NULL, err);
}

int cordon_tree_usage(const char *dir, unsigned max_depth, uint64_t max_entries,
		      uint64_t *ret_bytes, uint64_t *ret_entries, struct cordon_error *err)
{
	_cleanup_close_ int fd = -1;
	int r;

	cd_error_clear(err);
	if (!dir || !ret_bytes || !ret_entries)
		return cd_fail(err, EINVAL, "usage", "no directory given");
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return cd_fail_errno(err, errno, "usage", "%s", dir);
	r = cd_tree_usage(fd, max_depth, max_entries, ret_bytes, ret_entries);
	if (r < 0 && r != -E2BIG)
		return cd_fail(err, -r, "usage", "%s: %s", dir, strerror(-r));
	return r;
}

/* --- a watched directory (agent_watch.c): a channel the agent's worker sends EVENTS on --- */

struct cordon_watch {
	int chan;
	bool over;
};

int cordon_session_watch(struct cordon_session *s, const char *path, unsigned flags,
			 struct cordon_watch **ret, struct cordon_error *err)
{
	_cleanup_free_ struct cd_sp_msg *m = malloc(sizeof(*m));
	_cleanup_free_ struct cordon_watch *w = calloc(1, sizeof(*w));
	_cleanup_close_ int chan = -1;
	struct wait wt;
	int r;

	cd_error_clear(err);
	if (!m || !w)
		return cd_fail(err, ENOMEM, "watch", "out of memory");
	if (flags & ~CORDON_WATCH_RECURSIVE)
		return cd_fail(err, EINVAL, "watch", "unknown flags 0x%x", flags);
	wt = wait_of(s->cancel_fd, s->call_ns);
	chan = file_request(s, CD_SP_WATCH, (int32_t)flags, 0, path, NULL, -1, &wt, "watch", err);
	if (chan < 0)
		return chan;
	r = file_done(chan, m, 0, &wt, "watch", err);
	if (r < 0)
		return r;
	w->chan = CD_TAKE_FD(chan);
	*ret = CD_TAKE_PTR(w);
	return 0;
}

int cordon_watch_fd(const struct cordon_watch *w)
{
	return w ? w->chan : -1;
}

void cordon_watch_events_free(struct cordon_watch_event *v, size_t n)
{
	for (size_t i = 0; v && i < n; i++)
		free(v[i].name);
	free(v);
}

/* EVENTS' records into events: 0, or -EPROTO (what a taken-over agent may send) */
static int parse_events(const struct cd_sp_msg *m, struct cordon_watch_event **ret,
			size_t *ret_n)
{
	struct cordon_watch_event *v = NULL;
	size_t n = 0, cap = 0, pos = 0;

	while (pos < m->h.len) {
		unsigned type = (unsigned char)m->data[pos++];
		const char *name = cd_sp_next(m, &pos);

		if (type < CORDON_WATCH_CREATE || type > CORDON_WATCH_CHMOD || !name || !*name)
			goto bad;
		if (n == cap) {
			struct cordon_watch_event *g = realloc(v, (cap = cap ? 2 * cap : 64) *
								       sizeof(*v));
			if (!g)
				goto bad;
			v = g;
		}
		v[n].type = (enum cordon_watch_type)type;
		if (!(v[n].name = strdup(name)))
			goto bad;
		n++;
	}
	*ret = v;
	*ret_n = n;
	return 0;
bad:
	cordon_watch_events_free(v, n);
	return -EPROTO;
}

int cordon_watch_read(struct cordon_watch *w, struct cordon_watch_event **ret, size_t *ret_n,
		      struct cordon_error *err)
{
	_cleanup_free_ struct cd_sp_msg *m = malloc(sizeof(*m));
	int r;

	cd_error_clear(err);
	*ret = NULL;
	*ret_n = 0;
	if (!m)
		return cd_fail(err, ENOMEM, "watch", "out of memory");
	if (w->over)
		return cd_fail(err, ESRCH, "watch", "the watch has ended");
	r = cd_sp_recv(w->chan, m, 0); /* our end is O_NONBLOCK (open_channel) */
	if (r == -EAGAIN)
		return 0;
	if (r <= 0 || m->h.type != CD_SP_EVENTS) {
		w->over = true;
		if (r == 0 || r == -ECONNRESET || r == -EPIPE)
			return cd_fail(err, ESRCH, "watch", "the watch ended with the sandbox");
		if (r > 0 && m->h.type == CD_SP_ERROR)
			return cd_fail(err, m->h.value > 0 && m->h.value < 4096 ? m->h.value : EIO,
				       "watch", "%.400s", m->data);
		cd_sp_msg_close(m);
		return cd_fail(err, EPROTO, "watch", "malformed message from the sandbox's agent");
	}
	r = parse_events(m, ret, ret_n);
	if (r < 0) {
		w->over = true;
		return cd_fail(err, EPROTO, "watch", "malformed events from the sandbox's agent");
	}
	if (m->h.flags & CD_SP_EVENTS_OVERFLOW) {
		w->over = true; /* the events before it were sent apart: none here */
		cordon_watch_events_free(*ret, *ret_n);
		*ret = NULL;
		*ret_n = 0;
		return cd_fail(err, EOVERFLOW, "watch",
			       "the queue of events overflowed: events were lost");
	}
	return 1;
}

void cordon_watch_free(struct cordon_watch *w)
{
	if (!w)
		return;
	cd_safe_close(w->chan);
	free(w);
}

/* --- what the session uses now: its cgroup (the supervisor reads it), else the agent's /proc */

/* The supervisor's reading of the cgroup: 0, or -ESRCH (the session ended: its end kept) */
static int holder_now(struct cordon_session *s, struct cd_cgroup_now *ret)
{
	struct cd_holder_msg m = { .type = CD_HOLDER_USAGE };

	/* the supervisor is ours (outside the sandbox) and answers at once; a deadline still */
	if (holder_call(s, &m, CD_HOLDER_USAGE, REPLY_TIMEOUT_MS) < 0)
		return -ESRCH;
	*ret = m.now;
	return 0;
}

static uint64_t host_memory(void)
{
	long pages = sysconf(_SC_PHYS_PAGES), size = sysconf(_SC_PAGESIZE);

	return pages > 0 && size > 0 ? (uint64_t)pages * (uint64_t)size : 0;
}

/* From the agent (no cgroup): its /proc, bounded by what can be true */
static int agent_usage(struct cordon_session *s, unsigned window_ms,
		       struct cordon_session_usage *u, struct cordon_error *err)
{
	_cleanup_free_ struct cd_sp_msg *m = malloc(sizeof(*m));
	_cleanup_close_ int chan = -1;
	struct cd_sp_usage a;
	struct wait w;
	int r;

	if (!m)
		return cd_fail(err, ENOMEM, "usage", "out of memory");
	w = wait_of(s->cancel_fd, s->call_ns);
	chan = file_request(s, CD_SP_USAGE, (int32_t)window_ms, 0, "/proc", NULL, -1, &w, "usage",
			    err);
	if (chan < 0)
		return chan;
	r = file_done(chan, m, 0, &w, "usage", err);
	if (r < 0)
		return r;
	if (m->h.len != sizeof(a))
		return cd_fail(err, EPROTO, "usage", "malformed reply from the sandbox's agent");
	memcpy(&a, m->data, sizeof(a));
	u->window_ns = a.window_ns ? a.window_ns : 1;
	u->cpu_ns = a.cpu_ns <= u->window_ns * u->cpu_count ? a.cpu_ns
							     : u->window_ns * u->cpu_count;
	u->mem_used = a.rss_bytes <= u->mem_total ? a.rss_bytes : u->mem_total;
	return 0;
}

int cordon_session_usage(struct cordon_session *s, unsigned window_ms,
			 struct cordon_session_usage *ret, struct cordon_error *err)
{
	struct cordon_session_usage u = { 0 };
	struct cd_cgroup_now a, b;
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	uint64_t t0;
	int r;

	cd_error_clear(err);
	if (!s || !ret || window_ms < 1 || window_ms > 1000)
		return cd_fail(err, EINVAL, "usage", "a window of 1 to 1000 ms");
	if (holder_now(s, &a) < 0)
		return cd_fail(err, ESRCH, "usage", "the session has ended");
	u.cpu_count = cpus > 0 ? (unsigned)cpus : 1;
	u.mem_total = host_memory();
	if (!a.valid || !a.has_memory || !a.has_cpu) {
		r = agent_usage(s, window_ms, &u, err);
		if (r < 0)
			return r;
		*ret = u;
		return 0;
	}
	t0 = cd_now_ns();
	usleep(window_ms * 1000);
	if (holder_now(s, &b) < 0)
		return cd_fail(err, ESRCH, "usage", "the session has ended");
	u.from_cgroup = 1;
	if (b.cpu_quota_us && b.cpu_period_us) {
		uint64_t allowed = (b.cpu_quota_us + b.cpu_period_us - 1) / b.cpu_period_us;

		u.cpu_count = allowed < u.cpu_count ? (unsigned)allowed : u.cpu_count;
	}
	u.window_ns = cd_now_ns() - t0;
	u.cpu_ns = b.cpu_usage_us >= a.cpu_usage_us ? (b.cpu_usage_us - a.cpu_usage_us) * 1000 : 0;
	u.mem_cache = b.memory_file <= b.memory_current ? b.memory_file : 0;
	u.mem_used = b.memory_current - u.mem_cache;
	if (b.memory_max)
		u.mem_total = b.memory_max;
	*ret = u;
	return 0;
}

/* --- ports: a connection to a port of the sandbox's loopback (agent_ports.c) --- */

/* A connect the agent left in progress gets this long at most (within the call's own deadline):
 * on a loopback it completes at once unless the listener's backlog is full, and then the
 * kernel's SYN retries (1 s, 3 s) have had their chance. */
#define CONNECT_TIMEOUT_NS (10ull * NSEC_PER_SEC)

/* Its peer is the loopback's port asked (a socket the agent hands over may be anything) */
static bool peer_is_loopback(int fd, int family, unsigned port)
{
	struct sockaddr_storage a;
	socklen_t l = sizeof(a);

	if (getpeername(fd, (struct sockaddr *)&a, &l) < 0 || a.ss_family != family)
		return false;
	if (family == AF_INET) {
		const struct sockaddr_in *in = (const struct sockaddr_in *)&a;

		return in->sin_addr.s_addr == htonl(INADDR_LOOPBACK) && ntohs(in->sin_port) == port;
	}
	const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)&a;

	return IN6_IS_ADDR_LOOPBACK(&in6->sin6_addr) && ntohs(in6->sin6_port) == port;
}

/* The agent's socket is one we may speak through: a TCP stream socket of the family asked. */
static bool tcp_socket_of(int fd, int family)
{
	int type = 0, domain = 0, proto = 0;
	socklen_t l = sizeof(int);
	struct stat st;

	if (fstat(fd, &st) < 0 || !S_ISSOCK(st.st_mode))
		return false;
	if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &l) < 0 || type != SOCK_STREAM)
		return false;
	l = sizeof(int);
	if (getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &domain, &l) < 0 || domain != family)
		return false;
	l = sizeof(int);
	return getsockopt(fd, SOL_SOCKET, SO_PROTOCOL, &proto, &l) == 0 && proto == IPPROTO_TCP;
}

/* One try, on 127.0.0.1 (v6 false) or ::1: the connected socket, or -errno with err filled
 * (-ECONNREFUSED: nothing listens there). */
static int connect_once(struct cordon_session *s, unsigned port, bool v6, const struct wait *w,
			struct cordon_error *err)
{
	_cleanup_free_ struct cd_sp_msg *m = malloc(sizeof(*m));
	struct cd_sp_hdr h = { .type = CD_SP_CONNECT, .value = (int32_t)port, .flags = v6 };
	struct wait cw = *w;
	_cleanup_close_ int chan = -1, sock = -1;
	int e = 0, r;
	socklen_t l = sizeof(e);

	if (!m)
		return cd_fail(err, ENOMEM, "connect", "out of memory");
	chan = open_channel(s, w, err);
	if (chan < 0)
		return chan;
	if (cd_sp_send(chan, &h, NULL, NULL, 0) < 0)
		return cd_fail(err, ESRCH, "connect", "the session has ended");
	r = file_done(chan, m, 1, w, "connect", err);
	if (r < 0)
		return r;
	if (m->n_fd != 1 || !tcp_socket_of(m->fd[0], v6 ? AF_INET6 : AF_INET)) {
		cd_sp_msg_close(m);
		return cd_fail(err, EPROTO, "connect", "port %u: the agent did not give a TCP socket",
			       port);
	}
	sock = m->fd[0];
	if (!cw.end_ns || cw.end_ns > cd_now_ns() + CONNECT_TIMEOUT_NS)
		cw.end_ns = cd_now_ns() + CONNECT_TIMEOUT_NS;
	r = wait_fd(&cw, sock, POLLOUT); /* connected, or failed: SO_ERROR says which */
	if (r == 0)
		return cd_fail(err, ETIMEDOUT, "connect", "port %u inside: the connection was not "
			       "accepted in time", port);
	if (r < 0)
		return cd_fail(err, -r, "connect", "port %u: %s", port, strerror(-r));
	if (getsockopt(sock, SOL_SOCKET, SO_ERROR, &e, &l) < 0)
		e = errno;
	if (e)
		return cd_fail(err, e, "connect", "port %u inside (%s): %s", port,
			       v6 ? "::1" : "127.0.0.1", strerror(e));
	if (!peer_is_loopback(sock, v6 ? AF_INET6 : AF_INET, port))
		return cd_fail(err, EPROTO, "connect", "port %u: the agent's socket is connected "
			       "elsewhere than the loopback's port", port);
	/* the caller's reads and writes must never block; the agent holds the same open file
	 * and can clear this flag: callers read and write with MSG_DONTWAIT as well */
	if (fcntl(sock, F_SETFL, O_RDWR | O_NONBLOCK) < 0)
		return cd_fail_errno(err, errno, "connect", "port %u: O_NONBLOCK", port);
	return CD_TAKE_FD(sock);
}

int cordon_session_connect(struct cordon_session *s, unsigned port, int *ret_fd,
			   struct cordon_error *err)
{
	struct wait w;
	int fd;

	cd_error_clear(err);
	if (!s || !ret_fd || port == 0 || port > 65535)
		return cd_fail(err, EINVAL, "connect", "port %u: from 1 to 65535", port);
	/* where cordon's egress proxy listens inside (--allow-net): whoever reached it from
	 * outside would have the sandbox's allow-list, fetched from the host as the sandbox */
	if (port == CD_PROXY_PORT)
		return cd_fail(err, EPERM, "connect", "port %u inside is cordon's egress proxy: "
			       "never reached from outside", port);
	w = wait_of(s->cancel_fd, s->call_ns);
	fd = connect_once(s, port, false, &w, err);
	if (fd == -ECONNREFUSED) { /* a server on ::1 alone (listening on "localhost") */
		struct cordon_error err6 = { 0 };

		fd = connect_once(s, port, true, &w, &err6);
		if (fd < 0 && fd != -ECONNREFUSED && fd != -EAFNOSUPPORT && fd != -EADDRNOTAVAIL &&
		    fd != -ENETUNREACH && err)
			*err = err6; /* a failure other than "nothing there" says more */
		if (fd < 0 && (fd == -ECONNREFUSED || fd == -EAFNOSUPPORT || fd == -EADDRNOTAVAIL ||
			       fd == -ENETUNREACH)) {
			cd_error_clear(err); /* this says more than 127.0.0.1's refusal */
			return cd_fail(err, ECONNREFUSED, "connect", "nothing listens on port %u "
				       "inside the sandbox (127.0.0.1 and ::1 refused)", port);
		}
	}
	if (fd < 0)
		return fd;
	*ret_fd = fd;
	return 0;
}
