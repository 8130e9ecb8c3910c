/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * fuzz-policy.c - libFuzzer target for the seccomp policy language (policy.c) and the compiler
 * behind it (filter.c). Each input is a policy text: it is parsed with the source tree's
 * seccomp-policies/ as the search path (so `include groups` resolves), and what parses is
 * compiled with libseccomp twice (linear list, binary tree) and evaluated with cd_filter_eval().
 *
 * Besides the sanitizers (address, undefined, leaks), the target checks what the parser
 * promises, and abort()s when the compiled program breaks it:
 *  - the linear and the binary-tree programs return the same for every probe;
 *  - a syscall with a rule without conditions gets that rule's action, whatever its arguments
 *    (the parser refuses any rule of another action for it);
 *  - a syscall without rules gets the default action;
 *  - a syscall with a single rule gets its action for arguments that meet all its conditions,
 *    and the default for arguments that fail one;
 *  - libseccomp does not refuse a parsed policy with EEXIST (two actions for conditions it
 *    considers the same: the parser's conflict checks must catch those first).
 *
 * Includes from the input name arbitrary paths. Reading a regular file is harmless; opening a
 * device or a FIFO is not (a FIFO blocks, some devices act on open), so the build links with
 * -Wl,--wrap=open,--wrap=open64 and the wrappers below refuse to open what is not a regular
 * file, before the parser's own fstat() check would. tests/fuzz/run builds and runs it.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/seccomp.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#include "filter.h"
#include "policy.h"

#ifndef CORDON_TEST_POLICY_DIR
#error "build with -DCORDON_TEST_POLICY_DIR=\"/abs/path/seccomp-policies\""
#endif

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* --- open() of regular files only (see above) --- */

int __real_open(const char *path, int flags, ...);
int __real_open64(const char *path, int flags, ...);
int __wrap_open(const char *path, int flags, ...);
int __wrap_open64(const char *path, int flags, ...);

static bool may_open(const char *path, int flags)
{
	struct stat st;

	if ((flags & O_ACCMODE) != O_RDONLY || (flags & (O_CREAT | O_PATH | O_DIRECTORY)))
		return true; /* not how policy.c opens: someone else's business */
	if (stat(path, &st) < 0)
		return false;
	if (!S_ISREG(st.st_mode)) {
		errno = EINVAL;
		return false;
	}
	return true;
}

static mode_t open_mode(int flags, va_list ap)
{
	return (flags & (O_CREAT | O_TMPFILE)) ? (mode_t)va_arg(ap, int) : 0;
}

int __wrap_open(const char *path, int flags, ...)
{
	va_list ap;
	mode_t mode;

	va_start(ap, flags);
	mode = open_mode(flags, ap);
	va_end(ap);
	return may_open(path, flags) ? __real_open(path, flags, mode) : -1;
}

int __wrap_open64(const char *path, int flags, ...)
{
	va_list ap;
	mode_t mode;

	va_start(ap, flags);
	mode = open_mode(flags, ap);
	va_end(ap);
	return may_open(path, flags) ? __real_open64(path, flags, mode) : -1;
}

/* --- the oracles --- */

static const char *const search[] = {CORDON_TEST_POLICY_DIR, NULL};

_printf_(1, 2) static void _Noreturn broken(const char *fmt, ...)
{
	va_list ap;

	fputs("fuzz-policy: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	abort();
}

static uint32_t eval2(const struct cd_filter *lin, const struct cd_filter *opt, uint32_t arch,
		      int nr, const uint64_t args[6])
{
	uint32_t a = cd_filter_eval(lin, arch, nr, args), b = cd_filter_eval(opt, arch, nr, args);

	if (a != b)
		broken(
		    "arch 0x%x nr %d args 0x%llx 0x%llx 0x%llx: linear 0x%08x, binary tree 0x%08x",
		    arch, nr, (unsigned long long)args[0], (unsigned long long)args[1],
		    (unsigned long long)args[2], a, b);
	return a;
}

static size_t rules_for(const struct cd_policy *p, int nr, const struct cd_policy_rule **last,
			bool *unconditional)
{
	size_t n = 0;

	*unconditional = false;
	for (size_t i = 0; i < p->n_rules; i++)
		if (p->rules[i].nr == nr) {
			n++;
			*last = &p->rules[i];
			if (!p->rules[i].n_conds)
				*unconditional = true;
		}
	return n;
}

/* Arguments meeting every condition of r (false if there are none), and, when fail >= 0,
 * failing condition number fail instead. */
static bool make_args(const struct cd_policy_rule *r, int fail, uint64_t args[6])
{
	for (unsigned i = 0; i < r->n_conds; i++) {
		const struct cd_policy_cond *c = &r->conds[i];
		uint64_t v = c->value, *a = &args[c->arg];
		bool meet = (int)i != fail;

		switch (c->op) {
		case CD_CMP_EQ:
			*a = meet ? v : v ^ 1;
			break;
		case CD_CMP_NE:
			*a = meet ? v ^ 1 : v;
			break;
		case CD_CMP_LT:
			if (meet && v == 0)
				return false;
			*a = meet ? v - 1 : v;
			break;
		case CD_CMP_LE:
			if (!meet && v == UINT64_MAX)
				return false;
			*a = meet ? v : v + 1;
			break;
		case CD_CMP_GT:
			if (meet && v == UINT64_MAX)
				return false;
			*a = meet ? v + 1 : v;
			break;
		case CD_CMP_GE:
			if (!meet && v == 0)
				return false;
			*a = meet ? v : v - 1;
			break;
		case CD_CMP_MASKED_EQ:
			if (!meet && c->mask == 0)
				return false;
			/* the bits outside the mask are free: set them, they must not matter */
			*a = meet ? v | ~c->mask : (v ^ (c->mask & -c->mask)) | ~c->mask;
			break;
		default:
			return false;
		}
	}
	return true;
}

static void check(const struct cd_policy *p, const struct cd_filter *lin,
		  const struct cd_filter *opt)
{
	static const uint64_t patterns[][6] = {
	    {0},
	    {1, TIOCSTI, 2, 3, 4, 5},
	    {UINT64_MAX, UINT64_MAX, UINT64_MAX, UINT64_MAX, UINT64_MAX, UINT64_MAX},
	    {0x10000000, TIOCLINUX | (1ull << 32), 0x80000000, 1, 0, 0x100000000},
	};
	uint32_t def = p->default_action;

	for (int nr = 0; nr < 460; nr++) {
		const struct cd_policy_rule *r = NULL;
		bool uncond;
		size_t n = rules_for(p, nr, &r, &uncond);

		for (size_t i = 0; i < CD_ELEMENTSOF(patterns); i++) {
			uint32_t got = eval2(lin, opt, AUDIT_ARCH_X86_64, nr, patterns[i]);

			if (n == 0 && got != def)
				broken("nr %d has no rule: got 0x%08x, the default is 0x%08x", nr,
				       got, def);
			if (uncond && got != r->action)
				broken(
				    "%s (%d) has a rule without conditions for 0x%08x (%s:%u:%u): "
				    "got 0x%08x",
				    r->name, nr, r->action, r->loc.file, r->loc.line, r->loc.col,
				    got);
		}
		if (n == 1 && !uncond) {
			uint64_t args[6] = {0};

			if (make_args(r, -1, args) &&
			    eval2(lin, opt, AUDIT_ARCH_X86_64, nr, args) != r->action)
				broken("%s (%d): arguments meeting every condition of %s:%u:%u do "
				       "not get 0x%08x",
				       r->name, nr, r->loc.file, r->loc.line, r->loc.col,
				       r->action);
			for (unsigned j = 0; j < r->n_conds; j++) {
				memset(args, 0, sizeof(args));
				if (make_args(r, (int)j, args) &&
				    eval2(lin, opt, AUDIT_ARCH_X86_64, nr, args) != def)
					broken(
					    "%s (%d): arguments failing condition %u of %s:%u:%u "
					    "do not get the default 0x%08x",
					    r->name, nr, j, r->loc.file, r->loc.line, r->loc.col,
					    def);
			}
		}
	}
	/* other ABIs are killed, whatever the policy */
	if (eval2(lin, opt, AUDIT_ARCH_I386, 20, patterns[0]) != SECCOMP_RET_KILL_PROCESS)
		broken("the i386 ABI is not killed");
	if (eval2(lin, opt, AUDIT_ARCH_X86_64, 0x40000000 | SYS_getpid, patterns[0]) !=
	    SECCOMP_RET_KILL_PROCESS)
		broken("the x32 ABI is not killed");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct cd_policy p = {.search = search};
	struct cordon_error err = {0};
	struct cd_filter lin = {0}, opt = {0}, log = {0};
	uint64_t args[6] = {0, TIOCSTI};

	if (cd_policy_parse(&p, (const char *)data, size, "fuzz.policy", &err) < 0) {
		if (!err.msg[0])
			broken("the parse failed without a message");
		cd_policy_free(&p);
		return 0;
	}
	if (!p.default_set)
		broken("parsed without a default action");
	/* libseccomp may still refuse (a program over 4096 instructions): not a crash. But EEXIST
	 * is libseccomp refusing a second action for conditions it already has, which the parser
	 * promises to refuse first, naming both lines. */
	if (cd_filter_compile(&p, false, false, &lin, &err) == 0 &&
	    cd_filter_compile(&p, false, true, &opt, &err) == 0) {
		if (lin.blocks_tiocsti != opt.blocks_tiocsti)
			broken(
			    "blocks_tiocsti differs between the linear and binary-tree programs");
		check(&p, &lin, &opt);
	} else if (err.code == EEXIST) {
		broken("parsed, but libseccomp refuses it: %s", err.msg);
	}
	if (size && (data[0] & 1) && cd_filter_compile(&p, true, true, &log, &err) == 0) {
		uint32_t r = cd_filter_eval(&log, AUDIT_ARCH_X86_64, SYS_ioctl, args);

		if (r != SECCOMP_RET_ALLOW && r != SECCOMP_RET_LOG && r != SECCOMP_RET_USER_NOTIF)
			broken("log mode returned 0x%08x for TIOCSTI", r);
	}
	cd_filter_done(&log);
	cd_filter_done(&opt);
	cd_filter_done(&lin);
	cd_policy_free(&p);
	return 0;
}
