/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * fuzz-initspec.c - libFuzzer target for cd_init_spec_unpack (src/sandbox/initspec.c), which
 * cordon-init (pid 1 of every sandbox) runs on the spec it reads from its memfd. The producer is
 * trusted (the supervisor packs it), but whatever the bytes, unpack must not read outside them.
 * Each input is a spec, copied into a buffer of its own size (as cordon-init reads it: aligned,
 * and ASan sees a byte past the end). Besides the sanitizers, it abort()s when:
 *  - a refusal says no why;
 *  - an accepted spec has no argv[0], or a string (argv, envp, PATH, the directory) that does
 *    not lie, with its NUL, within the buffer before the programs, each after the one before,
 *    the last followed by fewer than 8 bytes of zeros;
 *  - a program (the baseline, the policy's when there is one) is empty, longer than BPF_MAXINSNS,
 *    unaligned, not within the buffer, or the two overlap;
 *  - what unpack gives, packed again (cd_init_spec_pack) and unpacked, is not the same spec.
 * Built with -DCORDON_FUZZ_REPLAY, it has a main that replays files (replay.h), and that writes
 * packed specs as seeds: `fuzz-initspec --seeds DIR` (tests/fuzz/run does, before fuzzing).
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "initspec.h"
#include "util.h"

#define FUZZ_MAX_INPUT (64 << 10)

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);

_printf_(1, 2) _Noreturn static void broken(const char *fmt, ...)
{
	va_list ap;

	fputs("fuzz-initspec: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	abort();
}

/* s lies in [*at, end) with its NUL; *at moves past it (the strings follow each other) */
static void string_in(const char *s, const char **at, const char *end, const char *what)
{
	const char *nul;

	if (!s || s < *at || s >= end || !(nul = memchr(s, '\0', (size_t)(end - s))))
		broken("%s is not within the strings' part, after the string before it", what);
	*at = nul + 1;
}

static void program_in(const struct cd_filter *f, const char *start, const char *end,
		       const char *what)
{
	const char *p = (const char *)f->insns;

	if (!f->len || f->len > BPF_MAXINSNS)
		broken("%s: %u instructions", what, f->len);
	if ((uintptr_t)p % _Alignof(struct sock_filter) || p < start ||
	    p + (size_t)f->len * sizeof(struct sock_filter) > end)
		broken("%s: not within the buffer after the strings", what);
}

/* The strings lie in [buf, end) one after the other, each with its NUL; then padding: fewer than
 * 8 zeros */
static void check_strings(const struct cd_init_spec *s, const char *buf, const char *end)
{
	const char *at = buf;

	if (!s->argv || !s->argv[0] || !s->envp)
		broken("accepted without a command");
	for (char **a = s->argv; *a; a++)
		string_in(*a, &at, end, "an argument");
	for (char **e = s->envp; *e; e++)
		string_in(*e, &at, end, "an environment string");
	if (s->path) /* PATH comes before the directory, even when it is not set (then "") */
		string_in(s->path, &at, end, "PATH");
	string_in(s->chdir, &at, end, "the directory");
	if (end - at >= 8)
		broken("%td bytes between the strings and the programs", end - at);
	for (; at < end; at++)
		if (*at)
			broken("padding that is not zeros");
}

static bool same_strv(char **a, char **b)
{
	for (; *a && *b; a++, b++)
		if (strcmp(*a, *b) != 0)
			return false;
	return !*a && !*b;
}

static bool same_filter(const struct cd_filter *a, const struct cd_filter *b)
{
	return a->len == b->len && a->blocks_tiocsti == b->blocks_tiocsti &&
	       a->notify == b->notify && a->baseline == b->baseline &&
	       memcmp(a->insns, b->insns, a->len * sizeof(struct sock_filter)) == 0;
}

static bool same_spec(const struct cd_init_spec *a, const struct cd_init_spec *b)
{
	return same_strv(a->argv, b->argv) && same_strv(a->envp, b->envp) &&
	       !a->path == !b->path && (!a->path || strcmp(a->path, b->path) == 0) &&
	       strcmp(a->chdir, b->chdir) == 0 &&
	       memcmp(a->rlimits, b->rlimits, sizeof(a->rlimits)) == 0 &&
	       same_filter(&a->baseline, &b->baseline) && a->has_filter == b->has_filter &&
	       (!a->has_filter || same_filter(&a->filter, &b->filter)) &&
	       a->has_tty == b->has_tty && a->take_tty == b->take_tty &&
	       a->has_exec == b->has_exec && a->timing == b->timing &&
	       a->deadline_ns == b->deadline_ns && a->kill_after_ns == b->kill_after_ns;
}

static void check_repack(const struct cd_init_spec *s)
{
	struct cd_init_spec again;
	const char *why = NULL;
	void *buf;
	size_t len;
	int r = cd_init_spec_pack(s, &buf, &len);

	if (r < 0)
		broken("an unpacked spec does not pack again: %s", strerror(-r));
	if (cd_init_spec_unpack(buf, len, &again, &why) < 0)
		broken("an unpacked spec, packed again, does not unpack: %s", why);
	if (!same_spec(s, &again))
		broken("an unpacked spec, packed and unpacked again, is another spec");
	cd_init_spec_done(&again);
	free(buf);
}

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
	struct cd_init_spec s;
	const char *why = NULL, *end;
	char *buf;
	int r;

	if (size > FUZZ_MAX_INPUT)
		return 0;
	buf = malloc(size ? size : 1); /* malloc's alignment, as cordon-init's buffer has */
	if (!buf)
		return 0;
	memcpy(buf, data, size);
	end = buf + size;
	r = cd_init_spec_unpack(buf, size, &s, &why);
	if (r < 0) {
		if (r != -ENOMEM && (r != -EINVAL || !why || !*why))
			broken("refused (%d) without saying why", r);
		free(buf);
		return 0;
	}
	/* the baseline program starts where the strings' part ends */
	program_in(&s.baseline, buf, end, "the baseline");
	check_strings(&s, buf, (const char *)s.baseline.insns);
	if (s.has_filter) {
		program_in(&s.filter, buf, end, "the policy's program");
		if (s.filter.insns < s.baseline.insns + s.baseline.len)
			broken("the two programs overlap");
	}
	check_repack(&s);
	cd_init_spec_done(&s);
	free(buf);
	return 0;
}

#ifdef CORDON_FUZZ_REPLAY
#include "replay.h"

/* --- seeds: specs as the supervisor packs them --- */

static struct sock_filter insns[4] = { { 0x20, 0, 0, 4 }, { 0x15, 0, 1, 0xc000003e },
				       { 6, 0, 0, 0x7fff0000 }, { 6, 0, 0, 0x80000000 } };

static int write_seed(const char *dir, const char *name, const struct cd_init_spec *s)
{
	char path[4096];
	void *buf;
	size_t len;
	FILE *f;
	int r = cd_init_spec_pack(s, &buf, &len);

	if (r < 0 || snprintf(path, sizeof(path), "%s/%s.initspec", dir, name) >= (int)sizeof(path))
		return -1;
	f = fopen(path, "wbe");
	r = f && fwrite(buf, 1, len, f) == len ? 0 : -1;
	if (f && fclose(f) != 0)
		r = -1;
	free(buf);
	return r;
}

static int write_seeds(const char *dir)
{
	static char *argv[] = { "sh", "-c", "echo hi", NULL }, *one[] = { "true", NULL };
	static char *envp[] = { "PATH=/usr/bin:/bin", "HOME=/home/ann", "EMPTY=", NULL };
	static char *empty[] = { "", NULL }, *none[] = { NULL }, *many[65];
	struct cd_init_spec full = {
		.argv = argv, .envp = envp, .path = "/usr/bin:/bin", .chdir = "/work",
		.baseline = { .insns = insns, .len = 4, .blocks_tiocsti = true, .notify = true },
		.filter = { .insns = insns, .len = 3, .notify = true }, .has_filter = true,
		.has_tty = true, .take_tty = true, .has_exec = true, .timing = true,
		.deadline_ns = 123456789012ull, .kill_after_ns = 2000000000ull,
	};
	struct cd_init_spec small = { .argv = one, .envp = none, .chdir = "/",
				      .baseline = { .insns = insns, .len = 1 } };
	struct cd_init_spec blank = { .argv = empty, .envp = empty, .path = "", .chdir = "",
				      .baseline = { .insns = insns, .len = 2 } };
	struct cd_init_spec long_ = small;
	char pad[8][9];
	int r = 0;

	full.rlimits[RLIMIT_NOFILE] = (struct cd_rlimit){ true, 64, 128 };
	full.rlimits[RLIMIT_CORE] = (struct cd_rlimit){ true, 0, 0 };
	full.rlimits[RLIMIT_NPROC] = (struct cd_rlimit){ true, UINT64_MAX, UINT64_MAX };
	for (int i = 0; i < 64; i++)
		many[i] = i % 2 ? "--option" : "";
	long_.argv = many;
	long_.envp = argv;
	r |= write_seed(dir, "full", &full);
	r |= write_seed(dir, "small", &small);
	r |= write_seed(dir, "blank", &blank);
	r |= write_seed(dir, "many", &long_);
	/* every length of padding after the strings */
	for (int i = 0; i < 8; i++) {
		char name[16], *arg[] = { pad[i], NULL };

		memset(pad[i], 'a', (size_t)i + 1);
		pad[i][i + 1] = '\0';
		small.argv = arg;
		snprintf(name, sizeof(name), "pad%d", i);
		r |= write_seed(dir, name, &small);
	}
	return r;
}

/* fuzz-initspec --seeds DIR | FILE|DIR... */
int main(int argc, char **argv)
{
	if (argc == 3 && strcmp(argv[1], "--seeds") == 0) {
		if (write_seeds(argv[2]) < 0) {
			fprintf(stderr, "fuzz-initspec: cannot write the seeds in %s\n", argv[2]);
			return 2;
		}
		return replay_main("fuzz-initspec", argc - 1, argv + 1);
	}
	return replay_main("fuzz-initspec", argc, argv);
}
#endif
