/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * agent_ports.c - cordon-agent's CONNECT (proto.h): a TCP socket to a port of the sandbox's own
 * loopback, made here because only a process in the sandbox's network namespace can reach it,
 * and passed to the caller (cordon_session_connect(), session.c), which then speaks through it
 * as if it were inside. Runs inside the sandbox, as the sandbox, in the agent's main loop: the
 * connect is non-blocking (a listener whose backlog is full must not stall the agent), so the
 * caller waits for it to complete and reads its outcome (SO_ERROR) itself.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "proto.h"

int cd_agent_connect(int fd, const struct cd_sp_msg *m);

static int reply_errno(int fd, int e, unsigned port, const char *addr)
{
	char text[160];

	snprintf(text, sizeof(text), "connect to %s port %u inside: %s", addr, port, strerror(e));
	cd_sp_send_simple(fd, CD_SP_ERROR, e, 0, text, strlen(text), -1);
	return -e;
}

/* m->h.value: the port; m->h.flags 1: ::1 rather than 127.0.0.1. */
int cd_agent_connect(int fd, const struct cd_sp_msg *m)
{
	struct sockaddr_in s4 = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	struct sockaddr_in6 s6 = {.sin6_family = AF_INET6, .sin6_addr = IN6ADDR_LOOPBACK_INIT};
	bool v6 = m->h.flags & 1;
	const char *addr = v6 ? "::1" : "127.0.0.1";
	unsigned port = (unsigned)m->h.value;
	int sock, r, e;

	if (m->h.value <= 0 || m->h.value > 65535 || m->n_fd)
		return reply_errno(fd, EINVAL, port, addr);
	s4.sin_port = s6.sin6_port = htons((uint16_t)port);
	sock = socket(v6 ? AF_INET6 : AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (sock < 0)
		return reply_errno(fd, errno, port, addr);
	r = v6 ? connect(sock, (struct sockaddr *)&s6, sizeof(s6))
	       : connect(sock, (struct sockaddr *)&s4, sizeof(s4));
	e = r < 0 ? errno : 0;
	if (e && e != EINPROGRESS) {
		close(sock);
		return reply_errno(fd, e, port, addr);
	}
	r = cd_sp_send_simple(fd, CD_SP_OK, e, 0, NULL, 0, sock);
	close(sock); /* the caller's now */
	return r;
}
