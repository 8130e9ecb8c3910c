/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* report.h - the JSON result of a run (docs/report.md): what the sandbox and the command
 * decided, rendered above them. Supervisor side. */
#pragma once

#include "config.h"
#include "json.h"
#include "output.h"
#include "cgroup.h"
#include "mount.h"
#include "filter.h"
#include "rlimits.h"
#include "sandbox.h"
#include "userns.h"

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
/* What was applied (limits, identity, seccomp, cgroup, proxy rules, mounts), for the report
 * and the audit trail's start event. */
void cd_report_render_applied(struct cd_json *j, const struct cd_report_info *in);

/* What the report shows of the sandbox; chdir, envp and rlimits (as read back; NULL: the
 * configured ones). */
struct cd_report_info cd_report_info_of(const struct cd_sandbox *sb, const char *chdir,
					char *const *envp, const struct cd_rlimits_got *rlimits);
/* The start event's "applied" of a sandbox about to run its command (cd_sandbox_applied_fn). */
void cd_report_render_sandbox(struct cd_json *j, const struct cd_sandbox *sb, const char *chdir,
			      char *const *envp);

/* Render and write the report to the file (when rf is open) and to fd (when >= 0). A report
 * that was asked for and not written is an error {step "report", msg "PATH: why"}: the caller
 * must not be left believing it exists (or reading an older one at that path). */
int cd_report_write(const struct cd_report_info *info, struct cd_report_file *rf, int fd,
		    struct cordon_error *err);
