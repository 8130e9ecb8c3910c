/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * run.c - cordon_run(): make a sandbox, run one command in it, tear it down, and write the
 * report. Runs in the caller's process (sandbox.h, command.h).
 */
#include <string.h>

#include "command.h"
#include "report.h"
#include "sandbox.h"

/* The records asked for: the audit trail complete (what it lacks goes in the report too), the
 * report written. 0, or the first that failed, in *err. */
static int write_records(struct cd_sandbox *sb, const struct cd_command *cmd,
			 struct cordon_error *err)
{
	struct cordon_result *res = sb->res;
	struct cd_report_info info =
		cd_sandbox_report_info(sb, cmd->chdir, cmd->envp, &cmd->rlimits_got);
	struct cordon_error report_err = { 0 };
	int r = cd_audit_check(&sb->audit, err), r2;

	if (r < 0 && res->outcome != CORDON_OUTCOME_SETUP_ERROR) {
		res->error = *err;
		res->exit_code = CORDON_EXIT_FAILURE;
	}
	r2 = cd_report_write(&info, &sb->report, sb->c->report_fd, &report_err);
	if (r2 < 0 && r < 0)
		cd_error_append(err, "; report: %s", report_err.msg);
	else if (r2 < 0)
		*err = report_err;
	return r < 0 ? r : r2;
}

int cordon_run(struct cordon_config *c, struct cordon_result *res, struct cordon_error *err)
{
	/* the sandbox goes first (declared last): pid 1 is killed before the signals unblock */
	_cleanup_(cd_command_done) struct cd_command cmd = CD_COMMAND_INIT(c, res, cd_now_ns());
	_cleanup_(cd_sandbox_done) struct cd_sandbox sb = CD_SANDBOX_INIT(c, res);
	struct cordon_error record_err = { 0 };
	int r;

	memset(res, 0, sizeof(*res));
	cd_error_clear(err);
	r = cd_random_id(res->id);
	if (r < 0)
		return cd_fail_errno(err, -r, "id", "getrandom");
	if (!c->argv)
		r = cd_fail(&res->error, 0, "command", "no command given");
	/* in this order, so that what fails first is what a user fixes first, and the report of a
	 * failed run shows what was decided before */
	if (r >= 0)
		r = cd_sandbox_open(&sb, &res->error);
	if (r >= 0)
		r = cd_command_open(&cmd, &sb, &res->error);
	if (r >= 0)
		r = cd_sandbox_prepare(&sb, &res->error);
	if (r >= 0)
		r = cd_command_prepare(&cmd, &sb, &res->error);
	if (r >= 0)
		r = cd_sandbox_load_policy(&sb, &res->error);
	if (r >= 0)
		r = cd_command_start(&cmd, &sb, &res->error);
	if (r >= 0)
		cd_command_watch(&cmd, &sb);
	else
		cmd.failed = true;
	cd_command_finish(&cmd, &sb);
	cd_sandbox_end(&sb);
	cd_config_log(c, "sandbox: ended, exit code %d", res->exit_code);
	/* a record asked for and not written whole fails the run (cordon.h): the command's
	 * outcome stays in res, the exit code becomes 125 */
	r = write_records(&sb, &cmd, &record_err);
	if (res->outcome == CORDON_OUTCOME_SETUP_ERROR) {
		if (r < 0)
			cd_error_append(&res->error, "; %s: %s", record_err.step, record_err.msg);
		if (err)
			*err = res->error;
		return -(res->error.code ? res->error.code : EINVAL);
	}
	if (r < 0) {
		res->exit_code = CORDON_EXIT_FAILURE;
		if (err)
			*err = record_err;
		return r;
	}
	return 0;
}
