/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* sbconfig.h - the config every sandbox is made from (sbconfig.c). */
#pragma once

#include <stdbool.h>

#include "cordon.h"

/* What a create picked, among what the server allows: its template's root, its allow-list. */
struct srv_make_spec {
	const char *rootfs; /* NULL: the host's root */
	bool own_net;	    /* false: the server's --allow-net */
	char **allow_net;   /* own_net: this list (NULL: none, no network) */
};

/* A new config from srv_opts and spec (NULL: the defaults), its workdir workdir (shown as
 * /home/user inside). */
int srv_sbconfig_make(const char *workdir, const struct srv_make_spec *spec,
		      struct cordon_config **ret, struct cordon_error *err);
