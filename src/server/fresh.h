/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* fresh.h - a session in a fresh workdir (fresh.c). */
#pragma once

#include <sys/stat.h>

#include "cordon.h"
#include "sbconfig.h"

struct srv_fresh {
	struct cordon_session *session;
	char *workdir;
	struct stat workdir_st; /* to remove it when its supervisor could not */
};
/* A session from the server's options and spec (NULL: the defaults), in a fresh workdir. */
int srv_fresh_make(const struct srv_make_spec *spec, struct srv_fresh *ret,
		   struct cordon_error *err);
/* Destroyed (its supervisor removes the workdir), *p emptied. */
void srv_fresh_drop(struct srv_fresh *p);
