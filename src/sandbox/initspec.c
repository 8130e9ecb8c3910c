/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * initspec.c - pack and unpack what cordon-init needs (initspec.h). Pure. The supervisor packs in
 * its own process; cordon-init unpacks. The layout: a fixed head, then the strings (argv, envp,
 * PATH, the directory, each NUL-terminated), then the two programs' instructions.
 */
#include <string.h>

#include "initspec.h"

#define SPEC_MAGIC 0x636f7264u /* "cord" */
#define SPEC_VERSION 1u

enum {
	F_PATH = 1u << 0,
	F_FILTER = 1u << 1,
	F_TTY = 1u << 2,
	F_TAKE_TTY = 1u << 3,
	F_EXEC = 1u << 4,
	F_TIMING = 1u << 5,
	F_TIOCSTI = 1u << 6,     /* the programs together deny TIOCSTI (cd_filter.blocks_tiocsti) */
	F_BASE_NOTIFY = 1u << 7, /* the baseline notifies execs (the audit trail) */
	F_FILTER_NOTIFY = 1u << 8,
};

struct head {
	uint32_t magic, version, size, flags;
	uint64_t deadline_ns, kill_after_ns;
	uint32_t argc, envc;
	uint32_t strings;       /* their bytes, NULs and the padding to 8 bytes included */
	uint32_t baseline_len;  /* instructions */
	uint32_t filter_len;
	uint32_t pad;
	struct {
		uint64_t set, soft, hard;
	} rlimits[RLIM_NLIMITS];
};

_Static_assert(sizeof(struct head) % 8 == 0, "the strings start aligned");

/* The strings' bytes, padded so that the instructions after them are aligned */
static size_t strings_size(const struct cd_init_spec *s)
{
	size_t n = strlen(s->chdir) + 1 + (s->path ? strlen(s->path) : 0) + 1;

	for (char **a = s->argv; *a; a++)
		n += strlen(*a) + 1;
	for (char **e = s->envp; *e; e++)
		n += strlen(*e) + 1;
	return (n + 7) & ~(size_t)7;
}

static char *put(char *p, const char *s)
{
	size_t n = strlen(s) + 1;

	memcpy(p, s, n);
	return p + n;
}

static uint32_t flags_of(const struct cd_init_spec *s)
{
	return (s->path ? F_PATH : 0) | (s->has_filter ? F_FILTER : 0) | (s->has_tty ? F_TTY : 0) |
	       (s->take_tty ? F_TAKE_TTY : 0) | (s->has_exec ? F_EXEC : 0) |
	       (s->timing ? F_TIMING : 0) | (s->baseline.blocks_tiocsti ? F_TIOCSTI : 0) |
	       (s->baseline.notify ? F_BASE_NOTIFY : 0) |
	       (s->has_filter && s->filter.notify ? F_FILTER_NOTIFY : 0);
}

int cd_init_spec_pack(const struct cd_init_spec *s, void **ret, size_t *ret_len)
{
	size_t str = strings_size(s), insns = (size_t)s->baseline.len + (s->has_filter ? s->filter.len : 0);
	size_t size = sizeof(struct head) + str + insns * sizeof(struct sock_filter);
	struct head *h;
	char *p;

	if (size > CD_INIT_SPEC_MAX)
		return -E2BIG;
	h = calloc(1, size);
	if (!h)
		return -ENOMEM;
	*h = (struct head){ .magic = SPEC_MAGIC, .version = SPEC_VERSION, .size = (uint32_t)size,
			    .flags = flags_of(s), .deadline_ns = s->deadline_ns,
			    .kill_after_ns = s->kill_after_ns, .strings = (uint32_t)str,
			    .baseline_len = s->baseline.len,
			    .filter_len = s->has_filter ? s->filter.len : 0 };
	for (int i = 0; i < RLIM_NLIMITS; i++) {
		h->rlimits[i].set = s->rlimits[i].set;
		h->rlimits[i].soft = s->rlimits[i].soft;
		h->rlimits[i].hard = s->rlimits[i].hard;
	}
	p = (char *)(h + 1);
	for (char **a = s->argv; *a; a++, h->argc++)
		p = put(p, *a);
	for (char **e = s->envp; *e; e++, h->envc++)
		p = put(p, *e);
	p = put(p, s->path ? s->path : "");
	put(p, s->chdir);
	p = (char *)(h + 1) + str; /* past the padding (calloc's zeros) */
	memcpy(p, s->baseline.insns, s->baseline.len * sizeof(struct sock_filter));
	p += s->baseline.len * sizeof(struct sock_filter);
	if (s->has_filter)
		memcpy(p, s->filter.insns, s->filter.len * sizeof(struct sock_filter));
	*ret = h;
	*ret_len = size;
	return 0;
}

static int bad(const char **why, const char *what)
{
	*why = what;
	return -EINVAL;
}

/* n NUL-terminated strings from *p, none past end: into v (n + 1 slots) */
static bool take_strings(char **p, const char *end, uint32_t n, char **v)
{
	for (uint32_t i = 0; i < n; i++) {
		char *nul = memchr(*p, '\0', (size_t)(end - *p));

		if (!nul)
			return false;
		v[i] = *p;
		*p = nul + 1;
	}
	v[n] = NULL;
	return true;
}

/* the padding after the strings */
static bool zeros(const char *p, const char *end)
{
	for (; p < end; p++)
		if (*p)
			return false;
	return true;
}

static int check_head(const struct head *h, size_t len, const char **why)
{
	uint64_t insns;

	if (len < sizeof(*h) || h->magic != SPEC_MAGIC || h->version != SPEC_VERSION)
		return bad(why, "not a spec of this version");
	if (h->size != len || len > CD_INIT_SPEC_MAX)
		return bad(why, "its size is not the buffer's");
	if (h->argc == 0 || h->argc > len || h->envc > len)
		return bad(why, "no command, or more strings than bytes");
	if (h->baseline_len == 0 || h->baseline_len > BPF_MAXINSNS || h->filter_len > BPF_MAXINSNS ||
	    (h->filter_len == 0) != !(h->flags & F_FILTER))
		return bad(why, "a program's length is wrong");
	insns = ((uint64_t)h->baseline_len + h->filter_len) * sizeof(struct sock_filter);
	if (h->strings % 8 || (uint64_t)sizeof(*h) + h->strings + insns != len)
		return bad(why, "the parts do not add up to the size");
	return 0;
}

static void take_filters(const struct head *h, char *p, struct cd_init_spec *s)
{
	s->baseline = (struct cd_filter){ .insns = (struct sock_filter *)(void *)p,
					  .len = (unsigned short)h->baseline_len,
					  .blocks_tiocsti = h->flags & F_TIOCSTI,
					  .notify = h->flags & F_BASE_NOTIFY, .baseline = true };
	p += h->baseline_len * sizeof(struct sock_filter);
	s->has_filter = h->flags & F_FILTER;
	if (s->has_filter)
		s->filter = (struct cd_filter){ .insns = (struct sock_filter *)(void *)p,
						.len = (unsigned short)h->filter_len,
						.blocks_tiocsti = h->flags & F_TIOCSTI,
						.notify = h->flags & F_FILTER_NOTIFY };
}

int cd_init_spec_unpack(void *buf, size_t len, struct cd_init_spec *ret, const char **why)
{
	struct cd_init_spec s = { 0 };
	const struct head *h = buf;
	char *p = (char *)buf + sizeof(*h), *end;
	char *tail[3];
	int r = check_head(h, len, why);

	if (r < 0)
		return r;
	end = p + h->strings;
	s.argv = calloc((size_t)h->argc + 1, sizeof(char *));
	s.envp = calloc((size_t)h->envc + 1, sizeof(char *));
	if (!s.argv || !s.envp) {
		cd_init_spec_done(&s);
		return -ENOMEM;
	}
	if (!take_strings(&p, end, h->argc, s.argv) || !take_strings(&p, end, h->envc, s.envp) ||
	    !take_strings(&p, end, 2, tail) || end - p >= 8 || !zeros(p, end)) {
		cd_init_spec_done(&s);
		return bad(why, "a string runs past its part");
	}
	s.path = h->flags & F_PATH ? tail[0] : NULL;
	s.chdir = tail[1];
	for (int i = 0; i < RLIM_NLIMITS; i++)
		s.rlimits[i] = (struct cd_rlimit){ .set = h->rlimits[i].set != 0,
						   .soft = h->rlimits[i].soft,
						   .hard = h->rlimits[i].hard };
	take_filters(h, end, &s);
	s.has_tty = h->flags & F_TTY;
	s.take_tty = h->flags & F_TAKE_TTY;
	s.has_exec = h->flags & F_EXEC;
	s.timing = h->flags & F_TIMING;
	s.deadline_ns = h->deadline_ns;
	s.kill_after_ns = h->kill_after_ns;
	*ret = s;
	return 0;
}

void cd_init_spec_done(struct cd_init_spec *s)
{
	free(s->argv);
	free(s->envp);
	s->argv = s->envp = NULL;
}
