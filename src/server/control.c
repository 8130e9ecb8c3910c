/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* control.c - the control plane, E2B's REST API as the SDK calls it: create (POST /sandboxes,
 * /v2/sandboxes), list, get, kill, timeout, connect, refreshes. JSON bodies checked field by
 * field; the API key was checked by http.c. Runs in the server (connection threads). */
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
#include "opts.h"
#include "pool.h"
#include "registry.h"
#include "req.h"
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

/* The fields of a sandbox in create's, get's and list's answers. */
static json_object *sandbox_json(struct srv_sandbox *sb, bool secrets)
{
	json_object *j = json_object_new_object();
	char t[64];

	if (!j)
		return NULL;
	add_str(j, "sandboxID", sb->id);
	add_str(j, "templateID", sb->template_id);
	add_str(j, "clientID", "cordon");
	add_str(j, "envdVersion", SRV_ENVD_VERSION);
	pthread_mutex_lock(&sb->lock);
	rfc3339(sb->started_ms, t);
	add_str(j, "startedAt", t);
	rfc3339(sb->end_ms, t);
	add_str(j, "endAt", t);
	pthread_mutex_unlock(&sb->lock);
	add_str(j, "state", "running");
	json_object_object_add(
	    j, "cpuCount",
	    json_object_new_int64(srv_opts.millicpus ? (int64_t)((srv_opts.millicpus + 999) / 1000)
						     : sysconf(_SC_NPROCESSORS_ONLN)));
	json_object_object_add(
	    j, "memoryMB",
	    json_object_new_int64(
		(int64_t)((srv_opts.memory ? srv_opts.memory : 4ull << 30) >> 20)));
	json_object_object_add(j, "diskSizeMB", json_object_new_int64(0));
	json_object_object_add(j, "metadata", json_object_get(sb->metadata));
	json_object_object_add(j, "domain", NULL);
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

/* One made ahead when there is one (--pool), else a new one. */
static int start_session(struct srv_sandbox *sb, struct cordon_error *err)
{
	struct srv_fresh p = {0};
	int r = sandbox_env(sb);

	if (r < 0)
		return cd_fail(err, -r, "env", "out of memory");
	if (!srv_pool_take(&p)) {
		r = srv_fresh_make(&p, err);
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

static int parse_create(struct srv_sandbox *sb, json_object *body, uint64_t *ttl, const char **why)
{
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
	return timeout_field(body, ttl, why);
}

enum MHD_Result srv_control_create(struct srv_req *r)
{
	struct cordon_error err = {0};
	const char *why = NULL;
	json_object *body = srv_http_body_json(r->http, &why);
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
	k = srv_reg_reserve();
	if (k < 0) {
		srv_sandbox_free(sb);
		return k == -EBUSY
			   ? srv_http_error(r->http, 429, "too many sandboxes (--max-sandboxes %u)",
					    srv_opts.max_sandboxes)
			   : srv_http_error(r->http, 503, "the server is stopping");
	}
	if (srv_auth_random(sb->id, 20, SRV_AUTH_ID_ALPHABET) < 0 ||
	    srv_auth_random(sb->token, 40, "0123456789abcdef") < 0 || start_session(sb, &err) < 0) {
		srv_reg_unreserve();
		srv_sandbox_free(sb);
		srv_log("create: %s: %s", err.step, err.msg);
		return srv_http_error(r->http, 500, "cannot create the sandbox: %s: %s", err.step,
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

enum MHD_Result srv_control_list(struct srv_req *r)
{
	const char *state = srv_http_query(r->http, "state");
	const char *meta = srv_http_query(r->http, "metadata");
	json_object *a = json_object_new_array();
	struct srv_sandbox **v;
	size_t n;

	if (!a || srv_reg_snapshot(&v, &n) < 0) {
		json_object_put(a);
		return srv_http_error(r->http, 500, "out of memory");
	}
	for (size_t i = 0; i < n; i++) {
		if ((!state || strstr(state, "running")) && metadata_matches(v[i], meta))
			json_object_array_add(a, sandbox_json(v[i], false));
		srv_sandbox_unref(v[i]);
	}
	free(v);
	return srv_http_json(r->http, 200, a);
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

/* timeout (set), connect (extend, never shorten), refreshes (extend by duration) */
static enum MHD_Result set_timeout(struct srv_req *r, bool extend_only, bool answer_sandbox)
{
	const char *why = NULL;
	json_object *body = srv_http_body_json(r->http, &why), *j;
	struct srv_sandbox *sb;
	uint64_t ttl;
	int64_t end;

	if (!body)
		return srv_http_error(r->http, 400, "bad JSON body: %s", why);
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
	end = srv_now_ms() + (int64_t)(ttl / NSEC_PER_MSEC);
	pthread_mutex_lock(&sb->lock);
	if (!extend_only || end > sb->end_ms)
		sb->end_ms = end;
	pthread_mutex_unlock(&sb->lock);
	srv_sandbox_touch(sb);
	j = answer_sandbox ? sandbox_json(sb, true) : NULL;
	srv_sandbox_unref(sb);
	if (answer_sandbox)
		return srv_http_json(r->http, 200, j);
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

enum MHD_Result srv_control_refresh(struct srv_req *r)
{
	return set_timeout(r, true, false);
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
