/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * httpreq.h - the head of a request to the egress proxy: "CONNECT host:port HTTP/1.1", or a
 * plain HTTP request with an absolute URI ("GET http://host[:port]/path HTTP/1.1"). Nothing
 * else is a proxy request. Pure parsing, no I/O.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define CD_HTTP_HEAD_MAX 8192

struct cd_http_req {
	bool connect;
	char method[16];
	char host[256];    /* as in the request, IPv6 without brackets */
	bool host_is_v6;   /* it was in brackets */
	uint16_t port;
	size_t path_off;   /* absolute form: the origin-form target ("/x?y") in the buffer */
	size_t path_len;   /* 0: the URI had none ("/") */
	size_t version_off;/* "HTTP/1.x" in the buffer */
	size_t headers_off;/* the first header line */
	size_t head_len;   /* the whole head, the blank line included */
};

/* 1: a whole head, parsed into *req; 0: not yet whole (read more, up to CD_HTTP_HEAD_MAX);
 * -1: malformed or not a proxy request, with a one-line reason in *why. */
int cd_http_parse(const char *buf, size_t len, struct cd_http_req *req, const char **why);

/* The head to send to the origin server for an absolute-form request: origin-form request
 * line, Host: from the URI, the client's headers without Host, Connection, Keep-Alive,
 * Proxy-Connection and Proxy-Authorization, then "Connection: close". malloc'd, *len set. */
char *cd_http_origin_head(const char *buf, const struct cd_http_req *req, size_t *len);
