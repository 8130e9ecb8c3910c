/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * filter.c - from a parsed policy to a loaded filter. libseccomp compiles (in the supervisor,
 * before anything starts), the BPF program travels to the command's process in memory, and a
 * raw seccomp() installs it right before execve. A small BPF interpreter lets cordon prove
 * properties of the compiled program (does it really deny TIOCSTI?) instead of trusting the
 * policy text.
 */
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <stdlib.h>
#include <errno.h>
#include <linux/audit.h>
#include <seccomp.h>
#include <stddef.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <elf.h>
#include <link.h>
#include <nettle/sha2.h>

#include "filter.h"
#include "precompiled.h"

static void ctx_release(scmp_filter_ctx *ctx)
{
	if (*ctx)
		seccomp_release(*ctx);
}

static uint32_t effective(uint32_t action, bool log)
{
	if (!log || action == SCMP_ACT_ALLOW || action == SCMP_ACT_NOTIFY)
		return action;
	return SCMP_ACT_LOG;
}

static enum scmp_compare scmp_op(enum cd_cmp op)
{
	switch (op) {
	case CD_CMP_EQ:
		return SCMP_CMP_EQ;
	case CD_CMP_NE:
		return SCMP_CMP_NE;
	case CD_CMP_LT:
		return SCMP_CMP_LT;
	case CD_CMP_LE:
		return SCMP_CMP_LE;
	case CD_CMP_GT:
		return SCMP_CMP_GT;
	case CD_CMP_GE:
		return SCMP_CMP_GE;
	case CD_CMP_MASKED_EQ:
	default:
		return SCMP_CMP_MASKED_EQ;
	}
}

static int add_rule(scmp_filter_ctx ctx, const struct cd_policy_rule *rule, uint32_t action,
		    struct cordon_error *err)
{
	struct scmp_arg_cmp cmp[CD_POLICY_MAX_CONDS];
	int r;

	for (unsigned i = 0; i < rule->n_conds; i++) {
		const struct cd_policy_cond *c = &rule->conds[i];

		cmp[i] = (struct scmp_arg_cmp){
			.arg = c->arg,
			.op = scmp_op(c->op),
			.datum_a = c->op == CD_CMP_MASKED_EQ ? c->mask : c->value,
			.datum_b = c->op == CD_CMP_MASKED_EQ ? c->value : 0,
		};
	}
	r = seccomp_rule_add_exact_array(ctx, action, rule->nr, rule->n_conds, cmp);
	if (r == -EEXIST && action == SCMP_ACT_LOG)
		return 0; /* two deny actions that both became "log" */
	if (r < 0)
		return cd_fail(err, -r, "policy", "%s:%u:%u: libseccomp refused the rule for %s: %s",
			       rule->loc.file, rule->loc.line, rule->loc.col, rule->name,
			       strerror(-r));
	return 0;
}

static int set_attrs(scmp_filter_ctx ctx, bool optimize, struct cordon_error *err)
{
	/* other ABIs of this CPU (i386 through int 0x80, x32) are killed, not filtered */
	if (seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_KILL_PROCESS) < 0)
		return cd_fail(err, EINVAL, "seccomp", "cannot set the bad-architecture action");
	/* cordon sets no_new_privs itself, before this filter exists */
	if (seccomp_attr_set(ctx, SCMP_FLTATR_CTL_NNP, 0) < 0)
		return cd_fail(err, EINVAL, "seccomp", "cannot clear the NNP attribute");
	if (optimize && seccomp_attr_set(ctx, SCMP_FLTATR_CTL_OPTIMIZE, 2) < 0)
		return cd_fail(err, EINVAL, "seccomp", "libseccomp cannot build a binary tree");
	return 0;
}

/* The program of size bytes from fd into f: 0, -E2BIG (not a whole program of at most
 * BPF_MAXINSNS instructions), -ENOMEM, or pread's error. */
static int read_program(int fd, off_t size, struct cd_filter *f)
{
	ssize_t n;

	if (size <= 0 || size % (off_t)sizeof(struct sock_filter) ||
	    size / (off_t)sizeof(struct sock_filter) > BPF_MAXINSNS)
		return -E2BIG;
	f->insns = malloc((size_t)size);
	if (!f->insns)
		return -ENOMEM;
	n = pread(fd, f->insns, (size_t)size, 0);
	if (n != size) {
		int e = n < 0 ? errno : EIO;

		free(CD_TAKE_PTR(f->insns));
		return -e;
	}
	f->len = (unsigned short)(size / (off_t)sizeof(struct sock_filter));
	return 0;
}

/* libseccomp writes the program to an fd: use a memfd and read it back. */
static int export_bpf(scmp_filter_ctx ctx, struct cd_filter *f, struct cordon_error *err)
{
	_cleanup_close_ int fd = memfd_create("cordon-bpf", MFD_CLOEXEC);
	off_t size;
	int r;

	if (fd < 0)
		return cd_fail_errno(err, errno, "seccomp", "memfd_create");
	r = seccomp_export_bpf(ctx, fd);
	if (r < 0)
		return cd_fail(err, -r, "seccomp", "export the BPF program: %s", strerror(-r));
	size = lseek(fd, 0, SEEK_END);
	r = read_program(fd, size, f);
	if (r == -E2BIG)
		return cd_fail(err, E2BIG, "seccomp", "the BPF program has %lld bytes (at most %d "
						      "instructions)", (long long)size, BPF_MAXINSNS);
	if (r < 0)
		return cd_fail_errno(err, -r, "seccomp", "read the BPF program back");
	return 0;
}

static bool denies(uint32_t ret)
{
	uint32_t a = ret & SECCOMP_RET_ACTION_FULL;

	return a == SECCOMP_RET_ERRNO || a == SECCOMP_RET_KILL_PROCESS ||
	       a == SECCOMP_RET_KILL_THREAD || a == SECCOMP_RET_TRAP;
}

/* The architecture the programs are compiled for (libseccomp's native one, an AUDIT_ARCH_*
 * value) and the one whose system call numbers this binary was built with must be the same for
 * a proof to mean anything: 0 when unsure. */
static uint32_t proof_arch(void)
{
#if defined(__x86_64__) && !defined(__ILP32__)
	const uint32_t built = AUDIT_ARCH_X86_64;
#elif defined(__aarch64__)
	const uint32_t built = AUDIT_ARCH_AARCH64;
#elif defined(__riscv) && __riscv_xlen == 64
	const uint32_t built = AUDIT_ARCH_RISCV64;
#else
	const uint32_t built = 0; /* not a proof cordon knows how to make */
#endif
	return built && seccomp_arch_native() == built ? built : 0;
}

/* Does some program of the set deny this call? The kernel runs them all; the strictest wins. */
static bool set_denies(const struct cd_filter *const *set, size_t n, uint32_t arch, int nr,
		       const uint64_t args[6])
{
	for (size_t i = 0; i < n; i++)
		if (set[i] && denies(cd_filter_eval(set[i], arch, nr, args)))
			return true;
	return false;
}

/* Terminal injection must be denied whatever the upper 32 bits of the request hold: the kernel
 * truncates ioctl's cmd to an unsigned int (the bug class of CVE-2019-10063). */
bool cd_filter_set_blocks_tiocsti(const struct cd_filter *const *set, size_t n)
{
	static const uint64_t reqs[] = { TIOCSTI, TIOCLINUX, TIOCSTI | (1ull << 32),
					 TIOCLINUX | (0xffffffffull << 32) };
	uint32_t arch = proof_arch();

	if (!arch)
		return false;
	for (size_t i = 0; i < CD_ELEMENTSOF(reqs); i++) {
		uint64_t args[6] = { 0, reqs[i] };

		if (!set_denies(set, n, arch, SYS_ioctl, args))
			return false;
	}
	return true;
}

static bool is_exec(int nr)
{
	return nr == SYS_execve || nr == SYS_execveat;
}

/* The audit trail: execve and execveat go to the supervisor, which logs them and lets them
 * continue. What the policy allows becomes "notify"; what it denies stays denied. */
static int add_exec_notify(scmp_filter_ctx ctx, const struct cd_policy *p, uint32_t def,
			   struct cd_filter *f, struct cordon_error *err)
{
	static const int nrs[] = { SYS_execve, SYS_execveat };

	for (size_t k = 0; k < CD_ELEMENTSOF(nrs); k++) {
		bool named = false;
		int r;

		for (size_t i = 0; i < p->n_rules; i++)
			named = named || p->rules[i].nr == nrs[k];
		if (named || def != SCMP_ACT_ALLOW)
			continue; /* its rules were turned into notify, or it is denied */
		r = seccomp_rule_add(ctx, SCMP_ACT_NOTIFY, nrs[k], 0);
		if (r < 0)
			return cd_fail(err, -r, "seccomp", "cannot add the exec notification: %s",
				       strerror(-r));
		f->n_rules++;
	}
	f->notify = true;
	return 0;
}

int cd_filter_compile(const struct cd_policy *p, bool log, bool optimize, struct cd_filter *f,
		      struct cordon_error *err)
{
	return cd_filter_compile_audit(p, log, optimize, false, f, err);
}

/* --- the key of a compile, and the shipped programs (precompiled.h) --- */

static void hash_u64(struct sha256_ctx *h, uint64_t v)
{
	sha256_update(h, sizeof(v), (const uint8_t *)&v);
}

/* The GNU build id of the libseccomp this process loaded, hashed in: a distribution's fix that
 * keeps the version (2.5.4-1+deb12u1 still says 2.5.4) is another library, whose programs the
 * table does not hold. A static libseccomp has none: its version stands alone, as at build. */
static int hash_build_id(struct dl_phdr_info *info, size_t size, void *data)
{
	(void)size;
	if (!info->dlpi_name || !strstr(info->dlpi_name, "/libseccomp.so"))
		return 0;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		const char *n = (const char *)(info->dlpi_addr + ph->p_vaddr), *end = n + ph->p_memsz;

		if (ph->p_type != PT_NOTE)
			continue;
		while (n + sizeof(ElfW(Nhdr)) <= end) {
			const ElfW(Nhdr) *nh = (const ElfW(Nhdr) *)n;
			const char *name = n + sizeof(*nh);
			const uint8_t *desc = (const uint8_t *)name + ((nh->n_namesz + 3) & ~3u);

			if ((const char *)desc + nh->n_descsz > end)
				break;
			if (nh->n_type == NT_GNU_BUILD_ID && nh->n_namesz == 4 &&
			    memcmp(name, "GNU", 4) == 0) {
				sha256_update(data, nh->n_descsz, desc);
				return 1;
			}
			n = (const char *)desc + ((nh->n_descsz + 3) & ~3u);
		}
	}
	return 1;
}

/* What a compile depends on besides the rules: libseccomp, the kernel's API level, the
 * architecture, the options; tag: which kind of key */
static void hash_compiler(struct sha256_ctx *h, const char *tag, bool log, bool optimize,
			  bool notify_exec)
{
	const struct scmp_version *v = seccomp_version();

	sha256_init(h);
	sha256_update(h, strlen(tag), (const uint8_t *)tag);
	hash_u64(h, v ? (uint64_t)v->major << 32 | v->minor << 16 | v->micro : 0);
	dl_iterate_phdr(hash_build_id, h);
	hash_u64(h, seccomp_api_get());
	hash_u64(h, seccomp_arch_native());
	hash_u64(h, (uint64_t)log | (uint64_t)optimize << 1 | (uint64_t)notify_exec << 2);
}

void cd_filter_key(const struct cd_policy *p, bool log, bool optimize, bool notify_exec,
		   uint8_t key[32])
{
	struct sha256_ctx h;

	hash_compiler(&h, "cordon-bpf-1", log, optimize, notify_exec);
	hash_u64(&h, p->default_action);
	hash_u64(&h, p->n_rules);
	for (size_t i = 0; i < p->n_rules; i++) {
		const struct cd_policy_rule *r = &p->rules[i];

		hash_u64(&h, r->action);
		hash_u64(&h, (uint64_t)(int64_t)r->nr);
		hash_u64(&h, r->n_conds);
		for (unsigned k = 0; k < r->n_conds && k < CD_POLICY_MAX_CONDS; k++) {
			hash_u64(&h, r->conds[k].arg);
			hash_u64(&h, r->conds[k].op);
			hash_u64(&h, r->conds[k].mask);
			hash_u64(&h, r->conds[k].value);
		}
	}
	sha256_digest(&h, 32, key);
}

/* A text, hashed in with its length (one text cannot pass for two) */
static void hash_text(const char *text, size_t len, void *data)
{
	uint8_t digest[32];
	struct sha256_ctx t;

	sha256_init(&t);
	sha256_update(&t, len, (const uint8_t *)text);
	sha256_digest(&t, sizeof(digest), digest);
	hash_u64(data, len);
	sha256_update(data, sizeof(digest), digest);
}

int cd_filter_source_key(const char *path, const char *const *includes, bool log, bool optimize,
			 bool notify_exec, uint8_t key[32])
{
	struct sha256_ctx h;
	int r = 0;

	hash_compiler(&h, path ? "cordon-src-1" : "cordon-src-baseline-1", log, optimize,
		      notify_exec);
	if (path)
		r = cd_policy_sources(path, includes, hash_text, &h);
	else
		cd_policy_baseline_source(hash_text, &h);
	sha256_digest(&h, 32, key);
	return r;
}

static bool precompiled_off(void)
{
	const char *off = getenv("CORDON_NO_PRECOMPILED");

	return off && *off && strcmp(off, "0") != 0;
}

static const struct cd_precompiled *find_precompiled(const uint8_t key[32])
{
	if (precompiled_off())
		return NULL;
	for (size_t i = 0; i < cd_n_precompiled; i++)
		if (memcmp(cd_precompiled[i].key, key, 32) == 0)
			return &cd_precompiled[i];
	return NULL;
}

static int take_precompiled(const struct cd_precompiled *pre, bool log, bool optimize,
			    struct cd_filter *f)
{
	size_t size = (size_t)pre->len * sizeof(struct sock_filter);

	*f = (struct cd_filter){ .log = log, .optimized = optimize, .notify = pre->notify,
				 .n_rules = pre->n_rules, .len = pre->len, .insns = malloc(size) };
	if (!f->insns)
		return -ENOMEM;
	memcpy(f->insns, pre->insns, size);
	f->blocks_tiocsti = cd_filter_set_blocks_tiocsti(&(const struct cd_filter *){ f }, 1);
	return 0;
}

static bool same_names(const char *const *a, const char *const *b)
{
	for (; *a && *b; a++, b++)
		if (strcmp(*a, *b) != 0)
			return false;
	return !*a && !*b;
}

int cd_filter_from_sources(const char *path, bool log, bool optimize, bool notify_exec,
			   struct cd_filter *f)
{
	const char *const *tried = NULL;
	uint8_t key[32];
	bool keyed = false;

	if (precompiled_off())
		return 0;
	for (size_t i = 0; i < cd_n_precompiled; i++) {
		const struct cd_precompiled *pre = &cd_precompiled[i];

		if (pre->notify_exec != notify_exec || pre->baseline != !path)
			continue;
		/* the entries of one list of includes share a key: computed once */
		if (!keyed || !same_names(pre->includes, tried)) {
			if (cd_filter_source_key(path, pre->includes, log, optimize, notify_exec, key) < 0)
				continue; /* a text it would include is not there: not this one */
			tried = pre->includes;
			keyed = true;
		}
		if (memcmp(pre->source, key, 32) == 0)
			return take_precompiled(pre, log, optimize, f) < 0 ? -ENOMEM : 1;
	}
	return 0;
}

int cd_filter_compile_audit(const struct cd_policy *p, bool log, bool optimize,
			    bool notify_exec, struct cd_filter *f, struct cordon_error *err)
{
	const struct cd_precompiled *pre;
	uint8_t key[32];

	cd_filter_key(p, log, optimize, notify_exec, key);
	pre = find_precompiled(key);
	if (!pre)
		return cd_filter_compile_fresh(p, log, optimize, notify_exec, f, err);
	if (take_precompiled(pre, log, optimize, f) < 0)
		return cd_fail(err, ENOMEM, "seccomp", "out of memory");
	return 0;
}

int cd_filter_compile_fresh(const struct cd_policy *p, bool log, bool optimize, bool notify_exec,
			    struct cd_filter *f, struct cordon_error *err)
{
	uint32_t def = effective(p->default_action, log);
	_cleanup_(ctx_release) scmp_filter_ctx ctx = seccomp_init(def);
	int r;

	*f = (struct cd_filter){ .log = log, .optimized = optimize };
	f->notify = false;
	if (!ctx)
		return cd_fail(err, ENOMEM, "seccomp", "libseccomp could not start a filter");
	r = set_attrs(ctx, optimize, err);
	if (r < 0)
		return r;
	for (size_t i = 0; i < p->n_rules; i++) {
		const struct cd_policy_rule *rule = &p->rules[i];
		uint32_t action = effective(rule->action, log);

		if (notify_exec && is_exec(rule->nr) && action == SCMP_ACT_ALLOW)
			action = SCMP_ACT_NOTIFY;
		/* the default already does it; syscalls this architecture lacks need nothing */
		if (action == def || rule->nr < 0)
			continue;
		r = add_rule(ctx, rule, action, err);
		if (r < 0)
			return r;
		f->n_rules++;
	}
	if (notify_exec) {
		r = add_exec_notify(ctx, p, def, f, err);
		if (r < 0)
			return r;
	}
	r = export_bpf(ctx, f, err);
	if (r < 0)
		return r;
	f->blocks_tiocsti = cd_filter_set_blocks_tiocsti(&(const struct cd_filter *){ f }, 1);
	return 0;
}

void cd_filter_done(struct cd_filter *f)
{
	free(f->insns);
	*f = (struct cd_filter){ 0 };
}


/* --- a classic BPF interpreter, for the subset seccomp accepts --- */

static bool load_word(const struct seccomp_data *d, uint32_t off, uint32_t *ret)
{
	if (off % 4 || off > sizeof(*d) - 4)
		return false;
	memcpy(ret, (const char *)d + off, 4);
	return true;
}

static bool alu(uint16_t op, uint32_t *a, uint32_t v)
{
	switch (op) {
	case BPF_ADD: *a += v; return true;
	case BPF_SUB: *a -= v; return true;
	case BPF_MUL: *a *= v; return true;
	case BPF_DIV: if (!v) return false; *a /= v; return true;
	case BPF_MOD: if (!v) return false; *a %= v; return true;
	case BPF_OR: *a |= v; return true;
	case BPF_AND: *a &= v; return true;
	case BPF_XOR: *a ^= v; return true;
	case BPF_LSH: *a = v < 32 ? *a << v : 0; return true;
	case BPF_RSH: *a = v < 32 ? *a >> v : 0; return true;
	case BPF_NEG: *a = -*a; return true;
	default: return false;
	}
}

static bool jump(uint16_t op, uint32_t a, uint32_t v, bool *taken)
{
	switch (op) {
	case BPF_JEQ: *taken = a == v; return true;
	case BPF_JGT: *taken = a > v; return true;
	case BPF_JGE: *taken = a >= v; return true;
	case BPF_JSET: *taken = (a & v) != 0; return true;
	default: return false;
	}
}

uint32_t cd_filter_eval(const struct cd_filter *f, uint32_t arch, int nr, const uint64_t args[6])
{
	struct seccomp_data d = { .nr = nr, .arch = arch };
	uint32_t a = 0, x = 0, mem[BPF_MEMWORDS] = { 0 };

	memcpy(d.args, args, sizeof(d.args));
	for (unsigned pc = 0; pc < f->len; pc++) {
		const struct sock_filter *i = &f->insns[pc];
		uint32_t v = BPF_SRC(i->code) == BPF_X ? x : i->k;
		bool taken;

		switch (BPF_CLASS(i->code)) {
		case BPF_LD:
			if (i->code == (BPF_LD | BPF_W | BPF_ABS) && load_word(&d, i->k, &a))
				break;
			if (i->code == (BPF_LD | BPF_IMM)) { a = i->k; break; }
			if (i->code == (BPF_LD | BPF_MEM) && i->k < BPF_MEMWORDS) { a = mem[i->k]; break; }
			return SECCOMP_RET_ALLOW;
		case BPF_LDX:
			if (i->code == (BPF_LDX | BPF_IMM)) { x = i->k; break; }
			if (i->code == (BPF_LDX | BPF_MEM) && i->k < BPF_MEMWORDS) { x = mem[i->k]; break; }
			return SECCOMP_RET_ALLOW;
		case BPF_ST:
		case BPF_STX:
			if (i->k >= BPF_MEMWORDS)
				return SECCOMP_RET_ALLOW;
			mem[i->k] = BPF_CLASS(i->code) == BPF_ST ? a : x;
			break;
		case BPF_ALU:
			if (!alu(BPF_OP(i->code), &a, v))
				return SECCOMP_RET_ALLOW;
			break;
		case BPF_JMP:
			if (BPF_OP(i->code) == BPF_JA) {
				if ((uint64_t)pc + i->k >= f->len)
					return SECCOMP_RET_ALLOW; /* out of the program */
				pc += i->k;
				break;
			}
			if (!jump(BPF_OP(i->code), a, v, &taken))
				return SECCOMP_RET_ALLOW;
			pc += taken ? i->jt : i->jf;
			break;
		case BPF_RET:
			return BPF_RVAL(i->code) == BPF_A ? a : i->k;
		case BPF_MISC:
			if (BPF_MISCOP(i->code) == BPF_TAX) x = a; else a = x;
			break;
		default:
			return SECCOMP_RET_ALLOW;
		}
	}
	return SECCOMP_RET_ALLOW; /* fell off the end: the kernel would reject such a program */
}
