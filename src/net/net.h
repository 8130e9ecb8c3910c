/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* net.h - the sandbox's network namespace. Child side. */
#pragma once

#include "cordon.h"

#include <stdint.h>

/* Bring the loopback interface of the current network namespace up (rtnetlink, libmnl). */
int cd_net_loopback_up(struct cordon_error *err);

/* The egress proxy's listening socket on 127.0.0.1:port, in the current network namespace: the
 * supervisor accepts on it from outside. The fd, or -errno with err set. */
int cd_net_proxy_listen(uint16_t port, struct cordon_error *err);

/* The sandbox's resolver's socket on 127.0.0.1:53, in the current network namespace (a
 * privileged port: made while pid 1 has its capabilities): type SOCK_DGRAM, or SOCK_STREAM
 * listening; the supervisor answers on it (resolver.h). The fd, or -errno with err set. */
int cd_net_dns_socket(int type, struct cordon_error *err);
