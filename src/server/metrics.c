/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* metrics.c - GET /sandboxes/{id}/metrics: one sample of what the sandbox uses now, in E2B's
 * SandboxMetric shape. CPU and memory are the library's (cordon_session_usage: the sandbox's
 * cgroup, read by its supervisor, where it has one; else its processes, as /proc inside says),
 * over METRICS_WINDOW_MS; the disk is --disk's count of its workdir (disk.c, at most 2 s old;
 * counted here when --disk is off). Runs in the server (connection threads). */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statvfs.h>
#include <time.h>

#include "http.h"
#include "metrics.h"
#include "opts.h"
#include "registry.h"
#include "req.h"
#include "util.h"

#define METRICS_WINDOW_MS 100

/* The workdir's allocated bytes, and the budget (or the state directory's filesystem) */
static void disk_figures(struct srv_sandbox *sb, uint64_t *used, uint64_t *total)
{
	struct cordon_error err;
	struct statvfs v;
	uint64_t entries = 0;

	*used = __atomic_load_n(&sb->disk_bytes, __ATOMIC_RELAXED);
	if (!srv_opts.disk &&
	    cordon_tree_usage(sb->workdir, 256, srv_opts.disk_entries, used, &entries, &err) < 0)
		*used = 0;
	*total = srv_opts.disk;
	if (!*total && statvfs(srv_opts.state_dir, &v) == 0)
		*total = (uint64_t)v.f_blocks * v.f_frsize;
}

/* A query's Unix seconds: -1 when absent, -2 when not a number */
static long long query_secs(struct srv_req *r, const char *name)
{
	const char *s = srv_http_query(r->http, name);
	char *end;
	long long v;

	if (!s)
		return -1;
	errno = 0;
	v = strtoll(s, &end, 10);
	return *s && !*end && !errno && v >= 0 ? v : -2;
}

static json_object *sample_json(const struct cordon_session_usage *u, uint64_t disk_used,
				uint64_t disk_total, time_t now)
{
	json_object *j = json_object_new_object();
	double pct = (double)u->cpu_ns * 100.0 / ((double)u->window_ns * u->cpu_count);
	char t[32];
	struct tm tm;

	if (!j)
		return NULL;
	gmtime_r(&now, &tm);
	strftime(t, sizeof(t), "%Y-%m-%dT%H:%M:%SZ", &tm);
	json_object_object_add(j, "timestamp", json_object_new_string(t));
	json_object_object_add(j, "timestampUnix", json_object_new_int64(now));
	json_object_object_add(j, "cpuCount", json_object_new_int((int)u->cpu_count));
	json_object_object_add(j, "cpuUsedPct",
			       json_object_new_double((double)(long)(pct * 100) / 100));
	json_object_object_add(j, "memUsed", json_object_new_int64((int64_t)u->mem_used));
	json_object_object_add(j, "memTotal", json_object_new_int64((int64_t)u->mem_total));
	json_object_object_add(j, "memCache", json_object_new_int64((int64_t)u->mem_cache));
	json_object_object_add(j, "diskUsed", json_object_new_int64((int64_t)disk_used));
	json_object_object_add(j, "diskTotal", json_object_new_int64((int64_t)disk_total));
	return j;
}

enum MHD_Result srv_metrics_get(struct srv_req *r)
{
	struct srv_sandbox *sb;
	struct cordon_session_usage u;
	struct cordon_error err = {0};
	long long start = query_secs(r, "start"), end = query_secs(r, "end");
	uint64_t used, total;
	time_t now = time(NULL);
	json_object *arr;
	bool paused;
	int k;

	if (start == -2 || end == -2)
		return srv_http_error(r->http, 400, "start and end are Unix seconds");
	sb = srv_reg_get(r->sub);
	if (!sb)
		return srv_http_error(r->http, 404, "sandbox %s not found", r->sub);
	pthread_mutex_lock(&sb->lock);
	paused = sb->paused;
	pthread_mutex_unlock(&sb->lock);
	if (paused) { /* frozen: nothing runs to sample (and its agent would not answer) */
		srv_sandbox_unref(sb);
		return srv_http_json(r->http, 200, json_object_new_array());
	}
	k = cordon_session_usage(sb->session, METRICS_WINDOW_MS, &u, &err);
	disk_figures(sb, &used, &total);
	srv_sandbox_unref(sb);
	if (k < 0)
		return srv_http_error(r->http, k == -ESRCH ? 404 : 500, "sandbox %s: %s", r->sub,
				      err.msg);
	arr = json_object_new_array();
	/* one sample, now: none when the interval asked for lies elsewhere */
	if (arr && (start < 0 || start <= now) && (end < 0 || end >= now))
		json_object_array_add(arr, sample_json(&u, used, total, now));
	return srv_http_json(r->http, 200, arr);
}
