/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * cmd_exec.c - exec: a process started in a container by its holder (cordon_session_exec, so no
 * host process ever joins the container), from --process FILE (checked against the container's
 * floor) or from the command line. The pid the engine gets (--pid-file) is a proxy: this
 * process, or with --detach a child of it that stays, connected to the holder; it passes on
 * the signals it gets and exits as the process did. Runs in cordon-runtime (and its proxy).
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "frame.h"
#include "runtime.h"
#include "spec.h"
#include "util.h"

enum {
	E_PROCESS,
	E_DETACH,
	E_TTY,
	E_CONSOLE,
	E_PID_FILE,
	E_CWD,
	E_USER,
	E_GIDS,
	E_CAP,
	E_NNP,
	E_PRESERVE,
	E_LABEL,
	E_APPARMOR,
	E_ENV
};
static const struct oci_opt exec_opts[] = {
    [E_PROCESS] = {"process", 'p', true},
    [E_DETACH] = {"detach", 'd', false},
    [E_TTY] = {"tty", 't', false},
    [E_CONSOLE] = {"console-socket", 0, true},
    [E_PID_FILE] = {"pid-file", 0, true},
    [E_CWD] = {"cwd", 0, true},
    [E_USER] = {"user", 'u', true},
    [E_GIDS] = {"additional-gids", 'g', true},
    [E_CAP] = {"cap", 'c', true},
    [E_NNP] = {"no-new-privs", 0, false},
    [E_PRESERVE] = {"preserve-fds", 0, true},
    [E_LABEL] = {"process-label", 0, true},
    [E_APPARMOR] = {"apparmor", 0, true},
    [E_ENV] = {"env", 'e', true},
};

struct exec_ctx {
	const char *v[CD_ELEMENTSOF(exec_opts)];
	const char *id;
	char **env; /* --env, each of them (the table keeps one value an option) */
	struct oci_spec *spec;
	struct oci_process *proc;
	int rootfd, dirfd, console; /* connected to --console-socket (a terminal), or -1 */
};

static void ctx_done(struct exec_ctx *x)
{
	cd_strv_free(x->env);
	oci_process_free(x->proc);
	oci_spec_free(x->spec);
	cd_closep(&x->rootfd);
	cd_closep(&x->dirfd);
	cd_closep(&x->console);
}

/* --env K=V may come many times: taken out before the table sees the options */
static int env_take(struct exec_ctx *x, int *argc, char **argv)
{
	int k = 0;

	for (int i = 0; i < *argc; i++) {
		const char *a = argv[i];

		if (a[0] != '-') {
			while (i < *argc)
				argv[k++] = argv[i++];
			break;
		}
		if (!strncmp(a, "--env=", 6) ||
		    ((!strcmp(a, "-e") || !strcmp(a, "--env")) && i + 1 < *argc)) {
			const char *val = a[1] == '-' && a[5] == '=' ? a + 6 : argv[++i];

			if (!strchr(val, '='))
				return oci_error(OCI_EXIT_BAD, "--env", "\"%s\": not KEY=VALUE",
						 val);
			if (cd_strv_push(&x->env, val) < 0)
				return oci_error(OCI_EXIT_BAD, "exec", "out of memory");
			continue;
		}
		argv[k++] = argv[i];
	}
	*argc = k;
	return 0;
}

static int exec_load(struct exec_ctx *x)
{
	struct cordon_error err = {0};
	struct oci_state st;
	int r;

	/* not another user's --root, even for root: its "holder" is whatever that user runs, and
	 * exec hands it our stdio (a terminal) */
	x->rootfd = oci_root_open(oci_g.root, false, false, &err);
	if (x->rootfd < 0)
		return oci_error_from(OCI_EXIT_FAIL, "--root", &err);
	x->dirfd = oci_dir_open(x->rootfd, x->id, &err);
	if (x->dirfd < 0)
		return oci_error_from(OCI_EXIT_FAIL, "exec", &err);
	r = oci_state_read(x->dirfd, &st, &err);
	if (r < 0)
		return oci_error_from(OCI_EXIT_FAIL, "exec", &err);
	if (st.status == OCI_STOPPED || st.status == OCI_PAUSED) {
		r = oci_error(OCI_EXIT_FAIL, "exec", "%s: container is %s", x->id,
			      oci_status_name(st.status));
		oci_state_clear(&st);
		return r;
	}
	r = oci_spec_load(st.bundle, &x->spec, &err);
	oci_state_clear(&st);
	if (r < 0)
		return oci_error_from(OCI_EXIT_FAIL, "config.json", &err);
	if (x->v[E_PROCESS]) {
		r = oci_process_load(x->v[E_PROCESS], x->spec, &x->proc, &err);
		if (r < 0)
			return oci_error_from(OCI_EXIT_BAD, "--process", &err);
	}
	return 0;
}

/* The request: --process's, or the command line's over the container's env and cwd */
static char *exec_request(struct exec_ctx *x, char **args, size_t *ret_len, bool *ret_tty)
{
	const struct oci_process *c = oci_spec_process(x->spec);
	_cleanup_strv_ char **env = NULL;
	bool tty;

	if (x->proc) {
		tty = *ret_tty = x->proc->terminal;
		return oci_exec_pack(tty ? OCI_EXEC_TTY : 0, x->proc->rows, x->proc->cols,
				     x->proc->args, x->proc->env, x->proc->cwd, ret_len);
	}
	env = cd_strv_copy((const char *const *)c->env);
	for (size_t i = 0; env && x->env && x->env[i]; i++)
		if (cd_strv_push(&env, x->env[i]) < 0)
			return NULL;
	tty = *ret_tty = x->v[E_TTY] != NULL;
	return env ? oci_exec_pack(tty ? OCI_EXEC_TTY : 0, 0, 0, args, env,
				   x->v[E_CWD] ? x->v[E_CWD] : c->cwd, ret_len)
		   : NULL;
}

/* The proxy: the process's signals in, its end out */
_Noreturn static void proxy(int sock)
{
	int null = open("/dev/null", O_RDWR | O_CLOEXEC);
	sigset_t all;
	int sfd;

	/* the engine waits for EOF on its pipes: only the process has them now */
	if (null >= 0)
		dup2(null, 0), dup2(null, 1), dup2(null, 2);
	oci_g.err_fd = -1;
	sigfillset(&all);
	sigprocmask(SIG_BLOCK, &all, NULL);
	sfd = signalfd(-1, &all, SFD_CLOEXEC);
	for (;;) {
		struct pollfd p[2] = {{.fd = sock, .events = POLLIN},
				      {.fd = sfd, .events = POLLIN}};
		struct signalfd_siginfo si;
		int32_t v = 0;
		struct cd_frame f = {.part = {{&v, sizeof(v)}, {NULL, 0}}};

		if (poll(p, 2, -1) < 0)
			continue;
		if (p[1].revents && read(sfd, &si, sizeof(si)) == sizeof(si) &&
		    si.ssi_signo != SIGCHLD) {
			struct cd_frame s = {.type = OCI_MSG_SIGNAL,
					     .part = {{&v, sizeof(v)}, {NULL, 0}}};

			v = (int32_t)si.ssi_signo;
			cd_frame_send(sock, &s, 0);
		}
		if (!p[0].revents)
			continue;
		if (cd_frame_recv(sock, &f, sizeof(v), 0, 0) == 1 && f.type == OCI_MSG_EXIT)
			oci_exit_as(v);
		oci_exit_as(SIGKILL); /* the holder went: so did the process */
	}
}

static int exec_start(struct exec_ctx *x, char **args)
{
	struct cordon_error err = {0};
	_cleanup_free_ char *req = NULL;
	_cleanup_close_ int sock = -1;
	int fds[3] = {0, 1, 2};
	size_t len = 0;
	bool tty = false;
	int32_t pid;
	pid_t p;

	req = exec_request(x, args, &len, &tty);
	if (!req)
		return oci_error(OCI_EXIT_FAIL, "exec", "out of memory");
	if (tty) {
		/* the holder opens the pty in the container and sends its master there */
		x->console = oci_console_connect(x->v[E_CONSOLE], &err);
		if (x->console < 0)
			return oci_error_from(OCI_EXIT_BAD, "--console-socket", &err);
		fds[0] = fds[1] = fds[2] = x->console;
	}
	sock = oci_ctl_connect(x->dirfd, &err);
	if (sock < 0 && err.code == EPERM)
		return oci_error_from(OCI_EXIT_FAIL, "exec", &err);
	if (sock < 0)
		return oci_error(OCI_EXIT_FAIL, "exec", "%s: container is stopped", x->id);
	if (oci_ctl_call(sock, OCI_MSG_EXEC, req, len, fds, 3, &pid, sizeof(pid), NULL, &err) < 0)
		return oci_error_from(err.code == ENOENT	  ? CORDON_EXIT_NOTFOUND
				      : !strcmp(err.step, "exec") ? CORDON_EXIT_NOEXEC
								  : OCI_EXIT_FAIL,
				      "exec", &err);
	x->console = cd_safe_close(x->console); /* ctx_done() closes it too */
	p = x->v[E_DETACH] ? fork() : getpid();
	if (p < 0)
		return oci_error(OCI_EXIT_FAIL, "exec", "fork: %s", strerror(errno));
	if (p == 0)
		proxy(sock);
	if (x->v[E_PID_FILE] && oci_pid_file_write(x->v[E_PID_FILE], p, &err) < 0) {
		if (x->v[E_DETACH])
			kill(p, SIGKILL);
		return oci_error_from(OCI_EXIT_FAIL, "--pid-file", &err);
	}
	if (!x->v[E_DETACH])
		proxy(sock);
	return 0;
}

int oci_cmd_exec(int argc, char **argv)
{
	struct exec_ctx x = {.rootfd = -1, .dirfd = -1, .console = -1};
	char **rest;
	int n, r;

	r = env_take(&x, &argc, argv);
	if (!r)
		r = oci_opts_parse("exec", exec_opts, CD_ELEMENTSOF(exec_opts), argc, argv, x.v, &n,
				   &rest, true);
	if (!r && n < 1)
		r = oci_error(OCI_EXIT_BAD, "exec", "a container id is needed");
	if (!r && !x.v[E_PROCESS] && n < 2)
		r = oci_error(OCI_EXIT_BAD, "exec", "a command is needed (or --process)");
	if (!r && x.v[E_PRESERVE] && strcmp(x.v[E_PRESERVE], "0"))
		r = oci_error(OCI_EXIT_BAD, "--preserve-fds", "not supported (only 0)");
	if (!r) {
		x.id = oci_one_id("exec", 1, rest);
		r = x.id ? exec_load(&x) : OCI_EXIT_BAD;
	}
	if (!r && (x.v[E_USER] || x.v[E_GIDS] || x.v[E_CAP]))
		oci_log("info", "exec: --user, --additional-gids, --cap: the container's are used");
	if (!r)
		r = exec_start(&x, rest + 1);
	ctx_done(&x);
	return r;
}
