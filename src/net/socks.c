/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * socks.c - SOCKS5 greeting and request parsing for the egress proxy (RFC 1928).
 */
#include <arpa/inet.h>
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "socks.h"

int cd_socks_greeting(const uint8_t *b, size_t n, size_t *used, bool *noauth)
{
	if (n < 2)
		return n && b[0] != 5 ? -1 : 0;
	if (b[0] != 5 || b[1] == 0)
		return -1;
	if (n < 2 + (size_t)b[1])
		return 0;
	*noauth = memchr(b + 2, 0, b[1]) != NULL;
	*used = 2 + (size_t)b[1];
	return 1;
}

static int refuse(uint8_t *code, const char **why, uint8_t c, const char *reason)
{
	*code = c;
	*why = reason;
	return -1;
}

int cd_socks_request(const uint8_t *b, size_t n, struct cd_http_req *req, size_t *used,
		     uint8_t *code, const char **why)
{
	size_t alen;

	*req = (struct cd_http_req){ .connect = true };
	snprintf(req->method, sizeof(req->method), "CONNECT");
	if (n < 5)
		return 0;
	if (b[0] != 5 || b[2] != 0)
		return refuse(code, why, CD_SOCKS_FAILURE, "malformed SOCKS5 request");
	if (b[1] != 1)
		return refuse(code, why, CD_SOCKS_BAD_COMMAND, "only SOCKS5 CONNECT is supported");
	switch (b[3]) {
	case 1: alen = 4; break;
	case 4: alen = 16; break;
	case 3: alen = 1 + (size_t)b[4]; break;
	default: return refuse(code, why, CD_SOCKS_BAD_ADDRESS, "unknown SOCKS5 address type");
	}
	if (n < 4 + alen + 2)
		return 0;
	if (b[3] == 1) {
		inet_ntop(AF_INET, b + 4, req->host, sizeof(req->host));
	} else if (b[3] == 4) {
		inet_ntop(AF_INET6, b + 4, req->host, sizeof(req->host));
		req->host_is_v6 = true;
	} else {
		if (b[4] == 0)
			return refuse(code, why, CD_SOCKS_FAILURE, "empty SOCKS5 host name");
		for (size_t i = 0; i < b[4]; i++)
			if (!isalnum(b[5 + i]) && (!b[5 + i] || !strchr(".-_", b[5 + i])))
				return refuse(code, why, CD_SOCKS_FAILURE,
					      "the host name has characters no host name has");
		memcpy(req->host, b + 5, b[4]);
		req->host[b[4]] = '\0';
	}
	req->port = (uint16_t)(b[4 + alen] << 8 | b[4 + alen + 1]);
	if (req->port == 0)
		return refuse(code, why, CD_SOCKS_FAILURE, "port 0");
	*used = req->head_len = 4 + alen + 2;
	return 1;
}

void cd_socks_reply(uint8_t code, uint8_t out[10])
{
	memset(out, 0, 10);
	out[0] = 5;    /* version */
	out[1] = code;
	out[3] = 1;    /* IPv4: 0.0.0.0:0 */
}
