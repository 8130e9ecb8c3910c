/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * test-agent-filter.c - the real cordon-agent's FILTER (proto.h): a malformed program refused, a
 * second one or one after a command refused, and a command started after it runs under it (its
 * mkdir denied) while the agent itself does not (it still answers). The agent runs outside any
 * sandbox here, under no_new_privs as a sandbox's would. TAP.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "frame.h"
#include "proto.h"

#include "../lib/tap.h"

#define BAIL_OUT(...)                                                                              \
	do {                                                                                       \
		printf("Bail out! ");                                                              \
		printf(__VA_ARGS__);                                                               \
		printf("\n");                                                                      \
		exit(1);                                                                           \
	} while (0)

static struct cd_sp_msg m;

/* An agent on a session socket: our end. */
static int start_agent(pid_t *ret)
{
	int sv[2];
	pid_t pid;

	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
		BAIL_OUT("socketpair: %s", strerror(errno));
	pid = fork();
	if (pid == 0) {
		prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
		dup2(sv[1], 0);
		execl(AGENT_PATH, "cordon-agent", (char *)NULL);
		_exit(127);
	}
	close(sv[1]);
	*ret = pid;
	return sv[0];
}

static int channel(int sess)
{
	int sv[2];

	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0 ||
	    cd_sp_send_simple(sess, CD_SP_CHANNEL, 0, 0, NULL, 0, sv[1]) < 0)
		BAIL_OUT("channel: %s", strerror(errno));
	close(sv[1]);
	return sv[0];
}

/* FILTER of len bytes: the reply's type and value */
static int filter(int sess, const void *prog, size_t len, unsigned flags, int *ret_value)
{
	struct cd_sp_hdr h = {.type = CD_SP_FILTER, .len = (uint32_t)len, .flags = flags};
	int c = channel(sess), r = cd_sp_send(c, &h, prog, NULL, 0);

	if (r >= 0)
		r = cd_sp_recv(c, &m, 0);
	close(c);
	*ret_value = r > 0 ? m.h.value : r;
	return r > 0 ? (int)m.h.type : -1;
}

/* EXEC argv (no descriptors): the wait status, or -1 */
static int exec_wait(int sess, const char *const *argv)
{
	char buf[512];
	size_t len = 0, argc = 0;
	struct cd_sp_hdr h = {.type = CD_SP_EXEC};
	int c = channel(sess), status = -1;

	for (; argv[argc]; argc++) {
		memcpy(buf + len, argv[argc], strlen(argv[argc]) + 1);
		len += strlen(argv[argc]) + 1;
	}
	buf[len++] = '\0'; /* cwd: none */
	h.len = (uint32_t)len;
	h.arg = argc;
	if (cd_sp_send(c, &h, buf, NULL, 0) >= 0 && cd_sp_recv(c, &m, 0) > 0 &&
	    m.h.type == CD_SP_STARTED && cd_sp_recv(c, &m, 0) > 0 && m.h.type == CD_SP_EXITED)
		status = m.h.value;
	close(c);
	return status;
}

static void stop_agent(int sess, pid_t pid)
{
	close(sess);
	waitpid(pid, NULL, 0);
}

int main(void)
{
	/* mkdir and mkdirat: EPERM; the rest allowed (this build's architecture's numbers) */
	struct sock_filter prog[] = {
	    BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
	    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_mkdirat, 2, 0),
#ifdef SYS_mkdir
	    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_mkdir, 1, 0),
#else
	    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_mkdirat, 1, 0),
#endif
	    BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	    BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
	};
	char dir[] = "/tmp/test-agent-filter.XXXXXX", made[64];
	const char *mk[] = {"/bin/mkdir", made, NULL}, *tr[] = {"/bin/true", NULL};
	struct stat st;
	int sess, v, status;
	pid_t pid;

	if (access(AGENT_PATH, X_OK) < 0 || access("/bin/mkdir", X_OK) < 0)
		BAIL_OUT("%s or /bin/mkdir missing", AGENT_PATH);
	if (!mkdtemp(dir))
		BAIL_OUT("mkdtemp: %s", strerror(errno));
	snprintf(made, sizeof(made), "%s/made", dir);

	sess = start_agent(&pid);
	is_int(filter(sess, prog, 12, 0, &v), CD_SP_ERROR, "FILTER of 12 bytes: ERROR");
	is_int(v, EINVAL, "... EINVAL");
	is_int(filter(sess, prog, sizeof(prog), SECCOMP_FILTER_FLAG_TSYNC, &v), CD_SP_ERROR,
	       "FILTER with TSYNC: ERROR");
	is_int(filter(sess, prog, sizeof(prog), 0, &v), CD_SP_OK, "FILTER: OK");
	is_int(filter(sess, prog, sizeof(prog), 0, &v), CD_SP_ERROR, "a second FILTER: ERROR");
	is_int(v, EEXIST, "... EEXIST");
	status = exec_wait(sess, mk);
	ok(WIFEXITED(status) && WEXITSTATUS(status) == 1, "a command after it: mkdir fails (%#x)",
	   status);
	ok(stat(made, &st) < 0 && errno == ENOENT, "... nothing made");
	status = exec_wait(sess, tr);
	ok(WIFEXITED(status) && WEXITSTATUS(status) == 0,
	   "the agent is not under it: it starts the next command (true: 0)");
	stop_agent(sess, pid);

	sess = start_agent(&pid);
	status = exec_wait(sess, mk);
	ok(WIFEXITED(status) && WEXITSTATUS(status) == 0 && stat(made, &st) == 0,
	   "without FILTER: mkdir works");
	is_int(filter(sess, prog, sizeof(prog), 0, &v), CD_SP_ERROR,
	       "FILTER after a command: ERROR");
	is_int(v, EEXIST, "... EEXIST");
	stop_agent(sess, pid);
	rmdir(made);
	rmdir(dir);
	return done_testing();
}
