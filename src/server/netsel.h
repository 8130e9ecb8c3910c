/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* netsel.h - the network a create asks for (E2B's allow_internet_access, network.allowOut,
 * network.denyOut) as an egress allow-list within the server's --allow-net (netsel.c). */
#pragma once

#include <stddef.h>

/* What a create asked for; NULL-terminated lists, NULL when not given. */
struct srv_netsel {
	int internet; /* allow_internet_access: -1 not given, 0 false, 1 true */
	char **allow_out;
	char **deny_out;
};

/* The sandbox's allow-list (specs for cordon_config_allow_net(); an empty list: no network)
 * into *ret, from ceiling (the server's --allow-net, each already accepted by the library).
 * -EINVAL with a one-line why naming the entry when the request asks for more than the
 * ceiling or for what the proxy cannot enforce (never widened); -ENOMEM. *ret may be NULL: an
 * empty list. Pure. */
int srv_netsel_decide(char *const *ceiling, const struct srv_netsel *q, char ***ret, char *why,
		      size_t why_size);
