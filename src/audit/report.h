/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* report.h - the JSON result of a run (docs/report.md). Supervisor side. */
#pragma once

#include "config.h"
#include "output.h"
#include "cgroup.h"
#include "mount.h"
#include "filter.h"
#include "userns.h"
#include "rlimits.h"

/* What the report describes besides the result. */
struct cd_report_info {
	const struct cordon_config *c;
	const char *workdir;
	const char *workdir_target;
	const char *chdir;
	const struct cd_identity *id; /* NULL before it was decided */
	const struct cd_mount_plan *plan;
	char *const *envp;
	const struct cordon_result *res;
	const struct cd_filter *filter; /* the policy's program; NULL: none */
	const char *policy_source; /* where it was read: a file's real path, or "built-in:NAME" */
	const struct cd_filter *baseline; /* cordon's own rules; NULL: not compiled (setup failed) */
	const struct cd_cgroup *cg;
	/* what the command got (invalid: it never got that far, null in the report); NULL: before
	 * the command exists (the audit's start event), the configured ones */
	const struct cd_rlimits_got *rlimits;
};

/* The report as one JSON object and a newline (the caller frees it); NULL when out of memory.
 * Pure. Environment values are never written, only names: they may be secrets. */
char *cd_report_render(const struct cd_report_info *info);
/* Its parts, for the audit trail's start and exit events. */
struct cd_json;
void cd_report_render_result(struct cd_json *j, const struct cordon_result *res);
void cd_report_render_applied(struct cd_json *j, const struct cd_report_info *in);

/* A report file is created (as a temp file next to it) before anything starts, so that a path
 * that cannot be written fails early, and renamed into place at the end. */
/* The report file: created when the run starts under a temporary name beside it (never through
 * a symlink, never inside the workdir: output.h), renamed into place at the end. */
struct cd_report_file {
	int dirfd;
	char *path; /* the directory, for messages */
	char *name;
	char *tmp;
	int fd;
};

int cd_report_open(const char *path, const struct cd_output_ctx *ctx, struct cd_report_file *rf,
		   struct cordon_error *err);
int cd_report_commit(struct cd_report_file *rf, const char *json, struct cordon_error *err);
void cd_report_discard(struct cd_report_file *rf);
/* Render and write the report to the file (when rf is open) and to fd (when >= 0). A report
 * that was asked for and not written is an error {step "report", msg "PATH: why"}: the caller
 * must not be left believing it exists (or reading an older one at that path). */
int cd_report_write(const struct cd_report_info *info, struct cd_report_file *rf, int fd,
		    struct cordon_error *err);
