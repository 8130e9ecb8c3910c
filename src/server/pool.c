/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * pool.c - sandboxes made ahead of time (--pool N): a create takes one that is ready, and a
 * thread makes the next meanwhile, so that create-to-first-command costs no sandbox setup. A
 * pooled sandbox is made from the server's options alone (sbconfig.c); what a
 * create asks for that differs per sandbox (its id, its envVars) reaches its commands at each
 * exec (srv_sandbox.env), never through the config. Pooled sandboxes are not in the table and not
 * counted by --max-sandboxes; they are destroyed with the server. Runs in the server: its own
 * thread makes them (through fresh.c), connection threads take them.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <time.h>
#include <string.h>

#include "fresh.h"
#include "opts.h"
#include "pool.h"
#include "util.h"

static struct {
	pthread_mutex_t lock;
	pthread_cond_t cond; /* a take left room, or the end */
	struct srv_fresh *ready;
	size_t n, want;
	bool stopping;
	pthread_t thread;
	bool started;
} pool = { .lock = PTHREAD_MUTEX_INITIALIZER, .cond = PTHREAD_COND_INITIALIZER };

static void *filler(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&pool.lock);
	while (!pool.stopping) {
		struct cordon_error err = { 0 };
		struct srv_fresh p = {0};
		int r;

		if (pool.n >= pool.want) {
			pthread_cond_wait(&pool.cond, &pool.lock);
			continue;
		}
		pthread_mutex_unlock(&pool.lock);
		r = srv_fresh_make(NULL, &p, &err);
		pthread_mutex_lock(&pool.lock);
		if (r < 0) {
			struct timespec t;

			srv_log("pool: cannot make a sandbox ahead: %s: %s", err.step, err.msg);
			/* not in a loop: a second later (or at the end) */
			clock_gettime(CLOCK_REALTIME, &t);
			t.tv_sec += 1;
			pthread_cond_timedwait(&pool.cond, &pool.lock, &t);
			continue;
		}
		if (pool.stopping) {
			pthread_mutex_unlock(&pool.lock);
			srv_fresh_drop(&p);
			pthread_mutex_lock(&pool.lock);
			break;
		}
		pool.ready[pool.n++] = p;
	}
	pthread_mutex_unlock(&pool.lock);
	return NULL;
}

int srv_pool_start(unsigned n, struct cordon_error *err)
{
	int r;

	if (!n)
		return 0;
	pool.ready = calloc(n, sizeof(*pool.ready));
	if (!pool.ready)
		return cd_fail(err, ENOMEM, "pool", "out of memory");
	pool.want = n;
	r = pthread_create(&pool.thread, NULL, filler, NULL);
	if (r)
		return cd_fail(err, r, "pool", "cannot start its thread");
	pool.started = true;
	return 0;
}

bool srv_pool_take(struct srv_fresh *ret)
{
	bool got = false;

	pthread_mutex_lock(&pool.lock);
	if (pool.n) {
		/* the oldest: each has waited since it was made, none for ever */
		*ret = pool.ready[0];
		memmove(pool.ready, pool.ready + 1, --pool.n * sizeof(*pool.ready));
		got = true;
		pthread_cond_signal(&pool.cond);
	}
	pthread_mutex_unlock(&pool.lock);
	return got;
}

void srv_pool_stop(void)
{
	if (!pool.started)
		return;
	pthread_mutex_lock(&pool.lock);
	pool.stopping = true;
	pthread_cond_broadcast(&pool.cond);
	pthread_mutex_unlock(&pool.lock);
	pthread_join(pool.thread, NULL);
	while (pool.n)
		srv_fresh_drop(&pool.ready[--pool.n]);
	free(pool.ready);
	pool.ready = NULL;
	pool.started = false;
}
