/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* sha256.c - SHA-256 from nettle (sha256.h): a reviewed, tested implementation rather than our
 * own. */
#include "sha256.h"

_Static_assert(SHA256_DIGEST_SIZE == 32, "a SHA-256 digest is 32 bytes");

void cd_sha256_init(struct cd_sha256 *s)
{
	sha256_init(&s->ctx);
}

void cd_sha256_update(struct cd_sha256 *s, const void *data, size_t len)
{
	sha256_update(&s->ctx, len, data);
}

void cd_sha256_final(struct cd_sha256 *s, uint8_t out[32])
{
	sha256_digest(&s->ctx, SHA256_DIGEST_SIZE, out);
}

void cd_sha256_hex(const uint8_t d[32], char out[65])
{
	static const char hex[] = "0123456789abcdef";

	for (int i = 0; i < 32; i++) {
		out[2 * i] = hex[d[i] >> 4];
		out[2 * i + 1] = hex[d[i] & 15];
	}
	out[64] = '\0';
}
