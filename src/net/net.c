/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * net.c - loopback up in the sandbox's new network namespace, over rtnetlink with libmnl.
 * Runs in the child (pid 1), which holds CAP_NET_ADMIN over its own network namespace.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>
#include <libmnl/libmnl.h>
#include <stdint.h>
#include <linux/rtnetlink.h>
#include <net/if.h>
#include <string.h>
#include <time.h>

#include "net.h"
#include "util.h"

static void mnl_socket_closep(struct mnl_socket **nl)
{
	if (*nl)
		mnl_socket_close(*nl);
}

int cd_net_loopback_up(struct cordon_error *err)
{
	_cleanup_(mnl_socket_closep) struct mnl_socket *nl = NULL;
	char buf[8192]; /* MNL_SOCKET_BUFFER_SIZE is a run-time value */
	struct nlmsghdr *nlh;
	struct ifinfomsg *ifm;
	unsigned seq = (unsigned)time(NULL), portid;
	ssize_t n;

	nl = mnl_socket_open2(NETLINK_ROUTE, SOCK_CLOEXEC);
	if (!nl)
		return cd_fail_errno(err, errno, "net", "open rtnetlink");
	if (mnl_socket_bind(nl, 0, MNL_SOCKET_AUTOPID) < 0)
		return cd_fail_errno(err, errno, "net", "bind rtnetlink");
	portid = mnl_socket_get_portid(nl);

	nlh = mnl_nlmsg_put_header(buf);
	nlh->nlmsg_type = RTM_NEWLINK;
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK;
	nlh->nlmsg_seq = seq;
	ifm = mnl_nlmsg_put_extra_header(nlh, sizeof(*ifm));
	ifm->ifi_family = AF_UNSPEC;
	ifm->ifi_index = 1; /* lo is always index 1 in a new network namespace */
	ifm->ifi_change = IFF_UP;
	ifm->ifi_flags = IFF_UP;

	if (mnl_socket_sendto(nl, nlh, nlh->nlmsg_len) < 0)
		return cd_fail_errno(err, errno, "net", "send RTM_NEWLINK lo up");
	n = mnl_socket_recvfrom(nl, buf, sizeof(buf));
	if (n < 0)
		return cd_fail_errno(err, errno, "net", "receive the ack for lo up");
	/* an error ack comes back as -1 with errno set to the kernel's error */
	if (mnl_cb_run(buf, (size_t)n, seq, portid, NULL, NULL) < 0)
		return cd_fail_errno(err, errno, "net", "bring lo up");
	return 0;
}

int cd_net_dns_socket(int type, struct cordon_error *err)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons(53),
				  .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	int fd = socket(AF_INET, type | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return cd_fail_errno(err, errno, "net", "make the resolver's socket");
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
	    (type == SOCK_STREAM && listen(fd, 16) < 0)) {
		int r = cd_fail_errno(err, errno, "net", "bind 127.0.0.1:53 (%s) for the resolver",
				      type == SOCK_STREAM ? "TCP" : "UDP");

		close(fd);
		return r;
	}
	return fd;
}

/* The egress proxy's socket: made here, in the sandbox's namespace, and accepted on by the
 * supervisor outside it (the listening socket stays in the namespace it was made in). */
int cd_net_proxy_listen(uint16_t port, struct cordon_error *err)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons(port),
				  .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return cd_fail_errno(err, errno, "net", "make the proxy's socket");
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 || listen(fd, 512) < 0) {
		int r = cd_fail_errno(err, errno, "net", "listen on 127.0.0.1:%u for the proxy",
				      port);

		close(fd);
		return r;
	}
	return fd;
}
