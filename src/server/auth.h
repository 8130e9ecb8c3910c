/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* auth.h - API keys, access tokens, signed /files URLs, random ids, whom an envd request acts as
 * (auth.c). */
#pragma once

#include <stdbool.h>
#include <stddef.h>

bool srv_auth_key_valid_form(const char *key); /* e2b_[0-9a-f]+ */
bool srv_auth_api_key_ok(const char *key);     /* one of srv_opts.api_keys, constant time */
int srv_auth_api_key_index(const char *key);   /* which of them, or -1; constant time */
bool srv_auth_token_eq(const char *a, const char *b);
int srv_auth_random(char *ret, size_t n, const char *alphabet); /* n chars + NUL */
/* the alphabet of sandbox ids and workdir names */
#define SRV_AUTH_ID_ALPHABET "0123456789abcdefghijklmnopqrstuvwxyz"
int srv_auth_signature(const char *path, const char *op, const char *user, const char *token,
		       const char *expiration, char ret[64]);

/* Whom an envd request asks to act as (the SDKs' `user` option): the name of its Authorization
 * header when that is Basic (commands, ptys, the filesystem service), and of /files' username
 * query parameter. Neither: the sandbox's user, as envd's default. */
enum srv_auth_user {
	SRV_USER_SANDBOX, /* "user", or none named */
	SRV_USER_ROOT,	  /* "root": refused (docs/e2b.md, "Commands run as the sandbox's user") */
	SRV_USER_UNKNOWN, /* any other name, or a Basic header that is not base64 of NAME:... */
};
/* *name: the name refused (truncated to size), for the message */
enum srv_auth_user srv_auth_user(const char *authorization, const char *query_user, char *name,
				 size_t size);
