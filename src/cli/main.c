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
#include "timing.h"
#include "gitid.h"
#include "layers.h"

struct cli {
	struct cordon_config *c;
	bool quiet;
	bool verbose;
	bool cow; /* --cow or --cow-from: tell where the changes went */
	bool git_identity; /* --git-identity given: no default from the caller's git config */
	uint64_t timeout_ns;
	const struct cordon_limit_info *limit; /* the option being handled is this limit's */
};

typedef int (*handler_fn)(struct cli *cli, const char *arg, struct cordon_error *err);

struct opt {
	const char *name;
	int short_name; /* 0: none */
	const char *arg; /* NULL: a flag */
	handler_fn fn;
	const char *help;
	const struct cordon_limit_info *limit; /* an option of the limits table */
	int limits;     /* a placeholder: 1 + the kind of limit whose options go here */
};

/* A bad value, as the library's errors are: 0 or -errno, the error filled (the option that
 * failed names the step). */
static int fail(struct cordon_error *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail(struct cordon_error *err, const char *fmt, ...)
{
	va_list ap;

	err->code = 0;
	err->step[0] = '\0';
	va_start(ap, fmt);
	vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
	va_end(ap);
	return -EINVAL;
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

static int h_cow(struct cli *cli, const char *arg, struct cordon_error *err)
{
	(void)arg;
	cli->cow = true;
	return cordon_config_set_cow(cli->c, 1, err);
}

static int h_cow_size(struct cli *cli, const char *arg, struct cordon_error *err)
{
	uint64_t size;
	int r = cordon_parse_size(arg, &size, err);

	return r < 0 ? r : cordon_config_set_cow_size(cli->c, size, err);
}

static int h_cow_from(struct cli *cli, const char *arg, struct cordon_error *err)
{
	cli->cow = true;
	return cordon_config_set_cow_from(cli->c, arg, err);
}

static int h_layer_dir(struct cli *cli, const char *arg, struct cordon_error *err)
{
	return cordon_config_set_layer_dir(cli->c, arg, err);
}

static int h_protect(struct cli *cli, const char *arg, struct cordon_error *err)
{
	return cordon_config_protect(cli->c, arg, 0, err);
}

static int h_deny(struct cli *cli, const char *arg, struct cordon_error *err)
{
	return cordon_config_protect(cli->c, arg, 1, err);
}

static int h_no_protect(struct cli *cli, const char *arg, struct cordon_error *err)
{
	(void)arg;
	return cordon_config_set_default_protect(cli->c, 0, err);
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
	cli->git_identity = true;
	if (strcmp(arg, "none") == 0) /* neither one given nor the caller's own */
		return 0;
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

static int h_rlimit(struct cli *cli, const char *arg, struct cordon_error *err)
{
	uint64_t soft, hard;
	int resource;
	int r = cordon_parse_rlimit(arg, &resource, &soft, &hard, err);

	return r < 0 ? r : cordon_config_set_rlimit(cli->c, resource, soft, hard, err);
}

/* --memory, --nofile, --cpu-time ...: an option of the limits table */
static int h_limit(struct cli *cli, const char *arg, struct cordon_error *err)
{
	uint64_t soft, hard;
	int r = cordon_parse_limit(cli->limit->name, arg, &soft, &hard, err);

	return r < 0 ? r : cordon_config_set_limit(cli->c, cli->limit->name, soft, hard, err);
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

static int h_user_share(struct cli *cli, const char *arg, struct cordon_error *err)
{
	char *end;
	unsigned long n;

	errno = 0;
	n = strtoul(arg, &end, 10);
	if (!*arg || *end || errno || !isdigit((unsigned char)*arg) || n == 0 || n > 100000)
		return fail(err, "\"%s\" is not a number of sandboxes in 1-100000", arg);
	return cordon_config_set_user_share(cli->c, (unsigned)n, err);
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

#define OPT(n, s, a, f, h) { .name = n, .short_name = s, .arg = a, .fn = f, .help = h }

/* The options in --help's order; the limits' come from the library's table (cordon_limit_info)
 * where a placeholder stands. */
static const struct opt base_opts[] = {
	OPT("workdir", 'w', "DIR", h_workdir, "the one read-write host directory (default: .)"),
	OPT("workdir-target", 0, "PATH", h_workdir_target, "where it appears inside (default: same path)"),
	OPT("chdir", 'C', "PATH", h_chdir, "where the command starts (default: the workdir; relative: below it)"),
	OPT("rootfs", 0, "DIR", h_rootfs, "read-only root to use instead of the host's /"),
	OPT("ro-bind", 0, "SRC[:DST]", h_ro_bind, "extra read-only bind of a host path"),
	OPT("tmpfs", 0, "PATH[:SIZE]", h_tmpfs, "extra writable scratch (default size 64M)"),
	OPT("hide", 0, "PATH", h_hide, "hide a path: empty and read-only inside"),
	OPT("cow", 0, NULL, h_cow, "copy-on-write workdir: changes kept as a layer (cordon diff/apply/discard)"),
	OPT("cow-size", 0, "SIZE", h_cow_size, "size cap of the layer (default 1G, in the sandbox's memory)"),
	OPT("cow-from", 0, "ID", h_cow_from, "start from a kept layer's changes (implies --cow)"),
	OPT("layer-dir", 0, "DIR", h_layer_dir, "where layers are kept (default ~/.local/state/cordon/layers)"),
	OPT("protect", 0, "GLOB", h_protect, "keep a path in the workdir read-only (and uncreatable)"),
	OPT("deny", 0, "GLOB", h_deny, "hide a path in the workdir (empty, and uncreatable)"),
	OPT("no-default-protect", 0, NULL, h_no_protect, "turn off the default protected paths (.git/hooks, .claude, .env...)"),
	OPT("tmp-size", 0, "SIZE", h_tmp_size, "size cap of /tmp, /var/tmp, /dev/shm (default 256M)"),
	OPT("home-size", 0, "SIZE", h_home_size, "size cap of HOME, an empty tmpfs (default 1G)"),
	OPT("net", 0, "MODE", h_net, "none (default: loopback only) or host"),
	OPT("allow-net", 0, "HOST[:PORT]", h_allow_net, "reach this host through cordon's proxy (*.x.com, IPs; ports 80,443)"),
	OPT("net-idle-timeout", 0, "DURATION", h_net_idle_timeout, "close proxied connections idle this long (default 60s)"),
	OPT("net-max-connections", 0, "N", h_net_max_connections, "proxied connections at once (default 256)"),
	OPT("timeout", 't', "DURATION", h_timeout, "wall-clock limit; then SIGTERM to everything"),
	OPT("kill-after", 0, "DURATION", h_kill_after, "SIGKILL this long after the timeout (default 2s)"),
	OPT("rlimit", 0, "NAME=SOFT[:HARD]", h_rlimit, "any RLIMIT_* (nofile, as, cpu, nproc...)"),
	{ .limits = 1 + CORDON_LIMIT_RLIMIT }, /* --nofile, --fsize, --cpu-time */
	OPT("env", 'e', "KEY=VALUE", h_env, "set a variable (the environment is cleared)"),
	OPT("pass-env", 0, "KEY", h_pass_env, "keep a variable of the caller's"),
	OPT("hostname", 0, "NAME", h_hostname, "hostname inside (default cordon)"),
	OPT("user-share", 0, "N", h_user_share,
	    "unprivileged: 1/N of your inotify, process, message queue and signal budgets"),
	OPT("git-identity", 0, "'NAME <EMAIL>'", h_git_identity, "the git author and committer inside (default: your global git config's; none: no identity)"),
	OPT("uid", 0, "UID", h_uid, "uid inside (default: yours; 65532 for root)"),
	OPT("gid", 0, "GID", h_gid, "gid inside (default: yours)"),
	OPT("report", 0, "FILE", h_report, "write a JSON report (atomically)"),
	OPT("report-fd", 0, "FD", h_report_fd, "write the JSON report to an open fd"),
	{ .limits = 1 + CORDON_LIMIT_CGROUP }, /* --memory, --memory-swap, --cpus, --pids */
	OPT("cgroup", 0, "MODE", h_cgroup, "auto (default), required, best-effort or off"),
	OPT("cgroup-parent", 0, "DIR", h_cgroup_parent, "the cgroup v2 directory to make the sandbox's in"),
	OPT("seccomp-policy", 0, "NAME|PATH", h_seccomp_policy, "seccomp policy (default: default; none: no filter)"),
	OPT("seccomp-log", 0, NULL, h_seccomp_log, "log what the policy would deny instead of denying"),
	OPT("seccomp-unoptimized", 0, NULL, h_seccomp_unoptimized, "linear filter instead of a binary tree (benchmarks)"),
	OPT("audit", 0, "FILE", h_audit, "JSON Lines log of every exec, file change, limit, signal"),
	OPT("capture", 0, "DIR", h_capture, "keep stdout and stderr in DIR while passing them on"),
	OPT("quiet", 'q', NULL, h_quiet, "no notices from cordon, only errors"),
	OPT("verbose", 'v', NULL, h_verbose, "show what is set up, step by step"),
	OPT("help", 'h', NULL, h_help, "this help"),
	OPT("version", 'V', NULL, h_version, "print the version"),
};

#define MAX_OPTS 96

static struct opt opts[MAX_OPTS];
static size_t n_opts;

/* opts[]: base_opts[] with each placeholder replaced by the options of its kind of limit */
static void build_opts(void)
{
	const struct cordon_limit_info *l;

	for (size_t i = 0; i < sizeof(base_opts) / sizeof(base_opts[0]); i++) {
		if (!base_opts[i].limits) {
			opts[n_opts++] = base_opts[i];
			continue;
		}
		for (size_t k = 0; (l = cordon_limit_info(k)); k++)
			if (l->option && (int)l->kind + 1 == base_opts[i].limits && n_opts < MAX_OPTS)
				opts[n_opts++] = (struct opt){ .name = l->option,
							       .short_name = l->short_option,
							       .arg = l->metavar, .fn = h_limit,
							       .help = l->help, .limit = l };
	}
}

static int h_help(struct cli *cli, const char *arg, struct cordon_error *err)
{
	(void)cli, (void)arg, (void)err;
	printf("Usage: cordon [OPTIONS] [--] COMMAND [ARG...]\n"
	       "       cordon policy check|show NAME|PATH\n"
	       "       cordon protect show [FILE] | check FILE  (the default protected paths)\n"
	       "       cordon layers|diff|apply|discard [ID]  (a --cow run's changes; --help)\n"
	       "       cordon serve [OPTIONS]  (an E2B-compatible server; --help)\n"
	       "Run COMMAND in a fresh sandbox: read-only root, one writable workdir, no network,\n"
	       "no secrets, and exit with its status.\n\nOptions:\n");
	for (size_t i = 0; i < n_opts; i++) {
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

/* "--STEP", for a step that is an option's name (static storage: one at a time). */
static const char *what_of(const char *step)
{
	static char buf[64];

	snprintf(buf, sizeof(buf), "--%s", step);
	return buf;
}

/* Errors found at run time about an option's value name the option, as at parse time. */
static bool is_option(const char *step)
{
	for (size_t i = 0; i < n_opts; i++)
		if (strcmp(opts[i].name, step) == 0)
			return true;
	return false;
}

/* The library speaks of what it does; the tool names the option that does it. */
static const struct {
	const char *lib, *cli;
} words[] = {
	{ "a tmpfs mount", "--tmpfs" },
	{ "the workdir target", "--workdir-target" },
	{ "a hidden path", "--hide" },
	{ "a read-only bind", "--ro-bind" },
	{ "the cgroup mode best-effort", "--cgroup=best-effort" },
	{ "the cgroup mode is off", "--cgroup=off" },
	{ "give a parent cgroup", "give --cgroup-parent" },
	{ "or no limit", "or \"unlimited\" for no limit" },
};
#define CD_WORDS_N (sizeof(words) / sizeof(words[0]))

/* in into out, each of words[]'s library phrases replaced by the tool's, outside the quoted
 * values the library put in it (a path named "a tmpfs mount" stays as it is) */
static void to_cli_words(const char *in, char *out, size_t size)
{
	bool quoted = false;
	size_t n = 0;

	while (*in && n + 1 < size) {
		size_t i = CD_WORDS_N;

		if (!quoted)
			for (i = 0; i < CD_WORDS_N; i++)
				if (strncmp(in, words[i].lib, strlen(words[i].lib)) == 0)
					break;
		if (i == CD_WORDS_N) {
			quoted = *in == '"' ? !quoted : quoted;
			out[n++] = *in++;
			continue;
		}
		n += (size_t)snprintf(out + n, size - n, "%s", words[i].cli);
		in += strlen(words[i].lib);
	}
	out[n < size ? n : size - 1] = '\0';
}

/* One line on stderr, "cordon: " and the text, its control bytes shown as \xNN: a value from
 * the command line (or a name from the sandbox) can neither end the line, and forge another
 * that looks like cordon's, nor reach the terminal as an escape sequence. */
static __attribute__((format(printf, 1, 2))) void say(const char *fmt, ...)
{
	char text[4096];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	fputs("cordon: ", stderr);
	for (const unsigned char *p = (const unsigned char *)text; *p; p++)
		if (iscntrl(*p))
			fprintf(stderr, "\\x%02x", *p);
		else
			fputc(*p, stderr);
	fputc('\n', stderr);
}

/* An error line: "WHAT: MSG" (or MSG alone), the library's message in the tool's words. Log
 * lines and notices are passed on as they are (they may carry names from the sandbox). */
static void say_error(const char *what, const char *msg)
{
	char mapped[4096];

	to_cli_words(msg, mapped, sizeof(mapped));
	if (what)
		say("%s: %s", what, mapped);
	else
		say("%s", mapped);
}

/* Notices: one line each, as every line of ours */
static void notice_line(void *userdata, const char *line)
{
	(void)userdata;
	say("%s", line);
}

/* The library's log: -v's lines, and CORDON_TIMING's (timing.h), which go on stderr as they are
 * (bench/phases reads them), in one write: pid 1's and the command's own are written meanwhile */
static void log_line(void *userdata, const char *line)
{
	const struct cli *cli = userdata;
	char buf[256];
	int n;

	if (strncmp(line, CD_TIMING_PREFIX, strlen(CD_TIMING_PREFIX)) != 0) {
		if (cli->verbose)
			say("%s", line);
		return;
	}
	n = snprintf(buf, sizeof(buf), "%s\n", line);
	if (n > 0 && (size_t)n < sizeof(buf) && write(2, buf, (size_t)n) < 0)
		return; /* stderr gone: nowhere to say so */
}

/* getopt_long's tables, built from opts[] */
static void build_getopt(struct option *lo, char *so)
{
	size_t n = 0;

	*so++ = '+'; /* stop at the command: its options are its own */
	*so++ = ':'; /* report a missing value as ':' */
	for (size_t i = 0; i < n_opts; i++) {
		lo[i] = (struct option){ opts[i].name, opts[i].arg ? required_argument : no_argument,
					 NULL, (int)(256 + i) };
		if (opts[i].short_name) {
			so[n++] = (char)opts[i].short_name;
			if (opts[i].arg)
				so[n++] = ':';
		}
	}
	lo[n_opts] = (struct option){ 0 };
	so[n] = '\0';
}

static const struct opt *find_short(int c)
{
	for (size_t i = 0; i < n_opts; i++)
		if (opts[i].short_name == c)
			return &opts[i];
	return NULL;
}

static _Noreturn void die(const char *what, const char *msg)
{
	say_error(what, msg);
	exit(CORDON_EXIT_FAILURE);
}

static void parse_args(struct cli *cli, int argc, char **argv)
{
	struct option lo[MAX_OPTS + 1];
	char so[2 * MAX_OPTS + 4], what[64];
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
		cli->limit = o->limit;
		if (o->fn(cli, optarg, &err) < 0) {
			snprintf(what, sizeof(what), "--%s", o->name);
			die(what, err.msg);
		}
	}
	if (optind >= argc)
		die("usage", "no command given (cordon [OPTIONS] [--] COMMAND [ARG...])");
}

/* No --git-identity: the caller's own, when its git config has one (gitid.c) */
static void default_git_identity(const struct cli *cli)
{
	struct cordon_error err = { 0 };
	char *spec;

	if (cli->git_identity)
		return;
	spec = cd_cli_git_identity();
	if (!spec && cli->verbose)
		say("git-identity: none: your global git config has no user.name and user.email");
	else if (spec && cordon_config_set_git_identity(cli->c, spec, &err) < 0 && cli->verbose)
		say("git-identity: none: your global git config's is not taken: %s", err.msg);
	else if (spec && cli->verbose)
		say("git-identity: %s, your global git config's (--git-identity sets another)", spec);
	free(spec);
}

static void print_error(const struct cordon_error *err)
{
	/* "file:line:col: message" */
	if (strcmp(err->step, "policy") == 0 || strcmp(err->step, "protect-list") == 0)
		say_error(NULL, err->msg);
	else if (is_option(err->step))
		say_error(what_of(err->step), err->msg);
	else
		say_error(err->step, err->msg);
}

/* The command ran, but the report asked for was not written, or the audit trail lacks events:
 * cordon failed (125), whatever the command did, which the line says too. A run whose record is
 * missing or incomplete (or an older report is left at its path) must not look like a success
 * to whoever reads the exit status. */
static void record_lost(const struct cordon_error *err, const struct cordon_result *res)
{
	char what[64], msg[sizeof(err->msg) + sizeof(what) + 16];

	if (res->outcome == CORDON_OUTCOME_EXITED)
		snprintf(what, sizeof(what), "exited with status %d", res->status);
	else if (res->outcome == CORDON_OUTCOME_TIMEOUT)
		snprintf(what, sizeof(what), "timed out");
	else
		snprintf(what, sizeof(what), "died of signal %d", res->signal);
	snprintf(msg, sizeof(msg), "%s (the command %s)", err->msg, what);
	say_error(err->step, msg);
}

/* --cow: where the changes went, and what to do with them */
static void tell_layer(const struct cli *cli, const struct cordon_result *res)
{
	if (res->layer_error.msg[0]) {
		print_error(&res->layer_error);
		return;
	}
	if (cli->quiet)
		return;
	if (res->layer_full)
		fprintf(stderr, "cordon: cow: the layer is full (--cow-size): the command's writes "
				"past it failed (ENOSPC)\n");
	if (res->layer_skipped)
		fprintf(stderr, "cordon: cow: %llu FIFO(s) or socket(s) not kept\n",
			(unsigned long long)res->layer_skipped);
	if (res->layer_id[0])
		fprintf(stderr, "cordon: cow: %llu change(s) kept as layer %s: review with `cordon "
				"diff %s`, then `cordon apply %s` or `cordon discard %s`\n",
			(unsigned long long)res->layer_changes, res->layer_id, res->layer_id,
			res->layer_id, res->layer_id);
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

/* cordon protect show [FILE] | check FILE */
static int protect_command(int argc, char **argv)
{
	struct cordon_error err = { 0 };
	char *text = NULL;
	bool show = argc >= 3 && strcmp(argv[2], "show") == 0;

	if (!(show && argc <= 4) && !(argc == 4 && strcmp(argv[2], "check") == 0))
		die("protect", "usage: cordon protect show [FILE] | check FILE");
	if (cordon_protect_describe(argc == 4 ? argv[3] : NULL, &text, &err) < 0) {
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

/* `cordon serve`: the server is a program of its own (src/server/main.c), beside this one in a
 * build tree, else in libexecdir */
static _Noreturn void exec_serve(char **argv)
{
	char exe[PATH_MAX], path[PATH_MAX + 16], msg[PATH_MAX + 128];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	int e;

	if (n > 0) {
		exe[n] = '\0';
		*strrchr(exe, '/') = '\0';
		snprintf(path, sizeof(path), "%s/cordon-serve", exe);
		execv(path, argv);
	}
	execv(CORDON_LIBEXECDIR "/cordon-serve", argv);
	e = errno;
	snprintf(msg, sizeof(msg), "cannot run cordon-serve (beside %s or in %s): %s",
		 n > 0 ? exe : "cordon", CORDON_LIBEXECDIR, strerror(e));
	die("serve", msg);
}

int main(int argc, char **argv)
{
	struct cli cli = { 0 };
	struct cordon_result res;
	struct cordon_error err = { 0 };
	int r;

	cd_timing_sink_swap((struct cd_timing_sink){ log_line, &cli }); /* our own steps too */
	cd_timing("main");
	build_opts();
	if (argc > 1 && strcmp(argv[1], "serve") == 0)
		exec_serve(argv + 1);
	if (argc > 1 && strcmp(argv[1], "policy") == 0)
		return policy_command(argc, argv);
	if (argc > 1 && strcmp(argv[1], "protect") == 0)
		return protect_command(argc, argv);
	if (argc > 1 && (!strcmp(argv[1], "diff") || !strcmp(argv[1], "apply") ||
			 !strcmp(argv[1], "discard") || !strcmp(argv[1], "layers")))
		return cd_cli_layers(argc, argv);
	cli.c = cordon_config_new();
	if (!cli.c)
		die("memory", "out of memory");
	parse_args(&cli, argc, argv);
	default_git_identity(&cli);
	if (cordon_config_set_command(cli.c, (const char *const *)argv + optind, &err) < 0)
		die("command", err.msg);
	if (cli.verbose || cd_timing_on())
		cordon_config_set_log(cli.c, log_line, &cli);
	if (!cli.quiet)
		cordon_config_set_notice(cli.c, notice_line, NULL);
	cordon_config_set_fast_exit(cli.c, 1); /* we exit right after */
	cd_timing("options parsed");
	r = cordon_run(cli.c, &res, &err);
	cd_timing("run returned");
	cordon_config_free(cli.c);
	if (r < 0 && res.outcome != CORDON_OUTCOME_SETUP_ERROR)
		record_lost(&err, &res);
	else if (r < 0)
		print_error(&err);
	else if (res.outcome == CORDON_OUTCOME_TIMEOUT && !cli.quiet)
		fprintf(stderr, "cordon: timeout: the command ran past %.3gs and was killed\n",
			(double)cli.timeout_ns / 1e9);
	if (cli.cow)
		tell_layer(&cli, &res);
	return res.exit_code;
}
