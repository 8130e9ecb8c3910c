/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * holder.c - a session's supervisor (holder.h). Runs in a process forked from the caller's: it
 * runs the sandbox (cd_run: the same steps as cordon_run()) with the agent as its command,
 * tells the caller when the agent runs, ends the sandbox when the caller asks or its socket
 * closes (the caller exited or died), then tears down, removes the workdir if asked, and sends
 * the result. Its messages' two functions (cd_holder_send/recv) run at both ends.
 */
#include <fcntl.h>
#include <malloc.h>
#include <stddef.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>

#include "config.h"
#include "cgroup.h"
#include "cow.h"
#include "frame.h"
#include "holder.h"
#include "rmtree.h"
#include "run.h"
#include "sandbox.h"

struct holder {
	int fd;
	int null_fd;
	unsigned flags;
	char id[33];
	bool told;
};

/* The payload: the message after its type */
#define FIXED_AT  offsetof(struct cd_holder_msg, ret)
#define FIXED_LEN (sizeof(struct cd_holder_msg) - FIXED_AT)

int cd_holder_send(int fd, const struct cd_holder_msg *m, int flags)
{
	const struct cd_frame f = { .type = m->type,
				    .part = { { (char *)m + FIXED_AT, FIXED_LEN } } };

	return cd_frame_send(fd, &f, flags);
}

int cd_holder_recv(int fd, struct cd_holder_msg *m, int flags)
{
	struct cd_frame f = { .part = { { (char *)m + FIXED_AT, FIXED_LEN } } };
	int r = cd_frame_recv(fd, &f, FIXED_LEN, 0, flags);

	if (r <= 0)
		return r;
	m->type = f.type;
	m->err.step[sizeof(m->err.step) - 1] = '\0';
	m->err.msg[sizeof(m->err.msg) - 1] = '\0';
	m->res.id[sizeof(m->res.id) - 1] = '\0';
	m->res.layer_id[sizeof(m->res.layer_id) - 1] = '\0';
	return 1;
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
	cd_holder_send(h->fd, &m, 0);
	h->told = true;
	/* we hold a copy of the caller's memory (the sandbox, in namespaces of its own, cannot
	 * name us): no core dump, no ptrace or /proc/PID/mem by anyone without CAP_SYS_PTRACE.
	 * Only now: pid 1, a clone of ours, had to be dumpable while its id maps were written by
	 * an unprivileged us (/proc/PID/uid_map is root's when it is not) */
	prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
	/* the agent has its end of the session socket: ours would keep the caller from seeing
	 * the agent go */
	dup2(h->null_fd, 0);
	/* the sandbox's set-up is over and we idle for as long as the session lives: what it
	 * allocated and freed since the last trim (the filters' and the plan's sending, the
	 * agent's start) goes back to the kernel, about 100 KiB a session (bench/session.md,
	 * "Idle memory") */
	malloc_trim(0);
	/* and the pages of our stack the set-up's deeper calls left resident (the seccomp
	 * policy's compiling, the mount plan) */
	cd_stack_trim();
}

/* Freeze or thaw the sandbox's cgroup: every process in it, pid 1 and the agent too, stops
 * where it is (or goes on); we and the proxy are outside it. */
static void freeze(struct holder *h, struct cd_sandbox *sb, bool frozen)
{
	const struct cd_cgroup *cg = &sb->bounds.cg;
	struct cd_holder_msg reply = { .type = CD_HOLDER_FREEZE };

	reply.ret = cd_cgroup_freeze(cg, frozen, cd_now_ns() + CD_HOLDER_FREEZE_NS,
				     cg->missing ? cg->missing[0] : NULL, &reply.err);
	cd_log_line(&sb->c->log, "session: %s: %s", frozen ? "frozen" : "thawed",
		    reply.ret < 0 ? reply.err.msg : "done");
	cd_holder_send(h->fd, &reply, 0);
}

/* The caller asked for the end, or is gone: pid 1 dies, and the whole sandbox with it. */
static void on_holder(void *data, struct cd_sandbox *sb)
{
	struct holder *h = data;
	struct cd_holder_msg m;
	int r = cd_holder_recv(h->fd, &m, MSG_DONTWAIT);

	if (r == -EAGAIN)
		return;
	if (r > 0 && m.type == CD_HOLDER_CHECKPOINT) {
		struct cd_holder_msg reply = { .type = CD_HOLDER_CHECKPOINT };

		reply.ret = cd_cow_checkpoint(sb, reply.res.layer_id, &reply.err);
		cd_holder_send(h->fd, &reply, 0);
		return;
	}
	if (r > 0 && m.type == CD_HOLDER_FREEZE) {
		freeze(h, sb, m.ret != 0);
		return;
	}
	if (r > 0 && m.type == CD_HOLDER_USAGE) { /* the caller's figures, read here: trusted */
		struct cd_holder_msg reply = { .type = CD_HOLDER_USAGE };

		cd_cgroup_now(&sb->bounds.cg, &reply.now);
		cd_holder_send(h->fd, &reply, 0);
		return;
	}
	cd_log_line(&sb->c->log, "session: %s: ending the sandbox",
		    r == 0 ? "the caller went away" : "the caller ends it");
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
	c.limits.freezer = flags & CORDON_SESSION_FREEZABLE;
	m.ret = session.null_fd < 0 ? cd_fail_errno(&m.err, errno, "session", "open /dev/null")
				    : cd_run(&c, &hooks, &m.res, &m.err);
	if (!h.told && m.ret >= 0) /* ended before the agent ran: a failed setup */
		m.ret = cd_fail(&m.err, EIO, "session", "the sandbox ended before its agent ran");
	cd_holder_send(holder_fd, &m, 0);
	_exit(0);
}
