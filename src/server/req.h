/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* req.h - a request as the router (routes.c) makes it and its handler reads it: its exchange
 * with the transport (answers go through it: srv_http_*(r->http, ...)), its route's {id}, its
 * sandbox, the handler's own state. A header alone: routes.c makes and frees it. Runs in the
 * server (connection threads). */
#pragma once

#include <microhttpd.h>

#include "http.h"
#include "registry.h"

struct srv_req;
typedef enum MHD_Result (*srv_handler_fn)(struct srv_req *r);

struct srv_req {
	struct srv_http *http; /* the transport's side */
	const char *method;    /* the transport's, for the request's life */
	const char *url;
	char *sub;		/* the route's {id} part, when it has one */
	struct srv_sandbox *sb; /* the data plane's sandbox (a reference) */
	struct srv_hold hold;	/* on sb's list while r holds it */
	srv_handler_fn handler;
	void *state; /* the handler's, freed by state_free */
	void (*state_free)(void *state);
};
