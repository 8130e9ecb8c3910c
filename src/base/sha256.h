/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* sha256.h - SHA-256 (FIPS 180-4), for the audit trail's file hashes: a thin wrapper over
 * nettle's, so that callers keep one small interface and a hex form. Pure. */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include <nettle/sha2.h>

struct cd_sha256 {
	struct sha256_ctx ctx;
};

void cd_sha256_init(struct cd_sha256 *s);
void cd_sha256_update(struct cd_sha256 *s, const void *data, size_t len);
/* The digest of everything given since init; s then starts a new message (nettle resets it). */
void cd_sha256_final(struct cd_sha256 *s, uint8_t out[32]);
/* 64 lowercase hex digits and a NUL */
void cd_sha256_hex(const uint8_t digest[32], char out[65]);
