/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * nsfloor.c - the floor under any sandbox's cold start, for bench/startup: a static launcher
 * that clones a child (with the namespaces asked for, and nothing else: no id map, no mount,
 * no filter), which execs the command, and waits for it.
 *
 *     nsfloor none|all COMMAND [ARG...]
 *
 * none: a plain child (what any launcher costs: its own exec, a fork, a wait); all: in new
 * user, mount, pid, ipc, uts, cgroup and network namespaces, as cordon's and bubblewrap's
 * command lines in bench/startup ask. Exit status: the command's, or 125 on a failure of its
 * own.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/sched.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#define ALL_NAMESPACES                                                                             \
	(CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWIPC | CLONE_NEWUTS |               \
	 CLONE_NEWCGROUP | CLONE_NEWNET)

int main(int argc, char **argv)
{
	struct clone_args ca = { .exit_signal = SIGCHLD };
	int status;
	pid_t pid;

	if (argc < 3 || (strcmp(argv[1], "none") && strcmp(argv[1], "all"))) {
		fprintf(stderr, "usage: nsfloor none|all COMMAND [ARG...]\n");
		return 125;
	}
	if (!strcmp(argv[1], "all"))
		ca.flags = ALL_NAMESPACES;
	pid = (pid_t)syscall(SYS_clone3, &ca, sizeof(ca));
	if (pid < 0) {
		perror("nsfloor: clone3");
		return 125;
	}
	if (pid == 0) {
		execvp(argv[2], argv + 2);
		perror("nsfloor: exec");
		_exit(125);
	}
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR) {
			perror("nsfloor: waitpid");
			return 125;
		}
	return WIFEXITED(status) ? WEXITSTATUS(status) : 125;
}
