/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* control.c - the control plane, E2B's REST API as the SDK calls it: create (POST /sandboxes,
 * /v2/sandboxes), list (its pages: a token is a place in the order), get, kill, timeout, connect
 * (which resumes), pause, resume, refreshes. JSON bodies checked field by field; the API key was
 * checked by http.c. Runs in the server (connection threads). */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "auth.h"
#include "control.h"
#include "fresh.h"
#include "http.h"
#include "netsel.h"
#include "opts.h"
#include "pool.h"
#include "registry.h"
#include "req.h"
#include "templates.h"
#include "util.h"

static void rfc3339(int64_t ms, char buf[64])
{
	time_t t = (time_t)(ms / 1000);
	struct tm tm;

	gmtime_r(&t, &tm);
	snprintf(buf, 64, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900, tm.tm_mon + 1,
		 tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, (int)(ms % 1000));
}

static void add_str(json_object *j, const char *k, const char *v)
{
	json_object_object_add(j, k, json_object_new_string(v));
}

static int64_t cpu_count(void)
{
	return srv_opts.millicpus ? (int64_t)((srv_opts.millicpus + 999) / 1000)
				  : sysconf(_SC_NPROCESSORS_ONLN);
}

static int64_t memory_mb(void)
{
	return (int64_t)((srv_opts.memory ? srv_opts.memory : 4ull << 30) >> 20);
}

static json_object *strv_json(char *const *v)
{
	json_object *a = json_object_new_array();

	for (; v && *v; v++)
		json_object_array_add(a, json_object_new_string(*v));
	return a;
}

/* allowInternetAccess and network as the create gave them (E2B echoes them), and what cordon's
 * proxy lets through (cordonAllowNet: the sandbox's allow-list, docs/e2b.md "Network") */
static void network_json(struct srv_sandbox *sb, json_object *j)
{
	char *const *list = sb->own_net ? sb->allow_net : srv_opts.allow_net;

	json_object_object_add(j, "allowInternetAccess",
			       json_object_new_boolean(sb->internet >= 0 ? sb->internet
									 : list && *list));
	if (sb->network)
		json_object_object_add(j, "network", json_object_get(sb->network));
	json_object_object_add(j, "cordonAllowNet", strv_json(list));
}

/* The fields of a sandbox in create's, get's and list's answers. */
static json_object *sandbox_json(struct srv_sandbox *sb, bool secrets)
{
	json_object *j = json_object_new_object(), *life;
	bool paused;
	char t[64];

	if (!j)
		return NULL;
	add_str(j, "sandboxID", sb->id);
	add_str(j, "templateID", sb->template_id);
	add_str(j, "clientID", "cordon");
	add_str(j, "envdVersion", SRV_ENVD_VERSION);
	pthread_mutex_lock(&sb->lock);
	paused = sb->paused;
	rfc3339(sb->started_ms, t);
	add_str(j, "startedAt", t);
	/* paused: when it will be killed (--max-paused-ttl) */
	rfc3339(paused ? sb->paused_ms + (int64_t)(srv_opts.max_paused_ns / NSEC_PER_MSEC)
		       : sb->end_ms,
		t);
	add_str(j, "endAt", t);
	pthread_mutex_unlock(&sb->lock);
	add_str(j, "state", paused ? "paused" : "running");
	life = json_object_new_object();
	if (life) {
		add_str(life, "onTimeout", sb->auto_pause ? "pause" : "kill");
		json_object_object_add(life, "autoResume", json_object_new_boolean(sb->auto_resume));
		json_object_object_add(j, "lifecycle", life);
	}
	json_object_object_add(j, "cpuCount", json_object_new_int64(cpu_count()));
	json_object_object_add(j, "memoryMB", json_object_new_int64(memory_mb()));
	json_object_object_add(j, "diskSizeMB", json_object_new_int64(0));
	json_object_object_add(j, "metadata", json_object_get(sb->metadata));
	json_object_object_add(j, "domain", NULL);
	network_json(sb, j);
	if (secrets) {
		add_str(j, "envdAccessToken", sb->token);
		add_str(j, "trafficAccessToken", sb->token);
	}
	return j;
}

/* An optional object whose values are all strings. */
static int string_map(json_object *body, const char *key, json_object **ret, const char **why)
{
	json_object *v;

	*ret = NULL;
	if (!json_object_object_get_ex(body, key, &v) || json_object_is_type(v, json_type_null))
		return 0;
	if (!json_object_is_type(v, json_type_object)) {
		*why = "must be an object";
		return -EINVAL;
	}
	json_object_object_foreach(v, k, val) {
		(void)k;
		if (!json_object_is_type(val, json_type_string)) {
			*why = "must have string values";
			return -EINVAL;
		}
	}
	*ret = json_object_get(v);
	return 0;
}

/* An optional timeout in seconds: 1 .. (--max-ttl). */
static int timeout_field(json_object *body, uint64_t *ret_ns, const char **why)
{
	json_object *v;
	int64_t s;

	*ret_ns = srv_opts.default_ttl_ns;
	if (!json_object_object_get_ex(body, "timeout", &v) ||
	    json_object_is_type(v, json_type_null))
		goto cap;
	if (!json_object_is_type(v, json_type_int)) {
		*why = "\"timeout\" must be an integer (seconds)";
		return -EINVAL;
	}
	s = json_object_get_int64(v);
	if (s < 0 || s > 365 * 86400) {
		*why = "\"timeout\" is out of range";
		return -EINVAL;
	}
	*ret_ns = (uint64_t)s * NSEC_PER_SEC;
cap:
	if (srv_opts.max_ttl_ns && *ret_ns > srv_opts.max_ttl_ns)
		*ret_ns = srv_opts.max_ttl_ns;
	return 0;
}

/* What the sandbox's commands get besides the server's environment: its id, its envVars. */
static int sandbox_env(struct srv_sandbox *sb)
{
	_cleanup_free_ char *id = cd_strdup_printf("E2B_SANDBOX_ID=%s", sb->id);

	if (!id || cd_strv_push(&sb->env, id) < 0)
		return -ENOMEM;
	if (sb->env_vars) {
		json_object_object_foreach(sb->env_vars, k, v) {
			_cleanup_free_ char *kv = cd_strdup_printf("%s=%s", k,
								   json_object_get_string(v));

			if (!kv || cd_strv_push(&sb->env, kv) < 0)
				return -ENOMEM;
		}
	}
	return 0;
}

/* One made ahead when there is one (--pool: the host's root and the server's network), else a
 * new one. */
static int start_session(struct srv_sandbox *sb, const struct srv_template *t,
			 struct cordon_error *err)
{
	struct srv_make_spec spec = { .rootfs = t->rootfs, .own_net = sb->own_net,
				      .allow_net = sb->allow_net };
	struct srv_fresh p = {0};
	int r = sandbox_env(sb);

	if (r < 0)
		return cd_fail(err, -r, "env", "out of memory");
	if (t->rootfs || sb->own_net || !srv_pool_take(&p)) {
		r = srv_fresh_make(&spec, &p, err);
		if (r < 0)
			return r;
	}
	sb->session = p.session;
	/* every call on it ends with the sandbox, and within SRV_AGENT_CALL_NS in all */
	cordon_session_set_bounds(sb->session, sb->dying_fd, SRV_AGENT_CALL_NS, SRV_LIST_RAW_MAX);
	sb->workdir = p.workdir;
	sb->workdir_st = p.workdir_st;
	return 0;
}

/* An optional boolean: *ret unchanged when absent or null. */
static int bool_field(json_object *body, const char *key, bool *ret, const char **why)
{
	json_object *v;

	if (!json_object_object_get_ex(body, key, &v) || json_object_is_type(v, json_type_null))
		return 0;
	if (!json_object_is_type(v, json_type_boolean)) {
		*why = "\"autoPause\", \"autoPauseMemory\", \"autoResume.enabled\" and "
		       "\"memory\" are true or false";
		return -EINVAL;
	}
	*ret = json_object_get_boolean(v);
	return 0;
}

/* autoPause, autoPauseMemory, autoResume {enabled} (the SDK's lifecycle) */
static int parse_lifecycle(struct srv_sandbox *sb, json_object *body, const char **why)
{
	bool memory = true;
	json_object *v;

	if (bool_field(body, "autoPause", &sb->auto_pause, why) < 0 ||
	    bool_field(body, "autoPauseMemory", &memory, why) < 0)
		return -EINVAL;
	if (sb->auto_pause && !memory) {
		*why = "autoPauseMemory false (keepMemory: false, a pause that keeps only the files) "
		       "is not supported: cordon serve pauses a sandbox by freezing its processes, "
		       "memory and all";
		return -EINVAL;
	}
	if (json_object_object_get_ex(body, "autoResume", &v) &&
	    !json_object_is_type(v, json_type_null) &&
	    (!json_object_is_type(v, json_type_object) ||
	     bool_field(v, "enabled", &sb->auto_resume, why) < 0)) {
		*why = "\"autoResume\" must be an object {\"enabled\": true|false}";
		return -EINVAL;
	}
	if (sb->auto_resume && !sb->auto_pause) {
		*why = "autoResume needs autoPause (lifecycle.onTimeout 'pause')";
		return -EINVAL;
	}
	return 0;
}

/* An optional array of strings, into a new vector */
static int string_list(json_object *o, const char *key, char ***ret, char *why, size_t size)
{
	json_object *v;

	if (!json_object_object_get_ex(o, key, &v) || json_object_is_type(v, json_type_null))
		return 0;
	if (!json_object_is_type(v, json_type_array) || json_object_array_length(v) > 256)
		return snprintf(why, size, "network.%s must be an array of strings (at most 256)",
				key), -EINVAL;
	for (size_t i = 0; i < json_object_array_length(v); i++) {
		json_object *e = json_object_array_get_idx(v, i);

		if (!json_object_is_type(e, json_type_string))
			return snprintf(why, size, "network.%s must be an array of strings", key),
			       -EINVAL;
		if (cd_strv_push(ret, json_object_get_string(e)) < 0)
			return snprintf(why, size, "out of memory"), -ENOMEM;
	}
	return 0;
}

/* E2B's fields the proxy cannot carry out: refused, never ignored (docs/e2b.md "Network") */
static bool network_unsupported(json_object *n, char *why, size_t size)
{
	static const char *const keys[] = { "rules", "egressProxy" };
	json_object *v;

	for (size_t i = 0; i < CD_ELEMENTSOF(keys); i++)
		if (json_object_object_get_ex(n, keys[i], &v) &&
		    !json_object_is_type(v, json_type_null) &&
		    !(json_object_is_type(v, json_type_object) && !json_object_object_length(v)))
			return snprintf(why, size, "network.%s is not supported by cordon serve",
					keys[i]), true;
	return false;
}

/* E2B's create fields cordon serve has nothing for: refused, never ignored (an MCP gateway,
 * volumes; an empty object or array asks for nothing) */
static bool create_unsupported(json_object *body, char *why, size_t size)
{
	static const char *const keys[] = { "mcp", "volumeMounts" };
	json_object *v;

	for (size_t i = 0; i < CD_ELEMENTSOF(keys); i++)
		if (json_object_object_get_ex(body, keys[i], &v) &&
		    !json_object_is_type(v, json_type_null) &&
		    !(json_object_is_type(v, json_type_object) && !json_object_object_length(v)) &&
		    !(json_object_is_type(v, json_type_array) && !json_object_array_length(v)))
			return snprintf(why, size, "\"%s\" is not supported by cordon serve",
					keys[i]), true;
	return false;
}

/* allow_internet_access and network {allowOut, denyOut}: the sandbox's own allow-list within
 * --allow-net (netsel.c), or the server's when the create says nothing of it */
static int parse_network(struct srv_sandbox *sb, json_object *body, char *why, size_t size)
{
	struct srv_netsel q = { .internet = -1 };
	json_object *v, *n = NULL;
	int r = 0;

	sb->internet = -1;
	if (json_object_object_get_ex(body, "allow_internet_access", &v) &&
	    !json_object_is_type(v, json_type_null)) {
		if (!json_object_is_type(v, json_type_boolean))
			return snprintf(why, size, "\"allow_internet_access\" must be a boolean"),
			       -EINVAL;
		sb->internet = q.internet = json_object_get_boolean(v);
	}
	if (json_object_object_get_ex(body, "network", &n) && !json_object_is_type(n, json_type_null)) {
		if (!json_object_is_type(n, json_type_object))
			return snprintf(why, size, "\"network\" must be an object"), -EINVAL;
		if (network_unsupported(n, why, size))
			return -EINVAL;
		r = string_list(n, "allowOut", &q.allow_out, why, size);
		if (r >= 0)
			r = string_list(n, "denyOut", &q.deny_out, why, size);
		if (r >= 0 && (q.allow_out || q.deny_out)) {
			sb->network = json_object_new_object();
			json_object_object_add(sb->network, "allowOut", strv_json(q.allow_out));
			json_object_object_add(sb->network, "denyOut", strv_json(q.deny_out));
		}
	}
	if (r >= 0 && (q.internet >= 0 || q.allow_out || q.deny_out)) {
		r = srv_netsel_decide(srv_opts.allow_net, &q, &sb->allow_net, why, size);
		sb->own_net = r >= 0;
	}
	cd_strv_free(q.allow_out);
	cd_strv_free(q.deny_out);
	return r;
}

/* network.allowPublicTraffic (E2B's default: true): false, and its ports take a request only
 * with its traffic access token (routes.c). */
static int traffic_field(json_object *body, bool *ret_private, const char **why)
{
	json_object *net, *v;

	if (!json_object_object_get_ex(body, "network", &net) ||
	    !json_object_is_type(net, json_type_object) ||
	    !json_object_object_get_ex(net, "allowPublicTraffic", &v) ||
	    json_object_is_type(v, json_type_null))
		return 0;
	if (!json_object_is_type(v, json_type_boolean)) {
		*why = "\"network.allowPublicTraffic\" must be a boolean";
		return -EINVAL;
	}
	*ret_private = !json_object_get_boolean(v);
	return 0;
}

static int parse_create(struct srv_sandbox *sb, json_object *body, uint64_t *ttl, const char **why)
{
	static __thread char buf[640];
	json_object *v;

	if (json_object_object_get_ex(body, "templateID", &v) &&
	    !json_object_is_type(v, json_type_null)) {
		if (!json_object_is_type(v, json_type_string) ||
		    json_object_get_string_len(v) > 128) {
			*why = "\"templateID\" must be a string (at most 128 bytes)";
			return -EINVAL;
		}
		sb->template_id = strdup(json_object_get_string(v));
	} else {
		sb->template_id = strdup("base");
	}
	if (!sb->template_id) {
		*why = "out of memory";
		return -ENOMEM;
	}
	if (string_map(body, "metadata", &sb->metadata, why) < 0 ||
	    string_map(body, "envVars", &sb->env_vars, why) < 0)
		return -EINVAL;
	if (!sb->metadata)
		sb->metadata = json_object_new_object();
	if (parse_lifecycle(sb, body, why) < 0)
		return -EINVAL;
	if (create_unsupported(body, buf, sizeof(buf)) ||
	    parse_network(sb, body, buf, sizeof(buf)) < 0) {
		*why = buf;
		return -EINVAL;
	}
	if (traffic_field(body, &sb->private_traffic, why) < 0)
		return -EINVAL;
	return timeout_field(body, ttl, why);
}

enum MHD_Result srv_control_create(struct srv_req *r)
{
	struct cordon_error err = {0};
	const char *why = NULL;
	json_object *body = srv_http_body_json(r->http, &why);
	const struct srv_template *t;
	struct srv_sandbox *sb;
	uint64_t ttl;
	int k;

	if (!body)
		return srv_http_error(r->http, 400, "bad JSON body: %s", why);
	sb = srv_sandbox_new();
	if (!sb) {
		json_object_put(body);
		return srv_http_error(r->http, 500, "out of memory");
	}
	k = parse_create(sb, body, &ttl, &why);
	json_object_put(body);
	if (k < 0) {
		srv_sandbox_free(sb);
		return srv_http_error(r->http, 400, "%s", why);
	}
	/* E2B's answer to a template it does not have */
	t = srv_templates_find(sb->template_id);
	if (!t) {
		enum MHD_Result res = srv_http_error(r->http, 404, "template '%s' not found",
						     sb->template_id);

		srv_sandbox_free(sb);
		return res;
	}
	k = srv_reg_reserve();
	if (k < 0) {
		srv_sandbox_free(sb);
		return k == -EBUSY
			   ? srv_http_error(r->http, 429, "too many sandboxes (--max-sandboxes %u)",
					    srv_opts.max_sandboxes)
			   : srv_http_error(r->http, 503, "the server is stopping");
	}
	if (srv_auth_random(sb->id, 20, SRV_AUTH_ID_ALPHABET) < 0 ||
	    srv_auth_random(sb->token, 40, "0123456789abcdef") < 0 || start_session(sb, t, &err) < 0) {
		srv_reg_unreserve();
		srv_sandbox_free(sb);
		srv_log("create: %s: %s", err.step, err.msg);
		return srv_http_error(r->http, 500, "cannot create the sandbox: %s: %s", err.step,
				      err.msg);
	}
	/* autoPause: a sandbox that cannot be paused is refused now, never killed at its timeout
	 * by surprise (a thaw of a running one is the probe: it needs what a freeze needs) */
	if (sb->auto_pause && cordon_session_freeze(sb->session, 0, &err) < 0) {
		struct cordon_error e2 = {0};

		srv_reg_unreserve();
		cordon_session_destroy(sb->session, NULL, &e2);
		srv_sandbox_free(sb);
		return srv_http_error(r->http, err.code == EOPNOTSUPP ? 400 : 500,
				      "autoPause (lifecycle.onTimeout 'pause'): this sandbox could not "
				      "be paused: %s",
				      err.msg);
	}
	sb->started_ms = srv_now_ms();
	sb->end_ms = sb->started_ms + (int64_t)(ttl / NSEC_PER_MSEC);
	sb->last_used_ns = cd_now_ns();
	body = sandbox_json(sb, true);
	if (srv_reg_add(sb) < 0) {
		cordon_session_destroy(sb->session, NULL, &err);
		srv_sandbox_free(sb);
		json_object_put(body);
		return srv_http_error(r->http, 503, "the server is stopping");
	}
	srv_log("sandbox %s: created (template %s)",
		json_object_get_string(json_object_object_get(body, "sandboxID")),
		json_object_get_string(json_object_object_get(body, "templateID")));
	return srv_http_json(r->http, 201, body);
}

/* ?metadata=k%3Dv%26k2%3Dv2 (form-encoded pairs, encoded once more) */
static bool metadata_matches(struct srv_sandbox *sb, const char *q)
{
	_cleanup_free_ char *copy = q ? strdup(q) : NULL;
	char *save = NULL;

	if (!copy)
		return true;
	for (char *pair = strtok_r(copy, "&", &save); pair; pair = strtok_r(NULL, "&", &save)) {
		char *eq = strchr(pair, '=');
		json_object *v;

		if (!eq)
			continue;
		*eq = '\0';
		MHD_http_unescape(pair);
		MHD_http_unescape(eq + 1);
		if (!json_object_object_get_ex(sb->metadata, pair, &v) ||
		    strcmp(json_object_get_string(v), eq + 1) != 0)
			return false;
	}
	return true;
}

/* A list's query (GET /v2/sandboxes): filters, order, page. */
#define LIST_LIMIT_MAX 100 /* E2B's paginationLimit: 1..100, 100 by default */
struct list_query {
	bool running, paused;	/* the states asked for (state=running,paused) */
	const char *meta;	/* metadata=k%3Dv... */
	const char *template_id;
	int64_t started_after; /* ms, realtime; INT64_MIN: any */
	bool asc;
	unsigned limit;
	bool cursor;	/* nextToken: the page starts past (cursor_ms, cursor_id) */
	int64_t cursor_ms;
	char cursor_id[24];
};

/* state=running,paused (the SDK's form, explode false); each repeated key is the first one
 * MHD gives, which a comma list covers */
static int parse_states(const char *s, struct list_query *q, const char **why)
{
	_cleanup_free_ char *copy = s ? strdup(s) : NULL;
	char *save = NULL;

	q->running = q->paused = !s;
	if (s && !copy)
		return -ENOMEM;
	for (char *w = copy ? strtok_r(copy, ",", &save) : NULL; w; w = strtok_r(NULL, ",", &save))
		if (strcmp(w, "running") == 0)
			q->running = true;
		else if (strcmp(w, "paused") == 0)
			q->paused = true;
		else {
			*why = "\"state\" is running, paused, or both (comma-separated)";
			return -EINVAL;
		}
	return 0;
}

/* 2026-12-06T21:59:05.123Z, what the SDK's toISOString() gives (seconds and Z required) */
static int parse_time(const char *s, int64_t *ret)
{
	struct tm tm = {0};
	const char *p = strptime(s, "%Y-%m-%dT%H:%M:%S", &tm);
	long ms = 0;

	if (!p)
		return -EINVAL;
	if (*p == '.') {
		char *end;

		ms = strtol(p + 1, &end, 10);
		if (end == p + 1 || end - p - 1 > 3)
			return -EINVAL;
		for (long k = end - p - 1; k < 3; k++)
			ms *= 10;
		p = end;
	}
	if (strcmp(p, "Z") != 0)
		return -EINVAL;
	*ret = (int64_t)timegm(&tm) * 1000 + ms;
	return 0;
}

/* The token is opaque to clients: hex of "<a|d><started ms>.<id>", the place in the order past
 * which the next page starts. A sandbox's start and id never change: pages stay true while
 * sandboxes come and go, and one that lived through the whole listing is seen once. */
static void cursor_token(const struct list_query *q, const struct srv_sandbox *sb, char *buf,
			 size_t size)
{
	char raw[64];
	int n = snprintf(raw, sizeof(raw), "%c%lld.%s", q->asc ? 'a' : 'd',
			 (long long)sb->started_ms, sb->id);

	for (int i = 0; i < n && (size_t)(2 * i + 2) < size; i++)
		snprintf(buf + 2 * i, 3, "%02x", (unsigned char)raw[i]);
}

static int parse_token(const char *t, struct list_query *q)
{
	char raw[64], *dot, *end;
	size_t n = strlen(t) / 2;

	if (strlen(t) % 2 || n < 4 || n >= sizeof(raw))
		return -EINVAL;
	for (size_t i = 0; i < n; i++) {
		unsigned v;

		if (!isxdigit((unsigned char)t[2 * i]) || !isxdigit((unsigned char)t[2 * i + 1]) ||
		    sscanf(t + 2 * i, "%2x", &v) != 1 || v == 0)
			return -EINVAL;
		raw[i] = (char)v;
	}
	raw[n] = '\0';
	dot = strchr(raw, '.');
	if (raw[0] != (q->asc ? 'a' : 'd') || !dot || !isdigit((unsigned char)raw[1]))
		return -EINVAL;
	errno = 0;
	q->cursor_ms = strtoll(raw + 1, &end, 10);
	if (end != dot || errno || strlen(dot + 1) >= sizeof(q->cursor_id) || !dot[1] ||
	    strspn(dot + 1, SRV_AUTH_ID_ALPHABET) != strlen(dot + 1))
		return -EINVAL;
	snprintf(q->cursor_id, sizeof(q->cursor_id), "%s", dot + 1);
	q->cursor = true;
	return 0;
}

static int parse_page(struct srv_req *r, struct list_query *q, const char **why)
{
	const char *order = srv_http_query(r->http, "order");
	const char *limit = srv_http_query(r->http, "limit");
	const char *token = srv_http_query(r->http, "nextToken");
	char *end;

	q->asc = order && strcmp(order, "asc") == 0;
	if (order && !q->asc && strcmp(order, "desc") != 0) {
		*why = "\"order\" is asc or desc";
		return -EINVAL;
	}
	/* /v2/sandboxes pages, 100 at most; the old /sandboxes answers all unless asked */
	q->limit = strncmp(r->url, "/v2/", 4) == 0 || limit ? LIST_LIMIT_MAX : UINT32_MAX;
	if (limit) {
		unsigned long v = strtoul(limit, &end, 10);

		if (!isdigit((unsigned char)*limit) || *end || v < 1 || v > LIST_LIMIT_MAX) {
			*why = "\"limit\" is a number from 1 to 100";
			return -EINVAL;
		}
		q->limit = (unsigned)v;
	}
	if (token && parse_token(token, q) < 0) {
		*why = "\"nextToken\" is not a token this server gave for a list in this order";
		return -EINVAL;
	}
	return 0;
}

static int parse_list(struct srv_req *r, struct list_query *q, const char **why)
{
	const char *after = srv_http_query(r->http, "startedAfter");
	int k;

	*q = (struct list_query){.meta = srv_http_query(r->http, "metadata"),
				 .template_id = srv_http_query(r->http, "template"),
				 .started_after = INT64_MIN};
	k = parse_states(srv_http_query(r->http, "state"), q, why);
	if (k == 0 && after && parse_time(after, &q->started_after) < 0) {
		*why = "\"startedAfter\" is a time such as 2026-01-02T03:04:05.678Z";
		k = -EINVAL;
	}
	return k < 0 ? k : parse_page(r, q, why);
}

/* by start, then id: the list's order, which a token's place is in */
static int by_start(const void *a, const void *b)
{
	const struct srv_sandbox *x = *(struct srv_sandbox *const *)a;
	const struct srv_sandbox *y = *(struct srv_sandbox *const *)b;

	if (x->started_ms != y->started_ms)
		return x->started_ms < y->started_ms ? -1 : 1;
	return strcmp(x->id, y->id);
}

/* Is sb past the token's place, in the list's order? */
static bool past_cursor(const struct list_query *q, const struct srv_sandbox *sb)
{
	int c;

	if (!q->cursor)
		return true;
	c = sb->started_ms != q->cursor_ms ? (sb->started_ms < q->cursor_ms ? -1 : 1)
					    : strcmp(sb->id, q->cursor_id);
	return q->asc ? c > 0 : c < 0;
}

static bool list_matches(const struct list_query *q, struct srv_sandbox *sb)
{
	bool paused = srv_sandbox_paused(sb);

	return (paused ? q->paused : q->running) && sb->started_ms >= q->started_after &&
	       (!q->template_id || strcmp(q->template_id, sb->template_id) == 0) &&
	       metadata_matches(sb, q->meta);
}

/* The page: the matching sandboxes past the token's place, limit of them; *next: the token of
 * the last when more follow ("" if none); *running: how many match and run, all pages. */
static json_object *list_page(const struct list_query *q, struct srv_sandbox **v, size_t n,
			      char *next, size_t next_size, unsigned *running)
{
	json_object *a = json_object_new_array();
	struct srv_sandbox *last = NULL;
	unsigned taken = 0;

	qsort(v, n, sizeof(*v), by_start);
	for (size_t k = 0; a && k < n; k++) {
		struct srv_sandbox *sb = v[q->asc ? k : n - 1 - k];

		if (!list_matches(q, sb))
			continue;
		*running += !srv_sandbox_paused(sb);
		if (!past_cursor(q, sb))
			continue;
		if (taken == q->limit) {
			cursor_token(q, last, next, next_size);
			continue;
		}
		json_object_array_add(a, sandbox_json(sb, false));
		last = sb;
		taken++;
	}
	return a;
}

enum MHD_Result srv_control_list(struct srv_req *r)
{
	struct list_query q;
	struct srv_sandbox **v;
	const char *why = NULL, *headers[5] = {NULL};
	char next[130] = "", total[16];
	unsigned running = 0, h = 0;
	json_object *a;
	size_t n;

	if (parse_list(r, &q, &why) < 0)
		return srv_http_error(r->http, 400, "%s", why ? why : "out of memory");
	if (srv_reg_snapshot(&v, &n) < 0)
		return srv_http_error(r->http, 500, "out of memory");
	a = list_page(&q, v, n, next, sizeof(next), &running);
	for (size_t i = 0; i < n; i++)
		srv_sandbox_unref(v[i]);
	free(v);
	if (next[0]) {
		headers[h++] = "X-Next-Token";
		headers[h++] = next;
	}
	if (q.running) { /* E2B's: the running ones matching, before pagination */
		snprintf(total, sizeof(total), "%u", running);
		headers[h++] = "X-Total-Running";
		headers[h++] = total;
	}
	return srv_http_json_headers(r->http, 200, a, headers);
}

enum MHD_Result srv_control_get(struct srv_req *r)
{
	struct srv_sandbox *sb = srv_reg_get(r->sub);
	json_object *j;

	if (!sb)
		return srv_http_error(r->http, 404, "sandbox %s not found", r->sub);
	j = sandbox_json(sb, false);
	srv_sandbox_unref(sb);
	return srv_http_json(r->http, 200, j);
}

enum MHD_Result srv_control_kill(struct srv_req *r)
{
	if (srv_reg_kill(r->sub) < 0)
		return srv_http_error(r->http, 404, "sandbox %s not found", r->sub);
	return srv_http_text(r->http, 204, NULL, "", 0);
}

/* A body's "memory": false asks for what cordon cannot do (a pause or resume without the
 * processes' memory): refused. */
static bool memory_false(json_object *body, const char **why)
{
	bool memory = true;

	if (bool_field(body, "memory", &memory, why) < 0)
		return true;
	if (!memory)
		*why = "\"memory\": false (keepMemory: false, onResume: 'reboot') is not supported: "
		       "cordon serve pauses a sandbox by freezing its processes, memory and all";
	return !memory;
}

enum MHD_Result srv_control_pause(struct srv_req *r)
{
	struct cordon_error err = {0};
	const char *why = NULL;
	json_object *body = srv_http_body_json(r->http, &why);
	struct srv_sandbox *sb;
	bool refused;
	int k;

	if (!body)
		return srv_http_error(r->http, 400, "bad JSON body: %s", why);
	refused = memory_false(body, &why);
	json_object_put(body);
	if (refused)
		return srv_http_error(r->http, 400, "%s", why);
	sb = srv_reg_get(r->sub);
	if (!sb)
		return srv_http_error(r->http, 404, "sandbox %s not found", r->sub);
	k = srv_reg_pause(sb, &err);
	srv_sandbox_unref(sb);
	if (k == -EALREADY)
		return srv_http_error(r->http, 409, "sandbox %s is already paused", r->sub);
	if (k == -EOPNOTSUPP)
		return srv_http_error(r->http, 501, "cannot pause sandbox %s: %s (cordon serve pauses "
				      "with the cgroup v2 freezer)", r->sub, err.msg);
	if (k < 0)
		return srv_http_error(r->http, 500, "cannot pause sandbox %s: %s: %s", r->sub,
				      err.step, err.msg);
	return srv_http_text(r->http, 204, NULL, "", 0);
}

/* timeout (set), connect (extend, never shorten; resumes a paused one), refreshes (extend by
 * duration) */
static enum MHD_Result set_timeout(struct srv_req *r, bool extend_only, bool answer_sandbox)
{
	struct cordon_error err = {0};
	const char *why = NULL;
	json_object *body = srv_http_body_json(r->http, &why), *j;
	struct srv_sandbox *sb;
	bool resumed = false;
	uint64_t ttl;
	int64_t end;

	if (!body)
		return srv_http_error(r->http, 400, "bad JSON body: %s", why);
	if (answer_sandbox && memory_false(body, &why)) {
		json_object_put(body);
		return srv_http_error(r->http, 400, "%s", why);
	}
	if (json_object_object_get_ex(body, "duration", &j) &&
	    !json_object_object_get_ex(body, "timeout",
				       NULL)) /* refreshes: {"duration": seconds} */
		json_object_object_add(body, "timeout", json_object_get(j));
	if (timeout_field(body, &ttl, &why) < 0) {
		json_object_put(body);
		return srv_http_error(r->http, 400, "%s", why);
	}
	json_object_put(body);
	sb = srv_reg_get(r->sub);
	if (!sb)
		return srv_http_error(r->http, 404, "sandbox %s not found", r->sub);
	if (answer_sandbox && srv_reg_resume(sb, &resumed, &err) < 0) { /* connect resumes */
		srv_sandbox_unref(sb);
		return srv_http_error(r->http, 500, "cannot resume sandbox %s: %s: %s", r->sub,
				      err.step, err.msg);
	}
	end = srv_now_ms() + (int64_t)(ttl / NSEC_PER_MSEC);
	pthread_mutex_lock(&sb->lock);
	if (sb->paused) { /* the timeout it will have once resumed */
		if (!extend_only || (int64_t)(ttl / NSEC_PER_MSEC) > sb->paused_left_ms)
			sb->paused_left_ms = (int64_t)(ttl / NSEC_PER_MSEC);
	} else if (!extend_only || end > sb->end_ms) {
		sb->end_ms = end;
	}
	pthread_mutex_unlock(&sb->lock);
	srv_sandbox_touch(sb);
	j = answer_sandbox ? sandbox_json(sb, true) : NULL;
	srv_sandbox_unref(sb);
	if (answer_sandbox) /* E2B: 201 when it was resumed, 200 when it ran */
		return srv_http_json(r->http, resumed ? 201 : 200, j);
	return srv_http_text(r->http, 204, NULL, "", 0);
}

enum MHD_Result srv_control_timeout(struct srv_req *r)
{
	return set_timeout(r, false, false);
}

enum MHD_Result srv_control_connect(struct srv_req *r)
{
	return set_timeout(r, true, true);
}

/* The deprecated POST /sandboxes/{id}/resume: E2B's 409 for one that is not paused */
enum MHD_Result srv_control_resume(struct srv_req *r)
{
	struct srv_sandbox *sb = srv_reg_get(r->sub);
	bool paused;

	if (!sb)
		return srv_http_error(r->http, 404, "sandbox %s not found", r->sub);
	paused = srv_sandbox_paused(sb);
	srv_sandbox_unref(sb);
	if (!paused)
		return srv_http_error(r->http, 409, "sandbox %s is not paused", r->sub);
	return set_timeout(r, true, true);
}

enum MHD_Result srv_control_refresh(struct srv_req *r)
{
	return set_timeout(r, true, false);
}

/* A template as E2B's API lists it: its one name, the sandboxes' resources, no build */
static json_object *template_json(const struct srv_template *t)
{
	json_object *j = json_object_new_object(), *names = json_object_new_array();

	add_str(j, "templateID", t->name);
	add_str(j, "buildID", "cordon");
	json_object_array_add(names, json_object_new_string(t->name));
	json_object_object_add(j, "aliases", json_object_get(names));
	json_object_object_add(j, "names", names);
	json_object_object_add(j, "public", json_object_new_boolean(false));
	add_str(j, "buildStatus", "ready");
	json_object_object_add(j, "buildCount", json_object_new_int(1));
	json_object_object_add(j, "spawnCount", json_object_new_int(0));
	json_object_object_add(j, "cpuCount", json_object_new_int64(cpu_count()));
	json_object_object_add(j, "memoryMB", json_object_new_int64(memory_mb()));
	json_object_object_add(j, "diskSizeMB", json_object_new_int64(0));
	add_str(j, "envdVersion", SRV_ENVD_VERSION);
	add_str(j, "createdAt", "1970-01-01T00:00:00.000Z");
	add_str(j, "updatedAt", "1970-01-01T00:00:00.000Z");
	json_object_object_add(j, "lastSpawnedAt", NULL);
	json_object_object_add(j, "createdBy", NULL);
	add_str(j, "cordonRoot", t->source); /* "host", a directory, or oci-archive:PATH */
	return j;
}

enum MHD_Result srv_control_templates(struct srv_req *r)
{
	json_object *a = json_object_new_array();
	const struct srv_template *t;

	for (size_t i = 0; (t = srv_templates_at(i)); i++)
		json_object_array_add(a, template_json(t));
	return srv_http_json(r->http, 200, a);
}

/* Template.exists(name): 200 {templateID, public}, or 404 */
enum MHD_Result srv_control_template_alias(struct srv_req *r)
{
	const struct srv_template *t = srv_templates_find(r->sub);
	json_object *j;

	if (!t)
		return srv_http_error(r->http, 404, "template '%s' not found", r->sub);
	j = json_object_new_object();
	add_str(j, "templateID", t->name);
	json_object_object_add(j, "public", json_object_new_boolean(false));
	return srv_http_json(r->http, 200, j);
}

enum MHD_Result srv_control_health(struct srv_req *r)
{
	return srv_http_text(r->http, 200, "application/json", "{\"status\":\"ok\"}", 15);
}

enum MHD_Result srv_control_unsupported(struct srv_req *r)
{
	return srv_http_error(r->http, 501, "%s %s is not supported by cordon serve", r->method,
			      r->url);
}
