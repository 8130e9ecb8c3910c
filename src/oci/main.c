/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * main.c - cordon-runtime: the OCI runtime command line (runc's, as podman's conmon, containerd's
 * shim and Slurm call it) over cordon's session API: global options, the command table, the one
 * error line and the --log. Runs in the command's process (and its holder, forked from create).
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "json.h"
#include "runtime.h"
#include "util.h"

struct oci_globals oci_g = {.log_fd = -1, .err_fd = STDERR_FILENO};

/* runc's logrus lines: {"level":"error","msg":"...","time":"2026-12-07T05:40:12Z"}, or the
 * text form time="..." level=error msg="..." */
static void log_write(const char *level, const char *msg)
{
	char when[40];
	_cleanup_free_ char *line = NULL;
	struct cd_json j = {0};

	if (oci_g.log_fd < 0)
		return;
	oci_now_rfc3339(when);
	if (oci_g.log_json) {
		cd_json_object_begin(&j);
		cd_json_kv_string(&j, "level", level);
		cd_json_kv_string(&j, "msg", msg);
		cd_json_kv_string(&j, "time", when);
		cd_json_object_end(&j);
		line = cd_json_steal(&j);
		if (line) {
			char *nl = cd_strdup_printf("%s\n", line);

			free(line);
			line = nl;
		}
	} else {
		line = cd_strdup_printf("time=\"%s\" level=%s msg=\"%s\"\n", when, level, msg);
	}
	if (line)
		(void)cd_write_all(oci_g.log_fd, line, strlen(line));
}

void oci_log(const char *level, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	if (!strcmp(level, "debug") && !oci_g.debug)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	log_write(level, msg);
}

void oci_log_line(void *userdata, const char *line)
{
	(void)userdata;
	oci_log("warning", "%s", line);
}

static int error_line(int code, const char *what, const char *why)
{
	_cleanup_free_ char *line = cd_strdup_printf("%s: %s", what, why);

	log_write("error", line ? line : why);
	if (oci_g.err_fd >= 0)
		dprintf(oci_g.err_fd, "cordon-runtime: %s\n", line ? line : why);
	return code;
}

int oci_error(int code, const char *what, const char *fmt, ...)
{
	char why[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	return error_line(code, what, why);
}

int oci_error_from(int code, const char *what, const struct cordon_error *err)
{
	return error_line(code, err->step[0] ? err->step : what, err->msg);
}

_Noreturn void oci_exit_as(int status)
{
	struct rlimit none = {0, 0};
	sigset_t one;
	int sig;

	if (!WIFSIGNALED(status))
		_exit(WIFEXITED(status) ? WEXITSTATUS(status) : OCI_EXIT_BAD);
	sig = WTERMSIG(status);
	/* the same signal, without a core file of ours */
	setrlimit(RLIMIT_CORE, &none);
	prctl(PR_SET_DUMPABLE, 0);
	signal(sig, SIG_DFL);
	sigemptyset(&one);
	sigaddset(&one, sig);
	sigprocmask(SIG_UNBLOCK, &one, NULL);
	raise(sig);
	_exit(CORDON_EXIT_SIGNAL_BASE + sig); /* a signal that does not end a process */
}

int oci_signal_parse(const char *s)
{
	char *end;
	long n;

	if (!s || !*s)
		return -EINVAL;
	errno = 0;
	n = strtol(s, &end, 10);
	if (!*end)
		return errno || n <= 0 || n >= NSIG ? -EINVAL : (int)n;
	if (!strncasecmp(s, "SIG", 3))
		s += 3;
	for (int sig = 1; sig < NSIG; sig++) {
		const char *name = sigabbrev_np(sig);

		if (name && !strcasecmp(name, s))
			return sig;
	}
	return -EINVAL;
}

static const struct oci_opt *opt_find(const struct oci_opt *opts, size_t n, const char *arg,
				      size_t *ret_i)
{
	for (size_t i = 0; i < n; i++) {
		size_t len = strlen(opts[i].name);

		if (arg[1] == '-' && !strncmp(arg + 2, opts[i].name, len) &&
		    (arg[2 + len] == '\0' || arg[2 + len] == '=')) {
			*ret_i = i;
			return &opts[i];
		}
		if (arg[1] != '-' && opts[i].letter && arg[1] == opts[i].letter && !arg[2]) {
			*ret_i = i;
			return &opts[i];
		}
	}
	return NULL;
}

int oci_opts_parse(const char *cmd, const struct oci_opt *opts, size_t n, int argc, char **argv,
		   const char **ret_values, int *ret_argc, char ***ret_argv, bool stop_at_operand)
{
	int i = 0, k = 0;

	for (size_t o = 0; o < n; o++)
		ret_values[o] = NULL;
	while (i < argc) {
		const char *arg = argv[i], *eq;
		const struct oci_opt *o;
		size_t idx;

		if (!strcmp(arg, "--")) {
			i++;
			break;
		}
		if (arg[0] != '-' || !arg[1]) {
			if (stop_at_operand)
				break;
			argv[k++] = argv[i++];
			continue;
		}
		o = opt_find(opts, n, arg, &idx);
		if (!o)
			return oci_error(OCI_EXIT_BAD, cmd, "unknown option %s", arg);
		eq = arg[1] == '-' ? strchr(arg, '=') : NULL;
		if (!o->value) {
			if (eq && strcmp(eq + 1, "true") && strcmp(eq + 1, "1"))
				ret_values[idx] = !strcmp(eq + 1, "false") ? NULL : eq + 1;
			else
				ret_values[idx] = "1";
			i++;
			continue;
		}
		if (eq) {
			ret_values[idx] = eq + 1;
			i++;
		} else if (i + 1 < argc) {
			ret_values[idx] = argv[i + 1];
			i += 2;
		} else {
			return oci_error(OCI_EXIT_BAD, cmd, "%s needs a value", arg);
		}
	}
	while (i < argc)
		argv[k++] = argv[i++];
	argv[k] = NULL; /* the operands are an argv of their own (exec's command) */
	*ret_argc = k;
	*ret_argv = argv;
	return 0;
}

const char *oci_one_id(const char *cmd, int argc, char **argv)
{
	struct cordon_error err = {0};

	if (argc != 1) {
		if (argc)
			oci_error(OCI_EXIT_BAD, cmd, "one container id expected, got %d operands",
				  argc);
		else
			oci_error(OCI_EXIT_BAD, cmd, "a container id is needed");
		return NULL;
	}
	if (oci_id_check(argv[0], &err) < 0) {
		oci_error_from(OCI_EXIT_BAD, cmd, &err);
		return NULL;
	}
	return argv[0];
}

static int cmd_unsupported(int argc, char **argv)
{
	(void)argc;
	return oci_error(OCI_EXIT_FAIL, argv[-1], "not supported by cordon-runtime");
}

static const struct {
	const char *name;
	int (*fn)(int argc, char **argv);
} commands[] = {
    {"create", oci_cmd_create},	  {"start", oci_cmd_start},    {"run", oci_cmd_run},
    {"state", oci_cmd_state},	  {"kill", oci_cmd_kill},      {"delete", oci_cmd_delete},
    {"exec", oci_cmd_exec},	  {"ps", oci_cmd_ps},	       {"list", oci_cmd_list},
    {"pause", oci_cmd_pause},	  {"resume", oci_cmd_resume},  {"features", oci_cmd_features},
    {"spec", oci_cmd_spec},	  {"update", cmd_unsupported}, {"checkpoint", cmd_unsupported},
    {"restore", cmd_unsupported}, {"events", cmd_unsupported},
};

enum { G_ROOT, G_LOG, G_LOG_FORMAT, G_DEBUG, G_ROOTLESS, G_SYSTEMD, G_CRIU, G_HELP, G_VERSION };
static const struct oci_opt global_opts[] = {
    [G_ROOT] = {"root", 0, true},
    [G_LOG] = {"log", 0, true},
    [G_LOG_FORMAT] = {"log-format", 0, true},
    [G_DEBUG] = {"debug", 0, false},
    [G_ROOTLESS] = {"rootless", 0, true},
    [G_SYSTEMD] = {"systemd-cgroup", 0, false},
    [G_CRIU] = {"criu", 0, true},
    [G_HELP] = {"help", 'h', false},
    [G_VERSION] = {"version", 'v', false},
};

static void usage(void)
{
	printf(
	    "usage: cordon-runtime [--root DIR] [--log FILE] [--log-format text|json] [--debug]\n"
	    "                      COMMAND [OPTIONS] ID\n"
	    "commands: create start run state kill delete exec ps list pause resume features "
	    "spec\n");
}

static int globals_apply(const char **v)
{
	if (v[G_LOG_FORMAT] && strcmp(v[G_LOG_FORMAT], "json") && strcmp(v[G_LOG_FORMAT], "text"))
		return oci_error(OCI_EXIT_BAD, "--log-format", "\"%s\": text or json",
				 v[G_LOG_FORMAT]);
	oci_g.log_json = v[G_LOG_FORMAT] && !strcmp(v[G_LOG_FORMAT], "json");
	oci_g.debug = v[G_DEBUG] != NULL;
	if (v[G_LOG]) {
		oci_g.log_path = v[G_LOG];
		oci_g.log_fd =
		    open(v[G_LOG], O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOCTTY, 0600);
		if (oci_g.log_fd < 0)
			return oci_error(OCI_EXIT_BAD, "--log", "%s: %s", v[G_LOG],
					 strerror(errno));
	}
	/* the engines' refusals are read from the log: open it before refusing anything */
	if (v[G_SYSTEMD])
		return oci_error(OCI_EXIT_BAD, "--systemd-cgroup",
				 "not supported (cgroupfs only: give the engine "
				 "--cgroup-manager=cgroupfs)");
	if (v[G_CRIU])
		return oci_error(OCI_EXIT_BAD, "--criu",
				 "checkpoint and restore are not supported");
	if (v[G_ROOTLESS] && strcmp(v[G_ROOTLESS], "true") && strcmp(v[G_ROOTLESS], "false") &&
	    strcmp(v[G_ROOTLESS], "auto") && strcmp(v[G_ROOTLESS], "1"))
		return oci_error(OCI_EXIT_BAD, "--rootless", "\"%s\": true, false or auto",
				 v[G_ROOTLESS]);
	return 0;
}

int main(int argc, char **argv)
{
	const char *v[CD_ELEMENTSOF(global_opts)];
	struct cordon_error err = {0};
	char **rest;
	int n, r;

	r = oci_opts_parse("cordon-runtime", global_opts, CD_ELEMENTSOF(global_opts), argc - 1,
			   argv + 1, v, &n, &rest, true);
	if (r)
		return r;
	if (v[G_HELP] || (n == 0 && !v[G_VERSION])) {
		usage();
		return v[G_HELP] ? 0 : OCI_EXIT_BAD;
	}
	if (v[G_VERSION]) {
		printf("cordon-runtime version %s\nspec: 1.2.0\n", cordon_version());
		return 0;
	}
	r = globals_apply(v);
	if (r)
		return r;
	for (size_t i = 0; i < CD_ELEMENTSOF(commands); i++) {
		if (strcmp(rest[0], commands[i].name))
			continue;
		oci_log("debug", "%s", rest[0]);
		/* spec and features need no --root (nor its default's XDG_RUNTIME_DIR) */
		oci_g.root = v[G_ROOT];
		if (!oci_g.root && commands[i].fn != oci_cmd_spec &&
		    commands[i].fn != oci_cmd_features)
			oci_g.root = oci_root_default(&err);
		if (!oci_g.root && err.msg[0])
			return oci_error_from(OCI_EXIT_BAD, "--root", &err);
		return commands[i].fn(n - 1, rest + 1);
	}
	return oci_error(OCI_EXIT_BAD, rest[0], "unknown command (cordon-runtime --help)");
}
