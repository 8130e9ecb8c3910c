/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * manifest.h - a layer's manifest as text (layer.h gives the format): written to a FILE,
 * parsed from a buffer, every field and path checked. Pure: no I/O but the FILE it is given.
 *
 * Header keys besides layer.h's: "saved UNIXTIME" (when the layer was stored; `created` is
 * when the run started) and "skipped N" (entries of the upper not kept: FIFOs, sockets,
 * devices). Unknown keys are refused: a manifest of a later format says so in its first line.
 * The "mac" line that ends a stored manifest is not the parser's: cd_layer_load checks it
 * (mac.h) and parses what comes before it.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "layer.h"

/* 16 lower-case hex digits, nothing else. */
bool cd_layer_id_valid(const char *id);
/* Relative, not empty, no "." or ".." component, no leading, trailing or doubled "/". */
bool cd_layer_path_valid(const char *p);

/* s with bytes below 0x21, '\' and 0x7f and above as \ooo. */
int cd_layer_escape(FILE *f, const char *s);

/* The manifest of l (its changes sorted by path; l->id is not written). 0 or -errno. */
int cd_layer_manifest_write(const struct cd_layer *l, FILE *f);
/* Parse and check a manifest; malformed: -EBADMSG, err naming the line. */
int cd_layer_manifest_parse(const char *buf, size_t len, struct cd_layer **ret,
			    struct cordon_error *err);

/* A manifest of format 1 (an earlier cordon's: no MAC)? */
bool cd_layer_manifest_is_v1(const char *buf, size_t len);
/* Its last line "mac HEX" (64 lower-case hex digits): *ret_body, the length before that line;
 * ret_mac, the MAC. false when there is no such line. */
bool cd_layer_manifest_split_mac(const char *buf, size_t len, size_t *ret_body,
				 uint8_t ret_mac[32]);

/* Sort changes by path, bytewise. */
void cd_layer_sort(struct cd_layer_change *c, size_t n);
/* The change at path (changes sorted), or NULL. */
const struct cd_layer_change *cd_layer_find(const struct cd_layer *l, const char *path);
bool cd_layer_state_equal(const struct cd_layer_state *a, const struct cd_layer_state *b);
/* "f 0644 12 <sha>" for messages: ret must hold 96 bytes. */
const char *cd_layer_state_str(const struct cd_layer_state *s, char ret[96]);
/* Whether a protect glob covers path, or a directory above it: cd_protect_glob_match() (protect_glob.h),
 * the rule the run's mounts followed ("*" matches a leading dot too: it protects more). */
bool cd_layer_protected(const char *glob, const char *path);
