/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* conns.h - who holds the connection slots (conns.c). */
#pragma once

#include <microhttpd.h>
#include <stdbool.h>
#include <stdint.h>

#include "cordon.h"

#define SRV_HEAD_DEADLINE_S 10	 /* a connection not yet authenticated is closed after this */
#define SRV_CONN_GRACE_MS   1000 /* ... and not pushed out by newer ones before this */
struct srv_conn_limits {
	unsigned max;	     /* --max-connections */
	unsigned wait_max;   /* connections not yet authenticated */
	unsigned peer_max;   /* ... of one peer with a cap (not loopback, not our uid) */
	unsigned tenant_max; /* one tenant's (an API key's, a sandbox's) */
};
struct srv_conn_counts {
	unsigned waiting, tenants; /* held now */
	bool peer_capped;	   /* the new one's peer has a cap... */
	unsigned peer_waiting;	   /* ... and holds this many waiting ones */
	uint64_t oldest_ms;	   /* how long the oldest waiting one has waited */
};
enum srv_conn_verdict { SRV_CONN_ACCEPT, SRV_CONN_EVICT_OLDEST, SRV_CONN_REFUSE };
/* pure (tests/unit/test-conns.c) */
void srv_conns_limits(unsigned max_connections, struct srv_conn_limits *ret);
enum srv_conn_verdict srv_conns_decide(const struct srv_conn_limits *l,
				       const struct srv_conn_counts *c);
int srv_conns_start(struct cordon_error *err); /* before the daemon */
unsigned srv_conns_mhd_limit(void);
unsigned srv_conns_tenant_max(void);
void srv_conns_notify(void *cls, struct MHD_Connection *mc, void **socket_context,
		      enum MHD_ConnectionNotificationCode code);
/* A request on mc authenticated as tenant: false when the tenant holds its cap already. */
bool srv_conns_tenant(struct MHD_Connection *mc, const char *tenant);
void srv_conns_request_done(struct MHD_Connection *mc);
