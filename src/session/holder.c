/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * holder.c - a session's supervisor (holder.h). Runs in a process forked from the caller's: it
 * runs the sandbox (cd_run: the same steps as cordon_run()) with the agent as its command,
 * tells the caller when the agent runs, ends the sandbox when the caller asks or its socket
 * closes (the caller exited or died), then tears down, removes the workdir if asked, and sends
 * the result.
 */
#include <fcntl.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>

#include "config.h"
#include "cow.h"
#include "holder.h"
#include "rmtree.h"
#include "run.h"

struct holder {
	int fd;
	int null_fd;
	unsigned flags;
	char id[33];
	bool told;
};

static void send_msg(int fd, const struct cd_holder_msg *m)
{
	ssize_t n;

	do
		n = send(fd, m, sizeof(*m), MSG_NOSIGNAL);
	while (n < 0 && errno == EINTR);
}

static void on_id(void *data, const char *id)
{
	struct holder *h = data;

	memcpy(h->id, id, sizeof(h->id));
}

static void on_running(void *data)
{
	struct holder *h = data;
	struct cd_holder_msg m = { .type = CD_HOLDER_READY };

	memcpy(m.res.id, h->id, sizeof(m.res.id));
	send_msg(h->fd, &m);
	h->told = true;
	/* we hold a copy of the caller's memory (the sandbox, in namespaces of its own, cannot
	 * name us): no core dump, no ptrace or /proc/PID/mem by anyone without CAP_SYS_PTRACE.
	 * Only now: pid 1, a clone of ours, had to be dumpable while its id maps were written by
	 * an unprivileged us (/proc/PID/uid_map is root's when it is not) */
	prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
	/* the agent has its end of the session socket: ours would keep the caller from seeing
	 * the agent go */
	dup2(h->null_fd, 0);
}

/* The caller asked for the end, or is gone: pid 1 dies, and the whole sandbox with it. */
static void on_holder(void *data, struct cd_sandbox *sb)
{
	struct holder *h = data;
	struct cd_holder_msg m;
	ssize_t n = recv(h->fd, &m, sizeof(m), MSG_DONTWAIT);

	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n == (ssize_t)sizeof(m) && m.type == CD_HOLDER_CHECKPOINT) {
		struct cd_holder_msg reply = { .type = CD_HOLDER_CHECKPOINT };

		reply.ret = cd_cow_checkpoint(sb, reply.res.layer_id, &reply.err);
		send_msg(h->fd, &reply);
		return;
	}
	cd_log_line(&sb->c->log, "session: %s: ending the sandbox",
		      n == 0 ? "the caller went away" : "the caller ends it");
	cd_sandbox_kill(sb);
}

static void at_end(void *data, struct cd_sandbox *sb)
{
	struct holder *h = data;
	int r;

	if (!(h->flags & CORDON_SESSION_REMOVE_WORKDIR) || sb->wd.fd < 0)
		return;
	r = cd_rmtree_path(sb->wd.path, &sb->wd.st);
	if (r < 0)
		cd_log_line(&sb->c->log, "session: cannot remove the workdir %s: %s", sb->wd.path,
			      strerror(-r));
}

_Noreturn void cd_holder_main(const struct cordon_config *cfg, unsigned flags, int holder_fd,
			      int exec_fd)
{
	static char *agent_argv[] = { "cordon-agent", NULL };
	struct cordon_config c = *cfg; /* our copy of the caller's memory: ours to change */
	struct holder h = { .fd = holder_fd, .flags = flags };
	struct cd_command_session session = {
		.exec_fd = exec_fd, .holder_fd = holder_fd,
		.on_running = on_running, .on_holder = on_holder, .data = &h,
	};
	const struct cd_run_hooks hooks = {
		.session = &session, .on_id = on_id, .at_end = at_end, .data = &h,
	};
	struct cd_holder_msg m = { .type = CD_HOLDER_ENDED };

	session.null_fd = open("/dev/null", O_RDWR | O_CLOEXEC);
	h.null_fd = session.null_fd;
	c.command.argv = agent_argv;
	c.command.fast_exit = false;
	c.outputs.capture_dir = NULL; /* the commands' streams are the caller's to pass */
	m.ret = session.null_fd < 0 ? cd_fail_errno(&m.err, errno, "session", "open /dev/null")
				    : cd_run(&c, &hooks, &m.res, &m.err);
	if (!h.told && m.ret >= 0) /* ended before the agent ran: a failed setup */
		m.ret = cd_fail(&m.err, EIO, "session", "the sandbox ended before its agent ran");
	send_msg(holder_fd, &m);
	_exit(0);
}
