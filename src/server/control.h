/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* control.h - the REST control plane, and the sessions every sandbox is made of (control.c). */
#pragma once

#include <sys/stat.h>

#include "cordon.h"
#include "http.h"

/* the newest envd version the SDK (e2b 2.51.0) compares against: its newest code paths */
#define SRV_ENVD_VERSION "0.6.4"

srv_handler_fn srv_control_route(const char *method, const char *url, char **ret_sub);

struct srv_pooled {
	struct cordon_session *session;
	char *workdir;
	struct stat workdir_st; /* to remove it when its supervisor could not */
};
/* A session from the server's options alone, in a fresh workdir. */
int srv_control_make_session(struct srv_pooled *ret, struct cordon_error *err);
void srv_control_drop_session(struct srv_pooled *p);
