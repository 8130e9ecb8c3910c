/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* http.h - the HTTP transport (http.c): libmicrohttpd's daemon, a request's head, headers and
 * body, replies and streams. It knows nothing of planes, sandboxes or handlers: a router
 * (routes.c) is called at each request's head, at its body's end and at its end, and holds a
 * request's exchange (struct srv_http, opaque) to read and answer it. */
#pragma once

#include <json-c/json.h>
#include <microhttpd.h>
#include <stdbool.h>
#include <stdint.h>

#include "cordon.h"

#define SRV_JSON_BODY_MAX (1u << 20)
/* A body over its limit is read and dropped up to this much before the 413 (http.c) */
#define SRV_DRAIN_MAX (64ull * SRV_JSON_BODY_MAX)

/* One request's exchange: its connection, its body, whether it was answered (http.c's alone) */
struct srv_http;
/* A body taken as it comes (an upload), chunk by chunk (data NULL: the end) */
typedef int (*srv_http_body_fn)(void *ctx, const char *data, size_t len);

/* What the transport calls of the router (routes.c): begin at a request's head, *ret_req its own
 * object for the rest (it picks the handler, or answers an error at once; MHD_NO drops the
 * connection); run once the body is in, unless answered already (the handler answers); end at
 * the request's end (what begin and the handler took goes). */
struct srv_http_router {
	enum MHD_Result (*begin)(struct srv_http *h, void **ret_req);
	enum MHD_Result (*run)(void *req);
	void (*end)(void *req);
};
int srv_http_start(const struct srv_http_router *router, struct MHD_Daemon **ret,
		   struct cordon_error *err);

const char *srv_http_method(struct srv_http *h);
const char *srv_http_url(struct srv_http *h); /* the path, for the request's life */
/* The path and query string as the client wrote them (what a sandbox's port is asked) */
const char *srv_http_uri(struct srv_http *h);
/* Each header of the request, in order, to fn(ctx, kind, name, value) */
void srv_http_each_header(struct srv_http *h, MHD_KeyValueIterator fn, void *ctx);
/* Answer with resp (taken), as built by the caller (a sandbox port's answer: its headers as
 * they came, no Cache-Control of ours) */
enum MHD_Result srv_http_respond(struct srv_http *h, unsigned status, struct MHD_Response *resp);
const char *srv_http_header(struct srv_http *h, const char *name);
const char *srv_http_query(struct srv_http *h, const char *name);
/* The body gathered (NUL-terminated; NULL when none came), and its length */
const char *srv_http_body(struct srv_http *h, size_t *ret_len);
/* The body as JSON (an object), or NULL and *ret_why. */
json_object *srv_http_body_json(struct srv_http *h, const char **ret_why);

/* At the head: the body goes to fn(ctx) as it comes, within --max-upload, instead of being
 * gathered (within SRV_JSON_BODY_MAX). */
void srv_http_body_to(struct srv_http *h, srv_http_body_fn fn, void *ctx);
/* At the head: the request takes no body (413 for one). */
void srv_http_no_body(struct srv_http *h);
/* The connection is not kept for another request. */
void srv_http_close(struct srv_http *h);
/* The request's connection is the tenant's (conns.c): false when the tenant holds its share of
 * the connections already. */
bool srv_http_tenant(struct srv_http *h, const char *tenant);
/* A multipart/form-data reader of the body (MHD_post_process() each chunk). */
struct MHD_PostProcessor *srv_http_post_processor(struct srv_http *h, size_t buffer_size,
						  MHD_PostDataIterator iter, void *cls);

/* An answer was queued already. */
bool srv_http_answered(struct srv_http *h);
/* takes j */
enum MHD_Result srv_http_json(struct srv_http *h, unsigned status, json_object *j);
/* The same, with headers: name, value, ..., NULL */
enum MHD_Result srv_http_json_headers(struct srv_http *h, unsigned status, json_object *j,
				      const char *const *headers);
enum MHD_Result srv_http_text(struct srv_http *h, unsigned status, const char *ctype,
			      const char *text, size_t len);
/* takes text (malloc'd): answered without a copy */
enum MHD_Result srv_http_owned(struct srv_http *h, unsigned status, const char *ctype, char *text,
			       size_t len);
/* E2B's REST error: {"code": status, "message": msg} */
enum MHD_Result srv_http_error(struct srv_http *h, unsigned status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* A body produced by read (blocking; MHD_CONTENT_READER_END_* at the end); free(st) after. */
enum MHD_Result srv_http_stream(struct srv_http *h, unsigned status, const char *ctype,
				uint64_t size, MHD_ContentReaderCallback read,
				MHD_ContentReaderFreeCallback free_st, void *st);
/* The same, its body in that Content-Encoding (size: MHD_SIZE_UNKNOWN for one made as it goes) */
enum MHD_Result srv_http_stream_encoded(struct srv_http *h, unsigned status, const char *ctype,
					const char *encoding, uint64_t size,
					MHD_ContentReaderCallback read,
					MHD_ContentReaderFreeCallback free_st, void *st);
/* The connection's socket, for the streams to notice a client that went away. */
int srv_http_conn_fd(struct srv_http *h);
bool srv_http_peer_gone(int fd);
