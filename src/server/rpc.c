/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* rpc.c - Connect RPCs over HTTP/1.1 with JSON messages, as envd speaks them to the SDK:
 * unary (plain JSON in and out, errors as HTTP status + Connect error JSON) and server
 * streaming (enveloped messages, an end-stream message last). Runs in the server. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "connect.h"
#include "http.h"
#include "opts.h"
#include "req.h"
#include "rpc.h"

enum MHD_Result srv_rpc_error(struct srv_req *r, const char *code, const char *fmt, ...)
{
	char msg[600];
	va_list ap;
	char *j;
	enum MHD_Result ret;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (srv_opts.verbose)
		srv_log("%s %s: %s: %s", r->method, r->url, code, msg);
	j = srv_connect_error_json(code, msg, 0);
	if (!j)
		return MHD_NO;
	ret =
	    srv_http_text(r->http, srv_connect_http_status(code), "application/json", j, strlen(j));
	free(j);
	return ret;
}

/* A streaming RPC that fails before its first message: 200 and the end-stream error alone, as
 * Connect's streaming protocol has it. */
enum MHD_Result srv_rpc_stream_error(struct srv_req *r, const char *code, const char *fmt, ...)
{
	char msg[600], *j, *f = NULL;
	size_t fl;
	va_list ap;
	enum MHD_Result ret = MHD_NO;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (srv_opts.verbose)
		srv_log("%s %s: %s: %s", r->method, r->url, code, msg);
	j = srv_connect_error_json(code, msg, 1);
	if (j && srv_connect_frame(SRV_CONNECT_FLAG_END, j, strlen(j), &f, &fl) == 0)
		ret = srv_http_text(r->http, 200, "application/connect+json", f, fl);
	free(j);
	free(f);
	return ret;
}

enum MHD_Result srv_rpc_reply(struct srv_req *r, json_object *j)
{
	return srv_http_json(r->http, 200, j);
}

enum MHD_Result srv_rpc_reply_raw(struct srv_req *r, char *json, size_t len)
{
	return srv_http_owned(r->http, 200, "application/json", json, len);
}

/* The request message: the body (unary) or its one envelope (streaming). NULL: answered. */
json_object *srv_rpc_request(struct srv_req *r, bool streaming)
{
	size_t len;
	const char *why = NULL, *body = srv_http_body(r->http, &len), *msg = body;
	json_tokener *tok;
	json_object *j = NULL;

	if (streaming && srv_connect_unframe(body ? body : "", len, &msg, &len, &why) < 0) {
		srv_rpc_stream_error(r, "invalid_argument", "%s", why);
		return NULL;
	}
	tok = json_tokener_new_ex(32);
	if (tok && len > 0) {
		j = json_tokener_parse_ex(tok, msg, (int)len);
		if (j && (json_tokener_get_parse_end(tok) != len ||
			  !json_object_is_type(j, json_type_object))) {
			json_object_put(j);
			j = NULL;
			why = "the message is not one JSON object";
		} else if (!j) {
			why = json_tokener_error_desc(json_tokener_get_error(tok));
		}
	} else if (tok) {
		j = json_object_new_object(); /* an empty message: every field at its default */
	}
	json_tokener_free(tok);
	if (!j) {
		if (streaming)
			srv_rpc_stream_error(r, "invalid_argument", "bad JSON message: %s",
					     why ? why : "out of memory");
		else
			srv_rpc_error(r, "invalid_argument", "bad JSON message: %s",
				      why ? why : "out of memory");
	}
	return j;
}

/* Typed fields: 0 found, 1 absent (or null), -EINVAL wrong type (*why set). */
int srv_rpc_get(json_object *o, const char *key, json_type type, json_object **ret,
		const char **why)
{
	static __thread char buf[96];
	json_object *v;

	*ret = NULL;
	if (!o || !json_object_object_get_ex(o, key, &v) || json_object_is_type(v, json_type_null))
		return 1;
	if (type == json_type_int && json_object_is_type(v, json_type_string)) {
		/* protobuf's JSON mapping allows numbers as strings */
		const char *s = json_object_get_string(v);
		char *end;

		errno = 0;
		(void)strtoll(s, &end, 10);
		if (*s && !*end && !errno) {
			*ret = v;
			return 0;
		}
	}
	if (!json_object_is_type(v, type)) {
		snprintf(buf, sizeof(buf), "\"%s\" must be %s", key,
			 type == json_type_string    ? "a string"
			 : type == json_type_int     ? "an integer"
			 : type == json_type_boolean ? "a boolean"
			 : type == json_type_array   ? "an array"
						     : "an object");
		*why = buf;
		return -EINVAL;
	}
	*ret = v;
	return 0;
}
