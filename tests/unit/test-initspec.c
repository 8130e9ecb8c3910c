/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * test-initspec.c - what pid 1 hands cordon-init (initspec.c): a round trip keeps every field,
 * and a buffer that is cut, grown or damaged anywhere is refused or read within its bounds. TAP.
 */
#include <stdlib.h>
#include <string.h>

#include "initspec.h"

#include "../lib/tap.h"

static struct sock_filter base_insns[3] = { { 6, 0, 0, 0x7fff0000 }, { 6, 0, 0, 1 },
					    { 6, 0, 0, 2 } };
static struct sock_filter pol_insns[2] = { { 6, 0, 0, 0x50001 }, { 6, 0, 0, 0x7fff0000 } };
static char *argv[] = { "sh", "-c", "echo hi", NULL };
static char *envp[] = { "PATH=/usr/bin:/bin", "HOME=/home/ann", "EMPTY=", NULL };

static struct cd_init_spec sample(void)
{
	struct cd_init_spec s = {
		.argv = argv, .envp = envp, .path = "/usr/bin:/bin", .chdir = "/work",
		.baseline = { .insns = base_insns, .len = 3, .blocks_tiocsti = true, .notify = true },
		.filter = { .insns = pol_insns, .len = 2 }, .has_filter = true,
		.has_tty = true, .take_tty = true, .has_exec = false, .timing = true,
		.deadline_ns = 123456789012ull, .kill_after_ns = 2000000000ull,
	};

	s.rlimits[RLIMIT_NOFILE] = (struct cd_rlimit){ true, 64, 128 };
	s.rlimits[RLIMIT_CORE] = (struct cd_rlimit){ true, 0, 0 };
	return s;
}

static void round_trip(void)
{
	struct cd_init_spec in = sample(), out;
	const char *why = NULL;
	void *buf;
	size_t len;

	ok(cd_init_spec_pack(&in, &buf, &len) == 0, "pack");
	ok(len % 8 == 0, "the buffer is whole 8-byte words");
	if (!ok(cd_init_spec_unpack(buf, len, &out, &why) == 0, "unpack (%s)", why ? why : "")) {
		free(buf);
		return;
	}
	for (int i = 0; i < 3; i++)
		is_str(out.argv[i], argv[i], "argv[%d]", i);
	ok(out.argv[3] == NULL, "argv ends");
	for (int i = 0; i < 3; i++)
		is_str(out.envp[i], envp[i], "envp[%d]", i);
	ok(out.envp[3] == NULL, "envp ends");
	is_str(out.path, "/usr/bin:/bin", "PATH");
	is_str(out.chdir, "/work", "the directory");
	ok(out.rlimits[RLIMIT_NOFILE].set && out.rlimits[RLIMIT_NOFILE].soft == 64 &&
		   out.rlimits[RLIMIT_NOFILE].hard == 128, "an rlimit set");
	ok(out.rlimits[RLIMIT_CORE].set && !out.rlimits[RLIMIT_CPU].set, "set and unset rlimits");
	ok(out.baseline.len == 3 && memcmp(out.baseline.insns, base_insns, sizeof(base_insns)) == 0,
	   "the baseline's instructions");
	ok(out.baseline.notify && out.baseline.blocks_tiocsti && out.baseline.baseline,
	   "the baseline's flags");
	ok(out.has_filter && out.filter.len == 2 &&
		   memcmp(out.filter.insns, pol_insns, sizeof(pol_insns)) == 0 && !out.filter.notify,
	   "the policy's program");
	ok((uintptr_t)out.filter.insns % 4 == 0 && (uintptr_t)out.baseline.insns % 4 == 0,
	   "the programs are aligned");
	ok(out.has_tty && out.take_tty && !out.has_exec && out.timing, "the flags");
	ok(out.deadline_ns == 123456789012ull && out.kill_after_ns == 2000000000ull, "the deadline");
	cd_init_spec_done(&out);
	free(buf);
}

static void no_path_no_filter(void)
{
	struct cd_init_spec in = sample(), out;
	const char *why = NULL;
	void *buf;
	size_t len;

	in.path = NULL;
	in.has_filter = false;
	in.envp = (char *[]){ NULL };
	ok(cd_init_spec_pack(&in, &buf, &len) == 0, "pack without PATH, policy, environment");
	ok(cd_init_spec_unpack(buf, len, &out, &why) == 0 && out.path == NULL && !out.has_filter &&
		   out.envp[0] == NULL,
	   "unpack: no PATH, no policy, an empty environment");
	cd_init_spec_done(&out);
	free(buf);
}

/* Each change to a packed buffer: refused with a reason, or read within bounds */
static void damaged(void)
{
	struct cd_init_spec in = sample(), out;
	const char *why;
	unsigned refused = 0, read = 0;
	unsigned char *buf, *copy;
	size_t len;
	int r;

	cd_init_spec_pack(&in, (void **)&buf, &len);
	copy = malloc(len + 64);
	why = NULL;
	r = cd_init_spec_unpack(buf, len - 8, &out, &why);
	ok(r == -EINVAL && why, "cut short: refused (%s)", why ? why : "");
	memcpy(copy, buf, len);
	memset(copy + len, 0, 64);
	why = NULL;
	r = cd_init_spec_unpack(copy, len + 8, &out, &why);
	ok(r == -EINVAL && why, "grown: refused (%s)", why ? why : "");
	why = NULL;
	ok(cd_init_spec_unpack(buf, 16, &out, &why) == -EINVAL, "shorter than its head: refused");
	/* every byte, every bit: no crash, no read outside (ASan), strings inside the buffer */
	for (size_t i = 0; i < len; i++)
		for (int bit = 0; bit < 8; bit++) {
			memcpy(copy, buf, len);
			copy[i] ^= (unsigned char)(1u << bit);
			why = NULL;
			if (cd_init_spec_unpack(copy, len, &out, &why) < 0) {
				refused++;
				continue;
			}
			read++;
			for (char **a = out.argv; *a; a++)
				if ((unsigned char *)*a < copy || (unsigned char *)*a >= copy + len)
					read = 1u << 31;
			cd_init_spec_done(&out);
		}
	ok(refused > 0 && read < (1u << 31), "%u bit flips refused, %u read within the buffer",
	   refused, read);
	free(copy);
	free(buf);
}

static void too_big(void)
{
	struct cd_init_spec in = sample();
	size_t big = CD_INIT_SPEC_MAX;
	char *huge = malloc(big);
	char *a[] = { huge, NULL };
	void *buf = NULL;
	size_t len;

	memset(huge, 'x', big - 1);
	huge[big - 1] = '\0';
	in.argv = a;
	ok(cd_init_spec_pack(&in, &buf, &len) == -E2BIG && !buf, "past CD_INIT_SPEC_MAX: E2BIG");
	free(huge);
}

int main(void)
{
	round_trip();
	no_path_no_filter();
	damaged();
	too_big();
	return done_testing();
}
