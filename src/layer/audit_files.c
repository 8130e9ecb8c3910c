/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* audit_files.c - a copy-on-write workdir's changes as the audit trail's "file" events, read
 * from its layer's manifest (no walk). Runs in the supervisor. */
#include <string.h>

#include "audit.h"
#include "layer.h"

static const char *layer_type(enum cd_layer_type t)
{
	return t == CD_LT_DIR ? "dir" : t == CD_LT_SYMLINK ? "symlink" : "file";
}

static void layer_event(const struct cd_audit *a, const struct cd_layer_change *ch)
{
	static const char hex[] = "0123456789abcdef";
	const struct cd_layer_state *st = ch->op == CD_LAYER_DELETE ? &ch->base : &ch->now;
	bool lossy = false;
	char sha[65];
	struct cd_json j;

	for (size_t i = 0; i < 32; i++) {
		sha[2 * i] = hex[st->sha256[i] >> 4];
		sha[2 * i + 1] = hex[st->sha256[i] & 15];
	}
	sha[64] = '\0';
	cd_audit_begin(a, &j, "file");
	cd_json_kv_string(&j, "change", ch->op == CD_LAYER_ADD      ? "created"
					: ch->op == CD_LAYER_MODIFY ? "modified"
								    : "deleted");
	cd_json_key(&j, "path");
	cd_audit_string(&j, ch->path, strlen(ch->path), &lossy);
	cd_json_kv_string(&j, "type", layer_type(st->type));
	cd_json_kv_uint(&j, "size", st->size);
	cd_json_kv_uint(&j, "mode", st->mode & 07777);
	cd_json_key(&j, "sha256");
	if (ch->op != CD_LAYER_DELETE && st->type != CD_LT_DIR)
		cd_json_string(&j, sha);
	else
		cd_json_null(&j);
	if (lossy) {
		cd_json_key(&j, "path_hex");
		cd_audit_hex(&j, ch->path, strlen(ch->path));
	}
	cd_audit_end(a, &j);
}

void cd_layer_audit_files(const struct cd_audit *a, const struct cd_layer *l)
{
	if (!cd_audit_on(a))
		return;
	for (size_t i = 0; i < l->n_changes; i++)
		layer_event(a, &l->changes[i]);
}
