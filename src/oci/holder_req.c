/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * holder_req.c - the holder's answers on its control socket: start, kill, pause, resume, exec
 * (the process's handle kept with exec's proxy, its end sent to it), ps (the host pids of the
 * processes started in the container and their children, found in /proc below the session's
 * supervisor). Runs in the holder.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "frame.h"
#include "holder_int.h"
#include "spec.h"
#include "util.h"

static int req_exec(struct holder *h, struct oci_client *c, struct cd_frame *f,
		    struct cordon_error *err)
{
	const struct oci_process *p = oci_spec_process(h->a->spec);
	_cleanup_free_ char **argv = NULL, **env = NULL;
	struct cordon_exec e = {0};
	_cleanup_close_ int tty = -1;
	unsigned short rows = 0, cols = 0;
	const char *cwd;
	unsigned flags;
	int32_t pid;
	int r;

	if (h->status != OCI_CREATED && h->status != OCI_RUNNING)
		return cd_fail(err, EBUSY, "exec", "%s: container is %s", h->a->id,
			       oci_status_name(h->status));
	if (f->n_fd != 3)
		return cd_fail(err, EPROTO, "exec", "3 descriptors expected");
	r = oci_exec_unpack(f->part[0].iov_base, f->len, &flags, &rows, &cols, &argv, &env, &cwd);
	if (r < 0)
		return cd_fail(err, -r, "exec", "a malformed request");
	e.argv = (const char *const *)argv;
	e.env = (const char *const *)env;
	e.cwd = cwd[0] ? cwd : p->cwd;
	e.flags = flags & OCI_EXEC_TTY ? CORDON_EXEC_TTY : 0;
	for (int i = 0; i < 3; i++)
		e.fd[i] = f->fd[i];
	if (flags & OCI_EXEC_TTY) {
		pid_t pid1 = 0;
		_cleanup_close_ int pidfd = oci_holder_pid1(h, &pid1);

		tty = pidfd < 0 ? cd_fail_errno(err, -pidfd, "terminal", "the container's pid 1")
				: oci_console_send(f->fd[0], pidfd, pid1, p->uid, p->gid, rows,
						   cols, err);
		if (tty < 0)
			return tty;
		e.fd[0] = e.fd[1] = e.fd[2] = tty;
	}
	r = cordon_session_exec(h->s, &e, &c->proc, err);
	if (r < 0)
		return r;
	pid = cordon_process_pid(c->proc);
	oci_log("debug", "%s: exec %s, pid %d inside", h->a->id, argv[0], pid);
	return oci_holder_reply_ok(c->fd, &pid, sizeof(pid)) < 0 ? -EPIPE : 1;
}

static int req_ps(struct holder *h, int fd, struct cordon_error *err)
{
	_cleanup_free_ int32_t *pids = calloc(OCI_MSG_MAX / sizeof(int32_t), sizeof(int32_t));
	size_t n = 0;
	int r;

	if (!pids)
		return cd_fail(err, ENOMEM, "ps", "out of memory");
	r = oci_holder_pids(h, pids, OCI_MSG_MAX / sizeof(int32_t) - 1, &n);
	if (r < 0)
		return cd_fail_errno(err, -r, "ps", "/proc");
	struct cd_frame f = {.type = OCI_MSG_PIDS,
			     .part = {{pids, n * sizeof(int32_t)}, {NULL, 0}}};
	return cd_frame_send(fd, &f, MSG_DONTWAIT) < 0 ? -EPIPE : 0;
}

/* A request of an exec's proxy: a signal for its process */
static int proxy_message(struct holder *h, struct oci_client *c, struct cd_frame *f)
{
	int32_t sig;

	if (f->type != OCI_MSG_SIGNAL || f->len != sizeof(sig))
		return -EPROTO;
	memcpy(&sig, f->part[0].iov_base, sizeof(sig));
	oci_log("debug", "%s: exec: signal %d", h->a->id, sig);
	if (sig > 0 && sig < NSIG)
		cordon_process_signal(c->proc, sig, 0, NULL);
	return 1;
}

static int dispatch(struct holder *h, struct oci_client *c, struct cd_frame *f,
		    struct cordon_error *err)
{
	struct oci_kill k;

	switch (f->type) {
	case OCI_MSG_START:
		return oci_holder_start(h, err);
	case OCI_MSG_KILL:
		if (f->len != sizeof(k))
			return cd_fail(err, EPROTO, "kill", "a malformed request");
		memcpy(&k, f->part[0].iov_base, sizeof(k));
		if (k.sig <= 0 || k.sig >= NSIG)
			return cd_fail(err, EINVAL, "kill", "signal %d: out of range", k.sig);
		return oci_holder_kill(h, k.sig, k.all != 0, err);
	case OCI_MSG_PAUSE:
	case OCI_MSG_RESUME:
		return oci_holder_freeze(h, f->type == OCI_MSG_PAUSE, err);
	case OCI_MSG_EXEC:
		return req_exec(h, c, f, err);
	case OCI_MSG_PS:
		return req_ps(h, c->fd, err) < 0 ? -EPIPE : 2;
	default:
		return cd_fail(err, EPROTO, "control", "unknown request %u", f->type);
	}
}

int oci_holder_request(struct holder *h, size_t i)
{
	static char buf[OCI_MSG_MAX];
	struct oci_client *c = &h->clients[i];
	struct cd_frame f = {.part = {{buf, sizeof(buf) - 1}, {NULL, 0}}};
	struct cordon_error err = {0};
	int r;

	r = cd_frame_recv(c->fd, &f, 0, 3, MSG_DONTWAIT);
	if (r == -EAGAIN)
		return 1;
	if (r <= 0)
		return r; /* hung up: an exec's proxy gone takes its process along */
	if (c->proc) {
		cd_frame_close(&f);
		return proxy_message(h, c, &f);
	}
	buf[f.len] = '\0';
	r = dispatch(h, c, &f, &err);
	cd_frame_close(&f);
	if (r < 0) {
		oci_holder_reply_error(c->fd, &err);
		return 0;
	}
	if (r == 0)
		oci_holder_reply_ok(c->fd, NULL, 0);
	return r == 1 ? 1 : 0;
}

/* --- ps --- */

struct proc_entry {
	pid_t pid, ppid, inner;
	bool in;
};

static int proc_read(pid_t pid, struct proc_entry *e)
{
	char path[64], buf[4096], *p;
	_cleanup_close_ int fd = -1;
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, sizeof(buf) - 1);
	if (n <= 0)
		return -EIO;
	buf[n] = '\0';
	e->pid = pid;
	p = strstr(buf, "\nPPid:");
	e->ppid = p ? (pid_t)atoi(p + 6) : 0;
	p = strstr(buf, "\nNSpid:");
	e->inner = 0;
	if (p) {
		char *end = strchr(p + 1, '\n'), *last = NULL;

		for (char *q = p + 7; q && q < (end ? end : buf + n); q++)
			if (isdigit((unsigned char)*q) && isspace((unsigned char)q[-1]))
				last = q;
		e->inner = last ? (pid_t)atoi(last) : 0;
	}
	return 0;
}

static int proc_scan(struct proc_entry **ret, size_t *ret_n)
{
	_cleanup_(cd_closedirp) DIR *d = opendir("/proc");
	struct proc_entry *v = NULL;
	size_t n = 0, cap = 0;
	struct dirent *de;

	if (!d)
		return -errno;
	while ((de = readdir(d))) {
		pid_t pid = (pid_t)atoi(de->d_name);

		if (pid <= 0)
			continue;
		if (n == cap) {
			struct proc_entry *nv =
			    realloc(v, (cap = cap ? cap * 2 : 256) * sizeof(*v));

			if (!nv) {
				free(v);
				return -ENOMEM;
			}
			v = nv;
		}
		if (proc_read(pid, &v[n]) == 0)
			v[n++].in = false;
	}
	*ret = v;
	*ret_n = n;
	return 0;
}

static bool below(const struct proc_entry *v, size_t n, pid_t pid, pid_t top)
{
	for (unsigned depth = 0; pid > 1 && depth < 4096; depth++) {
		size_t i;

		if (pid == top)
			return true;
		for (i = 0; i < n && v[i].pid != pid; i++)
			;
		if (i == n)
			return false;
		pid = v[i].ppid;
	}
	return false;
}

static bool started(struct holder *h, pid_t inner)
{
	if (h->init && cordon_process_pid(h->init) == inner)
		return true;
	for (size_t i = 0; i < h->n_clients; i++)
		if (h->clients[i].proc && cordon_process_pid(h->clients[i].proc) == inner)
			return true;
	return false;
}

/* the supervisor's child that is pid 1 in its own pid namespace */
static int pid1_find(pid_t top, pid_t *ret)
{
	_cleanup_free_ struct proc_entry *v = NULL;
	size_t n = 0;
	int r;

	r = proc_scan(&v, &n);
	if (r < 0)
		return r;
	for (size_t i = 0; i < n; i++)
		if (v[i].ppid == top && v[i].inner == 1) {
			*ret = v[i].pid;
			return 0;
		}
	return -ESRCH;
}

int oci_holder_pid1(struct holder *h, pid_t *ret_pid)
{
	pid_t top = cordon_session_pid(h->s), pid = 0;
	_cleanup_close_ int pidfd = -1;
	struct proc_entry e;
	int r;

	r = pid1_find(top, &pid);
	if (r < 0)
		return r;
	/* the pid read from /proc may have been reaped and taken by another since: the pidfd pins
	 * one process, which is pid 1 only if the pid names it still (checked after) */
	pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
	if (pidfd < 0)
		return -errno;
	r = proc_read(pid, &e);
	if (r < 0)
		return r;
	if (e.ppid != top || e.inner != 1)
		return -ESRCH;
	*ret_pid = pid;
	return CD_TAKE_FD(pidfd);
}

int oci_holder_pids(struct holder *h, int32_t *ret, size_t max, size_t *ret_n)
{
	_cleanup_free_ struct proc_entry *v = NULL;
	pid_t top = cordon_session_pid(h->s);
	size_t n = 0, out = 0;
	bool more = true;
	int r;

	r = proc_scan(&v, &n);
	if (r < 0)
		return r;
	for (size_t i = 0; i < n; i++)
		v[i].in = started(h, v[i].inner) && below(v, n, v[i].pid, top);
	/* their children, and theirs, until nothing is added */
	while (more) {
		more = false;
		for (size_t i = 0; i < n; i++)
			for (size_t j = 0; !v[i].in && j < n; j++)
				if (v[j].in && v[j].pid == v[i].ppid)
					v[i].in = more = true;
	}
	for (size_t i = 0; i < n && out < max; i++)
		if (v[i].in)
			ret[out++] = v[i].pid;
	*ret_n = out;
	return 0;
}
