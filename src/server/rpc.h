/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* rpc.h - Connect RPCs over HTTP with JSON (rpc.c). */
#pragma once

#include <json-c/json.h>
#include <stdbool.h>

#include "req.h"

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
