/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * test-conns.c - who gets cordon serve's connection slots (src/server/conns.c): the shares of
 * --max-connections, and what a new connection does to the waiting ones (kept, the oldest
 * pushed out, or itself refused). Pure: no server runs. TAP.
 */
#include <stdio.h>
#include <string.h>

#include "conns.h"

#include "../lib/tap.h"

static enum srv_conn_verdict decide(unsigned max, unsigned waiting, unsigned tenants,
				    uint64_t oldest_ms, bool capped, unsigned peer)
{
	struct srv_conn_limits l;
	struct srv_conn_counts c = {.waiting = waiting,
				    .tenants = tenants,
				    .peer_capped = capped,
				    .peer_waiting = peer,
				    .oldest_ms = oldest_ms};

	srv_conns_limits(max, &l);
	return srv_conns_decide(&l, &c);
}

static void test_limits(void)
{
	struct srv_conn_limits l;

	srv_conns_limits(256, &l);
	ok(l.max == 256 && l.wait_max == 64 && l.peer_max == 16 && l.tenant_max == 64,
	   "256 slots: 64 waiting, 16 of one capped peer, 64 a tenant");
	srv_conns_limits(1, &l);
	ok(l.max == 1 && l.wait_max == 1 && l.peer_max == 1 && l.tenant_max == 1,
	   "1 slot: each share at least 1");
	srv_conns_limits(7, &l);
	ok(l.wait_max == 1 && l.peer_max == 1 && l.tenant_max == 1, "7 slots: 1, 1, 1");
}

static void test_decide(void)
{
	const uint64_t young = SRV_CONN_GRACE_MS - 1, old = SRV_CONN_GRACE_MS;

	is_int(decide(256, 0, 0, 0, false, 0), SRV_CONN_ACCEPT, "an empty server takes it");
	is_int(decide(256, 63, 100, old, false, 0), SRV_CONN_ACCEPT,
	       "under the waiting budget: taken");
	is_int(decide(256, 64, 0, old, false, 0), SRV_CONN_EVICT_OLDEST,
	       "at the waiting budget: the oldest waiting one (past its grace) makes room");
	is_int(decide(256, 64, 0, young, false, 0), SRV_CONN_ACCEPT,
	       "at the budget, but every waiting one is younger than the grace: taken (a burst)");
	is_int(decide(256, 200, 56, young, false, 0), SRV_CONN_EVICT_OLDEST,
	       "all slots held, some waiting: the oldest waiting one goes, young or not");
	is_int(decide(256, 0, 256, 0, false, 0), SRV_CONN_REFUSE,
	       "all slots held by tenants: refused (no tenant loses one)");
	is_int(decide(256, 10, 0, 0, true, 16), SRV_CONN_REFUSE,
	       "a capped peer (not loopback) at its 16 waiting: refused, pushes no one out");
	is_int(decide(256, 10, 0, 0, true, 15), SRV_CONN_ACCEPT, "... one under: taken");
	is_int(decide(256, 10, 0, 0, false, 500), SRV_CONN_ACCEPT,
	       "loopback (no cap): its count does not matter");
	/* the flood of the review: 300 half-sent requests, no key, from one local address */
	{
		struct srv_conn_limits l;
		unsigned waiting = 0, tenants = 0;

		srv_conns_limits(256, &l);
		for (int i = 0; i < 300; i++) {
			struct srv_conn_counts c = {
			    .waiting = waiting, .tenants = tenants, .oldest_ms = old};

			if (srv_conns_decide(&l, &c) == SRV_CONN_ACCEPT)
				waiting++;
		}
		ok(waiting == 64, "300 waiting ones past their grace: 64 held (%u)", waiting);
		struct srv_conn_counts t = {.waiting = waiting, .tenants = 0, .oldest_ms = old};
		ok(srv_conns_decide(&l, &t) == SRV_CONN_EVICT_OLDEST,
		   "... and a tenant's new connection still gets a slot");
	}
}

int main(void)
{
	test_limits();
	test_decide();
	return done_testing();
}
