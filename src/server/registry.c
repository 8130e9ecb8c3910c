/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* registry.c - the sandboxes table: lookup by id, references, the limit on their number, the
 * reaper thread (timeouts, idle TTL, --max-paused-ttl, sessions that ended on their own; an
 * autoPause sandbox at its timeout is paused by a thread of its own), pause and resume (the
 * library's freezer), and the kill: the
 * sandbox's processes are killed at once, then its users get SRV_DRAIN_NS to let go (past it
 * their connections are shut down), then the session is destroyed; its --max-sandboxes slot is
 * held until then. The reaper never waits on a sandbox: each it ends is destroyed by a thread of
 * its own, so that one whose users are slow to let go (a client that stopped reading a stream)
 * holds back no other. Runs in the server. */
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <time.h>

#include "opts.h"
#include "registry.h"
#include "rmtree.h"
#include "util.h"

static pthread_mutex_t table_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t reaper_cond = PTHREAD_COND_INITIALIZER;
static struct srv_sandbox *table;
static unsigned n_live, n_reserved;
/* sandboxes out of the table, being destroyed: they hold their slots (table_lock) */
static struct srv_sandbox *dying;
static unsigned n_dying;
static bool stopping;
static pthread_t reaper;
static bool reaper_started;
static unsigned n_destroying; /* destroyer threads running (table_lock) */
/* who is told of a sandbox's end (set before the reaper starts, read-only after) */
#define LISTENERS_MAX 8
static struct {
	srv_death_fn fn;
	void *ctx;
} listeners[LISTENERS_MAX];
static unsigned n_listeners;

int srv_reg_on_death(srv_death_fn fn, void *ctx, struct cordon_error *err)
{
	if (n_listeners >= LISTENERS_MAX)
		return cd_fail(err, ENOSPC, "serve", "more than %d listeners of a sandbox's end",
			       LISTENERS_MAX);
	listeners[n_listeners].fn = fn;
	listeners[n_listeners].ctx = ctx;
	n_listeners++;
	return 0;
}

int srv_reg_reserve(void)
{
	int r = 0;

	pthread_mutex_lock(&table_lock);
	if (stopping)
		r = -ESHUTDOWN;
	else if (srv_opts.max_sandboxes && n_live + n_reserved + n_dying >= srv_opts.max_sandboxes)
		r = -EBUSY;
	else
		n_reserved++;
	pthread_mutex_unlock(&table_lock);
	return r;
}

void srv_reg_unreserve(void)
{
	pthread_mutex_lock(&table_lock);
	n_reserved--;
	pthread_mutex_unlock(&table_lock);
}

/* Called with a reservation, which becomes the sandbox's slot. */
int srv_reg_add(struct srv_sandbox *sb)
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

void srv_sandbox_ref(struct srv_sandbox *sb)
{
	pthread_mutex_lock(&sb->lock);
	sb->refs++;
	pthread_mutex_unlock(&sb->lock);
}

void srv_sandbox_unref(struct srv_sandbox *sb)
{
	pthread_mutex_lock(&sb->lock);
	sb->refs--;
	pthread_cond_broadcast(&sb->cond);
	pthread_mutex_unlock(&sb->lock);
}

void srv_sandbox_touch(struct srv_sandbox *sb)
{
	pthread_mutex_lock(&sb->lock);
	sb->last_used_ns = cd_now_ns();
	pthread_mutex_unlock(&sb->lock);
}

void srv_sandbox_attach(struct srv_sandbox *sb, struct srv_hold *h, int fd)
{
	h->fd = fd;
	pthread_mutex_lock(&sb->lock);
	h->prev = NULL;
	h->next = sb->holds;
	if (sb->holds)
		sb->holds->prev = h;
	sb->holds = h;
	pthread_mutex_unlock(&sb->lock);
}

void srv_sandbox_detach(struct srv_sandbox *sb, struct srv_hold *h)
{
	pthread_mutex_lock(&sb->lock);
	if (h->prev)
		h->prev->next = h->next;
	else if (sb->holds == h)
		sb->holds = h->next;
	if (h->next)
		h->next->prev = h->prev;
	h->prev = h->next = NULL;
	pthread_mutex_unlock(&sb->lock);
}

/* The sandbox called id, or NULL; table_lock held. */
static struct srv_sandbox *find_locked(const char *id)
{
	struct srv_sandbox *sb;

	for (sb = table; sb; sb = sb->next)
		if (strcmp(sb->id, id) == 0)
			break;
	return sb;
}

struct srv_sandbox *srv_reg_get(const char *id)
{
	struct srv_sandbox *sb;

	pthread_mutex_lock(&table_lock);
	sb = find_locked(id);
	if (sb)
		srv_sandbox_ref(sb);
	pthread_mutex_unlock(&table_lock);
	return sb;
}

int srv_reg_snapshot(struct srv_sandbox ***ret, size_t *ret_n)
{
	struct srv_sandbox **v, *sb;
	size_t n = 0;

	pthread_mutex_lock(&table_lock);
	v = calloc(n_live + 1, sizeof(*v));
	if (!v) {
		pthread_mutex_unlock(&table_lock);
		return -ENOMEM;
	}
	for (sb = table; sb; sb = sb->next) {
		srv_sandbox_ref(sb);
		v[n++] = sb;
	}
	pthread_mutex_unlock(&table_lock);
	*ret = v;
	*ret_n = n;
	return 0;
}

void srv_sandbox_free(struct srv_sandbox *sb)
{
	if (!sb)
		return;
	free(sb->template_id);
	free(sb->workdir);
	cd_strv_free(sb->env);
	json_object_put(sb->metadata);
	json_object_put(sb->env_vars);
	json_object_put(sb->network);
	cd_strv_free(sb->allow_net);
	if (sb->dying_fd >= 0)
		close(sb->dying_fd);
	pthread_mutex_destroy(&sb->lock);
	pthread_mutex_destroy(&sb->pause_lock);
	pthread_cond_destroy(&sb->cond);
	free(sb);
}

/* Out of the table (no new request finds it) into the dying list: its slot stays taken. */
static struct srv_sandbox *unlink_locked(struct srv_sandbox *target)
{
	for (struct srv_sandbox **p = &table; *p; p = &(*p)->next)
		if (*p == target) {
			*p = target->next;
			n_live--;
			target->next = dying;
			dying = target;
			n_dying++;
			return target;
		}
	return NULL;
}

/* Destroyed: its slot is free. */
static void forget(struct srv_sandbox *target)
{
	pthread_mutex_lock(&table_lock);
	for (struct srv_sandbox **p = &dying; *p; p = &(*p)->next)
		if (*p == target) {
			*p = target->next;
			n_dying--;
			break;
		}
	pthread_cond_broadcast(&reaper_cond);
	pthread_mutex_unlock(&table_lock);
}

static bool is_dying(const char *id)
{
	bool found = false;

	for (struct srv_sandbox *sb = dying; sb && !found; sb = sb->next)
		found = strcmp(sb->id, id) == 0;
	return found;
}

/* Every wait on the sandbox (pumps, streams, writes into it) polls dying_fd: they all let go. */
static void doom(struct srv_sandbox *sb)
{
	uint64_t one = 1;

	if (__atomic_exchange_n(&sb->dying, true, __ATOMIC_RELAXED)) /* read without the lock */
		return;
	if (write(sb->dying_fd, &one, sizeof(one)) < 0)
		srv_log("sandbox %s: eventfd: %m", sb->id);
}

/* Wait until the table's reference is the last, or until end (monotonic): true if it is. */
static bool users_gone(struct srv_sandbox *sb, uint64_t end)
{
	bool gone;

	pthread_mutex_lock(&sb->lock);
	while (sb->refs > 1) {
		uint64_t now = cd_now_ns();
		struct timespec ts;

		if (now >= end)
			break;
		/* sb->cond runs on CLOCK_REALTIME: a short step, rechecked against the monotonic end */
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_nsec += 100 * 1000000L;
		if (ts.tv_nsec >= 1000000000L) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000L;
		}
		pthread_cond_timedwait(&sb->cond, &sb->lock, &ts);
	}
	gone = sb->refs <= 1;
	pthread_mutex_unlock(&sb->lock);
	return gone;
}

/* The requests still holding the sandbox past SRV_DRAIN_NS: their connections are reset
 * (libmicrohttpd's thread for each sees the end, and the request lets go; a linger of 0 drops
 * what the kernel still holds for a slow client, with a reset at the close). Under sb->lock,
 * which a request's detach takes before its connection can close: the descriptors are still
 * theirs. */
static unsigned cut(struct srv_sandbox *sb)
{
	struct linger reset = {.l_onoff = 1, .l_linger = 0};
	unsigned n = 0;

	pthread_mutex_lock(&sb->lock);
	for (struct srv_hold *h = sb->holds; h; h = h->next) {
		if (h->fd < 0)
			continue;
		setsockopt(h->fd, SOL_SOCKET, SO_LINGER, &reset, sizeof(reset));
		if (shutdown(h->fd, SHUT_RDWR) == 0)
			n++;
	}
	pthread_mutex_unlock(&sb->lock);
	return n;
}

/* The table's reference is ours now: kill its processes, give its users SRV_DRAIN_NS, cut the
 * connections of those that hold on, destroy. */
static void destroy(struct srv_sandbox *sb, const char *why)
{
	struct cordon_error err = {0};
	struct cordon_result res;
	int r;

	doom(sb);
	/* first: nothing of the sandbox runs on while its users let go (a client that reads a
	 * stream slowly, a listing the sandbox drips) */
	r = cordon_session_kill(sb->session);
	if (r < 0 && r != -EPIPE && r != -ECONNRESET) /* those: it ended on its own */
		srv_log("sandbox %s: cannot tell its supervisor to kill it: %s", sb->id,
			strerror(-r));
	if (!users_gone(sb, cd_now_ns() + SRV_DRAIN_NS)) {
		srv_log("sandbox %s: %u connections still hold it after %llu s: shut down", sb->id,
			cut(sb), SRV_DRAIN_NS / NSEC_PER_SEC);
		users_gone(sb, UINT64_MAX);
	}
	for (unsigned i = 0; i < n_listeners; i++) /* what they keep of it goes */
		listeners[i].fn(sb, listeners[i].ctx);
	if (cordon_session_destroy(sb->session, &res, &err) < 0) {
		srv_log("sandbox %s: teardown: %s: %s", sb->id, err.step, err.msg);
		/* a supervisor that died (killed alone) could not remove the workdir: every process
		 * of the sandbox died with it (pid 1's parent-death signal) */
		if (!srv_opts.keep_workdirs && sb->workdir && res.id[0] == '\0' &&
		    cd_rmtree_path(sb->workdir, &sb->workdir_st) == 0)
			srv_log("sandbox %s: its workdir removed by the server", sb->id);
	}
	srv_log("sandbox %s: ended (%s)", sb->id, why);
	forget(sb);
	srv_sandbox_free(sb);
}

struct destroyer {
	struct srv_sandbox *sb;
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
static void destroy_later(struct srv_sandbox *sb, const char *why)
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

static struct srv_sandbox *take(const char *id)
{
	struct srv_sandbox *sb;

	pthread_mutex_lock(&table_lock);
	sb = find_locked(id);
	if (sb)
		unlink_locked(sb);
	pthread_mutex_unlock(&table_lock);
	return sb;
}

int srv_reg_kill(const char *id)
{
	struct srv_sandbox *sb = take(id);
	uint64_t end = cd_now_ns() + SRV_KILL_WAIT_NS;

	if (!sb)
		return -ENOENT;
	destroy_later(sb, "killed");
	/* until it is gone (its slot free for the caller's next create), or the deadline: it is
	 * dead already, and a client holding one of its streams must not hold the answer */
	pthread_mutex_lock(&table_lock);
	while (is_dying(id) && cd_now_ns() < end) {
		struct timespec ts;

		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_sec += 1;
		pthread_cond_timedwait(&reaper_cond, &table_lock, &ts);
	}
	pthread_mutex_unlock(&table_lock);
	return 0;
}

int srv_reg_kill_later(const char *id, const char *why)
{
	struct srv_sandbox *sb = take(id);

	if (!sb)
		return -ENOENT;
	destroy_later(sb, why);
	return 0;
}

bool srv_sandbox_paused(struct srv_sandbox *sb)
{
	bool paused;

	pthread_mutex_lock(&sb->lock);
	paused = sb->paused;
	pthread_mutex_unlock(&sb->lock);
	return paused;
}

int srv_reg_pause(struct srv_sandbox *sb, struct cordon_error *err)
{
	int r;

	pthread_mutex_lock(&sb->pause_lock);
	if (srv_sandbox_paused(sb)) {
		pthread_mutex_unlock(&sb->pause_lock);
		return cd_fail(err, EALREADY, "pause", "sandbox %s is paused already", sb->id);
	}
	r = cordon_session_freeze(sb->session, 1, err);
	if (r >= 0) {
		pthread_mutex_lock(&sb->lock);
		sb->paused = true;
		sb->paused_ms = srv_now_ms();
		sb->paused_ns = cd_now_ns();
		sb->paused_left_ms = sb->end_ms > sb->paused_ms ? sb->end_ms - sb->paused_ms : 0;
		pthread_mutex_unlock(&sb->lock);
		srv_log("sandbox %s: paused", sb->id);
	}
	pthread_mutex_unlock(&sb->pause_lock);
	return r;
}

int srv_reg_resume(struct srv_sandbox *sb, bool *ret_resumed, struct cordon_error *err)
{
	int r = 0;

	*ret_resumed = false;
	pthread_mutex_lock(&sb->pause_lock);
	if (srv_sandbox_paused(sb))
		r = cordon_session_freeze(sb->session, 0, err);
	else
		r = 1;
	if (r == 0) {
		pthread_mutex_lock(&sb->lock);
		sb->paused = false;
		sb->end_ms = srv_now_ms() + sb->paused_left_ms; /* its timeout goes on */
		sb->last_used_ns = cd_now_ns();
		pthread_mutex_unlock(&sb->lock);
		*ret_resumed = true;
		srv_log("sandbox %s: resumed", sb->id);
	}
	pthread_mutex_unlock(&sb->pause_lock);
	return r < 0 ? r : 0;
}

/* The reaper's verdict for a sandbox at its timeout with autoPause: not its end */
static const char AUTO_PAUSE[] = "timeout: pause";

static void *pauser_main(void *arg)
{
	struct srv_sandbox *sb = arg;
	struct cordon_error err = {0};
	int r = srv_reg_pause(sb, &err);

	pthread_mutex_lock(&sb->lock);
	sb->pausing = false;
	pthread_mutex_unlock(&sb->lock);
	/* accepted at create because it could be paused: what fails now fails loudly */
	if (r < 0 && r != -EALREADY) {
		srv_log("sandbox %s: cannot pause it at its timeout: %s: %s", sb->id, err.step,
			err.msg);
		srv_reg_kill_later(sb->id, "timeout (it could not be paused)");
	}
	srv_sandbox_unref(sb);
	pthread_mutex_lock(&table_lock);
	n_destroying--;
	pthread_cond_broadcast(&reaper_cond);
	pthread_mutex_unlock(&table_lock);
	return NULL;
}

/* Paused by a thread of its own (the reaper never waits on a sandbox); table_lock held. */
static bool pause_later(struct srv_sandbox *sb)
{
	pthread_attr_t attr;
	pthread_t t;
	int r;

	pthread_mutex_lock(&sb->lock);
	sb->pausing = true;
	sb->refs++;
	pthread_mutex_unlock(&sb->lock);
	n_destroying++;
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	pthread_attr_setstacksize(&attr, 256 * 1024);
	r = pthread_create(&t, &attr, pauser_main, sb);
	pthread_attr_destroy(&attr);
	if (r == 0)
		return true;
	n_destroying--;
	pthread_mutex_lock(&sb->lock);
	sb->pausing = false; /* the next round tries again */
	sb->refs--;
	pthread_mutex_unlock(&sb->lock);
	return false;
}

static const char *expired(struct srv_sandbox *sb, int64_t now_ms, uint64_t now_ns)
{
	struct pollfd p = {.fd = cordon_session_fd(sb->session), .events = POLLIN};
	const char *why = NULL;

	pthread_mutex_lock(&sb->lock);
	if (sb->paused) { /* its timeout and idle TTL stand still; --max-paused-ttl runs */
		if (now_ns - sb->paused_ns >= srv_opts.max_paused_ns)
			why = "paused longer than --max-paused-ttl";
	} else if (sb->pausing) {
		why = NULL;
	} else if (sb->end_ms <= now_ms) {
		why = sb->auto_pause ? AUTO_PAUSE : "timeout";
	} else if (srv_opts.idle_ttl_ns && now_ns - sb->last_used_ns >= srv_opts.idle_ttl_ns) {
		why = "idle";
	}
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
		struct srv_sandbox *sb, *next;
		const char *why = NULL;

		for (sb = table; sb; sb = next) {
			next = sb->next;
			why = expired(sb, srv_now_ms(), cd_now_ns());
			if (why)
				break;
		}
		if (sb && why == AUTO_PAUSE) {
			if (pause_later(sb))
				continue;
			sb = NULL; /* no thread now: the next round */
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

int srv_reg_start(struct cordon_error *err)
{
	int r = pthread_create(&reaper, NULL, reaper_main, NULL);

	if (r)
		return cd_fail_errno(err, r, "serve", "reaper thread");
	reaper_started = true;
	return 0;
}

void srv_reg_stop(void)
{
	struct srv_sandbox *sb;

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

void srv_reg_wait(void)
{
	pthread_mutex_lock(&table_lock);
	while (n_destroying)
		pthread_cond_wait(&reaper_cond, &table_lock);
	pthread_mutex_unlock(&table_lock);
}

/* A new sandbox's common part; the caller fills the rest. */
struct srv_sandbox *srv_sandbox_new(void)
{
	struct srv_sandbox *sb = calloc(1, sizeof(*sb));

	if (!sb)
		return NULL;
	sb->dying_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	pthread_mutex_init(&sb->lock, NULL);
	pthread_mutex_init(&sb->pause_lock, NULL);
	pthread_cond_init(&sb->cond, NULL);
	if (sb->dying_fd < 0) {
		srv_sandbox_free(sb);
		return NULL;
	}
	return sb;
}
