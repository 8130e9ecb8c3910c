/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* filter.h - compile a policy into a BPF program (supervisor), install it (the command's
 * process, the last step before execve), and evaluate it in user space (checks, `policy show`). */
#pragma once

#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stdbool.h>

#include "policy.h"

struct cd_filter {
	struct sock_filter *insns;
	unsigned short len;
	unsigned n_rules;     /* rules compiled in (those that differ from the default) */
	bool blocks_tiocsti;  /* proven by evaluating the program: TIOCSTI and TIOCLINUX denied */
	bool log;             /* compiled in log mode */
	bool optimized;       /* binary-tree dispatch */
	bool notify;          /* execve/execveat notify the supervisor (the audit trail) */
	bool baseline;        /* cordon's own rules (baseline.policy), not the policy's */
};

/* Compile p. log: every action but allow and notify becomes "log" (SECCOMP_RET_LOG), the
 * learning mode. optimize: libseccomp's binary tree instead of a linear list. */
int cd_filter_compile(const struct cd_policy *p, bool log, bool optimize, struct cd_filter *f,
		      struct cordon_error *err);
/* Same, and execve/execveat that the policy allows notify the supervisor instead. A program
 * compiled when cordon was built from the same rules and options is taken instead
 * (precompiled.h); CORDON_NO_PRECOMPILED=1 compiles all the same. */
int cd_filter_compile_audit(const struct cd_policy *p, bool log, bool optimize,
			    bool notify_exec, struct cd_filter *f, struct cordon_error *err);
/* The same, never precompiled (precompile.c). */
int cd_filter_compile_fresh(const struct cd_policy *p, bool log, bool optimize, bool notify_exec,
			    struct cd_filter *f, struct cordon_error *err);
/* The key of what a compile of p with these options makes, with this libseccomp and kernel
 * (precompiled.h). */
void cd_filter_key(const struct cd_policy *p, bool log, bool optimize, bool notify_exec,
		   uint8_t key[32]);
/* The key of the texts a parse of path (NULL: the baseline) would read, path's own then the
 * files includes names resolve to (cd_policy_sources()), with the compile's identity and
 * options (precompiled.h). 0, or -errno: a text cannot be read. */
int cd_filter_source_key(const char *path, const char *const *includes, bool log, bool optimize,
			 bool notify_exec, uint8_t key[32]);
/* The build's program for the policy at path (NULL: the baseline) when its texts are a shipped
 * policy's, byte for byte: 1 with f filled, 0 (not one: parse and compile it), -ENOMEM.
 * CORDON_NO_PRECOMPILED=1: always 0. */
int cd_filter_from_sources(const char *path, bool log, bool optimize, bool notify_exec,
			   struct cd_filter *f);
void cd_filter_done(struct cd_filter *f);

/* Install in the calling thread: no allocation, safe after vfork(). Returns 0, or the
 * notification listener's fd when f->notify, or -errno. Requires no_new_privs. */
int cd_filter_install(const struct cd_filter *f);

/* Does the set of programs (installed together: the strictest answer wins) deny TIOCSTI and
 * TIOCLINUX, whatever the upper bits of the request? Evaluated, not read from the policy; false
 * when the build's architecture is not one the proof knows. */
bool cd_filter_set_blocks_tiocsti(const struct cd_filter *const *set, size_t n);

/* What the program returns for one system call of the native architecture (SECCOMP_RET_*).
 * Unknown instructions evaluate as SECCOMP_RET_ALLOW, so that checks built on this stay
 * conservative. */
uint32_t cd_filter_eval(const struct cd_filter *f, uint32_t arch, int nr, const uint64_t args[6]);
