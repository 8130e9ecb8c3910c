/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * main.c - the cordon command: options -> libcordon setters -> cordon_run() -> exit status.
 * Option parsing is table-driven; each handler turns one value into one setter call. Only this
 * file prints, and every failure before the start is one line and exit 125.
 */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdlib.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "cordon.h"

struct cli {
	struct cordon_config *c;
	bool quiet;
	bool verbose;
	uint64_t timeout_ns;
};

typedef int (*handler_fn)(struct cli *cli, const char *arg, struct cordon_error *err);

struct opt {
	const char *name;
	int short_name; /* 0: none */
	const char *arg; /* NULL: a flag */
	handler_fn fn;
	const char *help;
};

static int fail(struct cordon_error *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail(struct cordon_error *err, const char *fmt, ...)
{
	va_list ap;

	err->code = 0;
	va_start(ap, fmt);
	vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
	va_end(ap);
	return -1;
}

/* "A:B" split at the first colon, unless the whole of it names an existing path. */
static char *split_colon(const char *arg, const char **ret_second, bool last)
{
	char *copy = strdup(arg), *colon;

	*ret_second = NULL;
	if (!copy || access(arg, F_OK) == 0)
		return copy;
	colon = last ? strrchr(copy, ':') : strchr(copy, ':');
	if (colon) {
		*colon = '\0';
		*ret_second = colon + 1;
	}
	return copy;
}

static int parse_id(const char *arg, unsigned *ret, struct cordon_error *err)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = isdigit((unsigned char)arg[0]) ? strtoul(arg, &end, 10) : 0;
	if (!isdigit((unsigned char)arg[0]) || errno || *end || v >= UINT_MAX)
		return fail(err, "\"%s\" is not a numeric id (0-4294967294)", arg);
	*ret = (unsigned)v;
	return 0;
}

static int h_workdir(struct cli *cli, const char *arg, struct cordon_error *err)
{
	return cordon_config_set_workdir(cli->c, arg, err);
}

static int h_workdir_target(struct cli *cli, const char *arg, struct cordon_error *err)
{
	return cordon_config_set_workdir_target(cli->c, arg, err);
}

static int h_chdir(struct cli *cli, const char *arg, struct cordon_error *err)
{
	return cordon_config_set_chdir(cli->c, arg, err);
}

static int h_rootfs(struct cli *cli, const char *arg, struct cordon_error *err)
{
	return cordon_config_set_rootfs(cli->c, arg, err);
}

static int h_ro_bind(struct cli *cli, const char *arg, struct cordon_error *err)
{
	const char *dst;
	char *src = split_colon(arg, &dst, false);
	int r;

	if (!src)
		return fail(err, "out of memory");
	if (dst && !*dst) {
		free(src);
		return fail(err, "\"%s\": empty destination after ':'", arg);
	}
	r = cordon_config_add_ro_bind(cli->c, src, dst, err);
	free(src);
	return r;
}

static int h_tmpfs(struct cli *cli, const char *arg, struct cordon_error *err)
{
	const char *size_s;
	char *path = split_colon(arg, &size_s, true);
	uint64_t size = 0;
	int r = 0;

	if (!path)
		return fail(err, "out of memory");
	if (size_s)
		r = cordon_parse_size(size_s, &size, err);
	if (r == 0 && size_s && size == 0)
		r = fail(err, "size must be more than 0");
	if (r == 0)
		r = cordon_config_add_tmpfs(cli->c, path, size, err);
	free(path);
	return r;
}

static int h_hide(struct cli *cli, const char *arg, struct cordon_error *err)
{
	return cordon_config_add_hide(cli->c, arg, err);
}

static int h_tmp_size(struct cli *cli, const char *arg, struct cordon_error *err)
{
	uint64_t size;
	int r = cordon_parse_size(arg, &size, err);

	return r < 0 ? r : cordon_config_set_tmp_size(cli->c, size, err);
}

static int h_home_size(struct cli *cli, const char *arg, struct cordon_error *err)
{
	uint64_t size;
	int r = cordon_parse_size(arg, &size, err);

	return r < 0 ? r : cordon_config_set_home_size(cli->c, size, err);
}

static int h_git_identity(struct cli *cli, const char *arg, struct cordon_error *err)
{
	return cordon_config_set_git_identity(cli->c, arg, err);
}

static int h_net(struct cli *cli, const char *arg, struct cordon_error *err)
{
	if (strcmp(arg, "none") == 0)
		return cordon_config_set_net(cli->c, CORDON_NET_NONE, err);
	if (strcmp(arg, "host") == 0)
		return cordon_config_set_net(cli->c, CORDON_NET_HOST, err);
	return fail(err, "\"%s\" is not a network mode (none, host)", arg);
}

static int h_allow_net(struct cli *cli, const char *arg, struct cordon_error *err)
{
	return cordon_config_allow_net(cli->c, arg, err);
}

static int h_net_idle_timeout(struct cli *cli, const char *arg, struct cordon_error *err)
{
	uint64_t ns;
	int r = cordon_parse_duration(arg, &ns, err);

	return r < 0 ? r : cordon_config_set_net_idle_timeout(cli->c, ns, err);
}

static int h_net_max_connections(struct cli *cli, const char *arg, struct cordon_error *err)
{
	char *end;
	unsigned long n;

	errno = 0;
	n = strtoul(arg, &end, 10);
	if (!*arg || *end || errno || !isdigit((unsigned char)*arg) || n > 65536)
		return fail(err, "\"%s\" is not a number in 1-65536", arg);
	return cordon_config_set_net_max_connections(cli->c, (unsigned)n, err);
}

static int h_timeout(struct cli *cli, const char *arg, struct cordon_error *err)
{
	uint64_t ns;
	int r = cordon_parse_duration(arg, &ns, err);

	if (r == 0)
		cli->timeout_ns = ns;
	return r < 0 ? r : cordon_config_set_timeout(cli->c, ns, err);
}

static int h_kill_after(struct cli *cli, const char *arg, struct cordon_error *err)
{
	uint64_t ns;
	int r = cordon_parse_duration(arg, &ns, err);

	return r < 0 ? r : cordon_config_set_kill_after(cli->c, ns, err);
}

static int set_rlimit_spec(struct cli *cli, const char *spec, struct cordon_error *err)
{
	uint64_t soft, hard;
	int resource;
	int r = cordon_parse_rlimit(spec, &resource, &soft, &hard, err);

	return r < 0 ? r : cordon_config_set_rlimit(cli->c, resource, soft, hard, err);
}

static int h_rlimit(struct cli *cli, const char *arg, struct cordon_error *err)
{
	return set_rlimit_spec(cli, arg, err);
}

static int h_shortcut(struct cli *cli, const char *name, const char *arg,
		      struct cordon_error *err)
{
	char spec[256];
	const char *eq;
	int r;

	snprintf(spec, sizeof(spec), "%s=%s", name, arg);
	r = set_rlimit_spec(cli, spec, err);
	/* "nofile: "x" is not ..." -> ""x" is not ...": the option already names it */
	eq = strstr(err->msg, ": ");
	if (r < 0 && eq && strncmp(err->msg, name, strlen(name)) == 0)
		memmove(err->msg, eq + 2, strlen(eq + 2) + 1);
	return r;
}

static int h_nofile(struct cli *cli, const char *arg, struct cordon_error *err)
{
	return h_shortcut(cli, "nofile", arg, err);
}

static int h_fsize(struct cli *cli, const char *arg, struct cordon_error *err)
{
	return h_shortcut(cli, "fsize", arg, err);
}

/* SIGXCPU at the limit, SIGKILL a second later (the kernel's hard limit). */
static int h_cpu_time(struct cli *cli, const char *arg, struct cordon_error *err)
{
	uint64_t ns, s;
	int r = cordon_parse_duration(arg, &ns, err);

	if (r < 0)
		return r;
	if (ns == 0)
		return fail(err, "must be more than 0");
	s = (ns + 999999999) / 1000000000;
	return cordon_config_set_rlimit(cli->c, RLIMIT_CPU, s, s + 1, err);
}

static int h_env(struct cli *cli, const char *arg, struct cordon_error *err)
{
	const char *eq = strchr(arg, '=');
	char key[256];

	if (!eq || eq == arg)
		return fail(err, "\"%s\" is not KEY=VALUE", arg);
	if ((size_t)(eq - arg) >= sizeof(key))
		return fail(err, "variable name too long");
	memcpy(key, arg, (size_t)(eq - arg));
	key[eq - arg] = '\0';
	return cordon_config_set_env(cli->c, key, eq + 1, err);
}

static int h_pass_env(struct cli *cli, const char *arg, struct cordon_error *err)
{
	return cordon_config_pass_env(cli->c, arg, err);
}

static int h_hostname(struct cli *cli, const char *arg, struct cordon_error *err)
{
	return cordon_config_set_hostname(cli->c, arg, err);
}

static int h_uid(struct cli *cli, const char *arg, struct cordon_error *err)
{
	unsigned id;
	int r = parse_id(arg, &id, err);

	return r < 0 ? r : cordon_config_set_uid(cli->c, id, err);
}

static int h_gid(struct cli *cli, const char *arg, struct cordon_error *err)
{
	unsigned id;
	int r = parse_id(arg, &id, err);

	return r < 0 ? r : cordon_config_set_gid(cli->c, id, err);
}

static int h_report(struct cli *cli, const char *arg, struct cordon_error *err)
{
	return cordon_config_set_report_file(cli->c, arg, err);
}

static int h_report_fd(struct cli *cli, const char *arg, struct cordon_error *err)
{
	unsigned fd;

	if (parse_id(arg, &fd, err) < 0 || fd > INT_MAX)
		return fail(err, "\"%s\" is not a file descriptor number", arg);
	return cordon_config_set_report_fd(cli->c, (int)fd, err);
}

static bool is_unlimited(const char *arg)
{
	return strcmp(arg, "unlimited") == 0 || strcmp(arg, "max") == 0;
}

static int h_memory(struct cli *cli, const char *arg, struct cordon_error *err)
{
	uint64_t v = CORDON_UNLIMITED;

	if (!is_unlimited(arg) && cordon_parse_size(arg, &v, err) < 0)
		return -EINVAL;
	return cordon_config_set_memory(cli->c, v, err);
}

static int h_memory_swap(struct cli *cli, const char *arg, struct cordon_error *err)
{
	uint64_t v = CORDON_UNLIMITED;

	if (!is_unlimited(arg) && cordon_parse_size(arg, &v, err) < 0)
		return -EINVAL;
	return cordon_config_set_memory_swap(cli->c, v, err);
}

static int h_cpus(struct cli *cli, const char *arg, struct cordon_error *err)
{
	uint64_t v = CORDON_UNLIMITED;

	if (!is_unlimited(arg) && cordon_parse_cpus(arg, &v, err) < 0)
		return -EINVAL;
	return cordon_config_set_cpus(cli->c, v, err);
}

static int h_pids(struct cli *cli, const char *arg, struct cordon_error *err)
{
	uint64_t v = CORDON_UNLIMITED;
	char *end;

	if (!is_unlimited(arg)) {
		errno = 0;
		v = strtoull(arg, &end, 10);
		if (!isdigit((unsigned char)arg[0]) || *end || errno)
			return fail(err, "\"%s\" is not a number of processes", arg);
	}
	return cordon_config_set_pids(cli->c, v, err);
}

static int h_cgroup(struct cli *cli, const char *arg, struct cordon_error *err)
{
	static const char *const modes[] = { "auto", "required", "best-effort", "off" };

	for (size_t i = 0; i < sizeof(modes) / sizeof(modes[0]); i++)
		if (strcmp(arg, modes[i]) == 0)
			return cordon_config_set_cgroup_mode(cli->c, (enum cordon_cgroup_mode)i, err);
	return fail(err, "\"%s\": expected auto, required, best-effort or off", arg);
}

static int h_cgroup_parent(struct cli *cli, const char *arg, struct cordon_error *err)
{
	return cordon_config_set_cgroup_parent(cli->c, arg, err);
}

static int h_audit(struct cli *cli, const char *arg, struct cordon_error *err)
{
	return cordon_config_set_audit_file(cli->c, arg, err);
}

static int h_capture(struct cli *cli, const char *arg, struct cordon_error *err)
{
	return cordon_config_set_capture_dir(cli->c, arg, err);
}

static int h_seccomp_policy(struct cli *cli, const char *arg, struct cordon_error *err)
{
	return cordon_config_set_seccomp_policy(cli->c, arg, err);
}

static int h_seccomp_log(struct cli *cli, const char *arg, struct cordon_error *err)
{
	(void)arg, (void)err;
	cordon_config_set_seccomp_log(cli->c, 1);
	return 0;
}

static int h_seccomp_unoptimized(struct cli *cli, const char *arg, struct cordon_error *err)
{
	(void)arg, (void)err;
	cordon_config_set_seccomp_optimize(cli->c, 0);
	return 0;
}

static int h_quiet(struct cli *cli, const char *arg, struct cordon_error *err)
{
	(void)arg, (void)err;
	cli->quiet = true;
	return 0;
}

static int h_verbose(struct cli *cli, const char *arg, struct cordon_error *err)
{
	(void)arg, (void)err;
	cli->verbose = true;
	return 0;
}

static int h_help(struct cli *cli, const char *arg, struct cordon_error *err);

static int h_version(struct cli *cli, const char *arg, struct cordon_error *err)
{
	(void)cli, (void)arg, (void)err;
	printf("cordon %s\n", cordon_version());
	exit(0);
}

static const struct opt opts[] = {
	{ "workdir", 'w', "DIR", h_workdir, "the one read-write host directory (default: .)" },
	{ "workdir-target", 0, "PATH", h_workdir_target, "where it appears inside (default: same path)" },
	{ "chdir", 'C', "PATH", h_chdir, "where the command starts (default: the workdir)" },
	{ "rootfs", 0, "DIR", h_rootfs, "read-only root to use instead of the host's /" },
	{ "ro-bind", 0, "SRC[:DST]", h_ro_bind, "extra read-only bind of a host path" },
	{ "tmpfs", 0, "PATH[:SIZE]", h_tmpfs, "extra writable scratch (default size 64M)" },
	{ "hide", 0, "PATH", h_hide, "hide a path: empty and read-only inside" },
	{ "tmp-size", 0, "SIZE", h_tmp_size, "size cap of /tmp, /var/tmp, /dev/shm (default 256M)" },
	{ "home-size", 0, "SIZE", h_home_size, "size cap of HOME, an empty tmpfs (default 1G)" },
	{ "net", 0, "MODE", h_net, "none (default: loopback only) or host" },
	{ "allow-net", 0, "HOST[:PORT]", h_allow_net, "reach this host through cordon's proxy (*.x.com, IPs; ports 80,443)" },
	{ "net-idle-timeout", 0, "DURATION", h_net_idle_timeout, "close proxied connections idle this long (default 60s)" },
	{ "net-max-connections", 0, "N", h_net_max_connections, "proxied connections at once (default 256)" },
	{ "timeout", 't', "DURATION", h_timeout, "wall-clock limit; then SIGTERM to everything" },
	{ "kill-after", 0, "DURATION", h_kill_after, "SIGKILL this long after the timeout (default 2s)" },
	{ "rlimit", 0, "NAME=SOFT[:HARD]", h_rlimit, "any RLIMIT_* (nofile, as, cpu, nproc...)" },
	{ "nofile", 0, "N", h_nofile, "open files limit" },
	{ "fsize", 0, "SIZE", h_fsize, "largest file the command may write" },
	{ "cpu-time", 0, "DURATION", h_cpu_time, "CPU time limit (SIGXCPU, then SIGKILL 1s later)" },
	{ "env", 'e', "KEY=VALUE", h_env, "set a variable (the environment is cleared)" },
	{ "pass-env", 0, "KEY", h_pass_env, "keep a variable of the caller's" },
	{ "hostname", 0, "NAME", h_hostname, "hostname inside (default cordon)" },
	{ "git-identity", 0, "'NAME <EMAIL>'", h_git_identity, "the git author and committer inside" },
	{ "uid", 0, "UID", h_uid, "uid inside (default: yours; 65532 for root)" },
	{ "gid", 0, "GID", h_gid, "gid inside (default: yours)" },
	{ "report", 0, "FILE", h_report, "write a JSON report (atomically)" },
	{ "report-fd", 0, "FD", h_report_fd, "write the JSON report to an open fd" },
	{ "memory", 'm', "SIZE", h_memory, "memory limit of the whole sandbox (default 4G; unlimited)" },
	{ "memory-swap", 0, "SIZE", h_memory_swap, "swap it may use (default 0)" },
	{ "cpus", 0, "N", h_cpus, "CPU bandwidth, e.g. 0.5 or 2 (default: no limit)" },
	{ "pids", 0, "N", h_pids, "most processes and threads at once (default 1024; unlimited)" },
	{ "cgroup", 0, "MODE", h_cgroup, "auto (default), required, best-effort or off" },
	{ "cgroup-parent", 0, "DIR", h_cgroup_parent, "the cgroup v2 directory to make the sandbox's in" },
	{ "seccomp-policy", 0, "NAME|PATH", h_seccomp_policy, "seccomp policy (default: default; none: no filter)" },
	{ "seccomp-log", 0, NULL, h_seccomp_log, "log what the policy would deny instead of denying" },
	{ "seccomp-unoptimized", 0, NULL, h_seccomp_unoptimized, "linear filter instead of a binary tree (benchmarks)" },
	{ "audit", 0, "FILE", h_audit, "JSON Lines log of every exec, file change, limit, signal" },
	{ "capture", 0, "DIR", h_capture, "keep stdout and stderr in DIR while passing them on" },
	{ "quiet", 'q', NULL, h_quiet, "no notices from cordon, only errors" },
	{ "verbose", 'v', NULL, h_verbose, "show what is set up, step by step" },
	{ "help", 'h', NULL, h_help, "this help" },
	{ "version", 'V', NULL, h_version, "print the version" },
};

#define N_OPTS (sizeof(opts) / sizeof(opts[0]))

static int h_help(struct cli *cli, const char *arg, struct cordon_error *err)
{
	(void)cli, (void)arg, (void)err;
	printf("Usage: cordon [OPTIONS] [--] COMMAND [ARG...]\n"
	       "       cordon policy check|show NAME|PATH\n"
	       "Run COMMAND in a fresh sandbox: read-only root, one writable workdir, no network,\n"
	       "no secrets, and exit with its status.\n\nOptions:\n");
	for (size_t i = 0; i < N_OPTS; i++) {
		char left[64];

		snprintf(left, sizeof(left), "%c%c%s--%s%s%s", opts[i].short_name ? '-' : ' ',
			 opts[i].short_name ? opts[i].short_name : ' ',
			 opts[i].short_name ? ", " : "  ", opts[i].name, opts[i].arg ? " " : "",
			 opts[i].arg ? opts[i].arg : "");
		printf("  %-34s %s\n", left, opts[i].help);
	}
	printf("\nSizes: 4096, 512K, 64M, 1G. Durations: 10 (seconds), 500ms, 30s, 2m, 1h.\n"
	       "Exit status: the command's; 128+N if it died of signal N; 124 timeout;\n"
	       "125 cordon failed; 126 command not executable; 127 command not found.\n");
	exit(0);
}

/* Errors found at run time about an option's value name the option, as at parse time. */
static bool is_option(const char *step)
{
	for (size_t i = 0; i < N_OPTS; i++)
		if (strcmp(opts[i].name, step) == 0)
			return true;
	return false;
}

/* One line on stderr, "cordon: " and the text, its control bytes shown as \xNN: a value from
 * the command line (or a name from the sandbox) can neither end the line, and forge another
 * that looks like cordon's, nor reach the terminal as an escape sequence. */
static __attribute__((format(printf, 1, 2))) void say(const char *fmt, ...)
{
	char buf[4096];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	fputs("cordon: ", stderr);
	for (const unsigned char *p = (const unsigned char *)buf; *p; p++)
		if (iscntrl(*p))
			fprintf(stderr, "\\x%02x", *p);
		else
			fputc(*p, stderr);
	fputc('\n', stderr);
}

static void log_line(void *userdata, const char *line)
{
	(void)userdata;
	say("%s", line);
}

/* getopt_long's tables, built from opts[] */
static void build_getopt(struct option *lo, char *so)
{
	size_t n = 0;

	*so++ = '+'; /* stop at the command: its options are its own */
	*so++ = ':'; /* report a missing value as ':' */
	for (size_t i = 0; i < N_OPTS; i++) {
		lo[i] = (struct option){ opts[i].name, opts[i].arg ? required_argument : no_argument,
					 NULL, (int)(256 + i) };
		if (opts[i].short_name) {
			so[n++] = (char)opts[i].short_name;
			if (opts[i].arg)
				so[n++] = ':';
		}
	}
	lo[N_OPTS] = (struct option){ 0 };
	so[n] = '\0';
}

static const struct opt *find_short(int c)
{
	for (size_t i = 0; i < N_OPTS; i++)
		if (opts[i].short_name == c)
			return &opts[i];
	return NULL;
}

static _Noreturn void die(const char *what, const char *msg)
{
	say("%s: %s", what, msg);
	exit(CORDON_EXIT_FAILURE);
}

static void parse_args(struct cli *cli, int argc, char **argv)
{
	struct option lo[N_OPTS + 1];
	char so[2 * N_OPTS + 4], what[64];
	int c;

	build_getopt(lo, so);
	opterr = 0;
	while ((c = getopt_long(argc, argv, so, lo, NULL)) != -1) {
		struct cordon_error err = { 0 };
		const struct opt *o = c >= 256 ? &opts[c - 256] : find_short(c);

		if (c == '?' || c == ':') {
			const char *bad = argv[optind - 1];

			if (optopt && optopt < 256)
				snprintf(what, sizeof(what), "-%c", optopt);
			else
				snprintf(what, sizeof(what), "%.*s", (int)strcspn(bad, "="), bad);
			die(what, c == ':' ? "needs a value" : "unknown option (see cordon --help)");
		}
		if (!o)
			die("options", "unexpected option");
		if (o->fn(cli, optarg, &err) < 0) {
			snprintf(what, sizeof(what), "--%s", o->name);
			die(what, err.msg);
		}
	}
	if (optind >= argc)
		die("usage", "no command given (cordon [OPTIONS] [--] COMMAND [ARG...])");
}

static void print_error(const struct cordon_error *err)
{
	if (strcmp(err->step, "policy") == 0) /* "file:line:col: message" */
		say("%s", err->msg);
	else
		say("%s%s: %s", is_option(err->step) ? "--" : "", err->step, err->msg);
}

/* cordon policy check|show NAME|PATH */
static int policy_command(int argc, char **argv)
{
	struct cordon_error err = { 0 };
	char *text = NULL;
	bool show;

	if (argc != 4 || (strcmp(argv[2], "check") != 0 && strcmp(argv[2], "show") != 0))
		die("policy", "usage: cordon policy check|show NAME|PATH");
	show = strcmp(argv[2], "show") == 0;
	if (cordon_policy_describe(argv[3], &text, &err) < 0) {
		print_error(&err);
		return CORDON_EXIT_FAILURE;
	}
	if (show)
		fputs(text, stdout);
	else
		printf("%s: ok\n", argv[3]);
	free(text);
	return 0;
}

int main(int argc, char **argv)
{
	struct cli cli = { 0 };
	struct cordon_result res;
	struct cordon_error err = { 0 };
	int r;

	if (argc > 1 && strcmp(argv[1], "policy") == 0)
		return policy_command(argc, argv);
	cli.c = cordon_config_new();
	if (!cli.c)
		die("memory", "out of memory");
	parse_args(&cli, argc, argv);
	if (cordon_config_set_command(cli.c, (const char *const *)argv + optind, &err) < 0)
		die("command", err.msg);
	if (cli.verbose)
		cordon_config_set_log(cli.c, log_line, NULL);
	if (!cli.quiet)
		cordon_config_set_notice(cli.c, log_line, NULL);
	cordon_config_set_fast_exit(cli.c, 1); /* we exit right after */
	r = cordon_run(cli.c, &res, &err);
	cordon_config_free(cli.c);
	if (r < 0)
		print_error(&err);
	else if (res.outcome == CORDON_OUTCOME_TIMEOUT && !cli.quiet)
		fprintf(stderr, "cordon: timeout: the command ran past %.3gs and was killed\n",
			(double)cli.timeout_ns / 1e9);
	return res.exit_code;
}
