/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * serve.c - `cordon serve`: options, the state directory, startup, signals and shutdown.
 * Every bad option is one line `cordon: serve: --x: why` and exit 125 before anything starts.
 * Runs in the server process; SIGTERM/SIGINT destroy every sandbox and exit 0.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <sys/resource.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>

#include "auth.h"
#include "creator.h"
#include "disk.h"
#include "envd_watch.h"
#include "http.h"
#include "interp.h"
#include "keys.h"
#include "netsel.h"
#include "opts.h"
#include "pool.h"
#include "procs.h"
#include "registry.h"
#include "routes.h"
#include "serve.h"
#include "statedir.h"
#include "templates.h"
#include "util.h"

static _Noreturn void die(const char *what, const char *msg)
{
	fprintf(stderr, "cordon: serve: %s%s%s\n", what ? what : "", what ? ": " : "", msg);
	exit(CORDON_EXIT_FAILURE);
}

static int fail(struct cordon_error *err, const char *fmt, ...) _printf_(2, 3);
static int fail(struct cordon_error *err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
	va_end(ap);
	return -EINVAL;
}

static bool is_loopback(const char *host)
{
	return strcmp(host, "::1") == 0 || strncmp(host, "127.", 4) == 0;
}

/* HOST:PORT, [V6]:PORT, or :PORT (loopback). */
int srv_serve_parse_listen(const char *arg, char **ret_host, unsigned *ret_port,
			   struct cordon_error *err)
{
	const char *colon = strrchr(arg, ':');
	char *host, *end;
	unsigned long port;

	if (!colon)
		return fail(err, "\"%s\" is not HOST:PORT", arg);
	errno = 0;
	port = strtoul(colon + 1, &end, 10);
	if (!isdigit((unsigned char)colon[1]) || *end || errno || port > 65535)
		return fail(err, "\"%s\": the port is not a number 0-65535", arg);
	if (arg[0] == '[' && colon > arg && colon[-1] == ']')
		host = strndup(arg + 1, (size_t)(colon - arg - 2));
	else
		host = colon == arg ? strdup("127.0.0.1") : strndup(arg, (size_t)(colon - arg));
	if (!host)
		return fail(err, "out of memory");
	*ret_host = host;
	*ret_port = (unsigned)port;
	return 0;
}

static int h_listen(const char *a, struct cordon_error *err)
{
	free(srv_opts.listen_host);
	srv_opts.listen_host = NULL;
	return srv_serve_parse_listen(a, &srv_opts.listen_host, &srv_opts.listen_port, err);
}

static int h_listen_remote(const char *a, struct cordon_error *err)
{
	(void)a;
	(void)err;
	srv_opts.listen_remote = true;
	return 0;
}

static int h_socket(const char *a, struct cordon_error *err)
{
	if (a[0] != '/')
		return fail(err, "\"%s\" is not an absolute path", a);
	srv_opts.socket_path = strdup(a);
	return srv_opts.socket_path ? 0 : fail(err, "out of memory");
}

static int h_api_key(const char *a, struct cordon_error *err)
{
	if (!srv_auth_key_valid_form(a))
		return fail(err, "a key is e2b_ followed by lowercase hex digits");
	if (cd_strv_push(&srv_opts.api_keys, a) < 0)
		return fail(err, "out of memory");
	srv_keys_argv_wipe((char *)a); /* a's bytes are argv's, which are writable */
	return 0;
}

static int h_api_key_file(const char *a, struct cordon_error *err)
{
	return srv_keys_read_file(a, err);
}

static int h_state_dir(const char *a, struct cordon_error *err)
{
	if (a[0] != '/')
		return fail(err, "\"%s\" is not an absolute path", a);
	free(srv_opts.state_dir);
	srv_opts.state_dir = strdup(a);
	return srv_opts.state_dir ? 0 : fail(err, "out of memory");
}

static int parse_count(const char *a, uint64_t max, uint64_t *ret, struct cordon_error *err)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(a, &end, 10);
	if (!isdigit((unsigned char)a[0]) || *end || errno || v == 0 || v > max)
		return fail(err, "\"%s\" is not a number 1-%llu", a, (unsigned long long)max);
	*ret = v;
	return 0;
}

static int h_max_sandboxes(const char *a, struct cordon_error *err)
{
	uint64_t v;
	int r = parse_count(a, 100000, &v, err);

	srv_opts.max_sandboxes = (unsigned)v;
	return r;
}

static int h_max_connections(const char *a, struct cordon_error *err)
{
	uint64_t v;
	int r = parse_count(a, 100000, &v, err);

	srv_opts.max_connections = (unsigned)v;
	return r;
}

static int h_memory(const char *a, struct cordon_error *err)
{
	return cordon_parse_size(a, &srv_opts.memory, err);
}

static int h_disk(const char *a, struct cordon_error *err)
{
	srv_opts.disk_set = true;
	return cordon_parse_size(a, &srv_opts.disk, err);
}

static int h_disk_entries(const char *a, struct cordon_error *err)
{
	return parse_count(a, 1ull << 32, &srv_opts.disk_entries, err);
}

static int h_max_upload(const char *a, struct cordon_error *err)
{
	return cordon_parse_size(a, &srv_opts.max_upload, err);
}

static int h_pids(const char *a, struct cordon_error *err)
{
	return parse_count(a, 1u << 22, &srv_opts.pids, err);
}

static int h_cpus(const char *a, struct cordon_error *err)
{
	return cordon_parse_cpus(a, &srv_opts.millicpus, err);
}

static int duration(const char *a, uint64_t *ret, struct cordon_error *err)
{
	int r = cordon_parse_duration(a, ret, err);

	if (r >= 0 && *ret < NSEC_PER_SEC)
		return fail(err, "\"%s\": at least 1s", a);
	return r;
}

static int h_idle_ttl(const char *a, struct cordon_error *err)
{
	return duration(a, &srv_opts.idle_ttl_ns, err);
}

static int h_max_ttl(const char *a, struct cordon_error *err)
{
	return duration(a, &srv_opts.max_ttl_ns, err);
}

static int h_max_paused_ttl(const char *a, struct cordon_error *err)
{
	return duration(a, &srv_opts.max_paused_ns, err);
}

static int h_default_ttl(const char *a, struct cordon_error *err)
{
	return duration(a, &srv_opts.default_ttl_ns, err);
}

static int h_keep_workdirs(const char *a, struct cordon_error *err)
{
	(void)a;
	(void)err;
	srv_opts.keep_workdirs = true;
	return 0;
}

static int h_pool(const char *a, struct cordon_error *err)
{
	uint64_t v;
	int r = strcmp(a, "0") == 0 ? (v = 0, 0) : parse_count(a, 64, &v, err);

	srv_opts.pool = (unsigned)v;
	srv_opts.pool_set = true;
	return r;
}

static int h_allow_net(const char *a, struct cordon_error *err)
{
	/* checked by the library's parser when the first sandbox is made: do it now */
	struct cordon_config *c = cordon_config_new();
	int r = c ? cordon_config_allow_net(c, a, err) : fail(err, "out of memory");

	cordon_config_free(c);
	if (r >= 0) { /* and by the one that narrows it for a create (netsel.c) */
		char *one[] = { (char *)a, NULL }, **list = NULL, why[256];
		struct srv_netsel q = { .internet = -1 };

		r = srv_netsel_decide(one, &q, &list, why, sizeof(why));
		cd_strv_free(list);
		if (r < 0)
			return fail(err, "%s", why);
	}
	if (r >= 0 && cd_strv_push(&srv_opts.allow_net, a) < 0)
		return fail(err, "out of memory");
	return r;
}

static int h_template(const char *a, struct cordon_error *err)
{
	return srv_templates_add(a, err);
}

static int h_verbose(const char *a, struct cordon_error *err)
{
	(void)a;
	(void)err;
	srv_opts.verbose = true;
	return 0;
}

static int h_private_ports(const char *a, struct cordon_error *err)
{
	(void)a;
	(void)err;
	srv_opts.private_ports = true;
	return 0;
}

static int h_help(const char *a, struct cordon_error *err);

static const struct {
	const char *name;
	int short_name;
	const char *arg;
	int (*fn)(const char *arg, struct cordon_error *err);
	const char *help;
} opts[] = {
    {"listen", 'l', "HOST:PORT", h_listen, "listen there (default 127.0.0.1:49982)"},
    {"listen-remote", 0, NULL, h_listen_remote, "allow a --listen address that is not loopback"},
    {"socket", 0, "PATH", h_socket, "listen on a unix socket instead"},
    {"api-key-file", 0, "FILE", h_api_key_file, "accepted X-API-Keys, one a line (chmod 600)"},
    {"api-key", 'k', "KEY", h_api_key, "unsafe (ps shows it): tests only; repeatable"},
    {"state-dir", 0, "DIR", h_state_dir, "workdirs (/var/lib/cordon/serve, ~/.local/state/...)"},
    {"max-sandboxes", 0, "N", h_max_sandboxes, "at most N sandboxes at once (default 16)"},
    {"max-connections", 0, "N", h_max_connections, "at most N connections (default 256)"},
    {"memory", 'm', "SIZE", h_memory, "memory limit of each sandbox"},
    {"pids", 0, "N", h_pids, "process limit of each sandbox"},
    {"cpus", 0, "N", h_cpus, "CPU limit of each sandbox (0.5, 2)"},
    {"disk", 0, "SIZE", h_disk,
     "kill a sandbox whose workdir holds more (checked every 2 s; default: a fair share of the "
     "state directory's free space, at most 10G; 0: none)"},
    {"disk-entries", 0, "N", h_disk_entries, "... or more entries than N (default 1000000)"},
    {"idle-ttl", 0, "DURATION", h_idle_ttl, "kill a sandbox unused this long (default: never)"},
    {"max-ttl", 0, "DURATION", h_max_ttl, "cap on a sandbox's timeout (default 1h)"},
    {"default-ttl", 0, "DURATION", h_default_ttl, "timeout when create gives none (default 5m)"},
    {"max-paused-ttl", 0, "DURATION", h_max_paused_ttl,
     "kill a sandbox paused this long (default 1h)"},
    {"max-upload", 0, "SIZE", h_max_upload, "largest upload through /files (default 1G)"},
    {"keep-workdirs", 0, NULL, h_keep_workdirs, "do not remove a sandbox's workdir at its end"},
    {"pool", 0, "N", h_pool, "keep N sandboxes made ahead for creates (default 2; 0: none)"},
    {"allow-net", 0, "HOST", h_allow_net, "let sandboxes reach HOST[:PORT]; repeatable"},
    {"template", 0, "NAME=DIR", h_template,
     "a template: a root directory, or NAME=oci-archive:PATH (unpacked at start); repeatable"},
    {"private-ports", 0, NULL, h_private_ports,
     "a sandbox's ports take only requests with its traffic access token (as "
     "network.allowPublicTraffic false does for one sandbox)"},
    {"verbose", 'v', NULL, h_verbose, "log requests and sandboxes on stderr"},
    {"help", 'h', NULL, h_help, "this help"},
};

static int h_help(const char *a, struct cordon_error *err)
{
	(void)a;
	(void)err;
	printf("usage: " SRV_KEY_ENV "=e2b_HEX cordon serve [OPTIONS]\n\n"
	       "An E2B-compatible sandbox server (docs/e2b.md). Its API keys: " SRV_KEY_ENV "\n"
	       "(separated by commas; taken out of the environment at start), --api-key-file, or\n"
	       "else one made at start and written to STATE-DIR/api-key (mode 0600).\n\n");
	for (size_t i = 0; i < CD_ELEMENTSOF(opts); i++) {
		char left[64], flag[8] = "    ";

		if (opts[i].short_name)
			snprintf(flag, sizeof(flag), "-%c, ", opts[i].short_name);
		snprintf(left, sizeof(left), "%s--%s%s%s", flag, opts[i].name, opts[i].arg ? " " : "",
			 opts[i].arg ? opts[i].arg : "");
		printf("  %-28s %s\n", left, opts[i].help);
	}
	exit(0);
}

static void parse_args(int argc, char **argv)
{
	struct option lo[CD_ELEMENTSOF(opts) + 1];
	char so[2 * CD_ELEMENTSOF(opts) + 2], what[64];
	size_t n = 0;
	int c, idx;

	so[n++] = ':';
	for (size_t i = 0; i < CD_ELEMENTSOF(opts); i++) {
		lo[i] = (struct option){opts[i].name, opts[i].arg ? required_argument : no_argument,
					NULL, 256 + (int)i};
		if (opts[i].short_name) {
			so[n++] = (char)opts[i].short_name;
			if (opts[i].arg)
				so[n++] = ':';
		}
	}
	so[n] = '\0';
	lo[CD_ELEMENTSOF(opts)] = (struct option){0};
	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, so, lo, NULL)) != -1) {
		struct cordon_error err = {0};

		if (c == '?' || c == ':') {
			const char *bad = argv[optind - 1];

			if (optopt && optopt < 256)
				snprintf(what, sizeof(what), "-%c", optopt);
			else
				snprintf(what, sizeof(what), "%.*s", (int)strcspn(bad, "="), bad);
			die(what, c == ':' ? "needs a value"
					   : "unknown option (see cordon serve --help)");
		}
		idx = -1;
		for (size_t i = 0; i < CD_ELEMENTSOF(opts); i++)
			if (c == 256 + (int)i || (c < 256 && c == opts[i].short_name))
				idx = (int)i;
		if (idx < 0)
			die("options", "unexpected option");
		if (opts[idx].fn(optarg, &err) < 0) {
			snprintf(what, sizeof(what), "--%s", opts[idx].name);
			die(what, err.msg);
		}
	}
	if (optind < argc)
		die(argv[optind], "unexpected argument (cordon serve takes options only)");
}

static void defaults(void)
{
	if (!srv_opts.listen_host && !srv_opts.socket_path) {
		srv_opts.listen_host = strdup("127.0.0.1");
		srv_opts.listen_port = 49982;
	}
	if (srv_opts.listen_host && !srv_opts.listen_remote && !is_loopback(srv_opts.listen_host))
		die("--listen", "not a loopback address: sandboxes would be reachable from other "
				"hosts (add --listen-remote to mean it)");
	if (srv_opts.listen_host && srv_opts.socket_path)
		die("--socket", "give --listen or --socket, not both");
	if (!srv_opts.max_sandboxes)
		srv_opts.max_sandboxes = 16;
	if (!srv_opts.max_connections)
		srv_opts.max_connections = 256;
	if (!srv_opts.max_ttl_ns)
		srv_opts.max_ttl_ns = 3600 * NSEC_PER_SEC;
	if (!srv_opts.default_ttl_ns)
		srv_opts.default_ttl_ns = 300 * NSEC_PER_SEC;
	if (!srv_opts.max_paused_ns)
		srv_opts.max_paused_ns = 3600 * NSEC_PER_SEC;
	if (srv_opts.default_ttl_ns > srv_opts.max_ttl_ns)
		srv_opts.default_ttl_ns = srv_opts.max_ttl_ns;
	if (!srv_opts.disk_entries)
		srv_opts.disk_entries = 1000000;
	if (!srv_opts.pool_set)
		srv_opts.pool = 2;
	if (!srv_opts.max_upload)
		srv_opts.max_upload = 1ull << 30;
	srv_opts.user_share = srv_opts.max_sandboxes + srv_opts.pool + 1;
}

/* --disk not given: every sandbox (and those made ahead) may fill its share of the free space
 * the state directory has at start, at most DISK_DEFAULT_MAX: one tenant cannot fill the disk
 * the others write to. */
#define DISK_DEFAULT_MAX (10ull << 30)
static void disk_default(void)
{
	struct statvfs v;
	uint64_t share;

	if (srv_opts.disk_set || statvfs(srv_opts.state_dir, &v) < 0)
		return;
	share = (uint64_t)v.f_bavail * v.f_frsize / (srv_opts.max_sandboxes + srv_opts.pool);
	srv_opts.disk = share < DISK_DEFAULT_MAX ? share : DISK_DEFAULT_MAX;
	if (!srv_opts.disk)
		srv_opts.disk = 1; /* a full disk: any file is too many */
	srv_log("--disk %llu a sandbox (the state directory's free space over %u sandboxes)",
		(unsigned long long)srv_opts.disk, srv_opts.max_sandboxes + srv_opts.pool);
}

/* Descriptors the server holds (docs/e2b.md "Tenants"), each sandbox's share reserved: no
 * tenant, nor all of them at once, can take the ones another needs. Fewer processes are
 * followed in one sandbox (SRV_SANDBOX_MAX_PROCS at most) when RLIMIT_NOFILE is low. */
#define FDS_OWN	    64 /* listening socket, the creator's, the log, the reaper's */
/* a connection: its socket, and one while a request works inside (the agent's channel, a file,
 * a pipe; an upload holds two for its time) */
#define FDS_CONN    2
/* eventfd, 2 sockets; each kernel: 3; each polled watcher: its channel (a stream's is its
 * connection's) */
#define FDS_SANDBOX (3 + 3 * SRV_SANDBOX_MAX_CTXS + SRV_SANDBOX_MAX_WATCHERS)
#define FDS_PROC    4 /* a followed process: stdout, stderr, stdin, its channel */
static void descriptors(void)
{
	uint64_t fixed, per;
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
		die("RLIMIT_NOFILE", strerror(errno));
	if (rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	fixed = FDS_OWN + (uint64_t)srv_opts.max_connections * FDS_CONN +
		srv_opts.max_connections / 4 + 16 + /* connections being closed (conns.c) */
		(uint64_t)(srv_opts.max_sandboxes + srv_opts.pool) * FDS_SANDBOX;
	per = rl.rlim_cur > fixed ? (rl.rlim_cur - fixed) / (srv_opts.max_sandboxes * FDS_PROC) : 0;
	if (per < 8)
		die("--max-sandboxes",
		    cd_strdup_printf("%u sandboxes and %u connections need more descriptors than "
				     "RLIMIT_NOFILE (%llu) gives: raise it (ulimit -n), or lower "
				     "--max-sandboxes or --max-connections",
				     srv_opts.max_sandboxes, srv_opts.max_connections,
				     (unsigned long long)rl.rlim_cur));
	srv_opts.max_procs = per < SRV_SANDBOX_MAX_PROCS ? (unsigned)per : SRV_SANDBOX_MAX_PROCS;
	if (srv_opts.max_procs < SRV_SANDBOX_MAX_PROCS)
		srv_log("%u processes followed at most in one sandbox (RLIMIT_NOFILE %llu)",
			srv_opts.max_procs, (unsigned long long)rl.rlim_cur);
}

static void print_where(void)
{
	if (srv_opts.socket_path)
		fprintf(stderr, "cordon: serve: listening on %s\n", srv_opts.socket_path);
	else
		fprintf(stderr,
			"cordon: serve: listening on http://%s%s%s:%u "
			"(E2B_API_URL and E2B_SANDBOX_URL)\n",
			strchr(srv_opts.listen_host, ':') ? "[" : "", srv_opts.listen_host,
			strchr(srv_opts.listen_host, ':') ? "]" : "", srv_opts.listen_port);
}

/* While the server stops: a second signal, or a stop that takes over a minute (a library call
 * that does not return), ends it at once; the sessions still end (their supervisors see the
 * server's sockets close). */
static void *stop_watch(void *arg)
{
	sigset_t *set = arg;
	uint64_t end = cd_now_ns() + 60 * NSEC_PER_SEC;
	int r;

	do {
		uint64_t now = cd_now_ns(), left = now < end ? end - now : 0;
		struct timespec ts = { .tv_sec = (time_t)(left / NSEC_PER_SEC),
				       .tv_nsec = (long)(left % NSEC_PER_SEC) };

		r = sigtimedwait(set, NULL, &ts);
	} while (r < 0 && errno == EINTR);
	if (r >= 0)
		fprintf(stderr, "cordon: serve: a second signal: exiting now\n");
	else
		fprintf(stderr, "cordon: serve: stopping took over a minute: exiting now\n");
	_exit(1);
	return NULL;
}

int srv_serve_main(int argc, char **argv)
{
	struct cordon_error err = {0};
	struct MHD_Daemon *d = NULL;
	pthread_t watch;
	sigset_t set;
	int sig;

	if (srv_keys_from_env(&err) < 0) /* first: gone from the environment whatever comes next */
		die(err.step, err.msg);
	parse_args(argc, argv);
	defaults();
	if (srv_statedir_setup(&err) < 0 || srv_keys_setup(srv_opts.state_dir, &err) < 0)
		die(err.step, err.msg);
	if (srv_templates_setup(&err) < 0) /* archives unpacked: before any thread */
		die(err.step, err.msg);
	disk_default();
	descriptors();
	/* before any thread: the process that makes the sessions (creator.c) */
	if (srv_creator_start(&err) < 0)
		die(err.step, err.msg);
	/* the signals are taken by sigwait() here; every thread inherits the mask */
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGHUP);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	signal(SIGPIPE, SIG_IGN); /* a closed stdin pipe or client is an error return, not death */
	/* what a sandbox's end releases, in this order: its kernels, its processes' list, its
	 * polled watchers */
	if (srv_reg_on_death(srv_interp_on_death, NULL, &err) < 0 ||
	    srv_reg_on_death(srv_procs_on_death, NULL, &err) < 0 ||
	    srv_reg_on_death(srv_watch_on_death, NULL, &err) < 0)
		die(err.step, err.msg);
	if (srv_reg_start(&err) < 0 || srv_http_start(&srv_routes, &d, &err) < 0 ||
	    srv_pool_start(srv_opts.pool, &err) < 0 || srv_disk_start(&err) < 0)
		die(err.step, err.msg);
	print_where();
	do
		sig = 0;
	while (sigwait(&set, &sig) == 0 && sig == SIGHUP);
	fprintf(stderr, "cordon: serve: %s: stopping every sandbox\n", strsignal(sig));
	sigdelset(&set, SIGHUP);
	if (pthread_create(&watch, NULL, stop_watch, &set) == 0)
		pthread_detach(watch);
	srv_pool_stop();
	srv_disk_stop();
	srv_reg_stop();
	MHD_stop_daemon(d); /* the connections' references to sandboxes go */
	srv_reg_wait();
	srv_keys_forget_made();
	srv_templates_remove();
	if (srv_opts.socket_path)
		unlink(srv_opts.socket_path);
	return 0;
}
