/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* interp.c - the code interpreter of @e2b/code-interpreter (E2b-Sandbox-Port 49999): contexts
 * (/contexts: create, list, restart, remove; at most SRV_SANDBOX_MAX_CTXS), each a language's
 * Jupyter kernel run in the sandbox behind a bridge (bridge.py, carried by the binary), which
 * answers first "ready" or why not (a language the sandbox lacks, a package missing); POST
 * /execute sends it one request line and streams its event lines back until its end marker.
 * Bridge lines are untrusted: bounded (each, and all of a sandbox's at once), checked to be JSON
 * objects with a string "type", passed on as they are. The bridge's pipes are non-blocking: one
 * that takes no request or sends nothing holds no server thread past a deadline. An execution
 * in flight when its sandbox is killed ends with its connection broken, as E2B's does (the SDK
 * then throws). Runs in the server. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "auth.h"
#include "http.h"
#include "interp.h"
#include "kline.h"
#include "procs.h"
#include "registry.h"
#include "req.h"
#include "rpc.h"
#include "util.h"

extern const char srv_bridge_source[];

#define LINE_MAX_BYTES (32u << 20) /* a result with a large image is one line */
#define READ_CHUNK     (64 * 1024)
/* a context's buffer up to this is its own; past it, it is taken from the sandbox's
 * SRV_SANDBOX_LINE_BYTES, and given back once the long line is read */
#define LINE_SMALL   (256u << 10)
#define END_TYPE     "end_of_execution"
#define KEEPALIVE_NS (30 * NSEC_PER_SEC)
/* a kernel that takes none of a request for this long is stopped */
#define REQUEST_STALL_NS (10 * NSEC_PER_SEC)
/* a kernel not ready in this long is stopped (the bridge gives up on its kernel at 120 s) */
#define READY_NS   (150 * NSEC_PER_SEC)
#define READY_TYPE "ready"
#define LANG_MAX   32

struct srv_ctx {
	char id[40];
	char lang[LANG_MAX + 1];
	bool is_default; /* the language's context when an execution names none */
	char *cwd;
	pthread_mutex_t exec_lock;     /* one execution at a time; guards what follows */
	pthread_mutex_t kernel_lock;   /* the kernel handle, for a signal from another thread */
	struct cordon_process *kernel; /* NULL: not running (started on demand) */
	int req_fd, ev_fd;	       /* O_NONBLOCK, both */
	char *buf;		       /* bytes read from ev_fd not yet a whole line */
	size_t len, cap;
	size_t scanned; /* of len, known to hold no newline (a long line is searched once) */
	size_t charged; /* of cap, taken from the sandbox's line_bytes */
	uint64_t *acct; /* the sandbox's line_bytes (a context never outlives its sandbox) */
	bool skipping;	/* inside a line too long: dropped up to its newline */
	unsigned refs;	/* sb->lock */
	struct srv_ctx *next;
};

/* A signal to the kernel from any thread (restart and remove interrupt a running one). */
static void kernel_signal(struct srv_ctx *c, int sig)
{
	pthread_mutex_lock(&c->kernel_lock);
	if (c->kernel)
		cordon_process_signal(c->kernel, sig, sig == SIGKILL, NULL);
	pthread_mutex_unlock(&c->kernel_lock);
}

/* The buffer's bytes past LINE_SMALL are the sandbox's, taken from SRV_SANDBOX_LINE_BYTES as it
 * grows (false: over it, or out of memory) and given back as it shrinks. */
static bool buf_resize(struct srv_ctx *c, size_t cap)
{
	size_t want = cap > LINE_SMALL ? cap - LINE_SMALL : 0;
	char *b;

	if (want > c->charged && __atomic_add_fetch(c->acct, want - c->charged, __ATOMIC_RELAXED) >
				     SRV_SANDBOX_LINE_BYTES) {
		__atomic_sub_fetch(c->acct, want - c->charged, __ATOMIC_RELAXED);
		return false;
	}
	b = cap ? realloc(c->buf, cap) : (free(c->buf), NULL);
	if (cap && !b) {
		if (want > c->charged)
			__atomic_sub_fetch(c->acct, want - c->charged, __ATOMIC_RELAXED);
		return false;
	}
	if (want < c->charged)
		__atomic_sub_fetch(c->acct, c->charged - want, __ATOMIC_RELAXED);
	c->charged = want;
	c->buf = b;
	c->cap = cap;
	return true;
}

static void buf_free(struct srv_ctx *c)
{
	buf_resize(c, 0);
	c->len = c->scanned = 0;
	c->skipping = false;
}

static void kernel_stop(struct srv_ctx *c)
{
	pthread_mutex_lock(&c->kernel_lock);
	if (c->kernel) {
		cordon_process_signal(c->kernel, SIGKILL, 1, NULL);
		cordon_process_wait(c->kernel, 2 * NSEC_PER_SEC, NULL, NULL);
		cordon_process_free(c->kernel);
		c->kernel = NULL;
	}
	pthread_mutex_unlock(&c->kernel_lock);
	c->req_fd = cd_safe_close(c->req_fd);
	c->ev_fd = cd_safe_close(c->ev_fd);
	buf_free(c); /* an exited kernel keeps no buffer */
}

static int kernel_start(struct srv_sandbox *sb, struct srv_ctx *c, struct cordon_error *err)
{
	const char *argv[] = {"python3", "-u", "-I", "-c", srv_bridge_source, c->lang, NULL};
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
	/* ours only: the kernel's ends stay blocking, as a program expects */
	fcntl(in[1], F_SETFL, O_NONBLOCK);
	fcntl(out[0], F_SETFL, O_NONBLOCK);
	c->req_fd = in[1];
	c->ev_fd = out[0];
	if (r < 0) {
		c->kernel = NULL;
		kernel_stop(c);
	}
	return r;
}

static struct srv_ctx *ctx_new(struct srv_sandbox *sb, const char *cwd, const char *lang)
{
	struct srv_ctx *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	snprintf(c->lang, sizeof(c->lang), "%s", lang);
	c->acct = &sb->line_bytes;
	c->cwd = strdup(cwd ? cwd : "/home/user");
	if (!c->cwd || srv_auth_random(c->id, 32, "0123456789abcdef") < 0) {
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

static void ctx_free(struct srv_ctx *c)
{
	kernel_stop(c);
	pthread_mutex_destroy(&c->exec_lock);
	pthread_mutex_destroy(&c->kernel_lock);
	free(c->cwd);
	free(c);
}

static void ctx_unref(struct srv_sandbox *sb, struct srv_ctx *c)
{
	bool last;

	pthread_mutex_lock(&sb->lock);
	last = --c->refs == 0;
	pthread_mutex_unlock(&sb->lock);
	if (last)
		ctx_free(c);
}

/* Out of the sandbox's list (true), if it is still there; the list's reference is the caller's
 * to drop. */
static bool ctx_unlist(struct srv_sandbox *sb, struct srv_ctx *c)
{
	bool found = false;

	pthread_mutex_lock(&sb->lock);
	for (struct srv_ctx **q = &sb->ctxs; *q; q = &(*q)->next)
		if (*q == c) {
			*q = c->next;
			sb->n_ctxs--;
			found = true;
			break;
		}
	pthread_mutex_unlock(&sb->lock);
	return found;
}

/* A place among the sandbox's contexts (sb->lock held): false past SRV_SANDBOX_MAX_CTXS. */
static bool ctx_slot(struct srv_sandbox *sb)
{
	if (sb->n_ctxs >= SRV_SANDBOX_MAX_CTXS)
		return false;
	sb->n_ctxs++;
	return true;
}

static void ctx_unslot(struct srv_sandbox *sb)
{
	pthread_mutex_lock(&sb->lock);
	sb->n_ctxs--;
	pthread_mutex_unlock(&sb->lock);
}

/* By id; NULL id: the default context of lang (python's is "default"), made on first use.
 * *ret: a reference. -ENOENT: no such context; -EAGAIN: the default one would be one too many. */
static int ctx_get(struct srv_sandbox *sb, const char *id, const char *lang, struct srv_ctx **ret)
{
	struct srv_ctx *c;
	int r = 0;

	pthread_mutex_lock(&sb->lock);
	for (c = sb->ctxs; c; c = c->next)
		if (id ? strcmp(c->id, id) == 0 : c->is_default && strcmp(c->lang, lang) == 0)
			break;
	if (!c && !id) {
		if (!ctx_slot(sb)) {
			r = -EAGAIN;
		} else if (!(c = ctx_new(sb, NULL, lang))) {
			sb->n_ctxs--;
			r = -ENOMEM;
		} else {
			c->is_default = true;
			if (strcmp(lang, "python") == 0)
				strcpy(c->id, "default");
			c->next = sb->ctxs;
			sb->ctxs = c;
		}
	}
	if (c)
		c->refs++;
	pthread_mutex_unlock(&sb->lock);
	*ret = c;
	return c ? 0 : r ? r : -ENOENT;
}

static json_object *ctx_json(const struct srv_ctx *c)
{
	json_object *j = json_object_new_object();

	if (j) {
		json_object_object_add(j, "id", json_object_new_string(c->id));
		json_object_object_add(j, "language", json_object_new_string(c->lang));
		json_object_object_add(j, "cwd", json_object_new_string(c->cwd));
	}
	return j;
}

/* The context's turn (its exec_lock), waited for in steps of a second: false once the sandbox
 * is dying or the client (conn_fd, -1: none) went away. */
static bool take_turn(struct srv_sandbox *sb, struct srv_ctx *c, int conn_fd)
{
	struct timespec ts;

	for (;;) {
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_sec++;
		if (pthread_mutex_timedlock(&c->exec_lock, &ts) == 0)
			return true;
		if ((conn_fd >= 0 && srv_http_peer_gone(conn_fd)) ||
		    __atomic_load_n(&sb->dying, __ATOMIC_RELAXED))
			return false;
	}
}

/* --- one execution's stream --- */
struct exec_stream {
	struct srv_sandbox *sb;
	struct srv_ctx *c;
	char *request; /* the line for the kernel */
	int conn_fd;
	bool locked, sent, done;
	uint64_t last_ns; /* when a line was last sent */
	char *out;	  /* the line being sent */
	size_t out_len, out_off;
	size_t out_charged; /* of out, the sandbox's line_bytes (a long line handed over) */
};

/* A line read: the bytes and "\n" in *ret (malloc'd), of which *ret_charged are the sandbox's
 * (a long line's buffer, handed over as it is; a short one is copied). */
struct line {
	char *text;
	size_t len; /* with its "\n" */
	size_t charged;
};

/* The line of l bytes at the buffer's start, taken out of it. */
static int take_line(struct srv_ctx *c, size_t l, struct line *ret)
{
	char *rest;
	size_t n = c->len - l - 1;

	if (l + 2 <= LINE_SMALL || c->cap < l + 2) {
		ret->text = malloc(l + 2);
		if (!ret->text)
			return -ENOMEM;
		memcpy(ret->text, c->buf, l + 1);
		ret->charged = 0;
		memmove(c->buf, c->buf + l + 1, n);
		c->len = n;
	} else { /* the buffer goes with the line; what follows it (under a chunk) moves */
		rest = malloc(n > LINE_SMALL ? n : LINE_SMALL);
		if (!rest)
			return -ENOMEM;
		memcpy(rest, c->buf + l + 1, n);
		ret->text = c->buf;
		ret->charged = c->charged;
		c->buf = rest;
		c->cap = n > LINE_SMALL ? n : LINE_SMALL;
		c->len = n;
		c->charged = 0;
	}
	ret->text[l] = '\n';
	ret->text[l + 1] = '\0';
	ret->len = l + 1;
	c->scanned = 0;
	if (c->cap > LINE_SMALL && c->len < LINE_SMALL / 2)
		buf_resize(c, LINE_SMALL); /* a long line read: the room goes back */
	return 1;
}

/* Room for a read and a "\n" past it: 1; 0 when the line passes LINE_MAX_BYTES or the
 * sandbox's budget (it is then dropped up to its newline); -ENOMEM. */
static int make_room(struct srv_ctx *c)
{
	size_t cap = c->cap ? c->cap : LINE_SMALL;

	if (c->cap - c->len > READ_CHUNK)
		return 1;
	while (cap - c->len <= READ_CHUNK)
		cap *= 2;
	if (cap > LINE_MAX_BYTES + 2 * READ_CHUNK)
		cap = LINE_MAX_BYTES + 2 * READ_CHUNK;
	if (c->len < LINE_MAX_BYTES && buf_resize(c, cap))
		return 1;
	c->len = c->scanned = 0;
	c->skipping = true;
	return buf_resize(c, LINE_SMALL) ? 0 : -ENOMEM;
}

/* A whole line from the kernel within timeout_ms: 1 (*ret), 0 none, 2 a line was dropped (too
 * long), -EPIPE EOF or dying, -ENOMEM. */
static int read_line(struct srv_ctx *c, int dying_fd, struct line *ret, int timeout_ms)
{
	for (;;) {
		int room;
		char *nl = c->len > c->scanned ? memchr(c->buf + c->scanned, '\n', c->len - c->scanned)
					       : NULL;
		struct pollfd f[2] = {{.fd = c->ev_fd, .events = POLLIN},
				      {.fd = dying_fd, .events = POLLIN}};
		ssize_t n;

		if (nl && c->skipping) { /* the end of a dropped line */
			c->len -= (size_t)(nl + 1 - c->buf);
			memmove(c->buf, nl + 1, c->len);
			c->skipping = false;
			c->scanned = 0;
			continue;
		}
		if (nl)
			return take_line(c, (size_t)(nl - c->buf), ret);
		c->scanned = c->len;
		if (c->skipping)
			c->len = c->scanned = 0;
		room = make_room(c);
		if (room <= 0)
			return room < 0 ? room : 2;
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

/* Whether l is one JSON object with a string "type" (else not an event: dropped), and whether
 * that type ends the execution. */
static bool line_event(const struct line *l, bool *ret_end)
{
	struct srv_kline k;

	if (srv_kline_check(l->text, l->len - 1, &k) < 0 || !k.type)
		return false;
	*ret_end = k.type_len == strlen(END_TYPE) && memcmp(k.type, END_TYPE, k.type_len) == 0;
	return true;
}

static void line_free(uint64_t *acct, struct line *l)
{
	if (l->charged)
		__atomic_sub_fetch(acct, l->charged, __ATOMIC_RELAXED);
	free(l->text);
	*l = (struct line){0};
}

/* Whether the bridge's first line l says it is ready: 0; else why not, its words in why:
 * -ENOENT the sandbox has no kernel for the language (LanguageError), -EIO another reason. */
static int ready_line(const struct line *l, char *why, size_t why_len)
{
	json_object *j, *name = NULL, *value = NULL;
	struct srv_kline k;
	int r = -EIO;

	if (srv_kline_check(l->text, l->len - 1, &k) < 0 || !k.type)
		return snprintf(why, why_len, "the kernel's first line is not an event"), -EIO;
	if (k.type_len == strlen(READY_TYPE) && memcmp(k.type, READY_TYPE, k.type_len) == 0)
		return 0;
	j = json_tokener_parse(l->text);
	if (j) {
		json_object_object_get_ex(j, "name", &name);
		json_object_object_get_ex(j, "value", &value);
	}
	snprintf(why, why_len, "%s",
		 value && json_object_is_type(value, json_type_string)
		     ? json_object_get_string(value)
		     : "the kernel did not start");
	if (name && json_object_is_type(name, json_type_string) &&
	    strcmp(json_object_get_string(name), "LanguageError") == 0)
		r = -ENOENT;
	json_object_put(j);
	return r;
}

/* The bridge's first line, within READY_NS: 0 ready; -ENOENT, -EIO as ready_line() (why
 * filled); -ECANCELED the sandbox is dying; -ECONNRESET the client (conn_fd, -1: none) left;
 * -ETIMEDOUT. On an error the kernel is stopped. */
static int wait_ready(struct srv_sandbox *sb, struct srv_ctx *c, int conn_fd, char *why,
		      size_t why_len)
{
	uint64_t deadline = cd_now_ns() + READY_NS;
	int r;

	for (;;) {
		struct line l = {0};

		r = read_line(c, sb->dying_fd, &l, 1000);
		if (r == 1) {
			r = ready_line(&l, why, why_len);
			line_free(c->acct, &l);
			break;
		}
		if (r < 0 || r == 2) {
			snprintf(why, why_len,
				 "the kernel's bridge %s at its start (python3 is needed in "
				 "the sandbox's root)",
				 r == 2 ? "sent a line too long" : "exited");
			r = __atomic_load_n(&sb->dying, __ATOMIC_RELAXED) ? -ECANCELED : -EIO;
			break;
		}
		if (conn_fd >= 0 && srv_http_peer_gone(conn_fd)) {
			r = -ECONNRESET;
			break;
		}
		if (cd_now_ns() > deadline) {
			snprintf(why, why_len,
				 "the kernel was not ready in %llu s (it was stopped)",
				 (unsigned long long)(READY_NS / NSEC_PER_SEC));
			r = -ETIMEDOUT;
			break;
		}
	}
	if (r < 0)
		kernel_stop(c);
	return r;
}

/* The context's kernel running and ready (its turn held, or the context not yet listed): as
 * wait_ready(), and -ENOENT/-EIO when it cannot be started (why filled). */
static int kernel_ensure(struct srv_sandbox *sb, struct srv_ctx *c, int conn_fd, char *why,
			 size_t why_len)
{
	struct cordon_error err = {0};
	int r;

	if (c->kernel)
		return 0;
	r = kernel_start(sb, c, &err);
	if (r < 0) {
		snprintf(why, why_len, "%s: %s", err.step, err.msg);
		return r == -ENOENT ? -ENOENT : -EIO;
	}
	return wait_ready(sb, c, conn_fd, why, why_len);
}

/* The line to send next (taken; NULL: nothing). */
static void set_out_line(struct exec_stream *s, struct line *l)
{
	if (s->out_charged)
		__atomic_sub_fetch(&s->sb->line_bytes, s->out_charged, __ATOMIC_RELAXED);
	free(s->out);
	s->out = l ? l->text : NULL;
	s->out_len = l ? l->len : 0;
	s->out_charged = l ? l->charged : 0;
	s->out_off = 0;
}

static void set_out(struct exec_stream *s, char *text)
{
	struct line l = {.text = text, .len = text ? strlen(text) : 0};

	set_out_line(s, text ? &l : NULL);
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

/* What the execution is told in place of a line the server dropped. */
static char *dropped_line(void)
{
	return cd_strdup_printf(
	    "{\"type\":\"stderr\",\"text\":\"[cordon serve: a line of output was dropped: over "
	    "%u MiB, or over the %u MiB the sandbox's long lines may hold at once]\\n\"}\n",
	    LINE_MAX_BYTES >> 20, SRV_SANDBOX_LINE_BYTES >> 20);
}

/* The execution is over (its end, an error, the kernel's exit): the context is free for the
 * next, whether or not this stream's client reads the rest. */
static void finish(struct exec_stream *s)
{
	s->done = true;
	if (s->locked) {
		pthread_mutex_unlock(&s->c->exec_lock);
		s->locked = false;
	}
}

/* Take the context's turn and hand the kernel the request; false: the client left first. */
static bool begin(struct exec_stream *s)
{
	char why[512];
	int r;

	if (!take_turn(s->sb, s->c, s->conn_fd))
		return false;
	s->locked = true;
	r = kernel_ensure(s->sb, s->c, s->conn_fd, why, sizeof(why));
	if (r == -ECANCELED || r == -ECONNRESET) {
		finish(s);
		return false;
	}
	if (r < 0) {
		set_out(s, error_line(r == -ENOENT ? "LanguageError" : "KernelError", why));
		finish(s);
		return true;
	}
	/* the kernel is the sandbox's: one that takes no request holds this thread no longer */
	r = srv_write_bounded(s->c->req_fd, s->request, strlen(s->request), s->sb->dying_fd,
			      s->conn_fd, REQUEST_STALL_NS);
	if (r == -ECONNRESET || r == -ECANCELED) {
		/* part of a request went: started anew next time; killed: the connection breaks */
		kernel_stop(s->c);
		finish(s);
		return false;
	}
	if (r < 0) {
		kernel_stop(s->c);
		set_out(s,
			error_line("KernelError",
				   r == -ETIMEDOUT
				       ? "the kernel does not take requests (it was stopped: its "
					 "state is lost)"
				       : "the kernel does not take requests"));
		finish(s);
		return true;
	}
	s->sent = true;
	return true;
}

/* The next line to send; false: the client is gone. */
static bool next_line(struct exec_stream *s)
{
	for (;;) {
		struct line l = {0};
		bool end = false;
		int r = read_line(s->c, s->sb->dying_fd, &l, 1000);

		if (r == 2) {
			set_out(s, dropped_line());
			return true;
		}
		if (r == 0) {
			if (srv_http_peer_gone(s->conn_fd))
				return false;
			srv_sandbox_touch(s->sb); /* an execution is use: the sandbox is not idle */
			if (cd_now_ns() - s->last_ns >= KEEPALIVE_NS) {
				/* a type the SDK ignores; the connection's idle timeout never fires */
				set_out(s, strdup("{\"type\":\"keepalive\"}\n"));
				return true;
			}
			continue;
		}
		if (r < 0) {
			kernel_stop(s->c);
			finish(s);
			/* killed: the stream breaks, so that the SDK throws as with E2B */
			if (__atomic_load_n(&s->sb->dying, __ATOMIC_RELAXED))
				return false;
			set_out(s,
				error_line("KernelError", "the kernel exited (its state is lost)"));
			return true;
		}
		if (!line_event(&l, &end)) { /* not an event: the kernel is not ours to trust */
			line_free(s->c->acct, &l);
			continue;
		}
		if (end) {
			line_free(s->c->acct, &l);
			set_out(s, NULL);
			finish(s);
			return true;
		}
		set_out_line(s, &l);
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
		struct line l = {0};
		bool end = false;
		int r = read_line(s->c, s->sb->dying_fd, &l, 200);

		if (r < 0)
			break;
		if (r != 1)
			continue;
		r = line_event(&l, &end) && end;
		line_free(s->c->acct, &l);
		if (r)
			return;
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
	set_out(s, NULL);
	ctx_unref(s->sb, s->c);
	srv_sandbox_unref(s->sb);
	free(s->request);
	free(s);
}

/* A request's language (NULL: python) as a kernel's: lower case, "python3" is "python"; a name
 * of LANG_MAX letters, digits and "+-._" at most (the sandbox says whether it has it). */
static int language(json_object *lang, char ret[LANG_MAX + 1], const char **why)
{
	const char *l = lang ? json_object_get_string(lang) : "";
	size_t n = strlen(l);

	if (n == 0 || strcasecmp(l, "python3") == 0)
		l = "python", n = 6;
	if (n > LANG_MAX || strspn(l, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
				      "0123456789+-._") != n)
		return *why = "\"language\" is not a language's name", -EINVAL;
	for (size_t i = 0; i <= n; i++)
		ret[i] = (char)(l[i] >= 'A' && l[i] <= 'Z' ? l[i] - 'A' + 'a' : l[i]);
	return 0;
}

static int execute_request(json_object *body, const char **ret_ctx, char *ret_lang, char **ret_line,
			   const char **why)
{
	json_object *code, *ctx, *lang, *env, *req;

	if (srv_rpc_get(body, "code", json_type_string, &code, why) < 0 ||
	    srv_rpc_get(body, "context_id", json_type_string, &ctx, why) < 0 ||
	    srv_rpc_get(body, "language", json_type_string, &lang, why) < 0 ||
	    srv_rpc_get(body, "env_vars", json_type_object, &env, why) < 0)
		return -EINVAL;
	if (!code)
		return *why = "\"code\" is missing", -EINVAL;
	if (language(lang, ret_lang, why) < 0)
		return -EINVAL;
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

static enum MHD_Result too_many(struct srv_req *r)
{
	return srv_http_error(r->http, 429,
			      "%u code contexts exist already, the most one sandbox may have: "
			      "remove one first (removeCodeContext)",
			      SRV_SANDBOX_MAX_CTXS);
}

/* A context's kernel started before its stream (the default context of a language, made on
 * demand): a language the sandbox lacks, or a kernel that cannot start, is the request's error,
 * as with E2B. NULL: ready (or it will be started by the stream, its turn being taken). */
static const char *ensure_early(struct srv_req *r, struct srv_ctx *c, int *ret_status, char *why,
				size_t why_len)
{
	int k;

	if (c->kernel || pthread_mutex_trylock(&c->exec_lock) != 0)
		return NULL;
	k = kernel_ensure(r->sb, c, srv_http_conn_fd(r->http), why, why_len);
	pthread_mutex_unlock(&c->exec_lock);
	*ret_status = k == -ENOENT ? 400 : k == -ECANCELED ? 502 : 500;
	return k < 0 ? why : NULL;
}

enum MHD_Result srv_interp_execute(struct srv_req *r)
{
	const char *why = NULL, *ctx_id = NULL;
	char lang[LANG_MAX + 1], early[512];
	int status;
	json_object *body = srv_http_body_json(r->http, &why);
	struct exec_stream *s;
	char *line = NULL;
	struct srv_ctx *c;
	int k;

	if (!body)
		return srv_http_error(r->http, 400, "bad JSON body: %s", why);
	if (execute_request(body, &ctx_id, lang, &line, &why) < 0) {
		json_object_put(body);
		return srv_http_error(r->http, 400, "%s", why);
	}
	k = ctx_get(r->sb, ctx_id, lang, &c);
	json_object_put(body);
	if (k < 0) {
		free(line);
		return k == -EAGAIN   ? too_many(r)
		       : k == -ENOENT ? srv_http_error(r->http, 404, "no such context")
				      : srv_http_error(r->http, 500, "out of memory");
	}
	if (!ctx_id && (why = ensure_early(r, c, &status, early, sizeof(early)))) {
		free(line);
		/* made for this request: a language lacking takes no slot */
		if (ctx_unlist(r->sb, c))
			ctx_unref(r->sb, c);
		ctx_unref(r->sb, c);
		return srv_http_error(r->http, status, "%s", why);
	}
	s = calloc(1, sizeof(*s));
	if (!s) {
		free(line);
		ctx_unref(r->sb, c);
		return srv_http_error(r->http, 500, "out of memory");
	}
	srv_sandbox_ref(r->sb);
	s->sb = r->sb;
	s->c = c;
	s->request = line;
	s->conn_fd = srv_http_conn_fd(r->http);
	s->last_ns = cd_now_ns();
	return srv_http_stream(r->http, 200, "application/x-ndjson", MHD_SIZE_UNKNOWN, exec_read,
			       exec_free, s);
}

/* --- /contexts --- */
enum MHD_Result srv_interp_create_ctx(struct srv_req *r)
{
	const char *why = NULL;
	json_object *body = srv_http_body_json(r->http, &why), *lang, *cwd;
	char language_of[LANG_MAX + 1], fail[512];
	struct srv_ctx *c;
	int k;

	if (!body)
		return srv_http_error(r->http, 400, "bad JSON body: %s", why);
	if (srv_rpc_get(body, "language", json_type_string, &lang, &why) < 0 ||
	    srv_rpc_get(body, "cwd", json_type_string, &cwd, &why) < 0 ||
	    language(lang, language_of, &why) < 0) {
		json_object_put(body);
		return srv_http_error(r->http, 400, "%s", why);
	}
	pthread_mutex_lock(&r->sb->lock);
	k = ctx_slot(r->sb);
	pthread_mutex_unlock(&r->sb->lock);
	c = k ? ctx_new(r->sb,
			cwd && json_object_get_string_len(cwd) ? json_object_get_string(cwd) : NULL,
			language_of)
	      : NULL;
	json_object_put(body);
	if (!k)
		return too_many(r);
	if (!c) {
		ctx_unslot(r->sb);
		return srv_http_error(r->http, 500, "out of memory");
	}
	/* now: a bad cwd, a language the sandbox lacks are the creator's error */
	k = kernel_ensure(r->sb, c, srv_http_conn_fd(r->http), fail, sizeof(fail));
	if (k < 0) {
		ctx_free(c);
		ctx_unslot(r->sb);
		return srv_http_error(r->http,
				      k == -ENOENT	? 400
				      : k == -ECANCELED ? 502
							: 500,
				      "%s", fail);
	}
	pthread_mutex_lock(&r->sb->lock);
	c->next = r->sb->ctxs;
	r->sb->ctxs = c;
	pthread_mutex_unlock(&r->sb->lock);
	return srv_http_json(r->http, 200, ctx_json(c));
}

enum MHD_Result srv_interp_list_ctx(struct srv_req *r)
{
	json_object *a = json_object_new_array();

	pthread_mutex_lock(&r->sb->lock);
	for (struct srv_ctx *c = r->sb->ctxs; a && c; c = c->next)
		json_object_array_add(a, ctx_json(c));
	pthread_mutex_unlock(&r->sb->lock);
	return srv_http_json(r->http, 200, a);
}

enum MHD_Result srv_interp_remove_ctx(struct srv_req *r)
{
	struct srv_ctx *c = NULL;

	pthread_mutex_lock(&r->sb->lock);
	for (struct srv_ctx **q = &r->sb->ctxs; *q; q = &(*q)->next)
		if (strcmp((*q)->id, r->sub) == 0) {
			c = *q;
			*q = c->next;
			r->sb->n_ctxs--;
			break;
		}
	pthread_mutex_unlock(&r->sb->lock);
	if (!c)
		return srv_http_error(r->http, 404, "no such context");
	kernel_signal(c, SIGKILL); /* a running execution ends (KernelError) */
	ctx_unref(r->sb, c);
	return srv_http_text(r->http, 204, NULL, "", 0);
}

enum MHD_Result srv_interp_restart_ctx(struct srv_req *r)
{
	char why[512];
	struct srv_ctx *c;
	int k = ctx_get(r->sb, r->sub, NULL, &c);

	if (k < 0)
		return srv_http_error(r->http, 404, "no such context");
	kernel_signal(c, SIGKILL); /* a running execution ends, and lets go of the context */
	if (!take_turn(r->sb, c, srv_http_conn_fd(r->http))) {
		ctx_unref(r->sb, c);
		return srv_http_error(r->http, 502, "the sandbox is being killed");
	}
	kernel_stop(c);
	k = kernel_ensure(r->sb, c, srv_http_conn_fd(r->http), why, sizeof(why));
	pthread_mutex_unlock(&c->exec_lock);
	ctx_unref(r->sb, c);
	if (k < 0)
		return srv_http_error(r->http, k == -ECANCELED ? 502 : 500, "%s", why);
	return srv_http_text(r->http, 204, NULL, "", 0);
}

enum MHD_Result srv_interp_health(struct srv_req *r)
{
	return srv_http_text(r->http, 200, "text/plain", "OK", 2);
}

void srv_interp_on_death(struct srv_sandbox *sb, void *arg)
{
	struct srv_ctx *c;

	(void)arg;
	pthread_mutex_lock(&sb->lock);
	c = sb->ctxs;
	sb->ctxs = NULL;
	sb->n_ctxs = 0;
	pthread_mutex_unlock(&sb->lock);
	while (c) {
		struct srv_ctx *next = c->next;

		ctx_unref(sb, c);
		c = next;
	}
}
