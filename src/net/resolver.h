/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * resolver.h - the sandbox's resolver: UDP and TCP sockets on 127.0.0.1:53, made inside the
 * sandbox's network namespace (its /etc/resolv.conf names it), served by the supervisor. It
 * answers every query with an error and tells the names: nothing is looked up, nothing is sent
 * anywhere for them. A name the allow-list refuses (or any, without --allow-net) gets NXDOMAIN
 * and a notice once; an allowed name gets REFUSED, silently: it is reached through the proxy,
 * which looks it up on the host.
 */
#pragma once

#include <stdint.h>

#include "allow.h"
#include "audit.h"

#define CD_RESOLVER_ADDR "127.0.0.1" /* port 53, inside the sandbox */
#define CD_RESOLVER_MAX_NAMES 64     /* names told one by one; past them, counted */

struct cd_resolver_opts {
	const struct cd_allow *allow; /* --allow-net (n_allow 0: no network) */
	size_t n_allow;
	const struct cd_audit *audit; /* one "dns" event per name told, when on */
	cordon_log_fn log;            /* -v: each lookup */
	void *log_data;
	cordon_log_fn notice;         /* "no network: looked up NAME (...)", once per name */
	void *notice_data;
};

struct cd_resolver;

/* Serve udp_fd (taken: closed by cd_resolver_free). */
int cd_resolver_new(int udp_fd, const struct cd_resolver_opts *o, struct cd_resolver **ret,
		    struct cordon_error *err);
/* Serve listen_fd too (taken): TCP on 127.0.0.1:53, one query per connection. */
void cd_resolver_add_tcp(struct cd_resolver *r, int listen_fd);
/* The fd to poll for POLLIN; then call cd_resolver_run(). */
int cd_resolver_fd(const struct cd_resolver *r);
/* Answer what has come, without blocking (a bounded number of queries per call). */
void cd_resolver_run(struct cd_resolver *r);
/* Say how many more names there were than were told, and free it all. NULL is fine. */
void cd_resolver_free(struct cd_resolver *r);
