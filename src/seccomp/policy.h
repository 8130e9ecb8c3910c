/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* policy.h - the seccomp policy language: parse files into rules. Pure: no system call but
 * reading the files; syscall names are resolved with libseccomp's tables. The language is
 * documented in seccomp-policies/README.md. */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "util.h"

#define CD_POLICY_MAX_CONDS   6 /* one per argument: libseccomp tests each at most once */
#define CD_POLICY_MAX_DEPTH   8 /* include nesting */
#define CD_POLICY_MAX_FILE    (1 << 20)

enum cd_cmp {
	CD_CMP_EQ,
	CD_CMP_NE,
	CD_CMP_LT,
	CD_CMP_LE,
	CD_CMP_GT,
	CD_CMP_GE,
	CD_CMP_MASKED_EQ, /* (arg & mask) == value */
};

struct cd_policy_cond {
	unsigned arg; /* 0..5 */
	enum cd_cmp op;
	uint64_t mask;
	uint64_t value;
};

/* Where something was written, for error messages: "file:line:col". */
struct cd_policy_loc {
	const char *file; /* owned by the policy's file list */
	unsigned line;
	unsigned col;
};

struct cd_policy_rule {
	uint32_t action; /* SCMP_ACT_* */
	int nr;          /* libseccomp's number: negative for syscalls not on this architecture */
	char name[40];
	unsigned n_conds;
	struct cd_policy_cond conds[CD_POLICY_MAX_CONDS];
	struct cd_policy_loc loc;
};

struct cd_policy_member {
	int nr;
	char name[40];
};

struct cd_policy_group {
	char *name; /* without '@' */
	struct cd_policy_member *members;
	size_t n_members;
	struct cd_policy_loc loc;
};

struct cd_policy {
	uint32_t default_action;
	bool default_set;
	struct cd_policy_loc default_loc;
	struct cd_policy_rule *rules;
	size_t n_rules;
	struct cd_policy_group *groups;
	size_t n_groups;
	char **files;      /* every file read, as displayed in messages (realpath in files_real) */
	char **files_real;
	const char *const *search; /* directories for `include NAME` and for names, in order */
};

/* Where named policies are looked for (NULL-terminated): the installed directory. A name it
 * does not have is the binary's own copy of seccomp-policies/NAME.policy, if there is one. */
const char *const *cd_policy_search_path(void);

/* Find a policy by NAME (a file NAME.policy in the search path, else the built-in one, returned
 * as "built-in:NAME", which cd_policy_load() reads from the binary) or PATH (anything with a '/'
 * or ending in ".policy"). Returns a malloc'd path, or NULL with *err filled. */
char *cd_policy_find(const char *name_or_path, const char *const *search,
		     struct cordon_error *err);

/* How a policy is named in messages: a path as given, a NAME as "NAME.policy". NULL: ENOMEM. */
char *cd_policy_display_name(const char *name_or_path);

/* Parse a policy file (and what it includes) into *p, which must be zeroed first. display is the
 * name used in messages. On error: -errno, *err = "file:line:col: what was expected". */
int cd_policy_load(struct cd_policy *p, const char *path, const char *display,
		   struct cordon_error *err);
/* Parse from memory (for tests and the fuzzer); includes are resolved in p->search. */
int cd_policy_parse(struct cd_policy *p, const char *text, size_t len, const char *display,
		    struct cordon_error *err);
/* The texts a cd_policy_load() of path would parse, without parsing them: the file's own, then
 * the one each NAME of includes (NULL-terminated, as `include NAME` in that file) resolves to,
 * each handed to fn, in that order. For the shipped policies, whose includes are known when
 * cordon is built (precompiled.h). 0, or -errno (a text that cannot be read). */
typedef void (*cd_policy_source_fn)(const char *text, size_t len, void *data);
int cd_policy_sources(const char *path, const char *const *includes, cd_policy_source_fn fn,
		      void *data);
/* The baseline's one text, to fn. */
void cd_policy_baseline_source(cd_policy_source_fn fn, void *data);

/* cordon's own rules (seccomp-policies/baseline.policy), compiled into the binary: parsed from
 * memory, never from a file, into *p (zeroed first). */
int cd_policy_parse_baseline(struct cd_policy *p, struct cordon_error *err);
void cd_policy_free(struct cd_policy *p);

/* Action names: "allow", "errno EPERM", "kill", ... into buf. */
const char *cd_policy_action_str(uint32_t action, char *buf, size_t size);
const char *cd_policy_cmp_str(enum cd_cmp op);

/* Named constants of the language (TIOCSTI, CLONE_NEWUSER, AF_INET, ...) and errno names. */
bool cd_policy_constant(const char *name, uint64_t *ret);
int cd_policy_errno(const char *name); /* -1 if unknown */
const char *cd_policy_errno_name(int e);
