/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * cmd_create.c - create, run and start: the bundle loaded and put through cordon's floor
 * (spec.h) before anything starts, the container's directory made, the holder forked (create,
 * run --detach) or become (run), the engine's pid file written once the holder is ready; start
 * asks the holder to start the process. Runs in cordon-runtime (and forks the holder).
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "runtime.h"
#include "spec.h"
#include "util.h"

enum { C_BUNDLE, C_PID_FILE, C_CONSOLE, C_PRESERVE, C_NO_PIVOT, C_NO_KEYRING, C_DETACH, C_KEEP };
static const struct oci_opt create_opts[] = {
    [C_BUNDLE] = {"bundle", 'b', true},	       [C_PID_FILE] = {"pid-file", 0, true},
    [C_CONSOLE] = {"console-socket", 0, true}, [C_PRESERVE] = {"preserve-fds", 0, true},
    [C_NO_PIVOT] = {"no-pivot", 0, false},     [C_NO_KEYRING] = {"no-new-keyring", 0, false},
    [C_DETACH] = {"detach", 'd', false},       [C_KEEP] = {"keep", 0, false},
};

struct create_ctx {
	const char *cmd;
	const char *id;
	const char *v[CD_ELEMENTSOF(create_opts)];
	struct oci_spec *spec;
	struct cordon_config *config;
	int rootfd;
	int dirfd;
	int tty;
	int console;
	char *scratch; /* made for a config without a read-write directory; removed on failure */
};

static void ctx_done(struct create_ctx *x)
{
	oci_spec_free(x->spec);
	cordon_config_free(x->config);
	cd_closep(&x->rootfd);
	cd_closep(&x->dirfd);
	cd_closep(&x->tty);
	cd_closep(&x->console);
	free(x->scratch);
}

/* Everything that can be refused, refused before the container's directory exists */
static int create_check(struct create_ctx *x, int argc, char **argv)
{
	struct cordon_error err = {0};
	char **rest;
	int n, r;

	r = oci_opts_parse(x->cmd, create_opts, CD_ELEMENTSOF(create_opts), argc, argv, x->v, &n,
			   &rest, false);
	if (r)
		return r;
	x->id = oci_one_id(x->cmd, n, rest);
	if (!x->id)
		return OCI_EXIT_BAD;
	if (x->v[C_PRESERVE] && strcmp(x->v[C_PRESERVE], "0"))
		return oci_error(OCI_EXIT_BAD, "--preserve-fds", "not supported (only 0)");
	if (x->v[C_NO_PIVOT])
		oci_log("info", "--no-pivot: ignored: cordon always pivots into the root");
	x->rootfd = oci_root_open(oci_g.root, true, false, &err);
	if (x->rootfd < 0)
		return oci_error_from(OCI_EXIT_BAD, "--root", &err);
	r = oci_spec_load(x->v[C_BUNDLE] ? x->v[C_BUNDLE] : ".", &x->spec, &err);
	if (r < 0)
		return oci_error_from(OCI_EXIT_BAD, "config.json", &err);
	x->config = cordon_config_new();
	if (!x->config)
		return oci_error(OCI_EXIT_BAD, x->cmd, "out of memory");
	cordon_config_set_notice(x->config, oci_log_line, NULL);
	r = oci_scratch_make(&x->scratch, &err);
	if (r < 0)
		return oci_error_from(OCI_EXIT_BAD, "scratch", &err);
	r = oci_spec_config_scratch(x->spec, x->scratch, x->config, oci_log_line, NULL, &err);
	if (r < 0)
		return oci_error_from(OCI_EXIT_BAD, "config.json", &err);
	if (oci_spec_process(x->spec)->terminal && !x->v[C_CONSOLE] &&
	    !(!strcmp(x->cmd, "run") && !x->v[C_DETACH] && isatty(STDIN_FILENO)))
		return oci_error(OCI_EXIT_BAD, "--console-socket",
				 "process.terminal is true: a console socket is needed");
	return 0;
}

/* The poststop hooks, for delete (which has no config): ROOT/ID/hooks.json, ours, 0600 */
static int hooks_save(struct create_ctx *x)
{
	_cleanup_free_ char *text = NULL;
	_cleanup_close_ int fd = -1;
	int r;

	if (!oci_spec_hooks(x->spec, OCI_HOOK_POSTSTOP)->n)
		return 0;
	text = oci_spec_poststop_json(x->spec);
	if (!text)
		return oci_error(OCI_EXIT_FAIL, x->id, "out of memory");
	fd = openat(x->dirfd, OCI_HOOKS_FILE, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
		    0600);
	if (fd < 0)
		return oci_error(OCI_EXIT_FAIL, x->id, "%s: %s", OCI_HOOKS_FILE, strerror(errno));
	r = cd_write_all(fd, text, strlen(text));
	if (r < 0)
		return oci_error(OCI_EXIT_FAIL, x->id, "%s: %s", OCI_HOOKS_FILE, strerror(-r));
	return 0;
}

/* The directory, then the console socket (the holder sends the pty): both undone by the caller when
 * what follows fails */
static int create_dir(struct create_ctx *x)
{
	struct cordon_error err = {0};
	const struct oci_process *p = oci_spec_process(x->spec);

	if (mkdirat(x->rootfd, x->id, 0700) < 0)
		return errno == EEXIST
			   ? oci_error(OCI_EXIT_BAD, x->id, "container already exists")
			   : oci_error(OCI_EXIT_BAD, x->id, "mkdir: %s", strerror(errno));
	x->dirfd = oci_dir_open(x->rootfd, x->id, &err);
	if (x->dirfd < 0)
		return oci_error_from(OCI_EXIT_FAIL, x->id, &err);
	if (oci_scratch_note(x->dirfd, x->scratch, &err) < 0)
		return oci_error_from(OCI_EXIT_FAIL, x->id, &err);
	if (hooks_save(x))
		return OCI_EXIT_FAIL;
	if (p->terminal && x->v[C_CONSOLE]) {
		x->console = oci_console_connect(x->v[C_CONSOLE], &err);
		if (x->console < 0)
			return oci_error_from(OCI_EXIT_FAIL, "--console-socket", &err);
	} else if (p->terminal) {
		/* run in the foreground on a terminal: the process gets that one */
		x->tty = fcntl(STDIN_FILENO, F_DUPFD_CLOEXEC, 3);
	}
	return 0;
}

static void holder_args(struct create_ctx *x, struct oci_holder_args *a, int ready, bool start)
{
	*a = (struct oci_holder_args){.id = x->id,
				      .rootfd = x->rootfd,
				      .dirfd = x->dirfd,
				      .spec = x->spec,
				      .config = x->config,
				      .tty = x->tty,
				      .console = x->console,
				      .ready_fd = ready,
				      .start_now = start};
}

/* create, run --detach: H forked; its word read (ready, or why not); the pid file written */
static int create_detached(struct create_ctx *x, bool start)
{
	struct cordon_error err = {0};
	struct oci_holder_args a;
	int p[2];
	ssize_t n;
	pid_t pid;

	if (pipe2(p, O_CLOEXEC) < 0)
		return oci_error(OCI_EXIT_FAIL, x->cmd, "pipe: %s", strerror(errno));
	pid = fork();
	if (pid < 0)
		return oci_error(OCI_EXIT_FAIL, x->cmd, "fork: %s", strerror(errno));
	if (pid == 0) {
		close(p[0]);
		setsid();
		holder_args(x, &a, p[1], start);
		oci_holder_main(&a);
	}
	close(p[1]);
	do
		n = read(p[0], &err, sizeof(err));
	while (n < 0 && errno == EINTR);
	close(p[0]);
	if (n != sizeof(err) || err.code || err.msg[0]) {
		if (n != sizeof(err))
			cd_fail(&err, EPIPE, "holder", "it died before it was ready");
		err.msg[sizeof(err.msg) - 1] = err.step[sizeof(err.step) - 1] = '\0';
		while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
			;
		oci_dir_remove(x->rootfd, x->id, NULL);
		return oci_error_from(OCI_EXIT_FAIL, x->cmd, &err);
	}
	if (x->v[C_PID_FILE] && oci_pid_file_write(x->v[C_PID_FILE], pid, &err) < 0) {
		kill(pid, SIGKILL);
		return oci_error_from(OCI_EXIT_FAIL, "--pid-file", &err);
	}
	return 0;
}

static int create_main(const char *cmd, int argc, char **argv, bool run)
{
	struct create_ctx x = {.cmd = cmd, .rootfd = -1, .dirfd = -1, .tty = -1, .console = -1};
	struct oci_holder_args a;
	int r;

	r = create_check(&x, argc, argv);
	if (!r)
		r = create_dir(&x);
	if (r) {
		if (x.dirfd >= 0)
			oci_dir_remove(x.rootfd, x.id, NULL);
		else if (x.scratch)
			oci_scratch_remove(x.scratch);
		ctx_done(&x);
		return r;
	}
	if (!run || x.v[C_DETACH]) {
		r = create_detached(&x, run);
		ctx_done(&x);
		return r;
	}
	/* run in the foreground (Slurm's mode): we are the holder; state, kill and delete from
	 * other processes work meanwhile */
	holder_args(&x, &a, -1, true);
	a.pid_file = x.v[C_PID_FILE];
	a.remove_on_failure = true;
	oci_holder_main(&a);
}

int oci_cmd_create(int argc, char **argv)
{
	return create_main("create", argc, argv, false);
}

int oci_cmd_run(int argc, char **argv)
{
	return create_main("run", argc, argv, true);
}

static bool foreign(int dirfd)
{
	struct stat st;

	return fstat(dirfd, &st) < 0 || st.st_uid != geteuid();
}

/* start, kill, pause, resume: one request to the holder of the container */
int oci_ctl_simple(const char *cmd, const char *id, uint32_t type, const void *payload, size_t len,
		   bool gone_ok)
{
	struct cordon_error err = {0};
	_cleanup_close_ int rootfd = -1, dirfd = -1, sock = -1;
	int r;

	rootfd = oci_root_open(oci_g.root, false, true, &err);
	if (rootfd < 0)
		return oci_error_from(OCI_EXIT_FAIL, "--root", &err);
	dirfd = oci_dir_open(rootfd, id, &err);
	if (dirfd < 0)
		return oci_error_from(OCI_EXIT_FAIL, cmd, &err);
	sock = oci_ctl_connect(dirfd, &err);
	if (sock < 0 && err.code == EPERM)
		return oci_error_from(OCI_EXIT_FAIL, cmd, &err);
	if (sock < 0 && gone_ok)
		return 0;
	if (sock < 0)
		return oci_error(OCI_EXIT_FAIL, cmd, "%s: container is stopped", id);
	/* start runs the startContainer and poststart hooks: as long as they take, but for a
	 * caller acting on another user's container (root, as Slurm does): that user's "holder"
	 * could answer never */
	if (type != OCI_MSG_START || foreign(dirfd))
		oci_ctl_bound(sock, OCI_CTL_WAIT_S);
	r = oci_ctl_call(sock, type, payload, len, NULL, 0, NULL, 0, NULL, &err);
	if (r < 0)
		return oci_error_from(OCI_EXIT_FAIL, cmd, &err);
	return 0;
}

int oci_cmd_start(int argc, char **argv)
{
	const char *id = oci_one_id("start", argc, argv);

	return id ? oci_ctl_simple("start", id, OCI_MSG_START, NULL, 0, false) : OCI_EXIT_BAD;
}
