/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * disk.c - --disk SIZE: a sandbox whose workdir holds more than SIZE (bytes allocated), or more
 * than --disk-entries entries, is killed. A thread counts every workdir on the host every two
 * seconds (cordon_tree_usage: through descriptors, no symlink followed), so a sandbox can pass
 * its budget for at most that long; RLIMIT_FSIZE does not apply (one big file is allowed up to
 * the budget). Runs in the server: its own thread.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "disk.h"
#include "opts.h"
#include "registry.h"
#include "util.h"

#define DISK_DEPTH 256 /* a tree deeper than this is over any budget */

static struct {
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	bool started, stopping;
} disk = { .lock = PTHREAD_MUTEX_INITIALIZER, .cond = PTHREAD_COND_INITIALIZER };

/* Over budget: why, else NULL. */
static const char *over(struct srv_sandbox *sb, char *buf, size_t size)
{
	struct cordon_error err;
	uint64_t bytes = 0, entries = 0;
	int r = cordon_tree_usage(sb->workdir, DISK_DEPTH, srv_opts.disk_entries, &bytes, &entries,
				  &err);

	if (r == -E2BIG) {
		snprintf(buf, size, "disk: more than %llu entries, or deeper than %d levels",
			 (unsigned long long)srv_opts.disk_entries, DISK_DEPTH);
		return buf;
	}
	if (r < 0)
		return NULL; /* gone meanwhile (a kill): nothing to say */
	__atomic_store_n(&sb->disk_bytes, bytes, __ATOMIC_RELAXED); /* its metrics' (metrics.c) */
	if (bytes > srv_opts.disk) {
		snprintf(buf, size, "disk: %llu bytes in its workdir, over --disk %llu",
			 (unsigned long long)bytes, (unsigned long long)srv_opts.disk);
		return buf;
	}
	return NULL;
}

static void check_all(void)
{
	struct srv_sandbox **v = NULL;
	size_t n = 0;

	if (srv_reg_snapshot(&v, &n) < 0)
		return;
	for (size_t i = 0; i < n; i++) {
		char why[160], id[sizeof(v[i]->id)];

		if (over(v[i], why, sizeof(why))) {
			memcpy(id, v[i]->id, sizeof(id));
			srv_log("sandbox %s: %s: killed", id, why);
			srv_sandbox_unref(v[i]);
			v[i] = NULL;
			srv_reg_kill_later(id, "over its disk budget");
			continue;
		}
		srv_sandbox_unref(v[i]);
	}
	free(v);
}

static void *watch(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&disk.lock);
	while (!disk.stopping) {
		struct timespec t;

		pthread_mutex_unlock(&disk.lock);
		check_all();
		pthread_mutex_lock(&disk.lock);
		clock_gettime(CLOCK_REALTIME, &t);
		t.tv_sec += 2;
		pthread_cond_timedwait(&disk.cond, &disk.lock, &t);
	}
	pthread_mutex_unlock(&disk.lock);
	return NULL;
}

int srv_disk_start(struct cordon_error *err)
{
	int r;

	if (!srv_opts.disk)
		return 0;
	r = pthread_create(&disk.thread, NULL, watch, NULL);
	if (r)
		return cd_fail(err, r, "disk", "cannot start its thread");
	disk.started = true;
	return 0;
}

void srv_disk_stop(void)
{
	if (!disk.started)
		return;
	pthread_mutex_lock(&disk.lock);
	disk.stopping = true;
	pthread_cond_broadcast(&disk.cond);
	pthread_mutex_unlock(&disk.lock);
	pthread_join(disk.thread, NULL);
	disk.started = false;
}
