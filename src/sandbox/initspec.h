/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * initspec.h - what pid 1 hands cordon-init (init.c) when it execs it: the command to start and
 * how (argv, environment, directory, rlimits, the seccomp programs), the deadline, the terminal.
 * The supervisor packs it into one buffer before the clone (written to a memfd pid 1 inherits);
 * cordon-init unpacks it. Pure: no I/O, unit-tested (test-initspec.c).
 *
 * pid 1 execs cordon-init so that nothing of the process that made the sandbox (its argv,
 * environment, heap: a server's API keys, a harness's secrets) stays in a process the sandbox can
 * see: /proc/1/cmdline is readable by every process of the sandbox.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/resource.h>

#include "config.h"
#include "filter.h"

/* The descriptors cordon-init finds open (pid 1 puts them there; nothing else stays open but 0,
 * 1 and 2). */
enum {
	CD_INIT_FD_SPEC = 3, /* this spec, in a memfd */
	CD_INIT_FD_SOCK = 4, /* the sync socket (sync.h) */
	CD_INIT_FD_TTY = 5,  /* the caller's terminal, when has_tty */
	CD_INIT_FD_EXEC = 6, /* the program to execute (a session's agent), when has_exec */
};

/* At most this much: an environment and argv as large as the kernel takes, and two programs. */
#define CD_INIT_SPEC_MAX (8u << 20)

struct cd_init_spec {
	char **argv; /* allocated by unpack; the strings point into the buffer */
	char **envp;
	const char *path; /* PATH inside, for looking up argv[0]; NULL: none */
	const char *chdir;
	struct cd_rlimit rlimits[RLIM_NLIMITS];
	struct cd_filter baseline;      /* insns point into the buffer */
	struct cd_filter filter;        /* the policy's, when has_filter */
	bool has_filter;
	bool has_tty, take_tty, has_exec, timing;
	uint64_t deadline_ns;   /* CLOCK_MONOTONIC; 0: none */
	uint64_t kill_after_ns;
};

/* The buffer for s (s.argv and s.envp NULL-terminated; insns of the programs as they are), in
 * *ret (malloc'd), its size in *ret_len. 0 or -ENOMEM, -E2BIG. */
int cd_init_spec_pack(const struct cd_init_spec *s, void **ret, size_t *ret_len);
/* Check buf (every length and string within it) and point *ret into it: 0, or -EINVAL (with what
 * is wrong in *why), -ENOMEM. buf must stay while *ret is used; cd_init_spec_done() frees what
 * unpack allocated. */
int cd_init_spec_unpack(void *buf, size_t len, struct cd_init_spec *ret, const char **why);
void cd_init_spec_done(struct cd_init_spec *s);
