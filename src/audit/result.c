/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* result.c - a run's result (struct cordon_result) as JSON: the report's top and the audit
 * trail's exit event say it alike. Pure. Runs in the supervisor. */
#include <string.h>

#include "cordon.h"
#include "json.h"
#include "result.h"

static const char *outcome_name(enum cordon_outcome o)
{
	switch (o) {
	case CORDON_OUTCOME_EXITED:
		return "exited";
	case CORDON_OUTCOME_SIGNALED:
		return "signaled";
	case CORDON_OUTCOME_TIMEOUT:
		return "timeout";
	case CORDON_OUTCOME_OOM:
		return "oom";
	case CORDON_OUTCOME_SETUP_ERROR:
	default:
		return "setup-error";
	}
}

static void kv_uint_or_null(struct cd_json *j, const char *key, bool have, uint64_t v)
{
	cd_json_key(j, key);
	if (have)
		cd_json_uint(j, v);
	else
		cd_json_null(j);
}

/* from the sandbox's cgroup; null without one */
static void render_cgroup_usage(struct cd_json *j, const struct cordon_result *res)
{
	bool c = res->has_cgroup_usage;

	kv_uint_or_null(j, "memory_peak_bytes", c && res->memory_peak_bytes, res->memory_peak_bytes);
	kv_uint_or_null(j, "cpu_user_us", c, res->cgroup_user_ns / 1000);
	kv_uint_or_null(j, "cpu_system_us", c, res->cgroup_system_ns / 1000);
	kv_uint_or_null(j, "pids_peak", c && res->pids_peak, res->pids_peak);
	kv_uint_or_null(j, "oom_kills", c, res->oom_kills);
}

/* the egress proxy's decisions; null when it did not run */
static void render_proxy(struct cd_json *j, const struct cordon_result *res)
{
	const struct cordon_proxy_counts *p = &res->proxy;

	cd_json_key(j, "proxy");
	if (!res->has_proxy) {
		cd_json_null(j);
		return;
	}
	cd_json_object_begin(j);
	cd_json_kv_uint(j, "connections", p->connections);
	cd_json_kv_uint(j, "allowed", p->allowed);
	cd_json_kv_uint(j, "refused", p->refused);
	cd_json_kv_uint(j, "failed", p->failed);
	cd_json_kv_uint(j, "malformed", p->malformed);
	cd_json_kv_uint(j, "over_cap", p->over_cap);
	cd_json_kv_uint(j, "timed_out", p->timed_out);
	cd_json_kv_uint(j, "bytes_up", p->bytes_up);
	cd_json_kv_uint(j, "bytes_down", p->bytes_down);
	cd_json_object_end(j);
}

/* --capture's copies; null when it was off */
static void render_capture(struct cd_json *j, const struct cordon_result *res)
{
	cd_json_key(j, "capture");
	if (!res->has_capture) {
		cd_json_null(j);
		return;
	}
	cd_json_object_begin(j);
	cd_json_kv_uint(j, "stdout_bytes", res->capture_bytes[0]);
	cd_json_kv_uint(j, "stderr_bytes", res->capture_bytes[1]);
	cd_json_kv_bool(j, "truncated", res->capture_truncated);
	cd_json_object_end(j);
}

/* --cow's layer: its id (null when nothing changed, or the save failed: error says why); null
 * for a direct workdir (nothing to keep). The id is what cordon diff, apply and discard take. */
static void render_layer(struct cd_json *j, const struct cordon_result *res)
{
	cd_json_key(j, "layer");
	if (!res->layer_id[0] && !res->layer_error.step[0]) {
		cd_json_null(j);
		return;
	}
	cd_json_object_begin(j);
	if (res->layer_id[0])
		cd_json_kv_string(j, "id", res->layer_id);
	else
		cd_json_key(j, "id"), cd_json_null(j);
	cd_json_kv_uint(j, "changes", res->layer_changes);
	cd_json_kv_uint(j, "skipped", res->layer_skipped);
	cd_json_kv_bool(j, "full", res->layer_full);
	if (res->layer_error.step[0])
		cd_json_kv_string(j, "error", res->layer_error.msg);
	else
		cd_json_key(j, "error"), cd_json_null(j);
	cd_json_object_end(j);
}

void cd_audit_render_result(struct cd_json *j, const struct cordon_result *res)
{
	cd_json_kv_string(j, "outcome", outcome_name(res->outcome));
	cd_json_kv_int(j, "exit_code", res->exit_code);
	cd_json_key(j, "status");
	if (res->outcome == CORDON_OUTCOME_EXITED)
		cd_json_int(j, res->status);
	else
		cd_json_null(j);
	cd_json_key(j, "signal");
	if (res->signal)
		cd_json_int(j, res->signal);
	else
		cd_json_null(j);
	cd_json_kv_uint(j, "startup_us", res->startup_ns / 1000);
	cd_json_kv_uint(j, "wall_us", res->wall_ns / 1000);
	cd_json_kv_uint(j, "user_us", res->user_ns / 1000);
	cd_json_kv_uint(j, "system_us", res->system_ns / 1000);
	cd_json_kv_uint(j, "max_rss_kb", res->max_rss_kb);
	render_cgroup_usage(j, res);
	render_proxy(j, res);
	render_capture(j, res);
	render_layer(j, res);
	cd_json_key(j, "error");
	/* after the command ran, an error is cordon's own failure since (the audit trail) */
	if (res->outcome != CORDON_OUTCOME_SETUP_ERROR && !res->error.step[0]) {
		cd_json_null(j);
		return;
	}
	cd_json_object_begin(j);
	cd_json_kv_string(j, "step", res->error.step);
	cd_json_kv_int(j, "errno", res->error.code);
	cd_json_kv_string(j, "message", res->error.msg);
	cd_json_object_end(j);
}

