/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* auth.c - API keys (the control plane), per-sandbox access tokens (the data plane), random
 * ids, whom an envd request acts as. Runs in the server. Secrets are compared in constant time. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include <nettle/sha2.h>

#include "auth.h"
#include "connect.h"
#include "opts.h"
#include "util.h"

bool srv_auth_key_valid_form(const char *key)
{
	size_t n = strlen(key);

	if (n < 5 || n > 256 || strncmp(key, "e2b_", 4) != 0)
		return false;
	return strspn(key + 4, "0123456789abcdef") == n - 4;
}

/* Compares every byte of the longer one whatever differs: the time tells the length at most. */
bool srv_auth_token_eq(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b), n = la > lb ? la : lb;
	unsigned char d = la != lb;

	for (size_t i = 0; i < n; i++)
		d |= (unsigned char)((i < la ? a[i] : 0) ^ (i < lb ? b[i] : 0));
	return d == 0;
}

int srv_auth_api_key_index(const char *key)
{
	int found = -1, i = 0;

	if (!key)
		return -1;
	for (char **k = srv_opts.api_keys; k && *k; k++, i++)
		if (srv_auth_token_eq(key, *k) && found < 0) /* no early exit */
			found = i;
	return found;
}

bool srv_auth_api_key_ok(const char *key)
{
	return srv_auth_api_key_index(key) >= 0;
}

/* n characters of alphabet, uniformly (rejection sampling), from getrandom(). */
int srv_auth_random(char *ret, size_t n, const char *alphabet)
{
	size_t m = strlen(alphabet), o = 0;
	unsigned limit = 256 - 256 % m;
	unsigned char buf[64];

	while (o < n) {
		ssize_t got = getrandom(buf, sizeof(buf), 0);

		if (got < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		for (ssize_t i = 0; i < got && o < n; i++)
			if (buf[i] < limit)
				ret[o++] = alphabet[buf[i] % m];
	}
	ret[n] = '\0';
	return 0;
}

/* The SDK's signed /files URLs (downloadUrl, uploadUrl): "v1_" + base64(sha256(
 * "path:operation:user:token[:expiration]")) without its padding. */
int srv_auth_signature(const char *path, const char *op, const char *user, const char *token,
		       const char *expiration, char ret[64])
{
	struct sha256_ctx ctx;
	uint8_t digest[SHA256_DIGEST_SIZE];
	char *text, *b64;
	size_t n;

	text = expiration ? cd_strdup_printf("%s:%s:%s:%s:%s", path, op, user, token, expiration)
			  : cd_strdup_printf("%s:%s:%s:%s", path, op, user, token);
	if (!text)
		return -ENOMEM;
	sha256_init(&ctx);
	sha256_update(&ctx, strlen(text), (const uint8_t *)text);
	sha256_digest(&ctx, sizeof(digest), digest);
	free(text);
	if (srv_b64_encode(digest, sizeof(digest), &b64, &n) < 0)
		return -ENOMEM;
	while (n > 0 && b64[n - 1] == '=')
		b64[--n] = '\0';
	snprintf(ret, 64, "v1_%s", b64);
	free(b64);
	return 0;
}

static enum srv_auth_user user_of(const char *n, size_t len, char *name, size_t size)
{
	snprintf(name, size, "%.*s", (int)len, n);
	if (len == strlen(SRV_SANDBOX_USER) && strncmp(n, SRV_SANDBOX_USER, len) == 0)
		return SRV_USER_SANDBOX;
	if (len == 4 && strncmp(n, "root", 4) == 0)
		return SRV_USER_ROOT;
	return SRV_USER_UNKNOWN;
}

/* "Basic base64(NAME:PASSWORD)", as Go's Request.BasicAuth() reads it (envd's): the scheme in
 * any case; anything else is no user named. */
static enum srv_auth_user basic_user(const char *h, char *name, size_t size)
{
	_cleanup_free_ uint8_t *raw = NULL;
	size_t len = 0;
	const char *colon;

	if (strncasecmp(h, "Basic ", 6) != 0)
		return SRV_USER_SANDBOX;
	h += 6;
	if (srv_b64_decode(h, strlen(h), &raw, &len) < 0 || !raw ||
	    !(colon = memchr(raw, ':', len))) {
		snprintf(name, size, "(not base64 of NAME:)");
		return SRV_USER_UNKNOWN;
	}
	return user_of((const char *)raw, (size_t)(colon - (const char *)raw), name, size);
}

enum srv_auth_user srv_auth_user(const char *authorization, const char *query_user, char *name,
				 size_t size)
{
	enum srv_auth_user u = SRV_USER_SANDBOX;

	if (authorization)
		u = basic_user(authorization, name, size);
	if (u == SRV_USER_SANDBOX && query_user)
		u = user_of(query_user, strlen(query_user), name, size);
	return u;
}
