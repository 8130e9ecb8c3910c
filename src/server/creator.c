/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * creator.c - the process that makes the server's sessions. A session's supervisor is a fork()
 * of whoever calls cordon_session_create(), and goes on running cordon's code: forked from this
 * threaded server, it could inherit a lock another thread held (a FILE's, the user database's;
 * seen: a supervisor stuck in fgetpwent()). So the server forks this helper first thing, before
 * any thread, and asks it for each session; it makes it (single-threaded: every fork of it is
 * clean) and exports it back (cordon_session_export: the two descriptors, id, pid). It dies with
 * the server (PR_SET_PDEATHSIG) and holds nothing of a session once handed over: a session is
 * held by the server alone.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "server.h"
#include "util.h"

struct creator_reply {
	int32_t ret;
	int32_t pid;
	char id[33];
	struct cordon_error err;
};

static struct {
	int sock;
	pthread_mutex_t lock;
} creator = { .sock = -1, .lock = PTHREAD_MUTEX_INITIALIZER };

static int send_reply(int sock, const struct creator_reply *rep, const int *fds, int n)
{
	union {
		char buf[CMSG_SPACE(2 * sizeof(int))];
		struct cmsghdr align;
	} ctl;
	struct iovec iov = { (void *)rep, sizeof(*rep) };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };

	if (n) {
		struct cmsghdr *c;

		memset(&ctl, 0, sizeof(ctl));
		mh.msg_control = ctl.buf;
		mh.msg_controllen = CMSG_SPACE(sizeof(int) * (size_t)n);
		c = CMSG_FIRSTHDR(&mh);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int) * (size_t)n);
		memcpy(CMSG_DATA(c), fds, sizeof(int) * (size_t)n);
	}
	return sendmsg(sock, &mh, MSG_NOSIGNAL) == (ssize_t)sizeof(*rep) ? 0 : -1;
}

/* One request: a workdir's path; the session made there, exported. */
static void serve_one(int sock, const char *workdir)
{
	struct creator_reply rep = { 0 };
	struct cordon_session *s = NULL;
	struct cordon_config *c = NULL;
	int fds[2] = { -1, -1 };
	pid_t pid = 0;

	rep.ret = cd_control_config(workdir, &c, &rep.err);
	if (rep.ret >= 0) {
		rep.ret = cordon_session_create(
			c, cd_opts.keep_workdirs ? 0 : CORDON_SESSION_REMOVE_WORKDIR, &s, &rep.err);
		cordon_config_free(c);
	}
	if (rep.ret >= 0) {
		cordon_session_export(s, fds, rep.id, &pid);
		rep.pid = pid;
	}
	send_reply(sock, &rep, fds, rep.ret >= 0 ? 2 : 0);
	/* the server holds the session now; a failed send: ours closing them ends it */
	cd_closep(&fds[0]);
	cd_closep(&fds[1]);
}

_Noreturn static void creator_main(int sock, pid_t server)
{
	char path[4096];

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != server)
		_exit(0);
	setsid(); /* the terminal's Ctrl-C is the server's to handle */
	signal(SIGCHLD, SIG_IGN); /* the supervisors: reaped by the kernel */
	for (;;) {
		ssize_t n = recv(sock, path, sizeof(path) - 1, 0);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			_exit(0);
		path[n] = '\0';
		serve_one(sock, path);
	}
}

int cd_creator_start(struct cordon_error *err)
{
	pid_t server = getpid(), pid;
	int sv[2];

	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
		return cd_fail_errno(err, errno, "serve", "socketpair");
	pid = fork();
	if (pid < 0)
		return cd_fail_errno(err, errno, "serve", "fork the session maker");
	if (pid == 0) {
		close(sv[0]);
		creator_main(sv[1], server);
	}
	close(sv[1]);
	creator.sock = sv[0];
	return 0;
}

/* Receive a reply and its descriptors. */
static int recv_reply(struct creator_reply *rep, int fds[2])
{
	union {
		char buf[CMSG_SPACE(2 * sizeof(int))];
		struct cmsghdr align;
	} ctl;
	struct iovec iov = { rep, sizeof(*rep) };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl.buf,
			     .msg_controllen = sizeof(ctl.buf) };
	ssize_t n;

	fds[0] = fds[1] = -1;
	do
		n = recvmsg(creator.sock, &mh, MSG_CMSG_CLOEXEC);
	while (n < 0 && errno == EINTR);
	for (struct cmsghdr *c = CMSG_FIRSTHDR(&mh); n > 0 && c; c = CMSG_NXTHDR(&mh, c))
		if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS &&
		    c->cmsg_len == CMSG_LEN(2 * sizeof(int)))
			memcpy(fds, CMSG_DATA(c), 2 * sizeof(int));
	if (n != (ssize_t)sizeof(*rep))
		return -EIO;
	rep->id[sizeof(rep->id) - 1] = '\0';
	rep->err.step[sizeof(rep->err.step) - 1] = '\0';
	rep->err.msg[sizeof(rep->err.msg) - 1] = '\0';
	return 0;
}

int cd_creator_make(const char *workdir, struct cordon_session **ret, struct cordon_error *err)
{
	struct creator_reply rep;
	int fds[2], r;

	if (strlen(workdir) >= 4096)
		return cd_fail(err, ENAMETOOLONG, "workdir", "path too long");
	pthread_mutex_lock(&creator.lock);
	r = send(creator.sock, workdir, strlen(workdir), MSG_NOSIGNAL) < 0 ? -errno : 0;
	if (r >= 0)
		r = recv_reply(&rep, fds);
	pthread_mutex_unlock(&creator.lock);
	if (r < 0) {
		cd_closep(&fds[0]);
		cd_closep(&fds[1]);
		return cd_fail(err, EIO, "serve", "the process that makes sessions is gone");
	}
	if (rep.ret < 0) {
		*err = rep.err;
		return rep.ret;
	}
	r = cordon_session_import(fds, rep.id, rep.pid, ret, err);
	if (r < 0) {
		cd_closep(&fds[0]);
		cd_closep(&fds[1]);
	}
	return r;
}
