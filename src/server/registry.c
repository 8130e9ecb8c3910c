/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* registry.c - the sandboxes table: lookup by id, references, the limit on their number, the
 * reaper thread (timeouts, idle TTL, sessions that ended on their own) and the kill, which
 * waits for the sandbox's users to let go before it destroys the session. The reaper never
 * waits on a sandbox: each it ends is destroyed by a thread of its own, so that one whose users
 * are slow to let go (a client that stopped reading a stream) holds back no other. Runs in the
 * server. */
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>

#include "rmtree.h"
#include "server.h"
#include "util.h"

static pthread_mutex_t table_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t reaper_cond = PTHREAD_COND_INITIALIZER;
static struct cd_sandbox *table;
static unsigned n_live, n_reserved;
static bool stopping;
static pthread_t reaper;
static bool reaper_started;
static unsigned n_destroying; /* destroyer threads running (table_lock) */

int64_t cd_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int cd_reg_reserve(void)
{
	int r = 0;

	pthread_mutex_lock(&table_lock);
	if (stopping)
		r = -ESHUTDOWN;
	else if (cd_opts.max_sandboxes && n_live + n_reserved >= cd_opts.max_sandboxes)
		r = -EBUSY;
	else
		n_reserved++;
	pthread_mutex_unlock(&table_lock);
	return r;
}

void cd_reg_unreserve(void)
{
	pthread_mutex_lock(&table_lock);
	n_reserved--;
	pthread_mutex_unlock(&table_lock);
}

/* Called with a reservation, which becomes the sandbox's slot. */
int cd_reg_add(struct cd_sandbox *sb)
{
	pthread_mutex_lock(&table_lock);
	n_reserved--;
	if (stopping) {
		pthread_mutex_unlock(&table_lock);
		return -ESHUTDOWN;
	}
	sb->refs = 1;
	sb->next = table;
	table = sb;
	n_live++;
	pthread_mutex_unlock(&table_lock);
	return 0;
}

void cd_sandbox_ref(struct cd_sandbox *sb)
{
	pthread_mutex_lock(&sb->lock);
	sb->refs++;
	pthread_mutex_unlock(&sb->lock);
}

void cd_sandbox_unref(struct cd_sandbox *sb)
{
	pthread_mutex_lock(&sb->lock);
	sb->refs--;
	pthread_cond_broadcast(&sb->cond);
	pthread_mutex_unlock(&sb->lock);
}

void cd_sandbox_touch(struct cd_sandbox *sb)
{
	pthread_mutex_lock(&sb->lock);
	sb->last_used_ns = cd_now_ns();
	pthread_mutex_unlock(&sb->lock);
}

/* The sandbox called id, or NULL; table_lock held. */
static struct cd_sandbox *find_locked(const char *id)
{
	struct cd_sandbox *sb;

	for (sb = table; sb; sb = sb->next)
		if (strcmp(sb->id, id) == 0)
			break;
	return sb;
}

struct cd_sandbox *cd_reg_get(const char *id)
{
	struct cd_sandbox *sb;

	pthread_mutex_lock(&table_lock);
	sb = find_locked(id);
	if (sb)
		cd_sandbox_ref(sb);
	pthread_mutex_unlock(&table_lock);
	return sb;
}

int cd_reg_snapshot(struct cd_sandbox ***ret, size_t *ret_n)
{
	struct cd_sandbox **v, *sb;
	size_t n = 0;

	pthread_mutex_lock(&table_lock);
	v = calloc(n_live + 1, sizeof(*v));
	if (!v) {
		pthread_mutex_unlock(&table_lock);
		return -ENOMEM;
	}
	for (sb = table; sb; sb = sb->next) {
		cd_sandbox_ref(sb);
		v[n++] = sb;
	}
	pthread_mutex_unlock(&table_lock);
	*ret = v;
	*ret_n = n;
	return 0;
}

void cd_sandbox_free(struct cd_sandbox *sb)
{
	if (!sb)
		return;
	free(sb->template_id);
	free(sb->workdir);
	cd_strv_free(sb->env);
	json_object_put(sb->metadata);
	json_object_put(sb->env_vars);
	if (sb->dying_fd >= 0)
		close(sb->dying_fd);
	pthread_mutex_destroy(&sb->lock);
	pthread_cond_destroy(&sb->cond);
	free(sb);
}

static struct cd_sandbox *unlink_locked(struct cd_sandbox *target)
{
	for (struct cd_sandbox **p = &table; *p; p = &(*p)->next)
		if (*p == target) {
			*p = target->next;
			n_live--;
			return target;
		}
	return NULL;
}

/* Every wait on the sandbox (pumps, streams, writes into it) polls dying_fd: they all let go. */
static void doom(struct cd_sandbox *sb)
{
	uint64_t one = 1;

	if (__atomic_exchange_n(&sb->dying, true, __ATOMIC_RELAXED)) /* read without the lock */
		return;
	if (write(sb->dying_fd, &one, sizeof(one)) < 0)
		cd_log("sandbox %s: eventfd: %m", sb->id);
}

/* The table's reference is ours now: stop everything, wait for the users, destroy. */
static void destroy(struct cd_sandbox *sb, const char *why)
{
	struct cordon_error err = {0};
	struct cordon_result res;

	doom(sb);
	pthread_mutex_lock(&sb->lock);
	while (sb->refs > 1)
		pthread_cond_wait(&sb->cond, &sb->lock);
	pthread_mutex_unlock(&sb->lock);
	cd_interp_kill_all(sb);
	cd_procs_kill_all(sb);
	if (cordon_session_destroy(sb->session, &res, &err) < 0) {
		cd_log("sandbox %s: teardown: %s: %s", sb->id, err.step, err.msg);
		/* a supervisor that died (killed alone) could not remove the workdir: every process
		 * of the sandbox died with it (pid 1's parent-death signal) */
		if (!cd_opts.keep_workdirs && sb->workdir && res.id[0] == '\0' &&
		    cd_rmtree_path(sb->workdir, &sb->workdir_st) == 0)
			cd_log("sandbox %s: its workdir removed by the server", sb->id);
	}
	cd_log("sandbox %s: ended (%s)", sb->id, why);
	cd_sandbox_free(sb);
}

struct destroyer {
	struct cd_sandbox *sb;
	const char *why; /* a literal */
};

static void *destroyer_main(void *arg)
{
	struct destroyer *d = arg;

	destroy(d->sb, d->why);
	free(d);
	pthread_mutex_lock(&table_lock);
	n_destroying--;
	pthread_cond_broadcast(&reaper_cond);
	pthread_mutex_unlock(&table_lock);
	return NULL;
}

/* Unlinked already: doomed now, destroyed by a thread of its own (or here, when no thread can
 * be made: then, and only then, the caller waits). */
static void destroy_later(struct cd_sandbox *sb, const char *why)
{
	struct destroyer *d = malloc(sizeof(*d));
	pthread_attr_t attr;
	pthread_t t;
	int r = ENOMEM;

	doom(sb);
	if (d) {
		*d = (struct destroyer){.sb = sb, .why = why};
		pthread_mutex_lock(&table_lock);
		n_destroying++;
		pthread_mutex_unlock(&table_lock);
		pthread_attr_init(&attr);
		pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
		pthread_attr_setstacksize(&attr, 256 * 1024);
		r = pthread_create(&t, &attr, destroyer_main, d);
		pthread_attr_destroy(&attr);
	}
	if (r == 0)
		return;
	if (d) {
		free(d);
		pthread_mutex_lock(&table_lock);
		n_destroying--;
		pthread_mutex_unlock(&table_lock);
	}
	destroy(sb, why);
}

static struct cd_sandbox *take(const char *id)
{
	struct cd_sandbox *sb;

	pthread_mutex_lock(&table_lock);
	sb = find_locked(id);
	if (sb)
		unlink_locked(sb);
	pthread_mutex_unlock(&table_lock);
	return sb;
}

int cd_reg_kill(const char *id)
{
	struct cd_sandbox *sb = take(id);

	if (!sb)
		return -ENOENT;
	destroy(sb, "killed");
	return 0;
}

int cd_reg_kill_later(const char *id, const char *why)
{
	struct cd_sandbox *sb = take(id);

	if (!sb)
		return -ENOENT;
	destroy_later(sb, why);
	return 0;
}

static const char *expired(struct cd_sandbox *sb, int64_t now_ms, uint64_t now_ns)
{
	struct pollfd p = {.fd = cordon_session_fd(sb->session), .events = POLLIN};
	const char *why = NULL;

	pthread_mutex_lock(&sb->lock);
	if (sb->end_ms <= now_ms)
		why = "timeout";
	else if (cd_opts.idle_ttl_ns && now_ns - sb->last_used_ns >= cd_opts.idle_ttl_ns)
		why = "idle";
	pthread_mutex_unlock(&sb->lock);
	if (!why && poll(&p, 1, 0) > 0)
		why = "the session ended on its own";
	return why;
}

static void *reaper_main(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&table_lock);
	while (!stopping) {
		struct timespec ts;
		struct cd_sandbox *sb, *next;
		const char *why = NULL;

		for (sb = table; sb; sb = next) {
			next = sb->next;
			why = expired(sb, cd_now_ms(), cd_now_ns());
			if (why)
				break;
		}
		if (sb) { /* handed to a destroyer: the reaper goes on at once */
			unlink_locked(sb);
			pthread_mutex_unlock(&table_lock);
			destroy_later(sb, why);
			pthread_mutex_lock(&table_lock);
			continue;
		}
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_sec += 1;
		pthread_cond_timedwait(&reaper_cond, &table_lock, &ts);
	}
	pthread_mutex_unlock(&table_lock);
	return NULL;
}

int cd_reg_start(struct cordon_error *err)
{
	int r = pthread_create(&reaper, NULL, reaper_main, NULL);

	if (r)
		return cd_fail_errno(err, r, "serve", "reaper thread");
	reaper_started = true;
	return 0;
}

void cd_reg_stop(void)
{
	struct cd_sandbox *sb;

	pthread_mutex_lock(&table_lock);
	stopping = true;
	pthread_cond_broadcast(&reaper_cond);
	pthread_mutex_unlock(&table_lock);
	if (reaper_started)
		pthread_join(reaper, NULL);
	for (;;) { /* all at once: each waits for its own users only */
		pthread_mutex_lock(&table_lock);
		sb = table;
		if (sb)
			unlink_locked(sb);
		pthread_mutex_unlock(&table_lock);
		if (!sb)
			break;
		destroy_later(sb, "server stopping");
	}
}

void cd_reg_wait(void)
{
	pthread_mutex_lock(&table_lock);
	while (n_destroying)
		pthread_cond_wait(&reaper_cond, &table_lock);
	pthread_mutex_unlock(&table_lock);
}

/* A new sandbox's common part; the caller fills the rest. */
struct cd_sandbox *cd_sandbox_new(void)
{
	struct cd_sandbox *sb = calloc(1, sizeof(*sb));

	if (!sb)
		return NULL;
	sb->dying_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	pthread_mutex_init(&sb->lock, NULL);
	pthread_cond_init(&sb->cond, NULL);
	if (sb->dying_fd < 0) {
		cd_sandbox_free(sb);
		return NULL;
	}
	return sb;
}
