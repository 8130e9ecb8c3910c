/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * floor_seccomp.c - the floor of linux.seccomp: the config's profile compiled with libseccomp
 * into a BPF program, handed to the session's config (cordon_config_set_seccomp_bpf), which the
 * session's agent installs in each of the container's processes (config.json's and every exec's)
 * as its last step before exec, after cordon's own filters, which stay: the kernel runs them all
 * and the strictest answer wins. SCMP_ACT_NOTIFY and listenerPath are refused. Syscall names and
 * architectures libseccomp does not know are skipped (logged), as runc does: the engines'
 * profiles name calls newer than this libseccomp. Runs in cordon-runtime, before anything starts.
 */
#include <errno.h>
#include <seccomp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <linux/filter.h>
#include <linux/seccomp.h>

#include "specdata.h"

#define P "linux.seccomp"

static uint32_t action_of(enum oci_scmp_action a, uint32_t e)
{
	switch (a) {
	case OCI_SCMP_KILL_THREAD:
		return SCMP_ACT_KILL_THREAD;
	case OCI_SCMP_KILL_PROCESS:
		return SCMP_ACT_KILL_PROCESS;
	case OCI_SCMP_TRAP:
		return SCMP_ACT_TRAP;
	case OCI_SCMP_ERRNO:
		return SCMP_ACT_ERRNO(e);
	case OCI_SCMP_TRACE:
		return SCMP_ACT_TRACE(e);
	case OCI_SCMP_LOG:
		return SCMP_ACT_LOG;
	case OCI_SCMP_ALLOW:
	case OCI_SCMP_NOTIFY: /* refused before */
		break;
	}
	return SCMP_ACT_ALLOW;
}

static const enum scmp_compare cmp_of[] = {
    [OCI_SCMP_NE] = SCMP_CMP_NE,
    [OCI_SCMP_LT] = SCMP_CMP_LT,
    [OCI_SCMP_LE] = SCMP_CMP_LE,
    [OCI_SCMP_EQ] = SCMP_CMP_EQ,
    [OCI_SCMP_GE] = SCMP_CMP_GE,
    [OCI_SCMP_GT] = SCMP_CMP_GT,
    [OCI_SCMP_MASKED_EQ] = SCMP_CMP_MASKED_EQ,
};

/* What was skipped, for one log line: names, comma-separated, within the line. */
struct skipped {
	char text[400];
	size_t n;
};

/* Is name one of text's comma-separated names? */
static bool listed(const char *text, const char *name)
{
	size_t n = strlen(name);

	for (const char *p = text; (p = strstr(p, name)); p += n)
		if ((p == text || p[-1] == ' ') && (p[n] == ',' || p[n] == '\0'))
			return true;
	return false;
}

static void skip(struct skipped *sk, const char *name)
{
	size_t len = strlen(sk->text);

	if (listed(sk->text, name)) /* told once (past the line's end: counted again) */
		return;
	sk->n++;
	if (len + strlen(name) + 6 < sizeof(sk->text))
		snprintf(sk->text + len, sizeof(sk->text) - len, "%s%s", len ? ", " : "", name);
	else if (!strstr(sk->text, "..."))
		snprintf(sk->text + len, sizeof(sk->text) - len, ", ...");
}

/* architectures: "SCMP_ARCH_X86_64" is libseccomp's "x86_64"; the native one is always in, and
 * only it: cordon's baseline kills every other ABI of the CPU (i386's int $0x80, x32) before
 * this program's answer counts, so compiling the profile for them (an engine's default lists
 * three) would cost two thirds of the compile for rules that can never apply (foreign) */
static int add_archs(const struct oci_floor *f, scmp_filter_ctx ctx, struct skipped *sk,
		     struct skipped *foreign)
{
	char **archs = f->s->seccomp.archs;

	for (size_t i = 0; archs && archs[i]; i++) {
		const char *a = archs[i];
		char name[32];
		uint32_t token;
		size_t k = 0;
		int r;

		if (!strncmp(a, "SCMP_ARCH_", 10))
			a += 10;
		for (; a[k] && k < sizeof(name) - 1; k++)
			name[k] = (char)(a[k] >= 'A' && a[k] <= 'Z' ? a[k] - 'A' + 'a' : a[k]);
		name[k] = '\0';
		token = seccomp_arch_resolve_name(name);
		if (!token) {
			skip(sk, archs[i]);
			continue;
		}
		if (token != seccomp_arch_native()) {
			skip(foreign, archs[i]);
			continue;
		}
		r = seccomp_arch_add(ctx, token);
		if (r < 0 && r != -EEXIST)
			return oci_floor_refuse(f, P ".architectures[%zu]: %s: %s", i, archs[i],
						strerror(-r));
	}
	return 0;
}

/* One name of a rule: its args in one rule (all must hold), or, where an index comes twice
 * (libseccomp takes one comparison an argument), one rule each (any may hold), as runc does. */
static int add_call(scmp_filter_ctx ctx, uint32_t act, int nr, const struct oci_scmp_rule *rule)
{
	struct scmp_arg_cmp cmp[6];
	bool twice = false;
	unsigned seen = 0;
	int r;

	for (size_t i = 0; i < rule->n_args; i++) {
		twice |= (seen >> rule->args[i].index) & 1;
		seen |= 1u << rule->args[i].index;
	}
	if (rule->n_args && !twice && rule->n_args <= 6) {
		for (size_t i = 0; i < rule->n_args; i++) {
			const struct oci_scmp_arg *a = &rule->args[i];

			cmp[i] =
			    (struct scmp_arg_cmp){a->index, cmp_of[a->op], a->value, a->value_two};
		}
		return seccomp_rule_add_array(ctx, act, nr, (unsigned)rule->n_args, cmp);
	}
	if (!rule->n_args)
		return seccomp_rule_add_array(ctx, act, nr, 0, NULL);
	for (size_t i = 0; i < rule->n_args; i++) {
		const struct oci_scmp_arg *a = &rule->args[i];

		cmp[0] = (struct scmp_arg_cmp){a->index, cmp_of[a->op], a->value, a->value_two};
		r = seccomp_rule_add_array(ctx, act, nr, 1, cmp);
		if (r < 0)
			return r;
	}
	return 0;
}

static int add_rules(const struct oci_floor *f, scmp_filter_ctx ctx, uint32_t def,
		     struct skipped *sk)
{
	const struct oci_seccomp *sc = &f->s->seccomp;

	for (size_t i = 0; i < sc->n_rules; i++) {
		const struct oci_scmp_rule *rule = &sc->rules[i];
		uint32_t act = action_of(rule->action, rule->errno_ret);

		if (act == def) /* nothing to add (libseccomp refuses it) */
			continue;
		for (size_t j = 0; rule->names[j]; j++) {
			int nr = seccomp_syscall_resolve_name(rule->names[j]);
			int r;

			if (nr == __NR_SCMP_ERROR) {
				skip(sk, rule->names[j]);
				continue;
			}
			r = add_call(ctx, act, nr, rule);
			if (r < 0)
				return oci_floor_refuse(f, P ".syscalls[%zu]: %s: libseccomp: %s",
							i, rule->names[j], strerror(-r));
		}
	}
	return 0;
}

/* The program libseccomp made, read back from a memfd: *ret (malloc'd), *ret_len bytes. */
static int export_bpf(const struct oci_floor *f, scmp_filter_ctx ctx, void **ret, size_t *ret_len)
{
	_cleanup_close_ int fd = memfd_create("cordon-oci-seccomp", MFD_CLOEXEC);
	_cleanup_free_ void *buf = NULL;
	off_t size;
	int r;

	if (fd < 0)
		return cd_fail(f->err, errno, "seccomp", P ": memfd_create: %s", strerror(errno));
	r = seccomp_export_bpf(ctx, fd);
	if (r < 0)
		return cd_fail(f->err, -r, "seccomp", P ": the profile's program: libseccomp: %s",
			       strerror(-r));
	size = lseek(fd, 0, SEEK_END);
	if (size <= 0 || size % (off_t)sizeof(struct sock_filter))
		return cd_fail(f->err, EIO, "seccomp", P ": libseccomp made no whole program");
	if ((size_t)size / sizeof(struct sock_filter) > BPF_MAXINSNS)
		return oci_floor_refuse(f,
					P ": the profile compiles to %zu instructions, more than "
					  "the kernel's %u",
					(size_t)size / sizeof(struct sock_filter), BPF_MAXINSNS);
	buf = malloc((size_t)size);
	if (!buf)
		return cd_fail(f->err, ENOMEM, "seccomp", "out of memory");
	if (pread(fd, buf, (size_t)size, 0) != size)
		return cd_fail(f->err, EIO, "seccomp", P ": cannot read the program back");
	*ret = CD_TAKE_PTR(buf);
	*ret_len = (size_t)size;
	return 0;
}

static void ctx_release(scmp_filter_ctx *ctx)
{
	if (*ctx)
		seccomp_release(*ctx);
}

/* flags: LOG is the kernel's; SPEC_ALLOW changes nothing after cordon's filters; TSYNC has no
 * other thread to reach (one-threaded, before exec); WAIT_KILLABLE_RECV is NOTIFY's (refused) */
static unsigned install_flags(const struct oci_floor *f)
{
	unsigned fl = f->s->seccomp.flags;

	if (fl & OCI_SCMP_FLAG_SPEC_ALLOW)
		oci_floor_say(f, P ".flags: SECCOMP_FILTER_FLAG_SPEC_ALLOW: no effect (cordon's "
				   "filters came first, with the speculation mitigation)");
	if (fl & (OCI_SCMP_FLAG_TSYNC | OCI_SCMP_FLAG_WAIT_KILLABLE_RECV))
		oci_floor_say(f, P ".flags: TSYNC and WAIT_KILLABLE_RECV not needed (each process "
				   "installs the profile alone, before its exec)");
	return (fl & OCI_SCMP_FLAG_LOG ? SECCOMP_FILTER_FLAG_LOG : 0) |
	       (fl & OCI_SCMP_FLAG_SPEC_ALLOW ? SECCOMP_FILTER_FLAG_SPEC_ALLOW : 0);
}

int oci_floor_seccomp(const struct oci_floor *f)
{
	const struct oci_seccomp *sc = &f->s->seccomp;
	_cleanup_(ctx_release) scmp_filter_ctx ctx = NULL;
	struct skipped sk_names = {{0}, 0}, sk_archs = {{0}, 0}, sk_foreign = {{0}, 0};
	_cleanup_free_ void *bpf = NULL;
	struct cordon_error e = {0};
	uint32_t def;
	size_t len = 0;
	int r;

	if (!sc->present)
		return 0;
	if (sc->notify_at)
		return oci_floor_refuse(f,
					"%s: SCMP_ACT_NOTIFY: handing system calls to a "
					"listener is refused",
					sc->notify_at);
	def = action_of(sc->default_act, sc->default_errno);
	ctx = seccomp_init(def);
	if (!ctx)
		return cd_fail(f->err, ENOMEM, "seccomp", P ": libseccomp: cannot start a filter");
	/* libseccomp's binary tree: an engine's allow-list is some 400 names */
	(void)seccomp_attr_set(ctx, SCMP_FLTATR_CTL_OPTIMIZE, 2);
	r = add_archs(f, ctx, &sk_archs, &sk_foreign);
	if (r >= 0)
		r = add_rules(f, ctx, def, &sk_names);
	if (r >= 0)
		r = export_bpf(f, ctx, &bpf, &len);
	if (r < 0)
		return r;
	if (sk_archs.n)
		oci_floor_say(f, P ".architectures: %zu libseccomp does not know, skipped: %s",
			      sk_archs.n, sk_archs.text);
	if (sk_foreign.n)
		oci_floor_say(f, P ".architectures: %s: not compiled in (cordon's baseline kills "
				   "every other ABI of this CPU)",
			      sk_foreign.text);
	if (sk_names.n)
		oci_floor_say(f, P ".syscalls: %zu names libseccomp does not know, skipped: %s",
			      sk_names.n, sk_names.text);
	r = cordon_config_set_seccomp_bpf(f->c, bpf, len, install_flags(f), &e);
	if (r < 0)
		return oci_floor_relay(f, r, &e, P);
	oci_floor_say(f,
		      P ": the profile (%zu rules, default %s) installed in the container's "
			"processes, %zu instructions, beside cordon's own filter",
		      sc->n_rules, sc->default_action, len / sizeof(struct sock_filter));
	return 0;
}
