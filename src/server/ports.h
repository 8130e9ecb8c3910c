/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* ports.h - a sandbox's own ports, forwarded (ports.c). */
#pragma once

#include <microhttpd.h>

#include "req.h"

/* The sandbox's server is silent at most this long while an answer is awaited or read (as
 * long as a client may be: http.c's connection timeout) */
#define SRV_PORT_IDLE_NS (120ull * NSEC_PER_SEC)
/* Bytes offered to either side are taken within this, or the request (the upgraded
 * connection) ends */
#define SRV_PORT_STALL_NS (30ull * NSEC_PER_SEC)

/* At the head of a request for port (authenticated, r->sb its sandbox, the connection its
 * ports' tenant): connects inside and sends the head (or answers 502 naming the port), takes
 * the body as it comes, and sets r->handler to srv_ports_run. */
enum MHD_Result srv_ports_begin(struct srv_req *r, unsigned port);
/* At the body's end: the answer, its body streamed; a WebSocket's bytes both ways once
 * answered 101. */
enum MHD_Result srv_ports_run(struct srv_req *r);
