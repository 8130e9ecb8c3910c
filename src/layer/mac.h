/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * mac.h - the layers' key, and the MAC that makes a manifest cordon's own.
 *
 * A manifest says where apply writes and what: whoever can write the store could otherwise
 * forge one (a sandbox given the store through a path nobody foresaw, another mount of it, a
 * second user). So every manifest ends with "mac HEX": HMAC-SHA256 (nettle's), under a key kept
 * outside every store, of "cordon-layer-mac 1", a NUL, the layer's id, a NUL and every byte of
 * the manifest before that line. A manifest whose MAC does not match, or that has none (an
 * earlier cordon's), is not read: not listed as a layer, not diffed, applied or seeded.
 *
 * The key: 32 random bytes in STATE/layer.key, STATE being the caller's state directory
 * (cd_marks_state_dir: /var/lib/cordon for root, else $XDG_STATE_HOME/cordon or
 * ~/.local/state/cordon), made on first use by a save. Checked at every use: a regular file of
 * the caller's, mode 0600, one link, 32 bytes, opened without following a symlink, in a
 * directory of the caller's or root's that no one else can write, reached from "/" through no
 * symlink and no earlier sandbox's workdir, and neither in the store nor below it. A run never
 * has its workdir over STATE (sandbox.c refuses it). It is read where it is needed and wiped
 * after (never kept: a sandbox's pid 1 is a fork of the process that saves).
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <nettle/hmac.h>

#include "cordon.h"

#define CD_LAYER_KEY_NAME "layer.key"

struct cd_layer_key {
	bool have;     /* false: there is no key (no layer was saved with one): nothing checks */
	uint8_t k[32];
	char path[512]; /* STATE/layer.key, for messages */
};

/* The caller's key (see above); make: made when missing (a save), else ret->have is false.
 * store_fd (or -1): the store it will check, which must not hold it. A key or its directory
 * that fails a check: -EPERM (or -ELOOP) naming what and why. */
int cd_layer_key_get(int store_fd, bool make, struct cd_layer_key *ret, struct cordon_error *err);
/* Forget it (explicit_bzero). */
void cd_layer_key_wipe(struct cd_layer_key *k);

/* The MAC of one manifest, given a piece at a time. The context holds what the key does: it
 * is wiped by final. */
struct cd_layer_mac {
	struct hmac_sha256_ctx ctx;
};
void cd_layer_mac_init(struct cd_layer_mac *m, const struct cd_layer_key *k, const char *id);
void cd_layer_mac_update(struct cd_layer_mac *m, const void *data, size_t len);
void cd_layer_mac_final(struct cd_layer_mac *m, uint8_t out[32]);

/* Does body (a manifest without its "mac" line) carry the MAC mac under k for layer id? In
 * constant time. */
bool cd_layer_mac_check(const struct cd_layer_key *k, const char *id, const void *body,
			size_t len, const uint8_t mac[32]);
