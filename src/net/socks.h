/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * socks.h - SOCKS5 (RFC 1928) for the egress proxy, on the same port as HTTP: the first byte
 * (5) tells them apart. No authentication, CONNECT only. Pure parsing, no I/O.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "httpreq.h"

enum {
	CD_SOCKS_OK = 0,
	CD_SOCKS_FAILURE = 1,      /* general failure */
	CD_SOCKS_NOT_ALLOWED = 2,  /* connection not allowed by ruleset */
	CD_SOCKS_UNREACHABLE = 4,  /* host unreachable */
	CD_SOCKS_REFUSED = 5,      /* connection refused */
	CD_SOCKS_BAD_COMMAND = 7,  /* command not supported */
	CD_SOCKS_BAD_ADDRESS = 8,  /* address type not supported */
};

/* The greeting: 1 when whole (*used bytes; *noauth: the client offers "no authentication"),
 * 0 when more is needed, -1 when it is no SOCKS5 greeting. */
int cd_socks_greeting(const uint8_t *b, size_t n, size_t *used, bool *noauth);

/* The request: 1 when whole, into req (connect, host, port, host_is_v6; head_len = *used);
 * 0 when more is needed; -1 when refused, with *why and the reply *code. */
int cd_socks_request(const uint8_t *b, size_t n, struct cd_http_req *req, size_t *used,
		     uint8_t *code, const char **why);

/* The 10-byte reply with code (bound address 0.0.0.0:0) into out. */
void cd_socks_reply(uint8_t code, uint8_t out[10]);
