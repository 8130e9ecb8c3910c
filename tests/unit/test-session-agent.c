/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * test-session-agent.c - the caller's side of a session against a hostile agent (the sandbox's
 * code can take the real one over): a fake agent, in a child process, answers on a session
 * handed in with cordon_session_import(). Every lie must come back as an error, without a
 * descriptor left open, memory grown without bound, or a wait for ever. TAP.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cordon.h"
#include "frame.h"
#include "proto.h"

#include "../lib/tap.h"

static struct cd_sp_msg m;

static void entry(int c, const char *path, size_t path_len)
{
	static char buf[CD_SP_MAX];
	struct cd_sp_entry e = { .type = CORDON_FILE_REGULAR, .mode = 0100644, .size = 1 };
	size_t len = sizeof(e);

	memcpy(buf, &e, sizeof(e));
	if (path_len) {
		buf[len] = '/';
		memset(buf + len + 1, 'a', path_len - 1);
		len += path_len;
	} else {
		strcpy(buf + len, path);
		len += strlen(path);
	}
	buf[len++] = '\0';
	buf[len++] = '\0';
	cd_sp_send_simple(c, CD_SP_ENTRY, 0, 0, buf, len, -1);
}

/* A frame cut off: its header claims 100 bytes of payload, 20 come, with a descriptor */
static void half_frame(int c)
{
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} ctl = { 0 };
	struct cd_frame_hdr h = { .type = CD_SP_OK, .len = 100, .n_fd = 1 };
	char body[20] = { 0 };
	struct iovec iov[2] = { { &h, sizeof(h) }, { body, sizeof(body) } };
	struct msghdr mh = { .msg_iov = iov, .msg_iovlen = 2, .msg_control = ctl.buf,
			     .msg_controllen = sizeof(ctl.buf) };
	struct cmsghdr *cm = CMSG_FIRSTHDR(&mh);
	int fd = open("/etc/hostname", O_RDONLY);

	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(cm), &fd, sizeof(int));
	sendmsg(c, &mh, MSG_NOSIGNAL);
}

/* One request on its channel, answered with a lie chosen by its path. */
_Noreturn static void lie(int c)
{
	const char *p = m.data;
	int fds[2];

	if (cd_sp_recv(c, &m, 3) <= 0)
		_exit(0);
	if (m.h.type == CD_SP_EXEC) /* a pid 0 */
		cd_sp_send_simple(c, CD_SP_STARTED, 0, 0, NULL, 0, -1);
	else if (!strcmp(p, "/long")) /* a path far past PATH_MAX */
		entry(c, NULL, CD_SP_MAX - sizeof(struct cd_sp_entry) - 8);
	else if (!strcmp(p, "/many")) /* 1000-byte paths until the caller gives up */
		for (uint64_t i = 0; i <= m.h.arg; i++)
			entry(c, NULL, 1000);
	else if (!strcmp(p, "/relative"))
		entry(c, "relative/path", 0);
	else if (!strcmp(p, "/dir"))
		cd_sp_send_simple(c, CD_SP_OK, 0, 0, NULL, 0, open("/", O_RDONLY | O_DIRECTORY));
	else if (!strcmp(p, "/writable"))
		cd_sp_send_simple(c, CD_SP_OK, 0, 0, NULL, 0, open("/dev/null", O_RDWR));
	else if (!strcmp(p, "/pipe") && pipe(fds) == 0)
		cd_sp_send_simple(c, CD_SP_OK, 0, 0, NULL, 0, fds[0]);
	else if (!strcmp(p, "/two")) {
		fds[0] = fds[1] = open("/etc/hostname", O_RDONLY);
		cd_sp_send(c, &(struct cd_sp_hdr){ .type = CD_SP_OK }, NULL, fds, 2);
	} else if (!strcmp(p, "/half"))
		half_frame(c);
	else if (!strcmp(p, "/error"))
		cd_sp_send_simple(c, CD_SP_ERROR, 999999, 0, "x", 1, -1);
	if (!strcmp(p, "/many") || !strcmp(p, "/long") || !strcmp(p, "/relative"))
		cd_sp_send_simple(c, CD_SP_OK, 0, 0, NULL, 0, -1);
	_exit(0);
}

_Noreturn static void fake_agent(int sock)
{
	signal(SIGCHLD, SIG_IGN);
	signal(SIGPIPE, SIG_IGN);
	for (;;) {
		if (cd_sp_recv(sock, &m, 1) <= 0)
			_exit(0);
		if (m.h.type != CD_SP_CHANNEL || m.n_fd != 1) {
			cd_sp_msg_close(&m);
			continue;
		}
		if (fork() == 0)
			lie(m.fd[0]);
		close(m.fd[0]);
	}
}

static int open_fds(void)
{
	int n = 0;

	for (int fd = 0; fd < 1024; fd++)
		n += fcntl(fd, F_GETFD) >= 0;
	return n;
}

static long rss_kb(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_maxrss;
}

int main(void)
{
	struct cordon_session *s;
	struct cordon_error err;
	struct cordon_file_info info, *v = NULL;
	struct cordon_process *p = NULL;
	int agent[2], holder[2], fd = -1, before;
	size_t n = 0;
	pid_t pid;

	signal(SIGPIPE, SIG_IGN);
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, agent) < 0 ||
	    socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, holder) < 0)
		return 1;
	pid = fork();
	if (pid == 0) {
		close(agent[0]);
		fake_agent(agent[1]);
	}
	close(agent[1]);
	ok(cordon_session_import((int[]){ agent[0], holder[0] }, "0123456789abcdef0123456789abcdef",
				 pid, &s, &err) == 0, "a session handed in");
	before = open_fds();

	is_int(cordon_session_list(s, "/long", 1, 1000, &v, &n, &err), -EPROTO,
	       "list: an entry's path past PATH_MAX is refused");
	{
		long rss0 = rss_kb();
		int r = cordon_session_list(s, "/many", 1, 1000000, &v, &n, &err);

		is_int(r, -E2BIG, "list: 64 MiB of names at most, whatever max is (%s)", err.msg);
		ok(rss_kb() - rss0 < 256 * 1024, "list: ... the caller's memory stays bounded (%ld KiB)",
		   rss_kb() - rss0);
	}
	is_int(cordon_session_stat(s, "/relative", &info, &err), -EPROTO,
	       "stat: a path that is not absolute is refused");
	is_int(cordon_session_open_read(s, "/dir", &fd, &err), -EPROTO,
	       "open_read: a directory's descriptor is refused");
	is_int(cordon_session_open_read(s, "/writable", &fd, &err), -EPROTO,
	       "open_read: a writable descriptor is refused");
	is_int(cordon_session_open_read(s, "/pipe", &fd, &err), -EPROTO,
	       "open_read: a pipe (it could block the caller) is refused");
	is_int(cordon_session_open_read(s, "/two", &fd, &err), -EPROTO,
	       "open_read: two descriptors where one was asked for: refused");
	is_int(cordon_session_open_read(s, "/half", &fd, &err), -EPROTO,
	       "open_read: a reply cut off (a header claiming 100 bytes, 20 sent, a descriptor): "
	       "refused (%s)", err.msg);
	is_int(cordon_session_mkdir(s, "/error", NULL, &err), -EIO,
	       "an errno out of range becomes EIO");
	{
		const char *argv[] = { "true", NULL };
		struct cordon_exec e = { .argv = argv, .fd = { -1, -1, -1 } };

		is_int(cordon_session_exec(s, &e, &p, &err), -EPROTO, "exec: a pid 0 is refused");
	}
	is_int(open_fds(), before, "no descriptor of the agent's left open in the caller");
	close(holder[1]);
	cordon_session_destroy(s, NULL, &err);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	return done_testing();
}
