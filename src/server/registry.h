/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* registry.h - the sandboxes: the table, references, the reaper, the kill (registry.c). */
#pragma once

#include <sys/stat.h>

#include <json-c/json.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "cordon.h"
#include "util.h"

struct srv_proc;
struct srv_ctx;
/* A request holding a sandbox (a reference), on the sandbox's list while it does: past
 * SRV_DRAIN_NS of the sandbox's end, the connection (fd) of one still holding it is shut down. */
struct srv_hold {
	int fd;			      /* its connection's socket (-1: none) */
	struct srv_hold *prev, *next; /* sb->holds, under sb->lock */
};
/* A call on a sandbox's agent (a command's start, a file call, a whole listing) ends within this
 * (cordon_session_set_bounds), or when the sandbox ends. */
#define SRV_AGENT_CALL_NS (60ull * NSEC_PER_SEC)
/* A listing's paths, names and link targets the library holds for the server (envd_fs.c). */
#define SRV_LIST_RAW_MAX (16u << 20)
/* A sandbox being killed: its processes are killed at once, then its requests get this long to
 * let go of it before their connections are shut down. Its --max-sandboxes slot is held until
 * it is gone. */
#define SRV_DRAIN_NS (5ull * NSEC_PER_SEC)
/* DELETE answers once the sandbox is gone, or after this (it is dead already: killed first). */
#define SRV_KILL_WAIT_NS (15ull * NSEC_PER_SEC)

struct srv_sandbox {
	char id[24];
	char token[48];
	char *template_id;
	json_object *metadata; /* object of strings */
	json_object *env_vars; /* object of strings */
	json_object *network;  /* the create's network: {allowOut, denyOut} as given, or NULL */
	int internet;	       /* the create's allow_internet_access: -1 not given, 0, 1 */
	bool own_net;	       /* allow_net is its own (a create's network), not --allow-net */
	char **allow_net;      /* own_net: the proxy's list (NULL: no network) */
	int64_t started_ms;    /* realtime */
	int64_t end_ms;	       /* realtime: the timeout */
	uint64_t last_used_ns; /* monotonic */
	struct cordon_session *session;
	char *workdir;
	char **env; /* KEY=VALUE its commands get: E2B_SANDBOX_ID, the create's envVars */
	struct stat workdir_st;
	int dying_fd; /* eventfd, readable once the sandbox is being killed */
	bool auto_pause;  /* at its timeout it is paused, not killed (create's autoPause) */
	bool auto_resume; /* a request to a paused one resumes it (create's autoResume) */
	/* pause and resume, one at a time (a freeze takes up to CD_HOLDER_FREEZE_NS: never under
	 * lock, which every request takes) */
	pthread_mutex_t pause_lock;
	bool private_traffic; /* network.allowPublicTraffic false: its ports need its token */

	pthread_mutex_t lock; /* refs, dying, procs, ctxs, times, the counts */
	pthread_cond_t cond;
	unsigned refs;
	bool dying;
	bool paused;	      /* frozen (pause): its timeout and idle TTL stand still */
	bool pausing;	      /* the reaper handed it to a thread to pause at its timeout */
	int64_t paused_left_ms; /* paused: what was left of its timeout */
	int64_t paused_ms;      /* paused: since (realtime); killed at + --max-paused-ttl */
	uint64_t paused_ns;     /* the same, monotonic */
	struct srv_proc *procs;
	struct srv_ctx *ctxs;
	struct srv_hold *holds; /* the requests holding it (their connections are cut at its end) */
	/* what the sandbox costs the server, each bounded (docs/e2b.md "Tenants") */
	unsigned n_procs;    /* followed processes (pumps), srv_opts.max_procs */
	unsigned n_ptys;     /* of them with a host terminal, SRV_SANDBOX_MAX_PTYS */
	unsigned n_ctxs;     /* code contexts, SRV_SANDBOX_MAX_CTXS */
	unsigned n_lists;    /* ListDir answers being built (envd_fs.c) */
	uint64_t log_bytes;  /* its processes' logs (atomic), SRV_SANDBOX_LOG_BYTES */
	uint64_t line_bytes; /* its kernels' long lines (atomic), SRV_SANDBOX_LINE_BYTES */
	uint64_t disk_bytes; /* its workdir's allocated bytes at --disk's last count (atomic) */
	struct srv_sandbox *next;
};

/* A sandbox's end, told to the files that keep something of it (interp.c: its kernels, procs.c:
 * its processes' list): called by its destroyer once its requests have let go of it (or been
 * cut), before its session is destroyed, in the order registered. The registry calls no other
 * file: whoever keeps something of a sandbox listens. */
typedef void (*srv_death_fn)(struct srv_sandbox *sb, void *ctx);
/* Before srv_reg_start() (the list is read without a lock); -ENOSPC past a few. */
int srv_reg_on_death(srv_death_fn fn, void *ctx, struct cordon_error *err);
int srv_reg_start(struct cordon_error *err);
/* Every sandbox doomed (its waits end) and handed to a destroyer; srv_reg_wait() waits for them
 * (after the connections are closed: a stream's reference goes with its connection). */
void srv_reg_stop(void);
void srv_reg_wait(void);
/* Takes the sandbox (one reference: the table's). -EBUSY: --max-sandboxes reached. */
int srv_reg_add(struct srv_sandbox *sb);
int srv_reg_reserve(void); /* a slot for a sandbox being made; -EBUSY */
void srv_reg_unreserve(void);
/* A reference, or NULL (unknown or dying). */
struct srv_sandbox *srv_reg_get(const char *id);
void srv_sandbox_ref(struct srv_sandbox *sb);
void srv_sandbox_unref(struct srv_sandbox *sb);
void srv_sandbox_touch(struct srv_sandbox *sb);
/* A request that holds sb (a reference) on connection fd: the connection is shut down if the
 * sandbox ends and the request does not let go within SRV_DRAIN_NS. Detached at the request's
 * end, before its connection can close. */
void srv_sandbox_attach(struct srv_sandbox *sb, struct srv_hold *h, int fd);
void srv_sandbox_detach(struct srv_sandbox *sb, struct srv_hold *h);
/* Remove from the table, kill its processes, destroy it (a thread of its own) and wait for that
 * up to SRV_KILL_WAIT_NS. -ENOENT: unknown. */
int srv_reg_kill(const char *id);
/* The same, destroyed by a thread of its own: the caller does not wait. */
int srv_reg_kill_later(const char *id, const char *why);
/* Pause: every process of it frozen (cordon_session_freeze), its timeout stopped. -EALREADY:
 * paused already; -EOPNOTSUPP: it cannot be (err says why). Any thread but the reaper. */
int srv_reg_pause(struct srv_sandbox *sb, struct cordon_error *err);
/* Resume a paused one: thawed, its timeout going on with what was left of it. *ret_resumed:
 * whether it was paused. */
int srv_reg_resume(struct srv_sandbox *sb, bool *ret_resumed, struct cordon_error *err);
bool srv_sandbox_paused(struct srv_sandbox *sb);
/* A new reference to each live sandbox; *ret freed by the caller after unref of each. */
int srv_reg_snapshot(struct srv_sandbox ***ret, size_t *ret_n);
void srv_sandbox_free(struct srv_sandbox *sb);
struct srv_sandbox *srv_sandbox_new(void);
