/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * oci-floor-run.c - an OCI bundle run through cordon-runtime's parser and floor (src/oci) and
 * cordon_run(), for tests/integration/t-oci-floor.sh: what the floor makes of a config.json,
 * for real, in a sandbox. Not the runtime (no state, no engine): the floor's config, the
 * process's args, env and cwd, one run.
 *   oci-floor-run example [rootless]   the example config.json (`cordon-runtime spec`)
 *   oci-floor-run BUNDLE SCRATCH       run it; the floor's lines on stderr as "log: ...",
 *                                       a refusal as "cordon-runtime: ..." and exit 125
 *   oci-floor-run --session BUNDLE SCRATCH   the same config as a session (as cordon-runtime
 *                                       uses it), the process by cordon_session_exec()
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "cordon.h"
#include "spec.h"

static void log_line(void *userdata, const char *line)
{
	(void)userdata;
	fprintf(stderr, "log: %s\n", line);
}

static int fail(const struct cordon_error *err)
{
	fprintf(stderr, "cordon-runtime: %s\n", err->msg);
	return CORDON_EXIT_FAILURE;
}

/* The process's environment exactly: set_env for each KEY=VALUE. */
static int set_env(struct cordon_config *c, char *const *env, struct cordon_error *err)
{
	for (; *env; env++) {
		char key[256];
		const char *eq = strchr(*env, '=');
		size_t n = (size_t)(eq - *env);

		if (n >= sizeof(key))
			continue;
		memcpy(key, *env, n);
		key[n] = '\0';
		if (cordon_config_set_env(c, key, eq + 1, err) < 0)
			return -1;
	}
	return 0;
}

/* The process in a session of c, as the runtime starts it: its exit code (128+N: signal N). */
static int run_session(struct cordon_config *c, const struct oci_process *p,
		       struct cordon_error *err)
{
	struct cordon_exec e = {.argv = (const char *const *)p->args,
				.env = (const char *const *)p->env,
				.cwd = p->cwd,
				.fd = {0, 1, 2}};
	struct cordon_session *s;
	struct cordon_process *proc;
	int status = 0, r;

	if (cordon_session_create(c, 0, &s, err) < 0)
		return -1;
	r = cordon_session_exec(s, &e, &proc, err);
	if (r >= 0) {
		r = cordon_process_wait(proc, UINT64_MAX, &status, err);
		cordon_process_free(proc);
	}
	if (cordon_session_destroy(s, NULL, r < 0 ? NULL : err) < 0 && r >= 0)
		r = -1;
	if (r < 0)
		return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

int main(int argc, char **argv)
{
	bool session = argc > 1 && !strcmp(argv[1], "--session");
	struct cordon_error err = {0};
	struct cordon_result res = {0};
	struct cordon_config *c;
	const struct oci_process *p;
	struct oci_spec *s;

	if (argc >= 2 && !strcmp(argv[1], "example")) {
		char *text = oci_spec_example(argc > 2);

		fputs(text, stdout);
		free(text);
		return 0;
	}
	argv += session;
	argc -= session;
	if (argc != 3) {
		fprintf(stderr, "usage: oci-floor-run BUNDLE SCRATCH | example [rootless]\n");
		return 2;
	}
	if (oci_spec_load(argv[1], &s, &err) < 0)
		return fail(&err);
	c = cordon_config_new();
	p = oci_spec_process(s);
	if (!c || oci_spec_config_scratch(s, argv[2], c, log_line, NULL, &err) < 0)
		res.exit_code = fail(&err);
	else if (session)
		res.exit_code = run_session(c, p, &err);
	else if (cordon_config_set_command(c, (const char *const *)p->args, &err) < 0 ||
		 set_env(c, p->env, &err) < 0 || cordon_config_set_chdir(c, p->cwd, &err) < 0 ||
		 cordon_run(c, &res, &err) < 0)
		res.exit_code = fail(&err);
	if (res.exit_code < 0)
		res.exit_code = fail(&err);
	cordon_config_free(c);
	oci_spec_free(s);
	return res.exit_code;
}
