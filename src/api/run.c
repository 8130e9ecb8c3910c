/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * run.c - cordon_run(): make a sandbox, run one command in it, tear it down, and write the
 * report. Runs in the caller's process (sandbox.h, command.h). A session's supervisor runs the
 * same steps with the agent as the command (run.h, src/session/holder.c).
 */
#include <string.h>

#include "command.h"
#include "report.h"
#include "run.h"
#include "sandbox.h"
#include "timing.h"

/* The records asked for: the audit trail checked complete (a loss goes in res, so that the
 * report says so too), then the report written. Each: 0, or -errno and its error. */
static void write_records(struct cd_sandbox *sb, const struct cd_command *cmd, int *ret_audit,
			  struct cordon_error *audit_err, int *ret_report,
			  struct cordon_error *report_err)
{
	struct cd_report_info info =
		cd_report_info_of(sb, cmd->chdir, cmd->envp, &cmd->status.rlimits_got);

	*ret_audit = cd_sandbox_audit_check(sb, audit_err);
	*ret_report = cd_report_write(&info, &sb->rec.report, sb->c->outputs.report_fd, report_err);
}

/* The caller's own sink, put back once the run is over (it may time steps of its own) */
static void timing_sink_restore(struct cd_timing_sink *outer)
{
	(void)cd_timing_sink_swap(*outer);
}

int cd_run(const struct cordon_config *c, const struct cd_run_hooks *hooks,
	   struct cordon_result *res, struct cordon_error *err)
{
	/* the run's steps are timed to its log callback (timing.h), not written by the library */
	_cleanup_(timing_sink_restore) struct cd_timing_sink outer =
		cd_timing_sink_swap((struct cd_timing_sink){ c->log.fn, c->log.data });
	/* the sandbox goes first (declared last): pid 1 is killed before the signals unblock */
	_cleanup_(cd_command_done) struct cd_command cmd = CD_COMMAND_INIT(c, res, cd_now_ns());
	_cleanup_(cd_sandbox_done) struct cd_sandbox sb = CD_SANDBOX_INIT(c, res);
	struct cordon_error audit_err = { 0 }, report_err = { 0 };
	int r, ra, rr;

	memset(res, 0, sizeof(*res));
	cd_error_clear(err);
	r = cd_random_id(res->id);
	if (r < 0)
		return cd_fail_errno(err, -r, "id", "getrandom");
	sb.hooks.render_applied = cd_report_render_sandbox;
	if (hooks) {
		cmd.session = hooks->session;
		sb.pid1.agent_fd = hooks->session ? hooks->session->exec_fd : -1;
		if (hooks->on_id)
			hooks->on_id(hooks->data, res->id);
	}
	if (!c->command.argv)
		r = cd_fail(&res->error, 0, "command", "no command given");
	/* in this order, so that what fails first is what a user fixes first, and the report of a
	 * failed run shows what was decided before */
	if (r >= 0)
		r = cd_sandbox_open(&sb, &res->error);
	cd_timing("sandbox opened (workdir, outputs)");
	if (r >= 0)
		r = cd_command_open(&cmd, &sb, c->outputs.capture_dir, &res->error);
	cd_timing("command opened");
	if (r >= 0)
		r = cd_sandbox_prepare(&sb, &res->error);
	cd_timing("sandbox prepared (identity, cgroup, mount plan)");
	if (r >= 0)
		r = cd_command_prepare(&cmd, &sb, &c->net, c->identity.hostname, &res->error);
	cd_timing("command prepared (environment)");
	if (r >= 0)
		r = cd_sandbox_load_policy(&sb, &res->error);
	cd_timing("policy loaded");
	if (r >= 0)
		r = cd_command_start(&cmd, &sb, &res->error);
	cd_timing("command started (START sent)");
	if (r >= 0)
		cd_command_watch(&cmd, &sb);
	else
		cmd.status.failed = true;
	cd_timing("watch ended");
	cd_command_finish(&cmd, &sb);
	cd_timing("command finished");
	cd_sandbox_end(&sb);
	cd_timing("sandbox ended");
	cd_log_line(&c->log, "sandbox: ended, exit code %d", res->exit_code);
	/* a record asked for and not written whole fails the run (cordon.h): the command's
	 * outcome stays in res, the exit code becomes 125 */
	write_records(&sb, &cmd, &ra, &audit_err, &rr, &report_err);
	if (rr < 0 && ra < 0)
		cd_error_append(&audit_err, "; report: %s", report_err.msg);
	if (rr < 0 && res->outcome == CORDON_OUTCOME_SETUP_ERROR)
		cd_error_append(&res->error, "; report: %s", report_err.msg);
	if (hooks && hooks->at_end)
		hooks->at_end(hooks->data, &sb);
	if (res->outcome == CORDON_OUTCOME_SETUP_ERROR) {
		if (err)
			*err = res->error; /* with the audit's loss and the report's failure */
		return -(res->error.code ? res->error.code : EINVAL);
	}
	if (ra < 0 || rr < 0) {
		res->exit_code = CORDON_EXIT_FAILURE;
		if (err)
			*err = ra < 0 ? audit_err : report_err;
		return ra < 0 ? ra : rr;
	}
	return 0;
}

int cordon_run(struct cordon_config *c, struct cordon_result *res, struct cordon_error *err)
{
	if (c->seccomp.bpf) { /* installed by a session's agent, per command: not by a run */
		memset(res, 0, sizeof(*res));
		res->exit_code = CORDON_EXIT_FAILURE;
		return cd_fail(err, EINVAL, "seccomp-bpf",
			       "a program for a session's commands (cordon_config_set_seccomp_bpf) "
			       "in a run");
	}
	return cd_run(c, NULL, res, err);
}
