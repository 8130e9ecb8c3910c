/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * hostaddr.h - the host's own addresses, for the DNS-rebinding rule (allow.h). Supervisor side:
 * the egress proxy reads them in the network namespace it connects out from.
 */
#pragma once

#include "allow.h"
#include "cordon.h"

/* Every IPv4 and IPv6 address on an interface of the current network namespace (an
 * RTM_GETADDR dump over rtnetlink) into *ret, which the caller frees with cd_addr_list_free. */
int cd_hostaddr_read(struct cd_addr_list *ret, struct cordon_error *err);
