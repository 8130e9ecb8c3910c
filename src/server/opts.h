/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* opts.h - the server's options (filled by serve.c before any thread, read by every file after),
 * its log line and its wall clock. The bottom of src/server: it calls no other file of it.
 * Runs in the server process (and the session maker, which gets the sandboxes' part). */
#pragma once

#include <stdbool.h>
#include <stdint.h>

/* E2B's sandbox user, every sandbox's (sbconfig.c), whose name the envd requests may give
 * (auth.c) and files are listed with (envd_fs.c): uid and gid 1000, a group of its name, HOME
 * /home/user */
#define SRV_SANDBOX_USER "user"
#define SRV_SANDBOX_UID	 1000u

struct srv_options {
	char *listen_host;
	unsigned listen_port;
	bool listen_remote;
	char *socket_path;
	char **api_keys;
	char *state_dir;
	unsigned max_sandboxes;
	uint64_t memory, pids, millicpus; /* 0: the library's default */
	uint64_t disk, disk_entries;      /* a workdir's budget (disk.c); disk 0: none */
	bool disk_set;
	uint64_t idle_ttl_ns, max_ttl_ns, default_ttl_ns;
	uint64_t max_paused_ns; /* a paused sandbox is killed after this (--max-paused-ttl) */
	uint64_t max_upload;
	unsigned max_connections;
	/* followed processes in one sandbox: RLIMIT_NOFILE's share (serve.c) */
	unsigned max_procs;
	bool keep_workdirs;
	unsigned pool; /* sandboxes made ahead (--pool) */
	/* sandboxes that may share the server's uid's kernel budgets: --max-sandboxes + --pool +
	 * 1 (cordon_config_set_user_share; nothing when root, whose sandboxes have ids of their
	 * own) */
	unsigned user_share;
	bool pool_set;
	char **allow_net;
	bool private_ports; /* every sandbox's ports need its traffic token (routes.c) */
	bool verbose;
};

extern struct srv_options srv_opts;
/* A line on stderr under --verbose: "cordon: serve: ..." */
void srv_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
int64_t srv_now_ms(void); /* realtime */
