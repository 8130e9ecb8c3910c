/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * run.c - cordon_run(): make a sandbox, run one command in it, tear it down, and write the
 * report. Runs in the caller's process (sandbox.h, command.h).
 */
#include <string.h>

#include "command.h"
#include "report.h"
#include "sandbox.h"

static void write_reports(const struct cd_sandbox *sb, const struct cd_command *cmd)
{
	struct cd_report_info info = cd_sandbox_report_info(sb, cmd->chdir, cmd->envp);
	_cleanup_free_ char *json = NULL;
	struct cordon_error ignored = { 0 };

	if (sb->report.fd < 0 && sb->c->report_fd < 0)
		return;
	json = cd_report_render(&info);
	if (!json)
		return;
	if (sb->report.fd >= 0)
		cd_report_commit((struct cd_report_file *)&sb->report, json, &ignored);
	if (sb->c->report_fd >= 0)
		cd_write_all(sb->c->report_fd, json, strlen(json));
}

int cordon_run(struct cordon_config *c, struct cordon_result *res, struct cordon_error *err)
{
	/* the sandbox goes first (declared last): pid 1 is killed before the signals unblock */
	_cleanup_(cd_command_done) struct cd_command cmd = CD_COMMAND_INIT(c, res);
	_cleanup_(cd_sandbox_done) struct cd_sandbox sb = CD_SANDBOX_INIT(c, res);
	uint64_t t_start = cd_now_ns();
	int r;

	memset(res, 0, sizeof(*res));
	cd_error_clear(err);
	r = cd_random_id(res->id);
	if (r < 0)
		return cd_fail_errno(err, -r, "id", "getrandom");
	if (!c->argv)
		r = cd_fail(&res->error, 0, "command", "no command given");
	if (r >= 0)
		r = cd_sandbox_prepare(&sb, c, &res->error);
	if (r >= 0)
		r = cd_command_prepare(&cmd, c, &sb, t_start, &res->error);
	if (r >= 0)
		r = cd_command_start(&cmd, &sb, &res->error);
	if (r >= 0)
		cd_command_watch(&cmd, &sb);
	else
		cmd.failed = true;
	cd_command_finish(&cmd, &sb);
	cd_sandbox_end(&sb);
	cd_config_log(c, "sandbox: ended, exit code %d", res->exit_code);
	write_reports(&sb, &cmd);
	if (res->outcome == CORDON_OUTCOME_SETUP_ERROR) {
		if (err)
			*err = res->error;
		return -(res->error.code ? res->error.code : EINVAL);
	}
	return 0;
}
