/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * net.c - loopback up in the sandbox's new network namespace, over rtnetlink with libmnl.
 * Runs in the child (pid 1), which holds CAP_NET_ADMIN over its own network namespace.
 */
#include <fcntl.h>
#include <libmnl/libmnl.h>
#include <linux/rtnetlink.h>
#include <net/if.h>
#include <sched.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>

#include "net.h"
#include "sync.h"
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

/* The helper: a new network namespace, lo up, and its fd back to pid 1. */
_Noreturn static void netns_helper(int sock)
{
	struct cordon_error err = { 0 };
	int fd = -1;

	close_range(3, (unsigned)sock - 1, 0); /* whatever pid 1 still holds of the supervisor's */
	close_range((unsigned)sock + 1, ~0u, 0);
	if (unshare(CLONE_NEWNET) < 0)
		cd_fail_errno(&err, errno, "net", "create a network namespace");
	else if (cd_net_loopback_up(&err) == 0) {
		/* still the host's /proc in here: "self" is this process */
		fd = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			cd_fail_errno(&err, errno, "net", "open the new network namespace");
	}
	if (fd >= 0)
		cd_msg_send(sock, CD_MSG_GO, 0, NULL, fd);
	else
		cd_msg_send(sock, CD_MSG_ERROR, 0, &err, -1);
	_exit(0);
}

int cd_netns_start(struct cd_netns_job *job, struct cordon_error *err)
{
	int sv[2];
	pid_t pid;

	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
		return cd_fail_errno(err, errno, "net", "socketpair");
	pid = fork();
	if (pid < 0) {
		close(sv[0]);
		close(sv[1]);
		return cd_fail_errno(err, errno, "net", "fork the network helper");
	}
	if (pid == 0) {
		close(sv[0]);
		netns_helper(sv[1]);
	}
	close(sv[1]);
	*job = (struct cd_netns_job){ .pid = pid, .sock = sv[0] };
	return 0;
}

int cd_netns_join(struct cd_netns_job *job, struct cordon_error *err)
{
	_cleanup_close_ int sock = CD_TAKE_FD(job->sock), fd = -1;
	struct cd_msg m;
	int r, status;

	r = cd_msg_recv(sock, &m, &fd);
	while (waitpid(job->pid, &status, 0) < 0 && errno == EINTR)
		;
	job->pid = 0;
	if (r == 1 && m.type == CD_MSG_ERROR) {
		*err = m.err;
		return -(m.err.code ? m.err.code : EINVAL);
	}
	if (r != 1 || fd < 0)
		return cd_fail(err, EIO, "net", "the network helper died");
	if (setns(fd, CLONE_NEWNET) < 0)
		return cd_fail_errno(err, errno, "net", "join the new network namespace");
	return 0;
}
