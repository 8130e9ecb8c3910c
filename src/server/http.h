/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* http.h - libmicrohttpd glue: the daemon, the request, replies and streams (http.c). */
#pragma once

#include <json-c/json.h>
#include <microhttpd.h>
#include <stdbool.h>
#include <stdint.h>

#include "cordon.h"
#include "registry.h"

#define SRV_ENVD_PORT	  49983
#define SRV_INTERP_PORT	  49999
#define SRV_JSON_BODY_MAX (1u << 20)
/* A body over its limit is read and dropped up to this much before the 413 (http.c) */
#define SRV_DRAIN_MAX (64ull * SRV_JSON_BODY_MAX)

struct srv_req;
typedef enum MHD_Result (*srv_handler_fn)(struct srv_req *r);
/* an upload's body, chunk by chunk (data NULL: the end) */
typedef int (*srv_body_fn)(struct srv_req *r, const char *data, size_t len);

struct srv_req {
	struct MHD_Connection *conn;
	const char *method;
	char *url;
	char *sub;		/* the route's {id} part, when it has one */
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
	struct srv_hold hold;		   /* on sb's list while r holds it */
	void *state;			   /* the handler's, freed by state_free */
	void (*state_free)(void *state);
};

/* What the transport calls of the router (routes.c): begin at a request's head (it picks the
 * handler, or answers an error at once; MHD_NO drops the connection), end at the request's end
 * (what begin and the handler took goes). */
struct srv_http_router {
	enum MHD_Result (*begin)(struct srv_req *r);
	void (*end)(struct srv_req *r);
};
int srv_http_start(const struct srv_http_router *router, struct MHD_Daemon **ret,
		   struct cordon_error *err);
/* The request's connection is the tenant's (conns.c): false when the tenant holds its share of
 * the connections already. */
bool srv_http_tenant(struct srv_req *r, const char *tenant);
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
