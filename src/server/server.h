/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* server.h - what the files of cordon serve share: the options, the request, the sandbox.
 * Runs in the server process (threads: one per HTTP connection, one pump per process, the
 * reaper). Only the public API of cordon.h and src/base are used. */
#pragma once

#include <sys/stat.h>

#include <json-c/json.h>
#include <microhttpd.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "cordon.h"
#include "opts.h"

#define SRV_ENVD_PORT	49983
#define SRV_INTERP_PORT 49999
/* the newest envd version the SDK (e2b 2.51.0) compares against: its newest code paths */
#define SRV_ENVD_VERSION  "0.6.4"
#define SRV_JSON_BODY_MAX (1u << 20)
/* A body over its limit is read and dropped up to this much before the 413 (http.c) */
#define SRV_DRAIN_MAX (64ull * SRV_JSON_BODY_MAX)


/* --- auth.c --- */
bool srv_auth_key_valid_form(const char *key); /* e2b_[0-9a-f]+ */
bool srv_auth_api_key_ok(const char *key);     /* one of srv_opts.api_keys, constant time */
int srv_auth_api_key_index(const char *key);   /* which of them, or -1; constant time */
bool srv_auth_token_eq(const char *a, const char *b);
int srv_auth_random(char *ret, size_t n, const char *alphabet); /* n chars + NUL */
int srv_auth_signature(const char *path, const char *op, const char *user, const char *token,
		       const char *expiration, char ret[64]);

/* --- keys.c: where the API keys come from (at start) --- */
#define SRV_KEY_ENV "CORDON_SERVE_API_KEY"
int srv_keys_read_file(const char *path, struct cordon_error *err); /* --api-key-file */
int srv_keys_from_env(struct cordon_error *err);		    /* then wiped */
void srv_keys_argv_wipe(char *arg);				    /* --api-key's KEY */
/* After the options: --api-key's notice; no key: one made, written to DIR/api-key (0600) */
int srv_keys_setup(const char *dir, struct cordon_error *err);
void srv_keys_forget_made(void); /* at the end */

/* --- statedir.c: the state directory, its default and checks (at start) --- */
int srv_statedir_setup(struct cordon_error *err); /* sets srv_opts.state_dir */

/* --- registry.c: the sandboxes --- */
struct srv_proc;
struct srv_ctx;
struct srv_req;
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
	int64_t started_ms;    /* realtime */
	int64_t end_ms;	       /* realtime: the timeout */
	uint64_t last_used_ns; /* monotonic */
	struct cordon_session *session;
	char *workdir;
	char **env; /* KEY=VALUE its commands get: E2B_SANDBOX_ID, the create's envVars */
	struct stat workdir_st;
	int dying_fd; /* eventfd, readable once the sandbox is being killed */

	pthread_mutex_t lock; /* refs, dying, procs, ctxs, times, the counts */
	pthread_cond_t cond;
	unsigned refs;
	bool dying;
	struct srv_proc *procs;
	struct srv_ctx *ctxs;
	struct srv_req *reqs; /* the requests holding it (their connections are cut at its end) */
	/* what the sandbox costs the server, each bounded (docs/e2b.md "Tenants") */
	unsigned n_procs;    /* followed processes (pumps), srv_opts.max_procs */
	unsigned n_ptys;     /* of them with a host terminal, SRV_SANDBOX_MAX_PTYS */
	unsigned n_ctxs;     /* code contexts, SRV_SANDBOX_MAX_CTXS */
	unsigned n_lists;    /* ListDir answers being built (envd_fs.c) */
	uint64_t log_bytes;  /* its processes' logs (atomic), SRV_SANDBOX_LOG_BYTES */
	uint64_t line_bytes; /* its kernels' long lines (atomic), SRV_SANDBOX_LINE_BYTES */
	struct srv_sandbox *next;
};

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
/* r holds r->sb (a reference): its connection is shut down if the sandbox ends and r does not
 * let go within SRV_DRAIN_NS. Detached at r's end, before the connection can close. */
void srv_sandbox_attach(struct srv_req *r);
void srv_sandbox_detach(struct srv_req *r);
/* Remove from the table, kill its processes, destroy it (a thread of its own) and wait for that
 * up to SRV_KILL_WAIT_NS. -ENOENT: unknown. */
int srv_reg_kill(const char *id);
/* The same, destroyed by a thread of its own: the caller does not wait. */
int srv_reg_kill_later(const char *id, const char *why);
/* A new reference to each live sandbox; *ret freed by the caller after unref of each. */
int srv_reg_snapshot(struct srv_sandbox ***ret, size_t *ret_n);
void srv_sandbox_free(struct srv_sandbox *sb);
struct srv_sandbox *srv_sandbox_new(void);

/* --- http.c: libmicrohttpd glue --- */
struct srv_req;
typedef enum MHD_Result (*srv_handler_fn)(struct srv_req *r);
/* an upload's body, chunk by chunk (data NULL: the end) */
typedef int (*srv_body_fn)(struct srv_req *r, const char *data, size_t len);

struct srv_req {
	struct MHD_Connection *conn;
	const char *method;
	char *url;
	char *sub;	       /* the route's {id} part, when it has one */
	int plane;	       /* SRV_PLANE_* */
	struct srv_sandbox *sb; /* the data plane's sandbox (a reference) */
	srv_handler_fn handler;
	srv_body_fn body_fn; /* streaming body (uploads); else the body is gathered */
	char *body;
	size_t body_len, body_cap;
	bool answered; /* a response was queued already (an early error) */
	bool too_big;  /* the body passed its limit (SRV_JSON_BODY_MAX, --max-upload): dropped, then
			  413 */
	bool anonymous; /* answered without credentials (/health): it takes no body */
	bool close;	/* the connection is not kept for another request */
	int sb_fd;	/* the connection's socket, while attached to sb */
	struct srv_req *sb_prev, *sb_next; /* sb->reqs, under sb->lock */
	void *state;   /* the handler's, freed by state_free */
	void (*state_free)(void *state);
};
enum { SRV_PLANE_CONTROL, SRV_PLANE_ENVD, SRV_PLANE_INTERP };

int srv_http_start(struct MHD_Daemon **ret, struct cordon_error *err);
const char *srv_http_header(struct srv_req *r, const char *name);
const char *srv_http_query(struct srv_req *r, const char *name);
/* takes j */
enum MHD_Result srv_http_json(struct srv_req *r, unsigned status, json_object *j);
enum MHD_Result srv_http_text(struct srv_req *r, unsigned status, const char *ctype,
			      const char *text, size_t len);
/* takes text (malloc'd): answered without a copy */
enum MHD_Result srv_http_owned(struct srv_req *r, unsigned status, const char *ctype, char *text,
			       size_t len);
/* E2B's REST error: {"code": status, "message": msg} */
enum MHD_Result srv_http_error(struct srv_req *r, unsigned status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* A body produced by read (blocking; MHD_CONTENT_READER_END_* at the end); free(st) after. */
enum MHD_Result srv_http_stream(struct srv_req *r, unsigned status, const char *ctype,
				uint64_t size, MHD_ContentReaderCallback read,
				MHD_ContentReaderFreeCallback free_st, void *st);
/* The connection's socket, for the streams to notice a client that went away. */
int srv_http_conn_fd(struct srv_req *r);
bool srv_http_peer_gone(int fd);
/* The body as JSON (an object), or an error answered (*ret NULL, returns the MHD result). */
json_object *srv_http_body_json(struct srv_req *r, const char **ret_why);

/* --- conns.c: who holds the connection slots --- */
#define SRV_HEAD_DEADLINE_S 10	 /* a connection not yet authenticated is closed after this */
#define SRV_CONN_GRACE_MS   1000 /* ... and not pushed out by newer ones before this */
struct srv_conn_limits {
	unsigned max;	     /* --max-connections */
	unsigned wait_max;   /* connections not yet authenticated */
	unsigned peer_max;   /* ... of one peer with a cap (not loopback, not our uid) */
	unsigned tenant_max; /* one tenant's (an API key's, a sandbox's) */
};
struct srv_conn_counts {
	unsigned waiting, tenants; /* held now */
	bool peer_capped;	   /* the new one's peer has a cap... */
	unsigned peer_waiting;	   /* ... and holds this many waiting ones */
	uint64_t oldest_ms;	   /* how long the oldest waiting one has waited */
};
enum srv_conn_verdict { SRV_CONN_ACCEPT, SRV_CONN_EVICT_OLDEST, SRV_CONN_REFUSE };
/* pure (tests/unit/test-conns.c) */
void srv_conns_limits(unsigned max_connections, struct srv_conn_limits *ret);
enum srv_conn_verdict srv_conns_decide(const struct srv_conn_limits *l,
				       const struct srv_conn_counts *c);
int srv_conns_start(struct cordon_error *err); /* before the daemon */
unsigned srv_conns_mhd_limit(void);
unsigned srv_conns_tenant_max(void);
void srv_conns_notify(void *cls, struct MHD_Connection *mc, void **socket_context,
		      enum MHD_ConnectionNotificationCode code);
/* A request on mc authenticated as tenant: false when the tenant holds its cap already. */
bool srv_conns_tenant(struct MHD_Connection *mc, const char *tenant);
void srv_conns_request_done(struct MHD_Connection *mc);

/* --- control.c, envd_process.c, envd_fs.c, files.c, interp.c: the routes --- */
srv_handler_fn srv_control_route(const char *method, const char *url, char **ret_sub);
srv_handler_fn srv_envd_route(struct srv_req *r, const char *url);
srv_handler_fn srv_interp_route(const char *method, const char *url, char **ret_sub);
srv_handler_fn srv_process_route(const char *rpc);
srv_handler_fn srv_fs_route(const char *rpc);
enum MHD_Result srv_files_get(struct srv_req *r);
enum MHD_Result srv_files_post_begin(struct srv_req *r); /* sets r->body_fn */
enum MHD_Result srv_files_post_end(struct srv_req *r);

/* --- procs.c: processes and their output --- */
void srv_procs_kill_all(struct srv_sandbox *sb); /* the sandbox is dying: pumps end */
/* Write all of buf to fd (O_NONBLOCK), a descriptor a sandbox reads: 0; -ETIMEDOUT when it
 * takes nothing for stall_ns; -ECANCELED once dying_fd is readable; -ECONNRESET when the
 * client of conn_fd went away (-1: none); else -errno. Never blocks for longer. */
int srv_write_bounded(int fd, const void *buf, size_t len, int dying_fd, int conn_fd,
		      uint64_t stall_ns);

/* --- interp.c --- */
/* Code contexts a sandbox may have at once (the default one counts): each is a kernel process
 * of the sandbox's and two pipes and a buffer of the server's. */
#define SRV_SANDBOX_MAX_CTXS 16
/* Kernel lines past 256 KiB that the server holds at once for one sandbox (one line: at most
 * 32 MiB): a line past it is dropped, and the execution told. */
#define SRV_SANDBOX_LINE_BYTES (32u << 20)
void srv_interp_kill_all(struct srv_sandbox *sb);

/* --- rpc.c: Connect RPCs with JSON --- */
enum MHD_Result srv_rpc_error(struct srv_req *r, const char *code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
enum MHD_Result srv_rpc_stream_error(struct srv_req *r, const char *code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
enum MHD_Result srv_rpc_reply(struct srv_req *r, json_object *j);
/* A reply already encoded: takes json (malloc'd) */
enum MHD_Result srv_rpc_reply_raw(struct srv_req *r, char *json, size_t len);
json_object *srv_rpc_request(struct srv_req *r, bool streaming);
int srv_rpc_get(json_object *o, const char *key, json_type type, json_object **ret,
		const char **why);

/* --- control.c, pool.c: sandboxes made ahead of time --- */
struct srv_pooled {
	struct cordon_session *session;
	char *workdir;
	struct stat workdir_st; /* to remove it when its supervisor could not */
};
/* A session from the server's options alone, in a fresh workdir. */
int srv_control_make_session(struct srv_pooled *ret, struct cordon_error *err);
void srv_control_drop_session(struct srv_pooled *p);
int srv_pool_start(unsigned n, struct cordon_error *err);
bool srv_pool_take(struct srv_pooled *ret); /* false: none ready */
void srv_pool_stop(void);
/* base's KEY=VALUE, then over's, a key of over's replacing base's: a new vector */
char **srv_env_merge(char *const *base, char *const *over);

/* --- disk.c: --disk --- */
int srv_disk_start(struct cordon_error *err);
void srv_disk_stop(void);

/* --- creator.c: sessions are made in a single-threaded process, a fresh exec of this program
 * started before any thread --- */
int srv_creator_start(struct cordon_error *err);
/* `cordon-serve --session-maker` (main.c): runs until the server goes; the exit status */
int srv_creator_main(void);
int srv_creator_make(const char *workdir, struct cordon_session **ret, struct cordon_error *err);
/* The config every sandbox is made from (control.c). */
int srv_control_config(const char *workdir, struct cordon_config **ret, struct cordon_error *err);
