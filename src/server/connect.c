/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* connect.c - the Connect protocol's framing and errors, and base64. Pure. Runs in the server. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "connect.h"

static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

int srv_b64_encode(const void *data, size_t len, char **ret, size_t *ret_len)
{
	const uint8_t *p = data;
	size_t n = (len + 2) / 3 * 4, o = 0;
	char *s = malloc(n + 1);

	if (!s)
		return -ENOMEM;
	for (size_t i = 0; i < len; i += 3) {
		uint32_t v = (uint32_t)p[i] << 16;

		if (i + 1 < len)
			v |= (uint32_t)p[i + 1] << 8;
		if (i + 2 < len)
			v |= p[i + 2];
		s[o++] = b64[v >> 18 & 63];
		s[o++] = b64[v >> 12 & 63];
		s[o++] = i + 1 < len ? b64[v >> 6 & 63] : '=';
		s[o++] = i + 2 < len ? b64[v & 63] : '=';
	}
	s[o] = '\0';
	*ret = s;
	if (ret_len)
		*ret_len = o;
	return 0;
}

static int b64_value(char c)
{
	if (c >= 'A' && c <= 'Z')
		return c - 'A';
	if (c >= 'a' && c <= 'z')
		return c - 'a' + 26;
	if (c >= '0' && c <= '9')
		return c - '0' + 52;
	if (c == '+' || c == '-')
		return 62;
	if (c == '/' || c == '_')
		return 63;
	return -1;
}

int srv_b64_decode(const char *s, size_t len, uint8_t **ret, size_t *ret_len)
{
	uint8_t *out;
	uint32_t acc = 0;
	size_t o = 0, bits = 0;

	while (len > 0 && s[len - 1] == '=')
		len--;
	if (len % 4 == 1)
		return -EINVAL;
	out = malloc(len / 4 * 3 + 3);
	if (!out)
		return -ENOMEM;
	for (size_t i = 0; i < len; i++) {
		int v = b64_value(s[i]);

		if (v < 0) {
			free(out);
			return -EINVAL;
		}
		acc = acc << 6 | (uint32_t)v;
		bits += 6;
		if (bits >= 8) {
			bits -= 8;
			out[o++] = (uint8_t)(acc >> bits);
		}
	}
	*ret = out;
	*ret_len = o;
	return 0;
}

int srv_connect_frame(uint8_t flags, const char *msg, size_t len, char **ret, size_t *ret_len)
{
	char *f;

	if (len > UINT32_MAX)
		return -E2BIG;
	f = malloc(5 + len);
	if (!f)
		return -ENOMEM;
	f[0] = (char)flags;
	f[1] = (char)(len >> 24);
	f[2] = (char)(len >> 16);
	f[3] = (char)(len >> 8);
	f[4] = (char)len;
	memcpy(f + 5, msg, len);
	*ret = f;
	*ret_len = 5 + len;
	return 0;
}

int srv_connect_unframe(const char *body, size_t len, const char **ret_msg, size_t *ret_len,
			const char **ret_why)
{
	const uint8_t *b = (const uint8_t *)body;
	uint32_t n;

	if (len < 5) {
		*ret_why = "the body is not a Connect envelope (shorter than 5 bytes)";
		return -EINVAL;
	}
	if (b[0] & SRV_CONNECT_FLAG_COMPRESSED) {
		*ret_why = "compressed messages are not supported";
		return -EINVAL;
	}
	if (b[0] != 0) {
		*ret_why = "the envelope's flags are not those of a message";
		return -EINVAL;
	}
	n = (uint32_t)b[1] << 24 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 8 | b[4];
	if (n != len - 5) {
		*ret_why = "the envelope's length is not the body's (one message expected)";
		return -EINVAL;
	}
	*ret_msg = body + 5;
	*ret_len = n;
	return 0;
}

static const struct {
	const char *code;
	unsigned status;
} codes[] = {
    {"canceled", 499},
    {"unknown", 500},
    {"invalid_argument", 400},
    {"deadline_exceeded", 504},
    {"not_found", 404},
    {"already_exists", 409},
    {"permission_denied", 403},
    {"resource_exhausted", 429},
    {"failed_precondition", 400},
    {"aborted", 409},
    {"out_of_range", 400},
    {"unimplemented", 501},
    {"internal", 500},
    {"unavailable", 503},
    {"data_loss", 500},
    {"unauthenticated", 401},
};

unsigned srv_connect_http_status(const char *code)
{
	for (size_t i = 0; i < sizeof(codes) / sizeof(codes[0]); i++)
		if (strcmp(codes[i].code, code) == 0)
			return codes[i].status;
	return 500;
}

const char *srv_connect_code_of_errno(int e)
{
	switch (e < 0 ? -e : e) {
	case ENOENT:
	case ESRCH:
		return "not_found";
	case EEXIST:
		return "already_exists";
	case EACCES:
	case EPERM:
	case EROFS:
		return "permission_denied";
	case EINVAL:
	case ENOTDIR:
	case EISDIR:
	case ENAMETOOLONG:
	case ENOTEMPTY:
	case ELOOP:
		return "invalid_argument";
	case E2BIG:
	case ENOSPC:
	case EDQUOT:
	case ENOMEM:
	case EMFILE:
	case EAGAIN:
		return "resource_exhausted";
	case ENOSYS:
	case EOPNOTSUPP:
		return "unimplemented";
	case ETIMEDOUT:
		return "deadline_exceeded";
	case ECANCELED: /* the sandbox is being killed */
		return "unavailable";
	default:
		return "internal";
	}
}

char *srv_connect_error_json(const char *code, const char *message, int end)
{
	json_object *e, *top;
	char *s;

	if (!code)
		return strdup("{}");
	e = json_object_new_object();
	if (!e)
		return NULL;
	json_object_object_add(e, "code", json_object_new_string(code));
	json_object_object_add(e, "message", json_object_new_string(message ? message : ""));
	top = e;
	if (end) {
		top = json_object_new_object();
		if (!top) {
			json_object_put(e);
			return NULL;
		}
		json_object_object_add(top, "error", e);
	}
	s = strdup(json_object_to_json_string_ext(top, JSON_C_TO_STRING_PLAIN |
							   JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(top);
	return s;
}
