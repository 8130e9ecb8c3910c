/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* templates.h - the sandboxes' templates: named roots (--template), the host's by default
 * (templates.c). */
#pragma once

#include <stddef.h>

#include "cordon.h"

struct srv_template {
	char *name;
	char *rootfs; /* the read-only root; NULL: the host's "/" */
	char *source; /* what the operator gave: a directory, "oci-archive:PATH", or "host" */
};

/* --template NAME=DIR or NAME=oci-archive:PATH (serve.c's option table; before any thread) */
int srv_templates_add(const char *arg, struct cordon_error *err);
/* At start, once the state directory is there, before any thread: each archive unpacked into
 * STATE-DIR/templates/NAME; the host's root named for what the operator left unnamed. */
int srv_templates_setup(struct cordon_error *err);
/* The unpacked roots removed (at the server's end). */
void srv_templates_remove(void);
/* By name (case as given), or NULL: no such template. */
const struct srv_template *srv_templates_find(const char *name);
/* Each template, i < n; NULL past the end. */
const struct srv_template *srv_templates_at(size_t i);
