/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * caller-secrets.c - a harness that holds secrets and runs sandboxes through the library; from
 * inside each sandbox, tests/helpers/find-secrets.py looks for them in everything it can open.
 * TAP on stdout. Run by tests/integration/t-secrets.sh as root and as the unprivileged user:
 *
 *   CALLER_SECRET_ENV=HEX caller-secrets BASE SCANNER ARGV_SECRET
 *
 * The secrets: one in our argv, one in our environment, one made here and kept on our heap, and
 * one in another sandbox's state (a session whose config carries it in its environment, alive
 * while the next sandbox is made). The scan runs as `sh -c 'python3 SCANNER MASKED; :'` with
 * CONTROL in its environment: the scanner must find CONTROL in sh's environ and memory (so that
 * a scan that reads nothing cannot pass), and nothing else. As root, pid 1's memory is also read
 * from the host, where its being non-dumpable does not hide it.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cordon.h"
#include "../lib/tap.h"

#pragma GCC diagnostic ignored "-Wformat-truncation"

#define SEC 1000000000ull

struct secret {
	const char *name;
	char *value;
};

static struct secret secrets[5]; /* argv, env, heap, tenant, control */
static size_t n_secrets;
static char base[PATH_MAX], scanner[PATH_MAX];

static char *random_hex(void)
{
	unsigned char b[20];
	char *s = malloc(41);

	if (!s || getrandom(b, sizeof(b), 0) != sizeof(b))
		abort();
	for (int i = 0; i < 20; i++)
		sprintf(s + 2 * i, "%02x", b[i]);
	return s;
}

static void add_secret(const char *name, char *value)
{
	secrets[n_secrets++] = (struct secret){ name, value };
}

/* dir/masked.json: each secret XOR 0x5a, hex; and the scanner copied beside it */
static int plant(const char *dir)
{
	char path[PATH_MAX], cmd[3 * PATH_MAX];
	FILE *f;

	snprintf(path, sizeof(path), "%s/masked.json", dir);
	f = fopen(path, "w");
	if (!f)
		return -1;
	fputc('{', f);
	for (size_t i = 0; i < n_secrets; i++) {
		fprintf(f, "%s\"%s\": \"", i ? ", " : "", secrets[i].name);
		for (const char *p = secrets[i].value; *p; p++)
			fprintf(f, "%02x", (unsigned char)*p ^ 0x5a);
		fputc('"', f);
	}
	fputs("}\n", f);
	fclose(f);
	snprintf(cmd, sizeof(cmd), "cp '%s' '%s/find-secrets.py'", scanner, dir);
	return system(cmd) == 0 ? 0 : -1;
}

static const char *fresh_dir(const char *name)
{
	static char paths[4][PATH_MAX];
	static unsigned n;
	char *p = paths[n++ % 4];

	snprintf(p, PATH_MAX, "%s/%s", base, name);
	mkdir(p, 0755);
	chmod(p, 0755);
	return p;
}

static char *script_for(const char *dir)
{
	static char s[2 * PATH_MAX];

	snprintf(s, sizeof(s), "python3 %s/find-secrets.py %s/masked.json; :", dir, dir);
	return s;
}

/* The scan's output: nothing found but CONTROL, and CONTROL found in sh's environ and memory */
static void judge(const char *what, const char *out)
{
	char line[64];
	bool ctl_env = false, ctl_mem = false;

	for (size_t i = 0; i < n_secrets; i++) {
		if (strcmp(secrets[i].name, "control") == 0)
			continue;
		snprintf(line, sizeof(line), "found %s ", secrets[i].name);
		unlike_str(out, line, "%s: the caller's %s secret is nowhere in the sandbox", what,
			   secrets[i].name);
	}
	for (const char *p = out; (p = strstr(p, "found control in ")); p++) {
		const char *eol = strchrnul(p, '\n');

		if (memmem(p, (size_t)(eol - p), "/environ (sh)", 13))
			ctl_env = true;
		if (memmem(p, (size_t)(eol - p), "/mem (sh)", 9))
			ctl_mem = true;
	}
	ok(ctl_env && ctl_mem, "%s: the scan reads other processes' environ and memory (CONTROL found "
			       "in sh's)", what);
	like_str(out, "scanned ", "%s: the scanner ran", what);
	if (!ctl_env || !ctl_mem || strstr(out, "found ") != strstr(out, "found control"))
		diag("%s", out);
}

static struct cordon_config *config(const char *dir)
{
	struct cordon_config *c = cordon_config_new();
	struct cordon_error err = { 0 };

	if (!c || cordon_config_set_workdir(c, dir, &err) < 0 ||
	    cordon_config_set_timeout(c, 120 * SEC, &err) < 0)
		diag("config: %s", err.msg);
	return c;
}

static char *read_all(int fd)
{
	size_t len = 0, cap = 65536;
	char *buf = malloc(cap);
	ssize_t n;

	while (buf && (n = read(fd, buf + len, cap - len - 1)) > 0) {
		len += (size_t)n;
		if (cap - len < 4096 && !(buf = realloc(buf, cap *= 2)))
			return NULL;
	}
	if (buf)
		buf[len] = '\0';
	return buf;
}

/* The scan in a one-shot run: cordon_run() with our stdout a pipe read after it returns */
static void oneshot(void)
{
	const char *dir = fresh_dir("oneshot");
	const char *argv[] = { "sh", "-c", NULL, NULL };
	struct cordon_config *c = config(dir);
	struct cordon_result res;
	struct cordon_error err = { 0 };
	char tmpl[] = "/tmp/caller-secrets.XXXXXX";
	int fd = mkstemp(tmpl), saved = dup(1), r;
	char *out;

	if (plant(dir) < 0 || fd < 0)
		diag("plant %s: %s", dir, strerror(errno));
	unlink(tmpl);
	argv[2] = script_for(dir);
	cordon_config_set_command(c, argv, &err);
	cordon_config_set_env(c, "CONTROL", secrets[n_secrets - 1].value, &err);
	fflush(stdout);
	dup2(fd, 1);
	r = cordon_run(c, &res, &err);
	dup2(saved, 1);
	close(saved);
	ok(r == 0 && res.exit_code == 0, "one-shot: the scan ran (%d %s)", r, err.msg);
	lseek(fd, 0, SEEK_SET);
	out = read_all(fd);
	close(fd);
	judge("one-shot", out ? out : "");
	free(out);
	cordon_config_free(c);
}

static struct cordon_session *session(const char *dir, const char *tenant_token)
{
	struct cordon_config *c = config(dir);
	struct cordon_session *s = NULL;
	struct cordon_error err = { 0 };

	if (tenant_token)
		cordon_config_set_env(c, "TENANT_TOKEN", tenant_token, &err);
	if (cordon_session_create(c, CORDON_SESSION_REMOVE_WORKDIR, &s, &err) < 0)
		diag("session in %s: %s: %s", dir, err.step, err.msg);
	cordon_config_free(c);
	return s;
}

static char *session_run(struct cordon_session *s, const char *script, const char *control)
{
	const char *argv[] = { "sh", "-c", script, NULL };
	const char *env[] = { NULL, NULL };
	char ctl[128];
	struct cordon_exec e = { .argv = argv, .env = env, .fd = { -1, -1, -1 } };
	struct cordon_process *p = NULL;
	struct cordon_error err = { 0 };
	int pipefd[2], status = -1;
	char *out;

	snprintf(ctl, sizeof(ctl), "CONTROL=%s", control);
	env[0] = ctl;
	if (pipe2(pipefd, O_CLOEXEC) < 0)
		return NULL;
	e.fd[1] = pipefd[1];
	if (cordon_session_exec(s, &e, &p, &err) < 0) {
		diag("exec: %s", err.msg);
		close(pipefd[0]);
		close(pipefd[1]);
		return NULL;
	}
	close(pipefd[1]);
	out = read_all(pipefd[0]);
	close(pipefd[0]);
	cordon_process_wait(p, 120 * SEC, &status, &err);
	cordon_process_free(p);
	return out;
}

/* The supervisor's child that is pid 1 of a pid namespace below ours (NSpid: "HOST ... 1") */
static pid_t pid1_of(pid_t sup)
{
	char path[64], line[256];
	pid_t found = 0;
	FILE *f;
	int c;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/children", sup, sup);
	f = fopen(path, "re");
	while (f && !found && fscanf(f, "%d", &c) == 1) {
		FILE *st;

		snprintf(path, sizeof(path), "/proc/%d/status", c);
		st = fopen(path, "re");
		while (st && fgets(line, sizeof(line), st))
			if (strncmp(line, "NSpid:", 6) == 0 && strstr(line, "\t1\n"))
				found = c;
		if (st)
			fclose(st);
	}
	if (f)
		fclose(f);
	return found;
}

/* As root: pid 1 (the supervisor's child) read from the host, non-dumpable or not. The session
 * is exported to learn its supervisor, then taken back. */
static struct cordon_session *pid1_from_host(struct cordon_session *s)
{
	int fds[2];
	char id[33], cmd[2 * PATH_MAX + 256], masked[PATH_MAX];
	pid_t sup = 0, pid1;
	FILE *f;
	char *out = NULL;

	if (geteuid() != 0) {
		skip("needs root", "pid 1's memory, read from the host");
		return s;
	}
	cordon_session_export(s, fds, id, &sup);
	if (cordon_session_import(fds, id, sup, &s, &(struct cordon_error){ 0 }) < 0)
		s = NULL;
	pid1 = pid1_of(sup);
	if (!ok(pid1 > 0, "pid 1 found among the supervisor's children"))
		return s;
	/* the scanner's own pid is skipped: run it in a child that scans only pid 1, here */
	snprintf(masked, sizeof(masked), "%s/session-b/masked.json", base);
	snprintf(cmd, sizeof(cmd), "env -u CALLER_SECRET_ENV python3 -c 'import runpy,sys,os; "
		 "os.listdir=lambda p: [\"%d\"]; sys.argv=[\"s\", \"%s\"]; runpy.run_path(\"%s\")'",
		 pid1, masked, scanner);
	f = popen(cmd, "r");
	if (f) {
		out = read_all(fileno(f));
		pclose(f);
	}
	ok(out && strstr(out, "1 mem (") != NULL, "pid 1's memory read from the host");
	for (size_t i = 0; out && i + 1 < n_secrets; i++) {
		char needle[64];

		snprintf(needle, sizeof(needle), "found %s ", secrets[i].name);
		unlike_str(out, needle, "pid 1 holds no %s secret of the caller's", secrets[i].name);
	}
	if (out && strstr(out, "found "))
		diag("%s", out);
	free(out);
	return s;
}

static void sessions(void)
{
	const char *da = fresh_dir("session-a"), *db = fresh_dir("session-b");
	struct cordon_session *a = session(da, secrets[3].value), *b;
	char *out;

	ok(a != NULL, "session A made, another tenant's token in its config");
	b = session(db, NULL);
	ok(b != NULL, "session B made while A lives");
	if (!a || !b || plant(db) < 0)
		return;
	out = session_run(b, script_for(db), secrets[n_secrets - 1].value);
	judge("session", out ? out : "");
	free(out);
	b = pid1_from_host(b);
	if (b)
		cordon_session_destroy(b, &(struct cordon_result){ 0 }, &(struct cordon_error){ 0 });
	cordon_session_destroy(a, &(struct cordon_result){ 0 }, &(struct cordon_error){ 0 });
}

int main(int argc, char **argv)
{
	static volatile char *heap;
	const char *env = getenv("CALLER_SECRET_ENV");

	if (argc != 4 || !env || !realpath(argv[1], base) || !realpath(argv[2], scanner)) {
		fprintf(stderr, "usage: CALLER_SECRET_ENV=HEX caller-secrets BASE SCANNER SECRET\n");
		return 2;
	}
	add_secret("argv", argv[3]);
	add_secret("env", (char *)env);
	heap = random_hex(); /* kept on the heap, never given to a sandbox */
	add_secret("heap", (char *)heap);
	add_secret("tenant", random_hex());
	add_secret("control", random_hex()); /* last: given to the scan's shell */
	oneshot();
	sessions();
	return done_testing();
}
