/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* child.h - what runs inside: pid 1 of the new namespaces, and the command's process. */
#pragma once

#include "config.h"
#include "mount.h"
#include "share.h"
#include "filter.h"
#include "userns.h"

/* Everything the child needs, prepared by the supervisor before clone(): the child parses
 * nothing. It runs on its own copy of the supervisor's memory until it execs cordon-init, which
 * gets the command's half from spec_fd (initspec.h). */
/* The command pid 1 starts, as the command layer (src/command) gives it. */
struct cd_child_command {
	char *const *argv;
	char *const *envp;
	const char *path; /* PATH inside, for looking up argv[0] */
	const char *chdir;
	int stdout_fd, stderr_fd;       /* --capture: pipes to become fds 1 and 2; -1 */
	int tty_fd;       /* the caller's controlling terminal, or -1: kept by pid 1 alone */
	int exec_fd;      /* a session's agent: the command is executed from it (argv[0] is only
			   * its name), or -1 */
	bool take_tty;    /* the caller is its foreground: the command becomes it */
	uint64_t deadline_ns;   /* CLOCK_MONOTONIC: the timeout, enforced inside too; 0: none */
	uint64_t kill_after_ns; /* then SIGKILL this much later */
};

struct cd_child_args {
	int sock; /* the child's end of the sync socket */
	int init_fd; /* cordon-init, opened on the host (libexec.h) */
	int spec_fd; /* a memfd: the spec cordon-init reads (initspec.h) */
	struct cd_mount_plan *plan;
	const struct cd_identity *id;
	const struct cd_share *share; /* the user namespace's limits (share.h) */
	const char *hostname;
	bool own_net;
	bool own_uts; /* false: a joined uts namespace: no hostname set (not ours to set) */
	/* written into the sandbox's own namespaces (sysctl.h), checked by the supervisor */
	const struct cd_sysctl *sysctl;
	size_t n_sysctl;
	uint16_t proxy_port; /* --allow-net: hand a socket listening there to the supervisor */
	const struct cd_rlimit *rlimits;
	/* the seccomp programs, compiled before the clone: pid 1 has its own copy of them */
	const struct cd_filter *filter;   /* the policy's, or NULL */
	const struct cd_filter *baseline; /* cordon's own rules: always */
	struct cd_child_command command;
};

/* pid 1: set up, then exec cordon-init (init.c: the command, reaping, forwarding); reports over
 * a->sock (sync.h). */
_Noreturn void cd_child_main(const struct cd_child_args *a);
