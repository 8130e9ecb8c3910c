/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* auth.h - API keys, access tokens, signed /files URLs, random ids (auth.c). */
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
