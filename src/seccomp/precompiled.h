/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * precompiled.h - the shipped policies' programs, compiled when cordon is built (precompile.c
 * writes the table into the binary), so that a run of the default policy compiles nothing:
 * libseccomp's compile of the baseline and default.policy was a large part of every run, on the
 * CPU pid 1 needed for its mounts (bench/startup.md, item 5).
 *
 * An entry is found by its key (cd_filter_key): a SHA-256 of the parsed policy's rules, the
 * compile's options, libseccomp's version, GNU build id and API level, and the architecture.
 * A run first looks for its program by its sources (cd_filter_from_sources()): the SHA-256 of
 * the policy file's text and of each text its `include`s resolve to, as a parse would resolve
 * them, with the same compiler identity and options: a shipped policy, installed or built in,
 * byte for byte, is not parsed at all. Otherwise (an edited file, a policy of one's own) it is
 * parsed, and only a program made from exactly the same rules, by the same libseccomp build (a
 * distribution's fix that keeps the version is another), for the same kernel API, is taken.
 * The table is in the binary: nothing on disk can change what a run installs.
 */
#pragma once

#include <linux/filter.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct cd_precompiled {
	uint8_t key[32];    /* cd_filter_key(): of the parsed rules */
	uint8_t source[32]; /* cd_filter_source_key(): of the texts parsed */
	const char *const *includes; /* what the policy's file includes (NULL-terminated) */
	bool baseline;      /* cordon's own rules, not a named policy */
	bool notify_exec;   /* compiled for the audit trail's exec notifications */
	const struct sock_filter *insns;
	unsigned short len;
	unsigned n_rules;
	bool notify;        /* the program notifies (cd_filter.notify) */
};

extern const struct cd_precompiled cd_precompiled[];
extern const size_t cd_n_precompiled;
