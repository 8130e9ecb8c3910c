/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* test-drain.c - what the supervisor takes from pid 1's messages after setup (cd_sandbox_drain):
 * pid 1 is not trusted then, so a PROXY or LISTENER descriptor this run did not ask for (no
 * --allow-net, no audit) is closed, never kept or polled; each one kept would be a descriptor a
 * taken-over pid 1 makes the supervisor hold, to exhaust its table. */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "cordon.h"
#include "sandbox.h"
#include "sync.h"
#include "../lib/tap.h"

static unsigned open_fds(void)
{
	unsigned n = 0;

	for (int fd = 0; fd < 1024; fd++)
		n += fcntl(fd, F_GETFD) >= 0;
	return n;
}

/* n messages of type from pid 1's end, each with a descriptor of its own */
static void send_n(int sock, uint32_t type, int n)
{
	for (int i = 0; i < n; i++) {
		int fd = open("/dev/null", O_RDONLY | O_CLOEXEC);

		ok(fd >= 0 && cd_msg_send(sock, type, 0, NULL, fd) == 0, "sent %s %d",
		   type == CD_MSG_PROXY ? "PROXY" : "LISTENER", i);
		close(fd);
	}
}

int main(void)
{
	struct cordon_config *c = cordon_config_new();
	struct cordon_result res = { 0 };
	struct cd_sandbox sb = CD_SANDBOX_INIT(c, &res);
	int sv[2];
	unsigned before;

	if (!ok(c && socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) == 0 &&
		       fcntl(sv[0], F_SETFL, O_NONBLOCK) == 0,
		"a sync socket pair"))
		return 1;
	sb.pid1.sock = sv[0];
	before = open_fds();
	send_n(sv[1], CD_MSG_PROXY, 5);
	send_n(sv[1], CD_MSG_LISTENER, 5);
	cd_sandbox_drain(&sb);
	ok(sb.pid1.sock == sv[0], "the socket stays (it is drained, not ended)");
	ok(!sb.proxy, "no --allow-net: no proxy started from pid 1's descriptor");
	ok(sb.rec.listener < 0, "no audit: no exec listener taken from pid 1");
	is_int(open_fds(), before, "every descriptor pid 1 sent is closed");
	close(sv[1]);
	cd_sandbox_done(&sb);
	cordon_config_free(c);
	return done_testing();
}
