/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* audit_files.c - a copy-on-write workdir's changes as the audit trail's "file" events, read
 * from its layer's manifest (no walk). Runs in the supervisor. */
#include <string.h>

#include "events.h"
#include "layer.h"

static const char *layer_type(enum cd_layer_type t)
{
	return t == CD_LT_DIR ? "dir" : t == CD_LT_SYMLINK ? "symlink" : "file";
}

static void layer_event(const struct cd_audit *a, const struct cd_layer_change *ch)
{
	static const char hex[] = "0123456789abcdef";
	const struct cd_layer_state *st = ch->op == CD_LAYER_DELETE ? &ch->base : &ch->now;
	char sha[65];

	for (size_t i = 0; i < 32; i++) {
		sha[2 * i] = hex[st->sha256[i] >> 4];
		sha[2 * i + 1] = hex[st->sha256[i] & 15];
	}
	sha[64] = '\0';
	cd_event_file(a, &(struct cd_file_event){
				 .change = ch->op == CD_LAYER_ADD      ? "created"
					   : ch->op == CD_LAYER_MODIFY ? "modified"
								       : "deleted",
				 .path = ch->path,
				 .type = layer_type(st->type),
				 .size = st->size,
				 .mode = st->mode,
				 .sha256 = ch->op != CD_LAYER_DELETE && st->type != CD_LT_DIR ? sha : NULL,
			 });
}

void cd_layer_audit_files(const struct cd_audit *a, const struct cd_layer *l)
{
	if (!cd_audit_on(a))
		return;
	for (size_t i = 0; i < l->n_changes; i++)
		layer_event(a, &l->changes[i]);
}
