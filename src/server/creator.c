/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * creator.c - the process that makes the server's sessions. A session's supervisor is a fork()
 * of whoever calls cordon_session_create(), and goes on running cordon's code: forked from this
 * threaded server, it could inherit a lock another thread held (a FILE's, the user database's;
 * seen: a supervisor stuck in fgetpwent()), and it would hold everything the server does (its
 * argv and environment with the API keys, every sandbox's token, requests in flight). So the
 * server starts this helper first thing, before any thread, as a fresh exec of its own program
 * (`cordon-serve --session-maker`): its argv is that, its environment only the variables the
 * library reads (never a key's), and it learns the sandboxes' options from one message (JSON).
 * It makes each session asked for (single-threaded: every fork of it is clean) and exports it
 * back (cordon_session_export: the two descriptors, id, pid). It dies with the server
 * (PR_SET_PDEATHSIG, kept across the exec) and holds nothing of a session once handed over: a
 * session is held by the server alone. Runs in the session maker (srv_creator_main) and, for
 * its start and its requests, in the server (srv_creator_start, srv_creator_make). One message a
 * frame (frame.h):
 *
 *   server                                   session maker
 *   OPTIONS: the sandboxes' options (JSON) ->  (once, first)
 *   MAKE: a workdir's path, the create's      ->  cordon_session_create(), export
 *         root and allow-list (JSON)
 *                                          <-  MADE: ret, id, pid, err; + the session's two
 *                                              descriptors when it was made
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <json-c/json.h>

#include "creator.h"
#include "frame.h"
#include "opts.h"
#include "sbconfig.h"
#include "util.h"

extern char **environ;

/* The descriptor the session maker finds its socket on (main.c execs it with it there) */
#define MAKER_FD 3
/* The options message: a JSON object, at most this long */
#define OPTIONS_MAX 65536

enum creator_type {
	CREATOR_OPTIONS = 1,
	CREATOR_MAKE,
	CREATOR_MADE,
};

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
	struct cd_frame f = { .type = CREATOR_MADE, .part = { { (void *)rep, sizeof(*rep) } },
			      .fd = { fds[0], fds[1] }, .n_fd = (unsigned)n };

	return cd_frame_send(sock, &f, 0);
}

/* One frame of text (the options, a workdir) into buf, NUL-terminated: 1, or 0 at the end */
static int recv_text(int sock, uint32_t type, char *buf, size_t size)
{
	struct cd_frame f = { .part = { { buf, size - 1 } } };
	int r = cd_frame_recv(sock, &f, 0, 0, 0);

	if (r <= 0 || f.type != type)
		return 0;
	buf[f.len] = '\0';
	return 1;
}

/* A MAKE's JSON: {"workdir", "rootfs"?, "own_net", "allow_net": [...]} into spec (its strings
 * borrowed from o, allow_net a new vector) */
static int take_make(json_object *o, const char **workdir, struct srv_make_spec *spec)
{
	json_object *v, *a;
	int r = 0;

	if (!o || !json_object_is_type(o, json_type_object) ||
	    !json_object_object_get_ex(o, "workdir", &v) || !json_object_is_type(v, json_type_string))
		return -EINVAL;
	*workdir = json_object_get_string(v);
	if (json_object_object_get_ex(o, "rootfs", &v) && json_object_is_type(v, json_type_string))
		spec->rootfs = json_object_get_string(v);
	if (json_object_object_get_ex(o, "own_net", &v))
		spec->own_net = json_object_get_boolean(v);
	if (json_object_object_get_ex(o, "allow_net", &a) && json_object_is_type(a, json_type_array))
		for (size_t i = 0; r >= 0 && i < json_object_array_length(a); i++)
			r = cd_strv_push(&spec->allow_net,
					 json_object_get_string(json_object_array_get_idx(a, i)));
	return r;
}

/* One request: a workdir's path and what the create picked; the session made there, exported. */
static void serve_one(int sock, const char *text)
{
	struct creator_reply rep = { 0 };
	struct cordon_session *s = NULL;
	struct cordon_config *c = NULL;
	json_object *o = json_tokener_parse(text);
	struct srv_make_spec spec = { 0 };
	const char *workdir = NULL;
	int fds[2] = { -1, -1 };
	pid_t pid = 0;

	rep.ret = take_make(o, &workdir, &spec);
	if (rep.ret < 0)
		cd_fail(&rep.err, -rep.ret, "serve", "a request the session maker cannot read");
	else
		rep.ret = srv_sbconfig_make(workdir, &spec, &c, &rep.err);
	if (rep.ret >= 0) {
		/* freezable: pause (control.c) freezes it */
		unsigned flags = CORDON_SESSION_FREEZABLE |
				 (srv_opts.keep_workdirs ? 0 : CORDON_SESSION_REMOVE_WORKDIR);

		rep.ret = cordon_session_create(c, flags, &s, &rep.err);
		cordon_config_free(c);
	}
	if (rep.ret >= 0) {
		cordon_session_export(s, fds, rep.id, &pid);
		rep.pid = pid;
	}
	json_object_put(o);
	cd_strv_free(spec.allow_net);
	send_reply(sock, &rep, fds, rep.ret >= 0 ? 2 : 0);
	/* the server holds the session now; a failed send: ours closing them ends it */
	cd_closep(&fds[0]);
	cd_closep(&fds[1]);
}

/* The sandboxes' options, from the server: what srv_sbconfig_make() reads of srv_opts */
static int take_options(const char *text)
{
	json_object *o = json_tokener_parse(text), *v, *a;
	int r = 0;

	if (!o || !json_object_is_type(o, json_type_object)) {
		json_object_put(o);
		return -EINVAL;
	}
	if (json_object_object_get_ex(o, "memory", &v))
		srv_opts.memory = (uint64_t)json_object_get_int64(v);
	if (json_object_object_get_ex(o, "pids", &v))
		srv_opts.pids = (uint64_t)json_object_get_int64(v);
	if (json_object_object_get_ex(o, "millicpus", &v))
		srv_opts.millicpus = (uint64_t)json_object_get_int64(v);
	if (json_object_object_get_ex(o, "keep_workdirs", &v))
		srv_opts.keep_workdirs = json_object_get_boolean(v);
	if (json_object_object_get_ex(o, "user_share", &v))
		srv_opts.user_share = (unsigned)json_object_get_int64(v);
	if (json_object_object_get_ex(o, "allow_net", &a) && json_object_is_type(a, json_type_array))
		for (size_t i = 0; r >= 0 && i < json_object_array_length(a); i++)
			r = cd_strv_push(&srv_opts.allow_net,
					 json_object_get_string(json_object_array_get_idx(a, i)));
	json_object_put(o);
	return r;
}

int srv_creator_main(void)
{
	static char buf[OPTIONS_MAX];
	int sock = MAKER_FD;

	if (fcntl(sock, F_SETFD, FD_CLOEXEC) < 0)
		return CORDON_EXIT_FAILURE;
	setsid(); /* the terminal's Ctrl-C is the server's to handle */
	signal(SIGCHLD, SIG_IGN); /* the supervisors: reaped by the kernel */
	if (!recv_text(sock, CREATOR_OPTIONS, buf, sizeof(buf)))
		return 0;
	if (take_options(buf) < 0)
		return CORDON_EXIT_FAILURE;
	while (recv_text(sock, CREATOR_MAKE, buf, sizeof(buf)))
		serve_one(sock, buf);
	return 0;
}

/* What the maker's environment keeps of ours: the variables the library reads, and those it
 * passes to each sandbox (src/command/env.c); nothing else (a key the server was given) */
static bool env_kept(const char *kv)
{
	static const char *const names[] = {
		"PATH=", "HOME=", "USER=", "LOGNAME=", "LANG=", "TZ=", "TERM=", "LC_",
		"XDG_STATE_HOME=", "XDG_RUNTIME_DIR=", "CORDON_AGENT=", "CORDON_INIT=",
		"CORDON_TIMING=", "CORDON_NO_PRECOMPILED=", "CORDON_LAYER_DIR=", NULL,
	};

	for (const char *const *n = names; *n; n++)
		if (strncmp(kv, *n, strlen(*n)) == 0)
			return true;
	return false;
}

/* The child: the maker's socket on MAKER_FD, nothing else open but 0-2, then the exec. */
_Noreturn static void exec_maker(int sock, pid_t server, char **envp)
{
	static char *const argv[] = { "cordon-serve", "--session-maker", NULL };

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != server)
		_exit(0);
	if (dup2(sock, MAKER_FD) < 0)
		_exit(CORDON_EXIT_FAILURE);
	close_range(MAKER_FD + 1, ~0u, 0);
	execve("/proc/self/exe", argv, envp);
	_exit(CORDON_EXIT_FAILURE);
}

static char *options_json(void)
{
	json_object *o = json_object_new_object(), *a = json_object_new_array();
	char *text;

	json_object_object_add(o, "memory", json_object_new_int64((int64_t)srv_opts.memory));
	json_object_object_add(o, "pids", json_object_new_int64((int64_t)srv_opts.pids));
	json_object_object_add(o, "millicpus", json_object_new_int64((int64_t)srv_opts.millicpus));
	json_object_object_add(o, "keep_workdirs", json_object_new_boolean(srv_opts.keep_workdirs));
	json_object_object_add(o, "user_share", json_object_new_int64(srv_opts.user_share));
	for (char **h = srv_opts.allow_net; h && *h; h++)
		json_object_array_add(a, json_object_new_string(*h));
	json_object_object_add(o, "allow_net", a);
	text = strdup(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN));
	json_object_put(o);
	return text;
}

int srv_creator_start(struct cordon_error *err)
{
	_cleanup_strv_ char **envp = NULL;
	_cleanup_free_ char *opts = options_json();
	struct cd_frame f = { .type = CREATOR_OPTIONS };
	pid_t server = getpid(), pid;
	int sv[2], r;

	for (char **e = environ; e && *e; e++)
		if (env_kept(*e) && cd_strv_push(&envp, *e) < 0)
			return cd_fail(err, ENOMEM, "serve", "out of memory");
	if (!envp && cd_strv_push(&envp, "PATH=/usr/bin:/bin") < 0)
		return cd_fail(err, ENOMEM, "serve", "out of memory");
	if (!opts || strlen(opts) >= OPTIONS_MAX)
		return cd_fail(err, E2BIG, "serve", "the sandboxes' options are too long");
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
		return cd_fail_errno(err, errno, "serve", "socketpair");
	pid = fork();
	if (pid < 0)
		return cd_fail_errno(err, errno, "serve", "fork the session maker");
	if (pid == 0)
		exec_maker(sv[1], server, envp);
	close(sv[1]);
	creator.sock = sv[0];
	f.part[0] = (struct iovec){ opts, strlen(opts) };
	r = cd_frame_send(creator.sock, &f, 0);
	if (r < 0)
		return cd_fail_errno(err, -r, "serve", "send the session maker its options");
	return 0;
}

/* Receive a reply and its descriptors (two, or none). */
static int recv_reply(struct creator_reply *rep, int fds[2])
{
	struct cd_frame f = { .part = { { rep, sizeof(*rep) } } };
	int r = cd_frame_recv(creator.sock, &f, sizeof(*rep), 2, 0);

	if (r <= 0 || f.type != CREATOR_MADE || f.n_fd == 1) {
		cd_frame_close(&f);
		return -EIO;
	}
	if (f.n_fd == 2) {
		fds[0] = f.fd[0];
		fds[1] = f.fd[1];
	}
	rep->id[sizeof(rep->id) - 1] = '\0';
	rep->err.step[sizeof(rep->err.step) - 1] = '\0';
	rep->err.msg[sizeof(rep->err.msg) - 1] = '\0';
	return 0;
}

/* A MAKE's text: the workdir, and what spec says */
static char *make_json(const char *workdir, const struct srv_make_spec *spec)
{
	json_object *o = json_object_new_object(), *a = json_object_new_array();
	char *text;

	json_object_object_add(o, "workdir", json_object_new_string(workdir));
	if (spec && spec->rootfs)
		json_object_object_add(o, "rootfs", json_object_new_string(spec->rootfs));
	json_object_object_add(o, "own_net", json_object_new_boolean(spec && spec->own_net));
	for (char **h = spec ? spec->allow_net : NULL; h && *h; h++)
		json_object_array_add(a, json_object_new_string(*h));
	json_object_object_add(o, "allow_net", a);
	text = strdup(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN));
	json_object_put(o);
	return text;
}

int srv_creator_make(const char *workdir, const struct srv_make_spec *spec,
		     struct cordon_session **ret, struct cordon_error *err)
{
	_cleanup_free_ char *text = make_json(workdir, spec);
	struct cd_frame f = { .type = CREATOR_MAKE };
	struct creator_reply rep;
	int fds[2] = { -1, -1 }, r;

	if (!text)
		return cd_fail(err, ENOMEM, "serve", "out of memory");
	if (strlen(text) >= OPTIONS_MAX)
		return cd_fail(err, E2BIG, "serve", "the sandbox's options are too long");
	f.part[0] = (struct iovec){ text, strlen(text) };
	pthread_mutex_lock(&creator.lock);
	r = cd_frame_send(creator.sock, &f, 0);
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
