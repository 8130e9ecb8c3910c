/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * proxy.h - the egress proxy (--allow-net): an event loop in the supervisor that accepts on a
 * listening socket made inside the sandbox's network namespace and connects out from the host,
 * to allowed hosts only. HTTP CONNECT, absolute-URI HTTP and SOCKS5 CONNECT; names resolved
 * with c-ares.
 */
#pragma once

#include <stdint.h>

#include "allow.h"
#include "audit.h"

#define CD_PROXY_PORT 3128 /* on 127.0.0.1 inside the sandbox */
#define CD_PROXY_URL  "http://127.0.0.1:3128"


struct cd_proxy_opts {
	const struct cd_allow *allow;
	size_t n_allow;
	uint64_t idle_ns;       /* close a connection idle this long (head, connect, tunnel) */
	unsigned max_conns;     /* at once */
	const struct cd_audit *audit; /* one "net" event per connection when on */
	cordon_log_fn log;            /* and one line (-v), when set */
	void *log_data;
	cordon_log_fn notice;         /* "egress refused: HOST:PORT: why", once per host and port */
	void *notice_data;
};

struct cd_proxy;

/* Start on listen_fd (taken: closed by cd_proxy_free). */
int cd_proxy_new(int listen_fd, const struct cd_proxy_opts *o, struct cd_proxy **ret,
		 struct cordon_error *err);
/* The fd to poll for POLLIN; then call cd_proxy_run(). */
int cd_proxy_fd(const struct cd_proxy *p);
/* Handle whatever is ready, without blocking. */
void cd_proxy_run(struct cd_proxy *p);
/* Close every connection (each gets its audit event) and free it all. NULL is fine. */
void cd_proxy_free(struct cd_proxy *p, struct cordon_proxy_counts *stats);
