/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * nsfloor.c - launchers that do nothing but start the command, for bench/startup: what a
 * sandbox's cold start costs before its first mount.
 *
 *     nsfloor none|all|all-vfork COMMAND [ARG...]
 *
 * none       a child cloned as fork() would (no namespace), which execs the command; waited for
 * all        the same in new user, mount, pid, ipc, uts, cgroup and network namespaces, as
 *            cordon's and bubblewrap's command lines in bench/startup ask; no id map, no mount,
 *            no filter
 * all-vfork  the same namespaces, the child sharing our memory until its exec (CLONE_VM |
 *            CLONE_VFORK, as posix_spawn does): no page table copied. A sandbox's init cannot
 *            be such a child unless it execs a program of its own first: we are suspended
 *            until it does
 *
 * Exit status: the command's; 128 + the signal that killed it; 126 or 127 when it could not be
 * executed (as a shell says); 125 for a failure of nsfloor's own.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/sched.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#define ALL_NAMESPACES                                                                             \
	(CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWIPC | CLONE_NEWUTS |               \
	 CLONE_NEWCGROUP | CLONE_NEWNET)

static _Noreturn void exec_command(char **argv)
{
	int e;

	execvp(argv[0], argv);
	e = errno;
	fprintf(stderr, "nsfloor: exec %s: %s\n", argv[0], strerror(e));
	_exit(e == ENOENT ? 127 : 126);
}

static int vfork_child(void *argv)
{
	exec_command(argv);
}

/* the vfork child's stack: ours is suspended meanwhile, but the child must not return into it */
static char vfork_stack[64 * 1024] __attribute__((aligned(16)));

static pid_t start(const char *mode, char **argv)
{
	struct clone_args ca = { .exit_signal = SIGCHLD };
	pid_t pid;

	if (!strcmp(mode, "all-vfork"))
		return clone(vfork_child, vfork_stack + sizeof(vfork_stack),
			     CLONE_VM | CLONE_VFORK | ALL_NAMESPACES | SIGCHLD, argv);
	if (!strcmp(mode, "all"))
		ca.flags = ALL_NAMESPACES;
	pid = (pid_t)syscall(SYS_clone3, &ca, sizeof(ca));
	if (pid == 0)
		exec_command(argv);
	return pid;
}

int main(int argc, char **argv)
{
	int status;
	pid_t pid;

	if (argc < 3 || (strcmp(argv[1], "none") && strcmp(argv[1], "all") &&
			 strcmp(argv[1], "all-vfork"))) {
		fprintf(stderr, "usage: nsfloor none|all|all-vfork COMMAND [ARG...]\n");
		return 125;
	}
	pid = start(argv[1], argv + 2);
	if (pid < 0) {
		perror("nsfloor: clone");
		return 125;
	}
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR) {
			perror("nsfloor: waitpid");
			return 125;
		}
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}
