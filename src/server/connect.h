/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* connect.h - the Connect protocol's framing and errors, and base64 (protobuf's JSON mapping of
 * bytes). Pure: no I/O, unit-tested (tests/unit/test-connect.c). */
#pragma once

#include <stddef.h>
#include <stdint.h>

#define SRV_CONNECT_FLAG_COMPRESSED 0x01
#define SRV_CONNECT_FLAG_END	    0x02
#define SRV_CONNECT_MAX_MESSAGE	    (1u << 20)

/* base64 (standard alphabet, padded); *ret NUL-terminated, malloc'd. -ENOMEM. */
int srv_b64_encode(const void *data, size_t len, char **ret, size_t *ret_len);
/* Standard or URL alphabet, padding optional, no whitespace. -EINVAL, -ENOMEM. */
int srv_b64_decode(const char *s, size_t len, uint8_t **ret, size_t *ret_len);

/* One envelope: flags, uint32 big-endian length, the message. *ret malloc'd. */
int srv_connect_frame(uint8_t flags, const char *msg, size_t len, char **ret, size_t *ret_len);
/* A streaming request's body: exactly one uncompressed message envelope. Points into body.
 * -EINVAL with *ret_why set (a static string). */
int srv_connect_unframe(const char *body, size_t len, const char **ret_msg, size_t *ret_len,
			const char **ret_why);
/* The HTTP status of a Connect error code ("not_found" -> 404); 500 for an unknown code. */
unsigned srv_connect_http_status(const char *code);
/* The Connect code an errno stands for (ENOENT -> "not_found"). */
const char *srv_connect_code_of_errno(int e);
/* {"code":"...","message":"..."} (unary error body) or, with end, the end-stream message
 * {"error":{...}}; code NULL: "{}". *ret malloc'd, NULL when memory ran out. */
char *srv_connect_error_json(const char *code, const char *message, int end);
