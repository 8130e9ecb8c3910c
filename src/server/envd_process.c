/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* envd_process.c - envd's process service (process.Process) over Connect with JSON: Start and
 * Connect (server streams of ProcessEvent), List, SendInput, SendSignal, CloseStdin, Update
 * (a terminal's size). Runs in the server (connection threads). */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "connect.h"
#include "envd_process.h"
#include "http.h"
#include "procs.h"
#include "registry.h"
#include "req.h"
#include "rpc.h"
#include "util.h"

#define KEEPALIVE_NS (50 * NSEC_PER_SEC) /* the SDK's Keepalive-Ping-Interval */

struct pstream {
	struct srv_proc *p;
	uint64_t cursor;
	uint64_t deadline_ns;  /* Connect-Timeout-Ms; 0: none */
	bool kill_at_deadline; /* Start's: the command's time is up too */
	char sandbox_id[24];   /* touched while the stream runs: a followed sandbox is not idle */
	uint64_t touched_ns;
	uint64_t last_ns;
	int conn_fd;
	char *buf;
	size_t len, off;
	bool done;
};

static void pstream_free(void *arg)
{
	struct pstream *s = arg;

	srv_proc_unsubscribe(s->p, &s->cursor);
	srv_proc_unref(s->p);
	free(s->buf);
	free(s);
}

static void pstream_set(struct pstream *s, uint8_t flags, char *msg)
{
	free(s->buf);
	s->buf = NULL;
	s->len = s->off = 0;
	if (msg && srv_connect_frame(flags, msg, strlen(msg), &s->buf, &s->len) < 0)
		s->len = 0;
	free(msg);
}

/* The next message to send: an event, a keepalive, the end; false: the client is gone. */
static bool pstream_fill(struct pstream *s)
{
	char *ev = NULL;

	for (;;) {
		int r = srv_proc_next(s->p, &s->cursor, &ev, 1000);
		uint64_t now = cd_now_ns();
		bool late = s->deadline_ns && now >= s->deadline_ns;

		/* a followed sandbox is not idle, whether its process talks or not */
		if (now - s->touched_ns >= NSEC_PER_SEC) {
			struct srv_sandbox *sb = srv_reg_get(s->sandbox_id);

			if (sb) {
				srv_sandbox_touch(sb);
				srv_sandbox_unref(sb);
			}
			s->touched_ns = now;
		}
		if (r == 1 && late) {
			free(ev); /* past the deadline (its kill's end event too): the deadline's */
		} else if (r == 1) {
			pstream_set(s, 0, cd_strdup_printf("{\"event\":%s}", ev));
			free(ev);
			return true;
		}
		if (r < 0 && !late) {
			s->done = true;
			pstream_set(s, SRV_CONNECT_FLAG_END, strdup("{}"));
			return true;
		}
		if (srv_http_peer_gone(s->conn_fd))
			return false;
		if (late) {
			/* the request's time is up (the SDK's timeoutMs): a started command goes
			 * too */
			if (s->kill_at_deadline)
				srv_proc_signal(s->p, SIGKILL, NULL);
			s->done = true;
			pstream_set(s, SRV_CONNECT_FLAG_END,
				    srv_connect_error_json("deadline_exceeded",
							   "the request ran past its timeout", 1));
			return true;
		}
		if (now - s->last_ns >= KEEPALIVE_NS) {
			pstream_set(s, 0, strdup("{\"event\":{\"keepalive\":{}}}"));
			return true;
		}
	}
}

static ssize_t pstream_read(void *arg, uint64_t pos, char *out, size_t max)
{
	struct pstream *s = arg;
	size_t n;

	(void)pos;
	while (s->off >= s->len) {
		if (s->done)
			return MHD_CONTENT_READER_END_OF_STREAM;
		if (!pstream_fill(s))
			return MHD_CONTENT_READER_END_WITH_ERROR;
	}
	n = s->len - s->off < max ? s->len - s->off : max;
	memcpy(out, s->buf + s->off, n);
	s->off += n;
	s->last_ns = cd_now_ns();
	return (ssize_t)n;
}

/* Connect-Timeout-Ms as a CLOCK_MONOTONIC time; 0: none (at most 10 digits of milliseconds) */
static uint64_t request_deadline(struct srv_req *r)
{
	const char *t = srv_http_header(r->http, "Connect-Timeout-Ms");
	unsigned long long ms;

	if (!t || strlen(t) > 10)
		return 0;
	ms = strtoull(t, NULL, 10);
	return ms ? cd_now_ns() + ms * NSEC_PER_MSEC : 0;
}

/* Follow p from cursor; first (a ProcessEvent, taken) is sent before. s: a stream Start has
 * subscribed already (srv_proc_start's cursor, its deadline set), else NULL. */
static enum MHD_Result stream(struct srv_req *r, struct srv_proc *p, struct pstream *s,
			      uint64_t cursor, char *first, bool kill_at_deadline)
{
	bool subscribed = s != NULL;

	s = s ? s : calloc(1, sizeof(*s));
	if (!s) {
		srv_proc_unref(p);
		free(first);
		return MHD_NO;
	}
	s->p = p;
	if (!subscribed)
		s->cursor = cursor;
	s->kill_at_deadline = kill_at_deadline;
	snprintf(s->sandbox_id, sizeof(s->sandbox_id), "%s", r->sb->id);
	if (!subscribed && srv_proc_subscribe(p, &s->cursor) < 0) {
		srv_proc_unref(p);
		free(first);
		free(s);
		return srv_rpc_stream_error(r, "resource_exhausted",
					    "too many streams follow the "
					    "process already");
	}
	s->conn_fd = srv_http_conn_fd(r->http);
	s->last_ns = cd_now_ns();
	if (first)
		pstream_set(s, 0, cd_strdup_printf("{\"event\":%s}", first));
	free(first);
	if (!subscribed)
		s->deadline_ns = request_deadline(r);
	return srv_http_stream(r->http, 200, "application/connect+json", MHD_SIZE_UNKNOWN,
			       pstream_read, pstream_free, s);
}

/* base's KEY=VALUE, then over's, a key of over's replacing base's: a new vector */
static char **env_merge(char *const *base, char *const *over)
{
	char **v = NULL;

	for (; base && *base; base++) {
		size_t key = strcspn(*base, "=") + 1;
		bool replaced = false;

		for (char *const *o = over; o && *o && !replaced; o++)
			replaced = strncmp(*o, *base, key) == 0;
		if (!replaced && cd_strv_push(&v, *base) < 0)
			goto fail;
	}
	for (; over && *over; over++)
		if (cd_strv_push(&v, *over) < 0)
			goto fail;
	if (!v)
		v = calloc(1, sizeof(*v));
	return v;
fail:
	cd_strv_free(v);
	return NULL;
}

/* ProcessConfig -> argv, env (KEY=VALUE), cwd; the config kept for List. */
struct pconf {
	char **argv, **env;
	const char *cwd;
};

static void pconf_done(struct pconf *c)
{
	cd_strv_free(c->argv);
	cd_strv_free(c->env);
}

static int parse_config(json_object *proc, struct pconf *c, const char **why)
{
	json_object *cmd, *args, *envs, *cwd;

	if (srv_rpc_get(proc, "cmd", json_type_string, &cmd, why) < 0 ||
	    srv_rpc_get(proc, "args", json_type_array, &args, why) < 0 ||
	    srv_rpc_get(proc, "envs", json_type_object, &envs, why) < 0 ||
	    srv_rpc_get(proc, "cwd", json_type_string, &cwd, why) < 0)
		return -EINVAL;
	if (!cmd || !json_object_get_string_len(cmd)) {
		*why = "\"process.cmd\" is missing";
		return -EINVAL;
	}
	if (cd_strv_push(&c->argv, json_object_get_string(cmd)) < 0)
		return -ENOMEM;
	for (size_t i = 0; args && i < json_object_array_length(args); i++) {
		json_object *a = json_object_array_get_idx(args, i);

		if (!json_object_is_type(a, json_type_string)) {
			*why = "\"process.args\" must hold strings";
			return -EINVAL;
		}
		if (cd_strv_push(&c->argv, json_object_get_string(a)) < 0)
			return -ENOMEM;
	}
	if (envs) {
		json_object_object_foreach(envs, k, v) {
			_cleanup_free_ char *kv = NULL;

			if (!json_object_is_type(v, json_type_string) || !*k || strchr(k, '=')) {
				*why = "\"process.envs\" must map names (no '=') to strings";
				return -EINVAL;
			}
			kv = cd_strdup_printf("%s=%s", k, json_object_get_string(v));
			if (!kv || cd_strv_push(&c->env, kv) < 0)
				return -ENOMEM;
		}
	}
	c->cwd = cwd && json_object_get_string_len(cwd) ? json_object_get_string(cwd) : NULL;
	return 0;
}

static int parse_pty(json_object *req, int *rows, int *cols, const char **why)
{
	json_object *pty, *size, *r, *c;

	*rows = *cols = 0;
	if (srv_rpc_get(req, "pty", json_type_object, &pty, why) < 0 ||
	    srv_rpc_get(pty, "size", json_type_object, &size, why) < 0 ||
	    srv_rpc_get(size, "rows", json_type_int, &r, why) < 0 ||
	    srv_rpc_get(size, "cols", json_type_int, &c, why) < 0)
		return -EINVAL;
	if (!pty)
		return 0;
	*rows = r ? json_object_get_int(r) : 24;
	*cols = c ? json_object_get_int(c) : 80;
	if (*rows <= 0 || *rows > 1000 || *cols <= 0 || *cols > 1000) {
		*why = "\"pty.size\" must be 1-1000 rows and columns";
		return -EINVAL;
	}
	return 0;
}

enum MHD_Result srv_process_start(struct srv_req *r)
{
	struct cordon_error err = {0};
	json_object *req = srv_rpc_request(r, true), *proc, *tag, *in;
	struct pconf c = {0};
	char **env = NULL;
	struct srv_proc_start ps = {0};
	struct pstream *s;
	struct srv_proc *p;
	const char *why = NULL;
	int k;

	if (!req)
		return MHD_YES;
	k = srv_rpc_get(req, "process", json_type_object, &proc, &why);
	if (k == 0)
		k = parse_config(proc, &c, &why);
	else if (k == 1)
		why = "\"process\" is missing", k = -EINVAL;
	if (k >= 0)
		k = srv_rpc_get(req, "tag", json_type_string, &tag, &why);
	if (k >= 0)
		k = srv_rpc_get(req, "stdin", json_type_boolean, &in, &why);
	if (k >= 0)
		k = parse_pty(req, &ps.pty_rows, &ps.pty_cols, &why);
	if (k < 0) {
		pconf_done(&c);
		json_object_put(req);
		return srv_rpc_stream_error(r, "invalid_argument", "%s",
					    why ? why : "out of memory");
	}
	ps.argv = (const char *const *)c.argv;
	/* the sandbox's own variables, then the request's over them */
	env = env_merge(r->sb->env, c.env);
	if (!env) {
		pconf_done(&c);
		json_object_put(req);
		return srv_rpc_stream_error(r, "internal", "out of memory");
	}
	ps.env = (const char *const *)env;
	ps.cwd = c.cwd;
	ps.want_stdin = in && json_object_get_boolean(in);
	ps.tag = tag ? json_object_get_string(tag) : NULL;
	ps.config = json_object_get(proc);
	ps.kill_at_ns = request_deadline(r);
	s = calloc(1, sizeof(*s));
	if (s) {
		s->deadline_ns = ps.kill_at_ns; /* the stream's end and the kill: one time */
		ps.cursor = &s->cursor;
	}
	k = s ? srv_proc_start(r->sb, &ps, &p, &err)
	      : cd_fail(&err, ENOMEM, "exec", "out of memory");
	cd_strv_free(env);
	pconf_done(&c);
	json_object_put(req);
	if (k < 0)
		free(s);
	if (k < 0)
		return srv_rpc_stream_error(r,
					    strcmp(err.step, "exec") == 0 && err.code == ENOENT
						? "not_found"
						: srv_connect_code_of_errno(err.code),
					    "%s: %s", err.step, err.msg);
	return stream(r, p, s, 0, NULL, true);
}

/* ProcessSelector {"pid": N} or {"tag": "..."}: a reference, or NULL with an error answered. */
static struct srv_proc *select_proc(struct srv_req *r, json_object *req, bool streaming)
{
	json_object *sel, *pid = NULL, *tag = NULL;
	const char *why = NULL;
	struct srv_proc *p;

	if (srv_rpc_get(req, "process", json_type_object, &sel, &why) < 0 ||
	    srv_rpc_get(sel, "pid", json_type_int, &pid, &why) < 0 ||
	    srv_rpc_get(sel, "tag", json_type_string, &tag, &why) < 0 || (!pid && !tag)) {
		why = why ? why : "\"process\" must select a pid or a tag";
		if (streaming)
			srv_rpc_stream_error(r, "invalid_argument", "%s", why);
		else
			srv_rpc_error(r, "invalid_argument", "%s", why);
		return NULL;
	}
	p = srv_proc_find(r->sb, pid ? (uint32_t)json_object_get_int64(pid) : 0,
			  tag ? json_object_get_string(tag) : NULL);
	if (!p) {
		if (streaming)
			srv_rpc_stream_error(r, "not_found", "no such process");
		else
			srv_rpc_error(r, "not_found", "no such process");
	}
	return p;
}

enum MHD_Result srv_process_connect(struct srv_req *r)
{
	json_object *req = srv_rpc_request(r, true);
	struct srv_proc *p;

	if (!req)
		return MHD_YES;
	p = select_proc(r, req, true);
	json_object_put(req);
	if (!p)
		return MHD_YES;
	/* a start event first, as envd sends, then what comes from now on */
	return stream(r, p, NULL, SRV_PROC_TAIL,
		      cd_strdup_printf("{\"start\":{\"pid\":%u}}", p->pid), false);
}

enum MHD_Result srv_process_list(struct srv_req *r)
{
	json_object *req = srv_rpc_request(r, false), *j;

	if (!req)
		return MHD_YES;
	json_object_put(req);
	j = json_object_new_object();
	if (j)
		json_object_object_add(j, "processes", srv_procs_list(r->sb));
	return srv_rpc_reply(r, j);
}

static enum MHD_Result empty_reply(struct srv_req *r)
{
	return srv_rpc_reply(r, json_object_new_object());
}

enum MHD_Result srv_process_send_input(struct srv_req *r)
{
	struct cordon_error err = {0};
	json_object *req = srv_rpc_request(r, false), *input, *data = NULL;
	const char *why = NULL;
	struct srv_proc *p;
	uint8_t *bytes = NULL;
	size_t n = 0;
	bool pty = false;
	int k;

	if (!req)
		return MHD_YES;
	p = select_proc(r, req, false);
	if (!p) {
		json_object_put(req);
		return MHD_YES;
	}
	k = srv_rpc_get(req, "input", json_type_object, &input, &why);
	if (k == 0 && (k = srv_rpc_get(input, "stdin", json_type_string, &data, &why)) == 1) {
		k = srv_rpc_get(input, "pty", json_type_string, &data, &why);
		pty = data != NULL;
	}
	if (k == 0 && data &&
	    srv_b64_decode(json_object_get_string(data), (size_t)json_object_get_string_len(data),
			   &bytes, &n) < 0)
		why = "the input is not base64", k = -EINVAL;
	if (k < 0) {
		json_object_put(req);
		srv_proc_unref(p);
		return srv_rpc_error(r, "invalid_argument", "%s", why);
	}
	k = n ? srv_proc_write_stdin(p, bytes, n, pty, r->sb->dying_fd, &err) : 0;
	free(bytes);
	json_object_put(req);
	srv_proc_unref(p);
	if (k < 0)
		return srv_rpc_error(r,
				     err.code == EPIPE ? "failed_precondition"
						       : srv_connect_code_of_errno(err.code),
				     "%s", err.msg);
	return empty_reply(r);
}

static int signal_of(json_object *v)
{
	const char *s;

	if (json_object_is_type(v, json_type_int))
		return json_object_get_int(v) == 9    ? SIGKILL
		       : json_object_get_int(v) == 15 ? SIGTERM
						      : 0;
	s = json_object_get_string(v);
	return strcmp(s, "SIGNAL_SIGKILL") == 0	  ? SIGKILL
	       : strcmp(s, "SIGNAL_SIGTERM") == 0 ? SIGTERM
						  : 0;
}

enum MHD_Result srv_process_send_signal(struct srv_req *r)
{
	struct cordon_error err = {0};
	json_object *req = srv_rpc_request(r, false), *sig;
	struct srv_proc *p;
	int s = 0, k;

	if (!req)
		return MHD_YES;
	p = select_proc(r, req, false);
	if (p && json_object_object_get_ex(req, "signal", &sig))
		s = signal_of(sig);
	json_object_put(req);
	if (!p)
		return MHD_YES;
	if (!s) {
		srv_proc_unref(p);
		return srv_rpc_error(r, "invalid_argument",
				     "\"signal\" must be SIGNAL_SIGKILL or "
				     "SIGNAL_SIGTERM");
	}
	k = srv_proc_signal(p, s, &err);
	srv_proc_unref(p);
	if (k < 0)
		return srv_rpc_error(r, srv_connect_code_of_errno(err.code), "%s", err.msg);
	return empty_reply(r);
}

enum MHD_Result srv_process_close_stdin(struct srv_req *r)
{
	struct cordon_error err = {0};
	json_object *req = srv_rpc_request(r, false);
	struct srv_proc *p;
	int k;

	if (!req)
		return MHD_YES;
	p = select_proc(r, req, false);
	json_object_put(req);
	if (!p)
		return MHD_YES;
	k = srv_proc_close_stdin(p, r->sb->dying_fd, &err);
	srv_proc_unref(p);
	if (k < 0)
		return srv_rpc_error(r, srv_connect_code_of_errno(err.code), "%s", err.msg);
	return empty_reply(r);
}

enum MHD_Result srv_process_update(struct srv_req *r)
{
	struct cordon_error err = {0};
	json_object *req = srv_rpc_request(r, false);
	const char *why = NULL;
	struct srv_proc *p;
	int rows, cols, k;

	if (!req)
		return MHD_YES;
	p = select_proc(r, req, false);
	k = parse_pty(req, &rows, &cols, &why);
	json_object_put(req);
	if (!p)
		return MHD_YES;
	if (k < 0 || rows == 0) {
		srv_proc_unref(p);
		return srv_rpc_error(r, "invalid_argument", "%s", why ? why : "\"pty\" is missing");
	}
	k = srv_proc_resize(p, rows, cols, &err);
	srv_proc_unref(p);
	if (k < 0)
		return srv_rpc_error(r, "invalid_argument", "%s", err.msg);
	return empty_reply(r);
}

enum MHD_Result srv_process_unimplemented(struct srv_req *r)
{
	return srv_rpc_error(r, "unimplemented", "%s is not supported by cordon serve", r->url);
}
