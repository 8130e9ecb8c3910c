/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* envd_watch.c - envd's directory watchers (filesystem.Filesystem): WatchDir (a server stream,
 * what the SDK uses) and the polling trio CreateWatcher, GetWatcherEvents, RemoveWatcher. The
 * watching is the library's (cordon_session_watch: inotify by the agent inside, as the
 * sandbox); events are read from it only as the client takes them (a stream's next message, a
 * GetWatcherEvents), so the server holds at most one batch of a watcher's events: the rest wait
 * inside, in the kernel's queue of the watch, which overflows (E2B's error, and the watch ends)
 * when nobody reads. Runs in the server (connection threads; the destroyers for a sandbox's
 * end). */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "connect.h"
#include "envd_watch.h"
#include "http.h"
#include "registry.h"
#include "req.h"
#include "rpc.h"
#include "util.h"

#define KEEPALIVE_NS (50 * NSEC_PER_SEC) /* the SDK's Keepalive-Ping-Interval */
/* GetWatcherEvents answers at most this many events; the others wait for the next call */
#define POLL_EVENTS_MAX 10000

/* A sandbox's watchers, streams and polled alike (at most SRV_SANDBOX_MAX_WATCHERS each). A
 * polled one is kept here until removed or its sandbox ends; a stream's entry only counts it. */
struct watcher {
	char sb_id[24];
	char id[24];		 /* "w" + 16 hex digits; "" for a stream */
	struct cordon_watch *w;	 /* polled: ours; a stream's is its stream's */
	struct cordon_error end; /* polled: how it ended (code 0: it has not) */
	/* polled: what a GetWatcherEvents could not take of the last batch read (one batch, at
	 * most 60 KiB of names: the server's whole queue of a watcher) */
	struct cordon_watch_event *pend;
	size_t n_pend, taken;
	struct watcher *next;
};

static pthread_mutex_t watchers_lock = PTHREAD_MUTEX_INITIALIZER;
static struct watcher *watchers;

static const char *const type_names[] = {
    [CORDON_WATCH_CREATE] = "EVENT_TYPE_CREATE", [CORDON_WATCH_WRITE] = "EVENT_TYPE_WRITE",
    [CORDON_WATCH_REMOVE] = "EVENT_TYPE_REMOVE", [CORDON_WATCH_RENAME] = "EVENT_TYPE_RENAME",
    [CORDON_WATCH_CHMOD] = "EVENT_TYPE_CHMOD",
};

/* A place for a watcher of sb: its entry (on the list), or NULL past the bound */
static struct watcher *watcher_add(const char *sb_id)
{
	struct watcher *n = NULL;
	unsigned count = 0;

	pthread_mutex_lock(&watchers_lock);
	for (struct watcher *x = watchers; x; x = x->next)
		count += !strcmp(x->sb_id, sb_id);
	if (count < SRV_SANDBOX_MAX_WATCHERS && (n = calloc(1, sizeof(*n)))) {
		snprintf(n->sb_id, sizeof(n->sb_id), "%s", sb_id);
		n->next = watchers;
		watchers = n;
	}
	pthread_mutex_unlock(&watchers_lock);
	return n;
}

/* Off the list (watchers_lock held), its watch stopped if it is ours */
static void watcher_drop_locked(struct watcher *x)
{
	for (struct watcher **p = &watchers; *p; p = &(*p)->next)
		if (*p == x) {
			*p = x->next;
			break;
		}
	if (x->id[0])
		cordon_watch_free(x->w);
	cordon_watch_events_free(x->pend, x->n_pend);
	free(x);
}

static void watcher_drop(struct watcher *x)
{
	pthread_mutex_lock(&watchers_lock);
	watcher_drop_locked(x);
	pthread_mutex_unlock(&watchers_lock);
}

void srv_watch_on_death(struct srv_sandbox *sb, void *ctx)
{
	(void)ctx;
	pthread_mutex_lock(&watchers_lock);
	for (struct watcher *x = watchers, *next; x; x = next) {
		next = x->next;
		if (!strcmp(x->sb_id, sb->id) && x->id[0])
			watcher_drop_locked(x);
	}
	pthread_mutex_unlock(&watchers_lock);
}

/* The request's path and recursive; NULL path: answered (stream: as a stream's error) */
static json_object *watch_request(struct srv_req *r, bool stream, const char **ret_path,
				  bool *ret_recursive)
{
	json_object *req = srv_rpc_request(r, stream), *p = NULL, *rec = NULL;
	const char *why = NULL;

	*ret_path = NULL;
	if (!req)
		return NULL;
	if (srv_rpc_get(req, "path", json_type_string, &p, &why) < 0 ||
	    srv_rpc_get(req, "recursive", json_type_boolean, &rec, &why) < 0 || !p ||
	    !json_object_get_string_len(p)) {
		if (stream)
			srv_rpc_stream_error(r, "invalid_argument", "%s",
					     why ? why : "no path given");
		else
			srv_rpc_error(r, "invalid_argument", "%s", why ? why : "no path given");
		json_object_put(req);
		return NULL;
	}
	*ret_path = json_object_get_string(p);
	*ret_recursive = rec && json_object_get_boolean(rec);
	return req;
}

/* envd's code and words for a watch that could not start, or ended */
static const char *error_code(int e)
{
	return e == ENOENT		      ? "not_found"
	       : e == ENOTDIR		      ? "invalid_argument"
	       : e == ESRCH || e == ECANCELED ? "unavailable"
					      : "internal";
}

static void error_text(const char *path, const struct cordon_error *err, char *buf, size_t size)
{
	if (err->code == ENOENT)
		snprintf(buf, size, "path %s not found: %s", path, err->msg);
	else if (err->code == ENOTDIR)
		snprintf(buf, size, "path %s not a directory", path);
	else if (err->code == EOVERFLOW) /* as envd's fsnotify says it, then why */
		snprintf(buf, size, "watcher error: fsnotify: queue or buffer overflow (%s)",
			 err->msg);
	else
		snprintf(buf, size, "watcher error: %s", err->msg);
}

static int start_watch(struct srv_req *r, const char *path, bool recursive,
		       struct cordon_watch **ret, char *why, size_t why_size, const char **ret_code)
{
	struct cordon_error err = {0};

	if (cordon_session_watch(r->sb->session, path, recursive ? CORDON_WATCH_RECURSIVE : 0, ret,
				 &err) == 0)
		return 0;
	error_text(path, &err, why, why_size);
	*ret_code = error_code(err.code);
	return -1;
}

/* {"name":..., "type":...} */
static json_object *event_json(const struct cordon_watch_event *e)
{
	json_object *j = json_object_new_object();

	if (!j)
		return NULL;
	json_object_object_add(j, "name", json_object_new_string(e->name));
	json_object_object_add(j, "type", json_object_new_string(type_names[e->type]));
	return j;
}

/* --- WatchDir: a stream --- */

struct wstream {
	struct cordon_watch *w;
	struct watcher *slot;
	char sandbox_id[24];  /* touched while the stream runs: a watched sandbox is not idle */
	char path[512];	      /* for the errors */
	uint64_t deadline_ns; /* Connect-Timeout-Ms; 0: none */
	uint64_t keepalive_ns, last_ns, touched_ns;
	int conn_fd;
	char *buf;
	size_t len, cap, off;
	bool done;
};

static void wstream_free(void *arg)
{
	struct wstream *s = arg;

	cordon_watch_free(s->w);
	watcher_drop(s->slot);
	free(s->buf);
	free(s);
}

/* One more envelope into the buffer: 0, or -ENOMEM */
static int wstream_add(struct wstream *s, uint8_t flags, const char *msg)
{
	char *f = NULL;
	size_t fl = 0;

	if (!msg || srv_connect_frame(flags, msg, strlen(msg), &f, &fl) < 0)
		return -ENOMEM;
	if (s->len + fl > s->cap) {
		size_t cap = (s->len + fl) * 2;
		char *b = realloc(s->buf, cap);

		if (!b) {
			free(f);
			return -ENOMEM;
		}
		s->buf = b;
		s->cap = cap;
	}
	memcpy(s->buf + s->len, f, fl);
	s->len += fl;
	free(f);
	return 0;
}

static void wstream_end(struct wstream *s, const char *code, const char *msg)
{
	char *j = srv_connect_error_json(code, msg, 1);

	s->done = true;
	if (wstream_add(s, SRV_CONNECT_FLAG_END, j ? j : "{}") < 0)
		s->len = 0;
	free(j);
}

/* The events read into envelopes: true when some came (or the stream's end) */
static bool wstream_events(struct wstream *s)
{
	struct cordon_error err = {0};
	struct cordon_watch_event *v = NULL;
	size_t n = 0;
	char why[1024];
	int k = cordon_watch_read(s->w, &v, &n, &err);

	if (k < 0) {
		error_text(s->path, &err, why, sizeof(why));
		wstream_end(s, error_code(err.code), why);
		return true;
	}
	for (size_t i = 0; i < n && !s->done; i++) {
		json_object *j = json_object_new_object();

		json_object_object_add(j, "filesystem", event_json(&v[i]));
		if (wstream_add(s, 0, json_object_to_json_string_ext(j, JSON_C_TO_STRING_PLAIN)) <
		    0)
			wstream_end(s, "resource_exhausted", "out of memory");
		json_object_put(j);
	}
	cordon_watch_events_free(v, n);
	return n > 0 || s->done;
}

static void wstream_touch(struct wstream *s, uint64_t now)
{
	struct srv_sandbox *sb;

	if (now - s->touched_ns < NSEC_PER_SEC)
		return;
	s->touched_ns = now;
	sb = srv_reg_get(s->sandbox_id);
	if (sb) {
		srv_sandbox_touch(sb);
		srv_sandbox_unref(sb);
	}
}

/* The next messages: events, a keepalive, the end; false: the client is gone. */
static bool wstream_fill(struct wstream *s)
{
	s->len = s->off = 0;
	for (;;) {
		struct pollfd p = {cordon_watch_fd(s->w), POLLIN, 0};
		uint64_t now = cd_now_ns();

		wstream_touch(s, now);
		if (s->deadline_ns && now >= s->deadline_ns) {
			wstream_end(s, "deadline_exceeded", "the request ran past its timeout");
			return true;
		}
		if (srv_http_peer_gone(s->conn_fd))
			return false;
		if (now - s->last_ns >= s->keepalive_ns) {
			wstream_add(s, 0, "{\"keepalive\":{}}");
			return true;
		}
		if (poll(&p, 1, 1000) > 0 && wstream_events(s))
			return true;
	}
}

static ssize_t wstream_read(void *arg, uint64_t pos, char *out, size_t max)
{
	struct wstream *s = arg;
	size_t n;

	(void)pos;
	while (s->off >= s->len) {
		if (s->done)
			return MHD_CONTENT_READER_END_OF_STREAM;
		if (!wstream_fill(s))
			return MHD_CONTENT_READER_END_WITH_ERROR;
	}
	n = s->len - s->off < max ? s->len - s->off : max;
	memcpy(out, s->buf + s->off, n);
	s->off += n;
	s->last_ns = cd_now_ns();
	return (ssize_t)n;
}

/* A header's milliseconds (at most 10 digits) as nanoseconds; 0: none */
static uint64_t header_ms(struct srv_req *r, const char *name)
{
	const char *t = srv_http_header(r->http, name);

	if (!t || !*t || strlen(t) > 10 || strspn(t, "0123456789") != strlen(t))
		return 0;
	return strtoull(t, NULL, 10) * NSEC_PER_MSEC;
}

static struct wstream *wstream_new(struct srv_req *r, const char *path)
{
	struct wstream *s = calloc(1, sizeof(*s));
	uint64_t t = header_ms(r, "Connect-Timeout-Ms"), ping = header_ms(r, "Keepalive-Ping-"
									     "Interval");

	if (!s)
		return NULL;
	snprintf(s->sandbox_id, sizeof(s->sandbox_id), "%s", r->sb->id);
	snprintf(s->path, sizeof(s->path), "%s", path);
	s->conn_fd = srv_http_conn_fd(r->http);
	s->last_ns = cd_now_ns();
	s->deadline_ns = t ? s->last_ns + t : 0;
	/* the SDK's header counts seconds */
	s->keepalive_ns = ping ? ping / NSEC_PER_MSEC * NSEC_PER_SEC : KEEPALIVE_NS;
	return s;
}

enum MHD_Result srv_watch_dir(struct srv_req *r)
{
	const char *path, *code = "internal";
	bool recursive = false;
	json_object *req = watch_request(r, true, &path, &recursive);
	struct wstream *s;
	char why[1024];

	if (!req)
		return MHD_YES;
	s = wstream_new(r, path);
	if (!s || !(s->slot = watcher_add(r->sb->id))) {
		free(s);
		json_object_put(req);
		return srv_rpc_stream_error(r, "resource_exhausted",
					    "%u watchers exist already, the most one sandbox may "
					    "have: stop one first",
					    SRV_SANDBOX_MAX_WATCHERS);
	}
	if (start_watch(r, path, recursive, &s->w, why, sizeof(why), &code) < 0) {
		json_object_put(req);
		wstream_free(s);
		return srv_rpc_stream_error(r, code, "%s", why);
	}
	json_object_put(req);
	if (wstream_add(s, 0, "{\"start\":{}}") < 0) {
		wstream_free(s);
		return MHD_NO;
	}
	return srv_http_stream(r->http, 200, "application/connect+json", MHD_SIZE_UNKNOWN,
			       wstream_read, wstream_free, s);
}

/* --- CreateWatcher, GetWatcherEvents, RemoveWatcher --- */

enum MHD_Result srv_watch_create(struct srv_req *r)
{
	const char *path, *code = "internal";
	bool recursive = false;
	json_object *req = watch_request(r, false, &path, &recursive), *j;
	struct cordon_watch *w = NULL;
	struct watcher *x;
	char why[1024], id[33];

	if (!req)
		return MHD_YES;
	if (start_watch(r, path, recursive, &w, why, sizeof(why), &code) < 0) {
		json_object_put(req);
		return srv_rpc_error(r, code, "%s", why);
	}
	json_object_put(req);
	if (cd_random_id(id) < 0 || !(x = watcher_add(r->sb->id))) {
		cordon_watch_free(w);
		return srv_rpc_error(r, "resource_exhausted",
				     "%u watchers exist already, the most one sandbox may have: "
				     "remove one first",
				     SRV_SANDBOX_MAX_WATCHERS);
	}
	pthread_mutex_lock(&watchers_lock);
	snprintf(x->id, sizeof(x->id), "w%.16s", id);
	x->w = w;
	pthread_mutex_unlock(&watchers_lock);
	j = json_object_new_object();
	if (j)
		json_object_object_add(j, "watcherId", json_object_new_string(x->id));
	return srv_rpc_reply(r, j);
}

/* The sandbox's watcher called id (watchers_lock held); NULL with the answer given */
static struct watcher *find_watcher(struct srv_req *r, json_object **ret_req)
{
	json_object *req = srv_rpc_request(r, false), *v = NULL;
	const char *why = NULL;

	*ret_req = req;
	if (!req)
		return NULL;
	if (srv_rpc_get(req, "watcherId", json_type_string, &v, &why) < 0 || !v) {
		srv_rpc_error(r, "invalid_argument", "%s", why ? why : "no watcherId given");
		return NULL;
	}
	for (struct watcher *x = watchers; x; x = x->next)
		if (x->id[0] && !strcmp(x->id, json_object_get_string(v)) &&
		    !strcmp(x->sb_id, r->sb->id))
			return x;
	srv_rpc_error(r, "not_found", "watcher with id %s not found", json_object_get_string(v));
	return NULL;
}

/* Up to POLL_EVENTS_MAX events into arr, without waiting: what is left of the last batch, then
 * new batches; an end is kept in x->end (told at the next call, after these events) */
static void drain(struct watcher *x, json_object *arr)
{
	size_t total = 0;

	while (total < POLL_EVENTS_MAX) {
		if (x->taken == x->n_pend) {
			cordon_watch_events_free(x->pend, x->n_pend);
			x->pend = NULL;
			x->n_pend = x->taken = 0;
			if (x->end.code ||
			    cordon_watch_read(x->w, &x->pend, &x->n_pend, &x->end) <= 0)
				break;
		}
		for (; x->taken < x->n_pend && total < POLL_EVENTS_MAX; x->taken++, total++)
			json_object_array_add(arr, event_json(&x->pend[x->taken]));
	}
}

enum MHD_Result srv_watch_events(struct srv_req *r)
{
	json_object *req = NULL, *j, *arr;
	struct watcher *x;
	char why[1024];
	enum MHD_Result ret;

	pthread_mutex_lock(&watchers_lock);
	x = find_watcher(r, &req);
	if (!x) {
		pthread_mutex_unlock(&watchers_lock);
		json_object_put(req);
		return MHD_YES;
	}
	json_object_put(req);
	if (x->end.code && x->taken == x->n_pend) { /* envd: its error, each call until removed */
		error_text("", &x->end, why, sizeof(why));
		pthread_mutex_unlock(&watchers_lock);
		return srv_rpc_error(r, error_code(x->end.code), "%s", why);
	}
	j = json_object_new_object();
	arr = json_object_new_array();
	drain(x, arr);
	pthread_mutex_unlock(&watchers_lock);
	json_object_object_add(j, "events", arr);
	ret = srv_rpc_reply(r, j);
	return ret;
}

enum MHD_Result srv_watch_remove(struct srv_req *r)
{
	json_object *req = NULL;
	struct watcher *x;

	pthread_mutex_lock(&watchers_lock);
	x = find_watcher(r, &req);
	if (x)
		watcher_drop_locked(x);
	pthread_mutex_unlock(&watchers_lock);
	json_object_put(req);
	return x ? srv_rpc_reply(r, json_object_new_object()) : MHD_YES;
}
