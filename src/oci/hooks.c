/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * hooks.c - config.json's hooks run (docs/oci.md "hooks"): each with the container's state JSON
 * (what `cordon-runtime state` prints) on its stdin, a memfd; its stdout and stderr through a
 * pipe into the runtime's log, one line each; a timeout that kills it and fails it. On the host
 * (prestart, createRuntime, poststart, poststop): fork + execve of its path, args and exactly
 * its env, its own process group (the timeout kills the group), signals back to their defaults,
 * no fd of the runtime beyond 0-2, the bundle as cwd; as the runtime's caller. Inside
 * (createContainer, startContainer): a process of the container's session
 * (cordon_session_exec), its path resolved in the container's root, under the container's user
 * namespace, identity and filters, never a host process in its namespaces. Runs in the holder
 * (create, start) and in delete (poststop).
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include "runtime.h"
#include "spec.h"
#include "util.h"

/* One hook being run: its end (procfd readable), its output, how to kill it */
struct hook_run {
	const char *name; /* "hooks.createRuntime[0]" */
	const struct oci_hook *hk;
	pid_t pid;		     /* on the host */
	struct cordon_process *proc; /* inside */
	int procfd;
	int out;	/* the read end of its stdout/stderr */
	char last[160]; /* its last line of output, for the error */
	bool timed_out;
};

/* The state JSON as a file to read from its start: no pipe to fill, nothing to block on */
static int state_memfd(const char *json, struct cordon_error *err)
{
	_cleanup_close_ int fd = memfd_create("cordon-hook-state", MFD_CLOEXEC);
	int r;

	if (fd < 0)
		return cd_fail_errno(err, errno, "hooks", "memfd_create");
	r = cd_write_all(fd, json, strlen(json));
	if (r >= 0)
		r = cd_write_all(fd, "\n", 1);
	if (r < 0)
		return cd_fail_errno(err, -r, "hooks", "the state for the hooks");
	if (lseek(fd, 0, SEEK_SET) < 0)
		return cd_fail_errno(err, errno, "hooks", "lseek");
	return CD_TAKE_FD(fd);
}

/* Its output, one log line a line. A hook inside is the container's: no control character, quote
 * or backslash of its reaches the log's text format or the error line (no forged fields) */
static void out_lines(struct hook_run *h, char *buf, size_t n)
{
	char *line = buf, *end = buf + n;

	for (char *c = buf; c < end; c++)
		if (*c != '\n' &&
		    ((unsigned char)*c < 0x20 || *c == 0x7f || *c == '"' || *c == '\\'))
			*c = '?';
	*end = '\0';
	while (line < end) {
		char *nl = strchr(line, '\n');

		if (nl)
			*nl = '\0';
		if (*line) {
			oci_log("info", "%s: %s", h->name, line);
			size_t len = strnlen(line, sizeof(h->last) - 1);

			memcpy(h->last, line, len);
			h->last[len] = '\0';
		}
		line = nl ? nl + 1 : end;
	}
}

/* Its output, as much as is there; false once its writers are all gone */
static bool out_read(struct hook_run *h)
{
	char buf[4096];
	ssize_t n;

	while ((n = read(h->out, buf, sizeof(buf) - 1)) > 0)
		out_lines(h, buf, (size_t)n);
	return n < 0 && (errno == EAGAIN || errno == EINTR);
}

static void hook_kill(struct hook_run *h)
{
	h->timed_out = true;
	if (h->proc)
		cordon_process_signal(h->proc, SIGKILL, 1, NULL);
	else
		kill(-h->pid, SIGKILL);
}

/* Until it ends: its output logged, killed at its timeout; then reaped. Its wait status. */
static int hook_wait(struct hook_run *h)
{
	struct itimerspec its = {.it_value = {.tv_sec = h->hk->timeout}};
	_cleanup_close_ int tfd = -1;
	int status = 0;

	if (h->hk->timeout) {
		tfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
		if (tfd < 0 || timerfd_settime(tfd, 0, &its, NULL) < 0)
			hook_kill(h); /* a timeout that cannot be kept is not given up */
	}
	for (;;) {
		struct pollfd p[3] = {{.fd = h->procfd, .events = POLLIN},
				      {.fd = h->out, .events = POLLIN},
				      {.fd = tfd, .events = POLLIN}};

		if (poll(p, 3, -1) < 0 && errno != EINTR)
			break;
		if (p[1].revents && !out_read(h))
			h->out = cd_safe_close(h->out);
		if (p[2].revents) {
			hook_kill(h);
			tfd = cd_safe_close(tfd);
		}
		if (p[0].revents)
			break;
	}
	if (h->out >= 0)
		out_read(h); /* what it wrote last; its children may hold the pipe on: not waited */
	if (h->proc) {
		if (cordon_process_wait(h->proc, UINT64_MAX, &status, NULL) < 0)
			status = SIGKILL;
	} else {
		while (waitpid(h->pid, &status, 0) < 0)
			if (errno != EINTR) {
				status = SIGKILL;
				break;
			}
	}
	return status;
}

static int hook_verdict(struct hook_run *h, int status, struct cordon_error *err)
{
	char why[64];

	if (h->timed_out)
		snprintf(why, sizeof(why), "timed out after %us: killed", h->hk->timeout);
	else if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
		return 0;
	else if (WIFEXITED(status))
		snprintf(why, sizeof(why), "exited with status %d", WEXITSTATUS(status));
	else
		snprintf(why, sizeof(why), "killed by signal %d", WTERMSIG(status));
	return cd_fail(err, h->timed_out ? ETIMEDOUT : ECANCELED, h->name, "%s: %s%s%s",
		       h->hk->path, why, h->last[0] ? ": " : "", h->last);
}

/* The child, between fork and execve: async-signal-safe calls only (the holder may have
 * threads). err_fd (fd 3 then, close-on-exec) carries execve's errno back. */
_Noreturn static void host_child(const struct hook_run *h, char *const *argv, char *const *envp,
				 int in, int out, int err_fd, const char *bundle)
{
	struct sigaction dfl = {.sa_handler = SIG_DFL};
	sigset_t none;
	int e;

	for (int s = 1; s < NSIG; s++)
		sigaction(s, &dfl, NULL);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	setpgid(0, 0);
	if (dup2(in, 0) < 0 || dup2(out, 1) < 0 || dup2(out, 2) < 0 || dup2(err_fd, 3) < 0 ||
	    fcntl(3, F_SETFD, FD_CLOEXEC) < 0 || syscall(SYS_close_range, 4U, ~0U, 0U) < 0 ||
	    chdir(bundle) < 0) {
		e = errno;
	} else {
		execve(h->hk->path, argv, envp);
		e = errno;
	}
	(void)!write(3, &e, sizeof(e));
	_exit(127);
}

static int host_start(struct hook_run *h, int in, int out, const char *bundle,
		      struct cordon_error *err)
{
	char *one[2] = {h->hk->path, NULL}, *none[1] = {NULL};
	char *const *argv = h->hk->args && h->hk->args[0] ? h->hk->args : one;
	char *const *envp = h->hk->env ? h->hk->env : none;
	_cleanup_close_ int ep0 = -1, ep1 = -1;
	int ep[2], e = 0;
	ssize_t n;

	if (pipe2(ep, O_CLOEXEC) < 0)
		return cd_fail_errno(err, errno, h->name, "pipe");
	ep0 = ep[0];
	ep1 = ep[1];
	h->pid = fork();
	if (h->pid < 0)
		return cd_fail_errno(err, errno, h->name, "fork");
	if (h->pid == 0)
		host_child(h, argv, envp, in, out, ep1, bundle);
	setpgid(h->pid, h->pid); /* (the child's own call may come later) */
	ep1 = cd_safe_close(ep1);
	while ((n = read(ep0, &e, sizeof(e))) < 0 && errno == EINTR)
		;
	h->procfd = (int)syscall(SYS_pidfd_open, h->pid, 0);
	if (n == sizeof(e) || h->procfd < 0) {
		int why = n == sizeof(e) ? e : errno;

		if (n != sizeof(e))
			kill(h->pid, SIGKILL);
		while (waitpid(h->pid, NULL, 0) < 0 && errno == EINTR)
			;
		return cd_fail_errno(err, why, h->name, "%s: %s", h->hk->path,
				     n == sizeof(e) ? "execve" : "pidfd_open");
	}
	return 0;
}

static int inside_start(struct hook_run *h, struct cordon_session *s, int in, int out,
			struct cordon_error *err)
{
	_cleanup_free_ const char **argv = NULL;
	size_t n = 0;
	struct cordon_exec e = {
	    .env = (const char *const *)h->hk->env, .cwd = "/", .fd = {in, out, out}};
	struct cordon_error e2 = {0};
	int r;

	while (h->hk->args && h->hk->args[n])
		n++;
	/* argv[0] is the path: cordon_session_exec() runs argv[0] */
	argv = calloc(n + 2, sizeof(*argv));
	if (!argv)
		return cd_fail(err, ENOMEM, h->name, "out of memory");
	argv[0] = h->hk->path;
	for (size_t i = 1; i < n; i++)
		argv[i] = h->hk->args[i];
	e.argv = argv;
	r = cordon_session_exec(s, &e, &h->proc, &e2);
	if (r < 0)
		return cd_fail(err, e2.code, h->name, "%s: inside the container: %s", h->hk->path,
			       e2.msg);
	h->procfd = cordon_process_fd(h->proc);
	return 0;
}

/* One hook, start to end: 0, or -errno with err naming it */
static int hook_run(const struct oci_hook *hk, const char *name, struct cordon_session *inside,
		    const char *state_json, const char *bundle, struct cordon_error *err)
{
	struct hook_run h = {.name = name, .hk = hk, .procfd = -1, .out = -1};
	_cleanup_close_ int in = -1, outw = -1;
	int p[2], r, status;

	in = state_memfd(state_json, err);
	if (in < 0)
		return in;
	if (pipe2(p, O_CLOEXEC) < 0)
		return cd_fail_errno(err, errno, name, "pipe");
	h.out = p[0];
	outw = p[1];
	fcntl(h.out, F_SETFL, O_NONBLOCK);
	oci_log("debug", "%s: %s", name, hk->path);
	r = inside ? inside_start(&h, inside, in, outw, err)
		   : host_start(&h, in, outw, bundle, err);
	outw = cd_safe_close(outw);
	if (r < 0) {
		h.out = cd_safe_close(h.out);
		return r;
	}
	status = hook_wait(&h);
	r = hook_verdict(&h, status, err);
	if (h.proc)
		cordon_process_free(h.proc);
	else
		h.procfd = cd_safe_close(h.procfd);
	h.out = cd_safe_close(h.out);
	return r;
}

int oci_hooks_run(const struct oci_hook_list *l, enum oci_hook_kind k,
		  struct cordon_session *inside, const char *state_json, const char *bundle,
		  struct cordon_error *err)
{
	for (size_t i = 0; i < l->n; i++) {
		char name[64];
		int r;

		snprintf(name, sizeof(name), "hooks.%s[%zu]", oci_hook_names[k], i);
		r = hook_run(&l->v[i], name, inside, state_json, bundle, err);
		if (r < 0)
			return r;
	}
	return 0;
}

void oci_hooks_run_warn(const struct oci_hook_list *l, enum oci_hook_kind k, const char *state_json,
			const char *bundle)
{
	for (size_t i = 0; i < l->n; i++) {
		struct cordon_error err = {0};
		char name[64];

		snprintf(name, sizeof(name), "hooks.%s[%zu]", oci_hook_names[k], i);
		if (hook_run(&l->v[i], name, NULL, state_json, bundle, &err) < 0)
			oci_log("warning", "%s: %s, ignoring", err.step[0] ? err.step : name,
				err.msg);
	}
}

/* hooks.json: ours, a regular file, not larger than a config may be */
static char *poststop_read(int dirfd, const char *id)
{
	/* O_NONBLOCK: a FIFO planted there would hang root's delete of a user's container */
	_cleanup_close_ int fd =
	    openat(dirfd, OCI_HOOKS_FILE, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	_cleanup_free_ char *text = NULL;
	struct stat st;
	ssize_t n;

	if (fd < 0 || fstat(fd, &st) < 0)
		return NULL;
	if (!S_ISREG(st.st_mode) || st.st_uid != geteuid() || st.st_nlink != 1 ||
	    st.st_size > (16 << 20)) {
		oci_log("warning", "%s: %s: not this user's: its poststop hooks are not run", id,
			OCI_HOOKS_FILE);
		return NULL;
	}
	text = malloc((size_t)st.st_size + 1);
	if (!text)
		return NULL;
	n = pread(fd, text, (size_t)st.st_size, 0);
	if (n != st.st_size)
		return NULL;
	text[n] = '\0';
	return CD_TAKE_PTR(text);
}

void oci_hooks_poststop(int dirfd, const char *id)
{
	struct oci_hook_list l[OCI_HOOK_KINDS] = {0};
	struct cordon_error err = {0};
	_cleanup_free_ char *text = poststop_read(dirfd, id), *json = NULL;
	struct oci_state st;

	if (!text)
		return;
	if (oci_hooks_parse_text(text, l, &err) < 0) {
		oci_log("warning", "%s: %s: %s, ignoring", id, OCI_HOOKS_FILE, err.msg);
		oci_hooks_free(l);
		return;
	}
	if (oci_state_read(dirfd, &st, &err) < 0) {
		oci_log("warning", "%s: poststop hooks: %s, ignoring", id, err.msg);
		oci_hooks_free(l);
		return;
	}
	st.status = OCI_STOPPED;
	st.pid = 0;
	json = oci_state_json(&st);
	if (json)
		oci_hooks_run_warn(&l[OCI_HOOK_POSTSTOP], OCI_HOOK_POSTSTOP, json, st.bundle);
	oci_state_clear(&st);
	oci_hooks_free(l);
}
