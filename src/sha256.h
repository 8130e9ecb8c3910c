/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* sha256.h - SHA-256 (FIPS 180-4), for the audit trail's file hashes. Pure. */
#pragma once

#include <stddef.h>
#include <stdint.h>

struct cd_sha256 {
	uint32_t h[8];
	uint64_t len; /* bytes so far */
	uint8_t buf[64];
	size_t n; /* bytes in buf */
};

void cd_sha256_init(struct cd_sha256 *s);
void cd_sha256_update(struct cd_sha256 *s, const void *data, size_t len);
void cd_sha256_final(struct cd_sha256 *s, uint8_t out[32]);
/* 64 lowercase hex digits and a NUL */
void cd_sha256_hex(const uint8_t digest[32], char out[65]);
