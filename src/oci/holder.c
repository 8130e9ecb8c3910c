/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * holder.c - the holder H: the process that holds one container's cordon session from create to
 * the end of its process. create forks it (setsid; the engine's subreaper adopts it when create
 * exits; the pid file names it); run is it, in the foreground. It locks the container's
 * directory for its life, answers the control socket there (start, kill, pause, resume, exec,
 * ps) to peers of its own uid or root, keeps the engine's stdio until start hands it to the
 * process, forwards the signals it gets to the process, and when the process ends destroys the
 * session, removes its scratch, writes "stopped" and exits as the process did. Runs in the
 * holder.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "frame.h"
#include "holder_int.h"
#include "runtime.h"
#include "spec.h"
#include "util.h"

/* The signals H passes on to the process (conmon forwards its SIGTERM to the pid file's pid;
 * Slurm sends SIGCONT and SIGTERM to the step's processes, run among them). */
static const int forwarded[] = {SIGHUP,	 SIGINT,   SIGQUIT, SIGUSR1, SIGUSR2,
				SIGTERM, SIGWINCH, SIGCONT, SIGALRM, SIGPWR};

static void client_close(struct holder *h, size_t i)
{
	struct oci_client *c = &h->clients[i];

	cd_closep(&c->fd);
	if (c->proc)
		cordon_process_free(c->proc);
	h->clients[i] = h->clients[--h->n_clients];
}

static int reply(int fd, uint32_t type, const void *p, size_t len)
{
	struct cd_frame f = {.type = type, .part = {{(void *)p, len}, {NULL, 0}}};

	return cd_frame_send(fd, &f, MSG_DONTWAIT);
}

int oci_holder_reply_error(int fd, const struct cordon_error *err)
{
	return reply(fd, OCI_MSG_ERROR, err, sizeof(*err));
}

int oci_holder_reply_ok(int fd, const void *p, size_t len)
{
	return reply(fd, OCI_MSG_OK, p, len);
}

/* The container's pid 1, for state.json (`state`'s pid): once, when its session runs */
static void init_learn(struct holder *h)
{
	pid_t pid = 0;
	unsigned long long start = 0;
	_cleanup_close_ int pidfd = oci_holder_pid1(h, &pid);

	if (pidfd >= 0 && oci_proc_start(pid, &start) == 0) {
		h->st.init = pid;
		h->st.init_start = start;
	}
}

static int state_save(struct holder *h)
{
	struct cordon_error err = {0};
	int r;

	h->st.status = h->status;
	h->st.pid = h->status == OCI_STOPPED ? 0 : getpid();
	if (h->status != OCI_STOPPED && !h->st.init && h->s)
		init_learn(h);
	r = oci_state_write(h->a->dirfd, &h->st, &err);
	if (r < 0)
		oci_error_from(r, "state", &err);
	return r;
}

/* The end: the session destroyed (every process in it gone), exec's proxies told, "stopped"
 * written; then exit as the process did. */
_Noreturn static void holder_end(struct holder *h, int status)
{
	struct cordon_error err = {0};
	struct cordon_result res = {0};
	int32_t killed = SIGKILL;

	oci_log("debug", "%s: ending, status 0x%x", h->a->id, status);
	if (h->init)
		cordon_process_free(CD_TAKE_PTR(h->init));
	if (h->s && cordon_session_destroy(CD_TAKE_PTR(h->s), &res, &err) < 0)
		oci_error_from(1, "session", &err);
	else if (res.oom_kills)
		/* the cgroup that counted it is gone now: the engine's log says it */
		oci_log("warning",
			"%s: the memory limit killed the container (memory.events oom_kill %llu)",
			h->a->id, (unsigned long long)res.oom_kills);
	while (h->n_clients) {
		if (h->clients[0].proc)
			reply(h->clients[0].fd, OCI_MSG_EXIT, &killed, sizeof(killed));
		client_close(h, 0);
	}
	unlinkat(h->a->dirfd, OCI_SOCK_NAME, 0);
	/* every process gone, nothing uses the scratch now: removed by its maker, also when the
	 * delete comes from root (Slurm), which follows no user's note (scratch.c) */
	oci_scratch_remove_noted(h->a->dirfd);
	h->status = OCI_STOPPED;
	state_save(h);
	oci_exit_as(status);
}

static bool ends_by_default(int sig)
{
	static const int harmless[] = {SIGCHLD, SIGCONT, SIGURG,  SIGWINCH,
				       SIGSTOP, SIGTSTP, SIGTTIN, SIGTTOU};

	for (size_t i = 0; i < CD_ELEMENTSOF(harmless); i++)
		if (harmless[i] == sig)
			return false;
	return true;
}

int oci_holder_kill(struct holder *h, int sig, bool all, struct cordon_error *err)
{
	int r;

	oci_log("debug", "%s: signal %d%s (%s)", h->a->id, sig, all ? " to all" : "",
		oci_status_name(h->status));
	if (h->status == OCI_CREATED) {
		/* no process yet: the container ends as its process would have, of sig */
		if (ends_by_default(sig))
			h->end_status = sig;
		return 0;
	}
	if (sig == SIGKILL && (all || h->status == OCI_PAUSED))
		return cordon_session_kill(h->s) < 0 ? cd_fail(err, ESRCH, "kill", "session") : 0;
	r = cordon_process_signal(h->init, sig, all, err);
	if (r < 0 && r != -ESRCH)
		return r;
	for (size_t i = 0; all && i < h->n_clients; i++)
		if (h->clients[i].proc)
			cordon_process_signal(h->clients[i].proc, sig, 1, NULL);
	return 0;
}

char *oci_holder_state_json(struct holder *h, enum oci_status status)
{
	struct oci_state st = h->st;

	st.status = status;
	st.pid = status == OCI_STOPPED ? 0 : getpid();
	return oci_state_json(&st);
}

/* One kind of hooks, with the state JSON of the moment (inside: in the container) */
static int hooks_phase(struct holder *h, enum oci_hook_kind k, enum oci_status status, bool inside,
		       struct cordon_error *err)
{
	const struct oci_hook_list *l = oci_spec_hooks(h->a->spec, k);
	_cleanup_free_ char *json = NULL;

	struct oci_state st = h->st;
	_cleanup_close_ int pidfd = -1;

	if (!l->n)
		return 0;
	/* the state's pid for a hook is the container's pid 1 as the host sees it (the spec's
	 * "process ID of the container as seen by the host"), never the holder's: a hook that
	 * enters its namespaces (nsenter -t PID -n) must reach the container's, not the host's */
	st.status = status;
	st.pid = 0;
	if (status != OCI_STOPPED) {
		pidfd = oci_holder_pid1(h, &st.pid);
		if (pidfd < 0)
			return cd_fail(err, -pidfd, "hooks", "the container's pid 1: %s",
				       strerror(-pidfd));
	}
	json = oci_state_json(&st);
	if (!json)
		return cd_fail(err, ENOMEM, "hooks", "out of memory");
	if (k == OCI_HOOK_POSTSTART) {
		oci_hooks_run_warn(l, k, json, oci_spec_bundle(h->a->spec));
		return 0;
	}
	return oci_hooks_run(l, k, inside ? h->s : NULL, json, oci_spec_bundle(h->a->spec), err);
}

/* create's hooks (runtime-spec lifecycle steps 3-5), the sandbox made, the state "created" */
static int hooks_create(struct holder *h, struct cordon_error *err)
{
	int r;

	h->hooks_begun = true;
	r = hooks_phase(h, OCI_HOOK_PRESTART, OCI_CREATED, false, err);
	if (r >= 0)
		r = hooks_phase(h, OCI_HOOK_CREATE_RUNTIME, OCI_CREATED, false, err);
	if (r >= 0)
		r = hooks_phase(h, OCI_HOOK_CREATE_CONTAINER, OCI_CREATED, true, err);
	return r;
}

/* A failure once create's hooks began: the container is gone; the poststop hooks (lifecycle
 * step 13), for no delete follows a create that failed */
static void hooks_failed(struct holder *h)
{
	_cleanup_free_ char *json = NULL;

	if (!h->hooks_begun || !oci_spec_hooks(h->a->spec, OCI_HOOK_POSTSTOP)->n)
		return;
	json = oci_holder_state_json(h, OCI_STOPPED);
	if (json)
		oci_hooks_run_warn(oci_spec_hooks(h->a->spec, OCI_HOOK_POSTSTOP), OCI_HOOK_POSTSTOP,
				   json, oci_spec_bundle(h->a->spec));
}

int oci_holder_start(struct holder *h, struct cordon_error *err)
{
	const struct oci_process *p = oci_spec_process(h->a->spec);
	int tty = h->a->tty;
	struct cordon_exec e = {
	    .argv = (const char *const *)p->args,
	    .env = (const char *const *)p->env,
	    .cwd = p->cwd,
	    .fd = {tty >= 0 ? tty : h->stdio[0], tty >= 0 ? tty : h->stdio[1],
		   tty >= 0 ? tty : h->stdio[2]},
	    .flags = tty >= 0 ? CORDON_EXEC_TTY : 0,
	};
	int r;

	if (h->status != OCI_CREATED)
		return cd_fail(err, EBUSY, "start", "%s: container is %s, not created", h->a->id,
			       oci_status_name(h->status));
	r = hooks_phase(h, OCI_HOOK_START_CONTAINER, OCI_CREATED, true, err);
	if (r < 0) {
		/* lifecycle step 7: the container stops, its process never runs */
		for (int i = 0; i < 3; i++)
			h->stdio[i] = cd_safe_close(h->stdio[i]);
		h->a->tty = cd_safe_close(h->a->tty);
		h->end_status = CORDON_EXIT_FAILURE << 8;
		return r;
	}
	r = cordon_session_exec(h->s, &e, &h->init, err);
	/* the engine waits for EOF on these: from now on only the process has them */
	for (int i = 0; i < 3; i++)
		cd_closep(&h->stdio[i]);
	cd_closep(&h->a->tty);
	if (r < 0) {
		h->end_status = (err->code == ENOENT ? CORDON_EXIT_NOTFOUND : CORDON_EXIT_NOEXEC)
				<< 8;
		return r;
	}
	h->status = OCI_RUNNING;
	state_save(h);
	oci_log("debug", "%s: started, pid %d inside", h->a->id, cordon_process_pid(h->init));
	/* lifecycle step 9: before start returns; a failure is a warning */
	return hooks_phase(h, OCI_HOOK_POSTSTART, OCI_RUNNING, false, err);
}

int oci_holder_freeze(struct holder *h, bool frozen, struct cordon_error *err)
{
	int r;

	if (h->status != (frozen ? OCI_RUNNING : OCI_PAUSED))
		return cd_fail(err, EBUSY, frozen ? "pause" : "resume", "%s: container is %s",
			       h->a->id, oci_status_name(h->status));
	r = cordon_session_freeze(h->s, frozen, err);
	if (r < 0)
		return r;
	h->status = frozen ? OCI_PAUSED : OCI_RUNNING;
	state_save(h);
	return 0;
}

/* SO_PEERCRED: only our own uid, or root, may drive the container */
static bool peer_ok(int fd)
{
	struct ucred cred;
	socklen_t len = sizeof(cred);

	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0)
		return false;
	return cred.uid == getuid() || cred.uid == 0;
}

static void accept_client(struct holder *h)
{
	int fd = accept4(h->lfd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);

	if (fd < 0)
		return;
	if (!peer_ok(fd) || h->n_clients == OCI_MAX_CLIENTS) {
		oci_log("warning", "%s: control socket: a peer refused", h->a->id);
		close(fd);
		return;
	}
	h->clients[h->n_clients++] = (struct oci_client){.fd = fd};
}

static void on_signal(struct holder *h)
{
	struct signalfd_siginfo si;
	struct cordon_error err = {0};

	while (read(h->sigfd, &si, sizeof(si)) == sizeof(si))
		if (oci_holder_kill(h, (int)si.ssi_signo, false, &err) < 0)
			oci_error_from(1, "signal", &err);
}

/* the init process ended (or the session did): the container's end */
static void on_init(struct holder *h)
{
	struct cordon_error err = {0};
	int status = 0, r;

	r = cordon_process_wait(h->init, 0, &status, &err);
	if (r == 0)
		return;
	if (r < 0)
		status = SIGKILL; /* the session went first: killed with it */
	holder_end(h, status);
}

static void on_exec_end(struct holder *h, size_t i)
{
	struct oci_client *c = &h->clients[i];
	int status = 0, r;

	r = cordon_process_wait(c->proc, 0, &status, NULL);
	if (r == 0)
		return;
	if (r < 0)
		status = SIGKILL;
	int32_t s32 = status;
	reply(c->fd, OCI_MSG_EXIT, &s32, sizeof(s32));
	client_close(h, i);
}

static size_t poll_fill(struct holder *h, struct pollfd *p, size_t *map)
{
	size_t n = 0;

	p[n++] = (struct pollfd){.fd = h->sigfd, .events = POLLIN};
	p[n++] = (struct pollfd){.fd = h->lfd, .events = POLLIN};
	p[n++] = (struct pollfd){.fd = cordon_session_fd(h->s), .events = POLLIN};
	p[n++] = (struct pollfd){.fd = h->init ? cordon_process_fd(h->init) : -1, .events = POLLIN};
	for (size_t i = 0; i < h->n_clients; i++) {
		map[n] = i;
		p[n++] = (struct pollfd){.fd = h->clients[i].fd, .events = POLLIN};
		map[n] = i;
		p[n++] = (struct pollfd){
		    .fd = h->clients[i].proc ? cordon_process_fd(h->clients[i].proc) : -1,
		    .events = POLLIN};
	}
	return n;
}

_Noreturn static void holder_loop(struct holder *h)
{
	for (;;) {
		struct pollfd p[4 + 2 * OCI_MAX_CLIENTS];
		size_t map[4 + 2 * OCI_MAX_CLIENTS], n;

		if (h->end_status >= 0)
			holder_end(h, h->end_status);
		n = poll_fill(h, p, map);
		if (poll(p, n, -1) < 0) {
			if (errno == EINTR)
				continue;
			oci_error(1, "poll", "%s", strerror(errno));
			holder_end(h, SIGKILL);
		}
		if (p[0].revents)
			on_signal(h);
		if (p[3].revents)
			on_init(h);
		if (p[2].revents && !h->init)
			holder_end(h, SIGKILL); /* the session ended before its process started */
		if (p[1].revents)
			accept_client(h);
		/* from the last: closing a client moves the last one into its place */
		for (size_t k = n; k-- > 4;) {
			size_t i = map[k];

			if (!p[k].revents || i >= h->n_clients ||
			    h->clients[i].fd != p[k - (k % 2)].fd)
				continue;
			if (k % 2)
				on_exec_end(h, i);
			else if (oci_holder_request(h, i) <= 0)
				client_close(h, i);
		}
	}
}

/* H's own stdio becomes /dev/null (errors to --log): the engine's stay open only as the copies
 * start hands to the process. Nothing of ours above 2 reaches the session's supervisor (it
 * closes them), so fds 0-2 are what it could keep. With a terminal the process gets the pty and
 * none of them: none is kept, for the engine may wait for EOF on them before it calls start
 * (containerd's shim reads create's output to its end). */
static int stdio_take(struct holder *h, struct cordon_error *err)
{
	_cleanup_close_ int null = open("/dev/null", O_RDWR | O_CLOEXEC);

	if (null < 0)
		return cd_fail_errno(err, errno, "holder", "/dev/null");
	for (int i = 0; i < 3 && h->a->tty < 0 && h->a->console < 0; i++)
		h->stdio[i] = fcntl(i, F_DUPFD_CLOEXEC, 3);
	if (h->a->ready_fd < 0)
		oci_g.err_fd = fcntl(STDERR_FILENO, F_DUPFD_CLOEXEC, 3);
	else
		oci_g.err_fd = -1;
	if (dup2(null, 0) < 0 || dup2(null, 1) < 0 ||
	    dup2(oci_g.log_fd >= 0 ? oci_g.log_fd : null, 2) < 0)
		return cd_fail_errno(err, errno, "holder", "dup2");
	/* the log lines the library gives (its notices) come from the session's supervisor too,
	 * a fork of ours that keeps 0-2 alone and puts the holder's socket at 3: the log is fd 2
	 * there as here (a line written to the old number went into that socket: the session
	 * hung, and create with it) */
	if (oci_g.log_fd >= 0)
		oci_g.log_fd = STDERR_FILENO;
	return 0;
}

/* process.terminal with a console socket: the pty comes from the container's own /dev/pts,
 * so pid 1 must exist first; its master goes to the engine before create returns */
static int console_take(struct holder *h, struct cordon_error *err)
{
	const struct oci_process *p = oci_spec_process(h->a->spec);
	_cleanup_close_ int pidfd = -1;
	pid_t pid1 = 0;

	if (h->a->console < 0)
		return 0;
	pidfd = oci_holder_pid1(h, &pid1);
	if (pidfd < 0)
		return cd_fail_errno(err, -pidfd, "terminal", "the container's pid 1");
	h->a->tty =
	    oci_console_send(h->a->console, pidfd, pid1, p->uid, p->gid, p->rows, p->cols, err);
	cd_closep(&h->a->console);
	return h->a->tty < 0 ? h->a->tty : 0;
}

static int signals_take(struct holder *h, struct cordon_error *err)
{
	sigset_t set;

	sigemptyset(&set);
	for (size_t i = 0; i < CD_ELEMENTSOF(forwarded); i++)
		sigaddset(&set, forwarded[i]);
	if (sigprocmask(SIG_BLOCK, &set, NULL) < 0)
		return cd_fail_errno(err, errno, "holder", "sigprocmask");
	h->sigfd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
	if (h->sigfd < 0)
		return cd_fail_errno(err, errno, "holder", "signalfd");
	signal(SIGPIPE, SIG_IGN);
	return 0;
}

static int listen_take(struct holder *h, struct cordon_error *err)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};

	h->lfd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (h->lfd < 0)
		return cd_fail_errno(err, errno, "holder", "socket");
	snprintf(sa.sun_path, sizeof(sa.sun_path), "/proc/self/fd/%d/%s", h->a->dirfd,
		 OCI_SOCK_NAME);
	if (bind(h->lfd, (struct sockaddr *)&sa, sizeof(sa)) < 0 || listen(h->lfd, 16) < 0)
		return cd_fail_errno(err, errno, "holder", "control socket");
	return 0;
}

static int state_init(struct holder *h, struct cordon_error *err)
{
	const char *const *keys, *const *values;
	char when[40];
	size_t n = oci_spec_annotations(h->a->spec, &keys, &values);

	oci_now_rfc3339(when);
	/* who the state's pid is: readers check it before they trust the pid (state.c) */
	if (oci_proc_start(getpid(), &h->st.start) < 0)
		return cd_fail(err, EIO, "holder", "/proc/self/stat: no start time");
	h->st.id = strdup(h->a->id);
	h->st.bundle = strdup(oci_spec_bundle(h->a->spec));
	h->st.rootfs = strdup(oci_spec_rootfs(h->a->spec));
	h->st.created = strdup(when);
	h->st.ann_keys = calloc(n + 1, sizeof(char *));
	h->st.ann_values = calloc(n + 1, sizeof(char *));
	if (!h->st.id || !h->st.bundle || !h->st.rootfs || !h->st.created || !h->st.ann_keys ||
	    !h->st.ann_values)
		return cd_fail(err, ENOMEM, "holder", "out of memory");
	for (; h->st.n_ann < n; h->st.n_ann++) {
		h->st.ann_keys[h->st.n_ann] = strdup(keys[h->st.n_ann]);
		h->st.ann_values[h->st.n_ann] = strdup(values[h->st.n_ann]);
		if (!h->st.ann_keys[h->st.n_ann] || !h->st.ann_values[h->st.n_ann])
			return cd_fail(err, ENOMEM, "holder", "out of memory");
	}
	return 0;
}

/* The session, the socket, the state: each a step that may fail before the container exists */
static int holder_setup(struct holder *h, struct cordon_error *err)
{
	int r;

	if (flock(h->a->dirfd, LOCK_EX | LOCK_NB) < 0)
		return cd_fail_errno(err, errno, "holder", "lock %s", h->a->id);
	r = stdio_take(h, err);
	if (r < 0)
		return r;
	r = signals_take(h, err);
	if (r < 0)
		return r;
	r = state_init(h, err);
	if (r < 0)
		return r;
	r = cordon_session_create(h->a->config, CORDON_SESSION_FREEZABLE, &h->s, err);
	if (r < 0)
		return r;
	r = console_take(h, err);
	if (r < 0)
		return r;
	r = listen_take(h, err);
	if (r < 0)
		return r;
	/* the hooks may ask `cordon-runtime state`: it says created, with our pid */
	r = state_save(h);
	if (r < 0)
		return cd_fail(err, EIO, "state", "state.json not written");
	r = hooks_create(h, err);
	if (r < 0)
		return r;
	if (h->a->start_now) {
		r = oci_holder_start(h, err);
		if (r < 0)
			return r;
	}
	return state_save(h) < 0 ? cd_fail(err, EIO, "state", "state.json not written") : 0;
}

_Noreturn void oci_holder_main(struct oci_holder_args *a)
{
	struct holder h = {.a = a,
			   .status = OCI_CREATED,
			   .lfd = -1,
			   .sigfd = -1,
			   .end_status = -1,
			   .stdio = {-1, -1, -1}};
	struct cordon_error err = {0};
	int r;

	r = holder_setup(&h, &err);
	if (r >= 0 && a->pid_file)
		r = oci_pid_file_write(a->pid_file, getpid(), &err);
	if (r < 0) {
		/* the container gone before create hears of it: no process is left when it
		 * returns, and the poststop hooks have run */
		if (h.s)
			cordon_session_destroy(CD_TAKE_PTR(h.s), NULL, NULL);
		hooks_failed(&h);
	}
	if (a->ready_fd >= 0) {
		/* create prints the error and removes the directory once we are gone */
		(void)cd_write_all(a->ready_fd, &err, sizeof(err));
		cd_closep(&a->ready_fd);
	} else if (r < 0) {
		if (oci_g.err_fd < 0)
			oci_g.err_fd = STDERR_FILENO;
		oci_error_from(1, "create", &err);
	}
	if (r < 0) {
		if (a->remove_on_failure)
			oci_dir_remove(a->rootfd, a->id, NULL);
		_exit(h.end_status > 0 ? WEXITSTATUS(h.end_status) : OCI_EXIT_FAIL);
	}
	holder_loop(&h);
}
