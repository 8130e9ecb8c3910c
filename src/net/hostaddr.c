/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * hostaddr.c - the host's own addresses, over rtnetlink with libmnl: the local routing table
 * (RTM_GETROUTE dump, IPv4 and IPv6), which holds every interface address and also the prefixes
 * routed to the host itself ("AnyIP": ip route add local 192.0.2.0/24 dev lo). Runs in the
 * supervisor when the egress proxy starts, in the host's network namespace: a name that resolves
 * to one of them would reach the host's services bound to 0.0.0.0 or ::, as 127.0.0.1 would.
 */
#include <libmnl/libmnl.h>
#include <linux/if_addr.h>
#include <linux/rtnetlink.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#include "hostaddr.h"
#include "util.h"

/* A dump's datagrams are as large as the buffer it is read into allows, up to 32 KiB
 * (MNL_SOCKET_DUMP_SIZE in newer libmnl): a smaller buffer would truncate them. */
#define DUMP_SIZE 32768

static void mnl_socket_closep(struct mnl_socket **nl)
{
	if (*nl)
		mnl_socket_close(*nl);
}

static int add(struct cd_addr_list *l, const struct sockaddr_storage *ss, unsigned bits)
{
	struct sockaddr_storage *a;
	uint8_t *b;

	/* room for 4, then for twice as many each time n reaches a power of two */
	if (l->n == 0 || (l->n >= 4 && (l->n & (l->n - 1)) == 0)) {
		a = reallocarray(l->addrs, l->n ? 2 * l->n : 4, sizeof(*a));
		if (!a)
			return -ENOMEM;
		l->addrs = a;
		b = reallocarray(l->bits, l->n ? 2 * l->n : 4, sizeof(*b));
		if (!b)
			return -ENOMEM;
		l->bits = b;
	}
	l->bits[l->n] = (uint8_t)bits;
	l->addrs[l->n++] = *ss;
	return 0;
}

static int attr_cb(const struct nlattr *attr, void *data)
{
	const struct nlattr **tb = data;

	if (mnl_attr_type_valid(attr, RTA_MAX) > 0)
		tb[mnl_attr_get_type(attr)] = attr;
	return MNL_CB_OK;
}

/* One route: a local one (the host's own address, or a prefix routed to the host) is kept. */
static int route_cb(const struct nlmsghdr *nlh, void *data)
{
	const struct nlattr *tb[RTA_MAX + 1] = { 0 }, *a;
	const struct rtmsg *rt = mnl_nlmsg_get_payload(nlh);
	struct sockaddr_storage ss = { .ss_family = rt->rtm_family };
	struct sockaddr_in *in = (struct sockaddr_in *)&ss;
	struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&ss;

	if (nlh->nlmsg_type != RTM_NEWROUTE || mnl_nlmsg_get_payload_len(nlh) < sizeof(*rt) ||
	    rt->rtm_type != RTN_LOCAL || mnl_attr_parse(nlh, sizeof(*rt), attr_cb, tb) < 0)
		return MNL_CB_OK;
	a = tb[RTA_DST];
	if (!a)
		return MNL_CB_OK;
	if (rt->rtm_family == AF_INET && mnl_attr_get_payload_len(a) == sizeof(in->sin_addr))
		memcpy(&in->sin_addr, mnl_attr_get_payload(a), sizeof(in->sin_addr));
	else if (rt->rtm_family == AF_INET6 &&
		 mnl_attr_get_payload_len(a) == sizeof(in6->sin6_addr))
		memcpy(&in6->sin6_addr, mnl_attr_get_payload(a), sizeof(in6->sin6_addr));
	else
		return MNL_CB_OK;
	if (add(data, &ss, rt->rtm_dst_len) < 0) {
		errno = ENOMEM;
		return MNL_CB_ERROR;
	}
	return MNL_CB_OK;
}

static int dump(struct mnl_socket *nl, char *buf, struct cd_addr_list *l, struct cordon_error *err)
{
	unsigned seq = (unsigned)time(NULL), portid = mnl_socket_get_portid(nl);
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct rtmsg *rt;
	ssize_t n;
	int r;

	nlh->nlmsg_type = RTM_GETROUTE;
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
	nlh->nlmsg_seq = seq;
	rt = mnl_nlmsg_put_extra_header(nlh, sizeof(*rt));
	rt->rtm_family = AF_UNSPEC; /* IPv4 and IPv6, every table: local routes are in "local" */
	if (mnl_socket_sendto(nl, nlh, nlh->nlmsg_len) < 0)
		return cd_fail_errno(err, errno, "net", "ask for the host's addresses");
	do {
		n = mnl_socket_recvfrom(nl, buf, DUMP_SIZE);
		if (n < 0)
			return cd_fail_errno(err, errno, "net", "read the host's addresses");
		/* MNL_CB_STOP (0) at NLMSG_DONE; an error ack or our ENOMEM is -1 with errno */
		r = mnl_cb_run(buf, (size_t)n, seq, portid, route_cb, l);
		if (r < 0)
			return cd_fail_errno(err, errno, "net", "read the host's addresses");
	} while (r > 0);
	return 0;
}

int cd_hostaddr_read(struct cd_addr_list *ret, struct cordon_error *err)
{
	_cleanup_(mnl_socket_closep) struct mnl_socket *nl = NULL;
	_cleanup_free_ char *buf = malloc(DUMP_SIZE);
	struct cd_addr_list l = { 0 };
	int r;

	if (!buf)
		return cd_fail(err, ENOMEM, "net", "out of memory");
	nl = mnl_socket_open2(NETLINK_ROUTE, SOCK_CLOEXEC);
	if (!nl)
		return cd_fail_errno(err, errno, "net", "open rtnetlink");
	if (mnl_socket_bind(nl, 0, MNL_SOCKET_AUTOPID) < 0)
		return cd_fail_errno(err, errno, "net", "bind rtnetlink");
	r = dump(nl, buf, &l, err);
	if (r < 0) {
		cd_addr_list_free(&l);
		return r;
	}
	*ret = l;
	return 0;
}
