/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* interp.c - the code interpreter of @e2b/code-interpreter (E2b-Sandbox-Port 49999): contexts
 * (/contexts: create, list, restart, remove), each a Python kernel (kernel.py, carried by the
 * binary) run in the sandbox; POST /execute sends it one request line and streams its event
 * lines back until its end marker. Kernel lines are untrusted: bounded, checked to be JSON
 * objects with a string "type", passed on as they are. Runs in the server. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "server.h"
#include "util.h"

extern const char cd_kernel_source[];

#define LINE_MAX_BYTES (32u << 20) /* a result with a large image is one line */
#define READ_CHUNK     (64 * 1024)
#define END_TYPE       "end_of_execution"
#define KEEPALIVE_NS   (30 * NSEC_PER_SEC)

struct cd_ctx {
	char id[40];
	char *cwd;
	pthread_mutex_t exec_lock;     /* one execution at a time; guards what follows */
	pthread_mutex_t kernel_lock;   /* the kernel handle, for a signal from another thread */
	struct cordon_process *kernel; /* NULL: not running (started on demand) */
	int req_fd, ev_fd;
	char *buf; /* bytes read from ev_fd not yet a whole line */
	size_t len, cap;
	bool skipping; /* inside a line too long: dropped up to its newline */
	unsigned refs; /* sb->lock */
	struct cd_ctx *next;
};

/* A signal to the kernel from any thread (restart and remove interrupt a running one). */
static void kernel_signal(struct cd_ctx *c, int sig)
{
	pthread_mutex_lock(&c->kernel_lock);
	if (c->kernel)
		cordon_process_signal(c->kernel, sig, sig == SIGKILL, NULL);
	pthread_mutex_unlock(&c->kernel_lock);
}

static void kernel_stop(struct cd_ctx *c)
{
	pthread_mutex_lock(&c->kernel_lock);
	if (c->kernel) {
		cordon_process_signal(c->kernel, SIGKILL, 1, NULL);
		cordon_process_wait(c->kernel, 2 * NSEC_PER_SEC, NULL, NULL);
		cordon_process_free(c->kernel);
		c->kernel = NULL;
	}
	pthread_mutex_unlock(&c->kernel_lock);
	if (c->req_fd >= 0)
		close(c->req_fd);
	if (c->ev_fd >= 0)
		close(c->ev_fd);
	c->req_fd = c->ev_fd = -1;
	c->len = 0;
	c->skipping = false;
}

static int kernel_start(struct cd_sandbox *sb, struct cd_ctx *c, struct cordon_error *err)
{
	const char *argv[] = {"python3", "-u", "-I", "-c", cd_kernel_source, NULL};
	struct cordon_exec e = {.argv = argv, .env = (const char *const *)sb->env, .cwd = c->cwd,
				.fd = {-1, -1, -1}};
	int in[2], out[2], r;

	if (pipe2(in, O_CLOEXEC) < 0)
		return cd_fail_errno(err, errno, "kernel", "pipe");
	if (pipe2(out, O_CLOEXEC) < 0) {
		close(in[0]);
		close(in[1]);
		return cd_fail_errno(err, errno, "kernel", "pipe");
	}
	e.fd[0] = in[0];
	e.fd[1] = out[1];
	pthread_mutex_lock(&c->kernel_lock);
	r = cordon_session_exec(sb->session, &e, &c->kernel, err);
	pthread_mutex_unlock(&c->kernel_lock);
	close(in[0]);
	close(out[1]);
	c->req_fd = in[1];
	c->ev_fd = out[0];
	if (r < 0) {
		c->kernel = NULL;
		kernel_stop(c);
	}
	return r;
}

static struct cd_ctx *ctx_new(const char *cwd)
{
	struct cd_ctx *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	c->cwd = strdup(cwd ? cwd : "/home/user");
	if (!c->cwd || cd_auth_random(c->id, 32, "0123456789abcdef") < 0) {
		free(c->cwd);
		free(c);
		return NULL;
	}
	pthread_mutex_init(&c->exec_lock, NULL);
	pthread_mutex_init(&c->kernel_lock, NULL);
	c->req_fd = c->ev_fd = -1;
	c->refs = 1; /* the sandbox's list */
	return c;
}

static void ctx_free(struct cd_ctx *c)
{
	kernel_stop(c);
	pthread_mutex_destroy(&c->exec_lock);
	pthread_mutex_destroy(&c->kernel_lock);
	free(c->buf);
	free(c->cwd);
	free(c);
}

static void ctx_unref(struct cd_sandbox *sb, struct cd_ctx *c)
{
	bool last;

	pthread_mutex_lock(&sb->lock);
	last = --c->refs == 0;
	pthread_mutex_unlock(&sb->lock);
	if (last)
		ctx_free(c);
}

/* By id; NULL id: the default context ("default"), made on first use. A reference. */
static struct cd_ctx *ctx_get(struct cd_sandbox *sb, const char *id)
{
	struct cd_ctx *c;

	pthread_mutex_lock(&sb->lock);
	for (c = sb->ctxs; c; c = c->next)
		if (strcmp(c->id, id ? id : "default") == 0)
			break;
	if (!c && !id && (c = ctx_new(NULL))) {
		strcpy(c->id, "default");
		c->next = sb->ctxs;
		sb->ctxs = c;
	}
	if (c)
		c->refs++;
	pthread_mutex_unlock(&sb->lock);
	return c;
}

static json_object *ctx_json(const struct cd_ctx *c)
{
	json_object *j = json_object_new_object();

	if (j) {
		json_object_object_add(j, "id", json_object_new_string(c->id));
		json_object_object_add(j, "language", json_object_new_string("python"));
		json_object_object_add(j, "cwd", json_object_new_string(c->cwd));
	}
	return j;
}

/* --- one execution's stream --- */
struct exec_stream {
	struct cd_sandbox *sb;
	struct cd_ctx *c;
	char *request; /* the line for the kernel */
	int conn_fd;
	bool locked, sent, done;
	uint64_t last_ns; /* when a line was last sent */
	char *out; /* the line being sent */
	size_t out_len, out_off;
};

/* A whole line from the kernel within timeout_ms: 1 (*ret, malloc'd), 0 none, -EPIPE EOF. */
static int read_line(struct cd_ctx *c, int dying_fd, char **ret, int timeout_ms)
{
	for (;;) {
		char *nl = c->len ? memchr(c->buf, '\n', c->len) : NULL;
		struct pollfd f[2] = {{.fd = c->ev_fd, .events = POLLIN},
				      {.fd = dying_fd, .events = POLLIN}};
		ssize_t n;

		if (nl) {
			size_t l = (size_t)(nl - c->buf);
			bool skipped = c->skipping;

			*ret = skipped ? NULL : strndup(c->buf, l);
			memmove(c->buf, nl + 1, c->len - l - 1);
			c->len -= l + 1;
			c->skipping = false;
			if (skipped)
				continue;
			return *ret ? 1 : -ENOMEM;
		}
		if (c->len >= LINE_MAX_BYTES) { /* drop it, and the rest of it up to its newline */
			c->len = 0;
			c->skipping = true;
		}
		if (c->cap - c->len < READ_CHUNK) {
			char *b = realloc(c->buf, c->cap + READ_CHUNK * 4);

			if (!b)
				return -ENOMEM;
			c->buf = b;
			c->cap += READ_CHUNK * 4;
		}
		if (poll(f, 2, timeout_ms) <= 0)
			return 0;
		if (f[1].revents)
			return -EPIPE;
		n = read(c->ev_fd, c->buf + c->len, READ_CHUNK);
		if (n == 0 || (n < 0 && errno != EINTR && errno != EAGAIN))
			return -EPIPE;
		if (n > 0)
			c->len += (size_t)n;
	}
}

/* Its "type", when line is one JSON object (nothing after it) with a string type; else NULL. */
static char *line_type(const char *line)
{
	json_tokener *tok = json_tokener_new_ex(32);
	size_t len = strlen(line);
	json_object *j = tok ? json_tokener_parse_ex(tok, line, (int)len) : NULL, *t;
	char *type = NULL;

	if (j && json_tokener_get_parse_end(tok) == len &&
	    json_object_is_type(j, json_type_object) && json_object_object_get_ex(j, "type", &t) &&
	    json_object_is_type(t, json_type_string))
		type = strdup(json_object_get_string(t));
	json_object_put(j);
	if (tok)
		json_tokener_free(tok);
	return type;
}

static void set_out(struct exec_stream *s, char *line)
{
	free(s->out);
	s->out = line;
	s->out_len = line ? strlen(line) : 0;
	s->out_off = 0;
}

static char *error_line(const char *name, const char *value)
{
	json_object *j = json_object_new_object();
	char *s;

	if (!j)
		return NULL;
	json_object_object_add(j, "type", json_object_new_string("error"));
	json_object_object_add(j, "name", json_object_new_string(name));
	json_object_object_add(j, "value", json_object_new_string(value));
	json_object_object_add(j, "traceback", json_object_new_string(value));
	s = cd_strdup_printf("%s\n", json_object_to_json_string_ext(j, JSON_C_TO_STRING_PLAIN));
	json_object_put(j);
	return s;
}

/* Take the context's turn and hand the kernel the request; false: the client left first. */
static bool begin(struct exec_stream *s)
{
	struct cordon_error err = {0};
	struct timespec ts;

	while (!s->locked) {
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_sec++;
		if (pthread_mutex_timedlock(&s->c->exec_lock, &ts) == 0)
			s->locked = true;
		else if (cd_http_peer_gone(s->conn_fd) ||
			 __atomic_load_n(&s->sb->dying, __ATOMIC_RELAXED))
			return false;
	}
	if (!s->c->kernel && kernel_start(s->sb, s->c, &err) < 0) {
		set_out(s, error_line("KernelError", err.msg));
		s->done = true;
		return true;
	}
	if (cd_write_all(s->c->req_fd, s->request, strlen(s->request)) < 0) {
		kernel_stop(s->c); /* started anew next time */
		set_out(s, error_line("KernelError", "the kernel does not take requests"));
		s->done = true;
		return true;
	}
	s->sent = true;
	return true;
}

/* The next line to send; false: the client is gone. */
static bool next_line(struct exec_stream *s)
{
	for (;;) {
		char *line = NULL, *type;
		int r = read_line(s->c, s->sb->dying_fd, &line, 1000);

		if (r == 0) {
			if (cd_http_peer_gone(s->conn_fd))
				return false;
			cd_sandbox_touch(s->sb); /* an execution is use: the sandbox is not idle */
			if (cd_now_ns() - s->last_ns >= KEEPALIVE_NS) {
				/* a type the SDK ignores; the connection's idle timeout never fires */
				set_out(s, strdup("{\"type\":\"keepalive\"}\n"));
				return true;
			}
			continue;
		}
		if (r < 0) {
			kernel_stop(s->c);
			set_out(s, error_line("KernelError",
					      __atomic_load_n(&s->sb->dying, __ATOMIC_RELAXED)
						  ? "the sandbox was killed"
						  : "the kernel exited (its state is lost)"));
			s->done = true;
			return true;
		}
		type = line_type(line);
		if (type && strcmp(type, END_TYPE) == 0) {
			free(type);
			free(line);
			s->done = true;
			set_out(s, NULL);
			return true;
		}
		if (!type) { /* not an event: the kernel is not ours to trust */
			free(line);
			continue;
		}
		free(type);
		set_out(s, cd_strdup_printf("%s\n", line));
		free(line);
		return true;
	}
}

static ssize_t exec_read(void *arg, uint64_t pos, char *buf, size_t max)
{
	struct exec_stream *s = arg;
	size_t n;

	(void)pos;
	while (s->out_off >= s->out_len) {
		if (s->done)
			return MHD_CONTENT_READER_END_OF_STREAM;
		if (!s->sent ? !begin(s) : !next_line(s))
			return MHD_CONTENT_READER_END_WITH_ERROR;
	}
	n = s->out_len - s->out_off < max ? s->out_len - s->out_off : max;
	memcpy(buf, s->out + s->out_off, n);
	s->out_off += n;
	s->last_ns = cd_now_ns();
	return (ssize_t)n;
}

/* The client left mid-execution: interrupt it and read up to its end, so that the next one
 * starts clean; a kernel that does not end in time is stopped (its state lost). */
static void abandon(struct exec_stream *s)
{
	uint64_t deadline = cd_now_ns() + 5 * NSEC_PER_SEC;

	kernel_signal(s->c, SIGINT);
	while (cd_now_ns() < deadline) {
		char *line = NULL, *type;
		int r = read_line(s->c, s->sb->dying_fd, &line, 200);

		if (r < 0)
			break;
		if (r == 0)
			continue;
		type = line_type(line);
		free(line);
		if (type && strcmp(type, END_TYPE) == 0) {
			free(type);
			return;
		}
		free(type);
	}
	kernel_stop(s->c);
}

static void exec_free(void *arg)
{
	struct exec_stream *s = arg;

	if (s->locked) {
		if (s->sent && !s->done && s->c->kernel)
			abandon(s);
		pthread_mutex_unlock(&s->c->exec_lock);
	}
	ctx_unref(s->sb, s->c);
	cd_sandbox_unref(s->sb);
	free(s->request);
	free(s->out);
	free(s);
}

static int execute_request(json_object *body, const char **ret_ctx, char **ret_line,
			   const char **why)
{
	json_object *code, *ctx, *lang, *env, *req;

	if (cd_rpc_get(body, "code", json_type_string, &code, why) < 0 ||
	    cd_rpc_get(body, "context_id", json_type_string, &ctx, why) < 0 ||
	    cd_rpc_get(body, "language", json_type_string, &lang, why) < 0 ||
	    cd_rpc_get(body, "env_vars", json_type_object, &env, why) < 0)
		return -EINVAL;
	if (!code)
		return *why = "\"code\" is missing", -EINVAL;
	if (lang && strcmp(json_object_get_string(lang), "python") != 0 &&
	    strcmp(json_object_get_string(lang), "python3") != 0)
		return *why = "only the language python is supported", -EINVAL;
	if (env) {
		json_object_object_foreach(env, k, v) {
			(void)k;
			if (!json_object_is_type(v, json_type_string))
				return *why = "\"env_vars\" must have string values", -EINVAL;
		}
	}
	req = json_object_new_object();
	if (!req)
		return *why = "out of memory", -ENOMEM;
	json_object_object_add(req, "code", json_object_get(code));
	json_object_object_add(req, "env_vars",
			       env ? json_object_get(env) : json_object_new_object());
	/* ensure_ascii-like: json-c escapes control bytes, and '\n' never stays raw */
	*ret_line =
	    cd_strdup_printf("%s\n", json_object_to_json_string_ext(req, JSON_C_TO_STRING_PLAIN));
	json_object_put(req);
	*ret_ctx = ctx ? json_object_get_string(ctx) : NULL;
	return *ret_line ? 0 : -ENOMEM;
}

static enum MHD_Result execute(struct cd_req *r)
{
	const char *why = NULL, *ctx_id = NULL;
	json_object *body = cd_http_body_json(r, &why);
	struct exec_stream *s;
	char *line = NULL;
	struct cd_ctx *c;

	if (!body)
		return cd_http_error(r, 400, "bad JSON body: %s", why);
	if (execute_request(body, &ctx_id, &line, &why) < 0) {
		json_object_put(body);
		return cd_http_error(r, 400, "%s", why);
	}
	c = ctx_get(r->sb, ctx_id);
	json_object_put(body);
	if (!c) {
		free(line);
		return cd_http_error(r, 404, "no such context");
	}
	s = calloc(1, sizeof(*s));
	if (!s) {
		free(line);
		ctx_unref(r->sb, c);
		return cd_http_error(r, 500, "out of memory");
	}
	cd_sandbox_ref(r->sb);
	s->sb = r->sb;
	s->c = c;
	s->request = line;
	s->conn_fd = cd_http_conn_fd(r);
	s->last_ns = cd_now_ns();
	return cd_http_stream(r, 200, "application/x-ndjson", MHD_SIZE_UNKNOWN, exec_read,
			      exec_free, s);
}

/* --- /contexts --- */
static enum MHD_Result create_ctx(struct cd_req *r)
{
	struct cordon_error err = {0};
	const char *why = NULL;
	json_object *body = cd_http_body_json(r, &why), *lang, *cwd;
	struct cd_ctx *c;
	int k;

	if (!body)
		return cd_http_error(r, 400, "bad JSON body: %s", why);
	if (cd_rpc_get(body, "language", json_type_string, &lang, &why) < 0 ||
	    cd_rpc_get(body, "cwd", json_type_string, &cwd, &why) < 0 ||
	    (lang && strcmp(json_object_get_string(lang), "python") != 0 &&
	     (why = "only the language python is supported"))) {
		json_object_put(body);
		return cd_http_error(r, 400, "%s", why);
	}
	c = ctx_new(cwd && json_object_get_string_len(cwd) ? json_object_get_string(cwd) : NULL);
	json_object_put(body);
	if (!c)
		return cd_http_error(r, 500, "out of memory");
	k = kernel_start(r->sb, c, &err); /* now: a bad cwd is the creator's error */
	if (k < 0) {
		ctx_free(c);
		return cd_http_error(r, err.code == ENOENT ? 400 : 500, "%s: %s", err.step,
				     err.msg);
	}
	pthread_mutex_lock(&r->sb->lock);
	c->next = r->sb->ctxs;
	r->sb->ctxs = c;
	pthread_mutex_unlock(&r->sb->lock);
	return cd_http_json(r, 200, ctx_json(c));
}

static enum MHD_Result list_ctx(struct cd_req *r)
{
	json_object *a = json_object_new_array();

	pthread_mutex_lock(&r->sb->lock);
	for (struct cd_ctx *c = r->sb->ctxs; a && c; c = c->next)
		json_object_array_add(a, ctx_json(c));
	pthread_mutex_unlock(&r->sb->lock);
	return cd_http_json(r, 200, a);
}

static enum MHD_Result remove_ctx(struct cd_req *r)
{
	struct cd_ctx *c = NULL;

	pthread_mutex_lock(&r->sb->lock);
	for (struct cd_ctx **q = &r->sb->ctxs; *q; q = &(*q)->next)
		if (strcmp((*q)->id, r->sub) == 0) {
			c = *q;
			*q = c->next;
			break;
		}
	pthread_mutex_unlock(&r->sb->lock);
	if (!c)
		return cd_http_error(r, 404, "no such context");
	kernel_signal(c, SIGKILL); /* a running execution ends (KernelError) */
	ctx_unref(r->sb, c);
	return cd_http_text(r, 204, NULL, "", 0);
}

static enum MHD_Result restart_ctx(struct cd_req *r)
{
	struct cordon_error err = {0};
	struct cd_ctx *c = ctx_get(r->sb, r->sub);
	int k;

	if (!c)
		return cd_http_error(r, 404, "no such context");
	kernel_signal(c, SIGKILL); /* a running execution ends, and lets go of the context */
	pthread_mutex_lock(&c->exec_lock);
	kernel_stop(c);
	k = kernel_start(r->sb, c, &err);
	pthread_mutex_unlock(&c->exec_lock);
	ctx_unref(r->sb, c);
	if (k < 0)
		return cd_http_error(r, 500, "%s: %s", err.step, err.msg);
	return cd_http_text(r, 204, NULL, "", 0);
}

static enum MHD_Result health(struct cd_req *r)
{
	return cd_http_text(r, 200, "text/plain", "OK", 2);
}

cd_handler_fn cd_interp_route(const char *method, const char *url, char **ret_sub)
{
	size_t n;

	if (strcmp(method, "POST") == 0 && strcmp(url, "/execute") == 0)
		return execute;
	if (strcmp(url, "/contexts") == 0)
		return strcmp(method, "POST") == 0  ? create_ctx
		       : strcmp(method, "GET") == 0 ? list_ctx
						    : NULL;
	if (strcmp(method, "GET") == 0 && strcmp(url, "/health") == 0)
		return health;
	if (strncmp(url, "/contexts/", 10) != 0)
		return NULL;
	url += 10;
	n = strspn(url, "0123456789abcdefghijklmnopqrstuvwxyz");
	if (n == 0 || n > 39)
		return NULL;
	*ret_sub = strndup(url, n);
	if (!*ret_sub)
		return NULL;
	if (strcmp(method, "DELETE") == 0 && !url[n])
		return remove_ctx;
	if (strcmp(method, "POST") == 0 && strcmp(url + n, "/restart") == 0)
		return restart_ctx;
	return NULL;
}

void cd_interp_kill_all(struct cd_sandbox *sb)
{
	struct cd_ctx *c;

	pthread_mutex_lock(&sb->lock);
	c = sb->ctxs;
	sb->ctxs = NULL;
	pthread_mutex_unlock(&sb->lock);
	while (c) {
		struct cd_ctx *next = c->next;

		ctx_unref(sb, c);
		c = next;
	}
}
