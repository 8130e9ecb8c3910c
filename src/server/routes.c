/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* routes.c - the router: which plane a request is for (the REST control plane; envd; the code
 * interpreter) by its E2b-Sandbox-Id/E2b-Sandbox-Port headers or its Host, which sandbox, its
 * authentication (an API key, a sandbox's access token, a signed /files URL) before any body is
 * read, the connection's tenant, and which handler answers it (one table). The transport
 * (http.c) calls it at each request's head, body's end and end (srv_routes). Runs in the server
 * (connection threads). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "auth.h"
#include "connect.h"
#include "conns.h"
#include "control.h"
#include "envd_fs.h"
#include "envd_process.h"
#include "envd_watch.h"
#include "files.h"
#include "http.h"
#include "interp.h"
#include "metrics.h"
#include "opts.h"
#include "ports.h"
#include "registry.h"
#include "req.h"
#include "routes.h"
#include "rpc.h"
#include "util.h"

#define SRV_ENVD_PORT	49983
#define SRV_INTERP_PORT 49999

/* "49983-<id>.domain": the host form of the SDK when E2B_SANDBOX_URL is not set. */
static void host_route(struct srv_req *r, const char **ret_id, unsigned *ret_port, char *buf,
		       size_t size)
{
	const char *host = srv_http_header(r->http, "Host");
	unsigned port;
	int n = 0;

	if (!host || sscanf(host, "%5u-%n", &port, &n) != 1 || n == 0)
		return;
	snprintf(buf, size, "%.*s", (int)strcspn(host + n, ".:"), host + n);
	*ret_id = buf;
	*ret_port = port;
}

/* envd's two answers of its own, with no service behind them */
static enum MHD_Result envd_health(struct srv_req *r)
{
	return srv_http_text(r->http, 204, NULL, "", 0);
}

static enum MHD_Result envd_envs(struct srv_req *r)
{
	return srv_http_json(r->http, 200,
			     r->sb->env_vars ? json_object_get(r->sb->env_vars)
					     : json_object_new_object());
}

enum { PLANE_CONTROL, PLANE_ENVD, PLANE_INTERP };

/* The {id} of a path: its characters, its most length */
struct id_form {
	const char *chars;
	size_t max;
};
static const struct id_form sandbox_id = {"0123456789abcdefghijklmnopqrstuvwxyz_-", 64};
/* a template's name (templates.c) */
static const struct id_form template_id = {"0123456789abcdefghijklmnopqrstuvwxyz"
					   "ABCDEFGHIJKLMNOPQRSTUVWXYZ_-.", 128};
static const struct id_form context_id = {"0123456789abcdefghijklmnopqrstuvwxyz", 39};

/* Which handler answers which request: its plane, its method, its path (prefix{id}suffix, or the
 * prefix alone when suffix is NULL); begin, when there is one, runs at the head, before the body
 * (an upload takes its body as it comes). */
static const struct route {
	int plane;
	const char *method, *prefix, *suffix;
	const struct id_form *id;
	srv_handler_fn fn;
	enum MHD_Result (*begin)(struct srv_req *r);
} routes[] = {
    /* the control plane: E2B's REST API (control.c) */
    {PLANE_CONTROL, "POST", "/sandboxes", NULL, NULL, srv_control_create, NULL},
    {PLANE_CONTROL, "POST", "/v2/sandboxes", NULL, NULL, srv_control_create, NULL},
    {PLANE_CONTROL, "GET", "/sandboxes", NULL, NULL, srv_control_list, NULL},
    {PLANE_CONTROL, "GET", "/v2/sandboxes", NULL, NULL, srv_control_list, NULL},
    {PLANE_CONTROL, "GET", "/health", NULL, NULL, srv_control_health, NULL},
    {PLANE_CONTROL, "GET", "/templates", NULL, NULL, srv_control_templates, NULL},
    {PLANE_CONTROL, "GET", "/templates/aliases/", "", &template_id, srv_control_template_alias,
     NULL},
    {PLANE_CONTROL, "GET", "/sandboxes/", "", &sandbox_id, srv_control_get, NULL},
    {PLANE_CONTROL, "DELETE", "/sandboxes/", "", &sandbox_id, srv_control_kill, NULL},
    {PLANE_CONTROL, "POST", "/sandboxes/", "/timeout", &sandbox_id, srv_control_timeout, NULL},
    {PLANE_CONTROL, "POST", "/sandboxes/", "/connect", &sandbox_id, srv_control_connect, NULL},
    {PLANE_CONTROL, "POST", "/v2/sandboxes/", "/connect", &sandbox_id, srv_control_connect, NULL},
    {PLANE_CONTROL, "POST", "/sandboxes/", "/resume", &sandbox_id, srv_control_resume, NULL},
    {PLANE_CONTROL, "POST", "/sandboxes/", "/refreshes", &sandbox_id, srv_control_refresh, NULL},
    {PLANE_CONTROL, "POST", "/sandboxes/", "/pause", &sandbox_id, srv_control_pause, NULL},
    {PLANE_CONTROL, "POST", "/sandboxes/", "/snapshots", &sandbox_id, srv_control_unsupported,
     NULL},
    {PLANE_CONTROL, "POST", "/sandboxes/", "/fork", &sandbox_id, srv_control_unsupported, NULL},
    {PLANE_CONTROL, "PUT", "/sandboxes/", "/network", &sandbox_id, srv_control_unsupported, NULL},
    {PLANE_CONTROL, "GET", "/sandboxes/", "/metrics", &sandbox_id, srv_metrics_get, NULL},
    {PLANE_CONTROL, "GET", "/sandboxes/", "/logs", &sandbox_id, srv_control_unsupported, NULL},
    {PLANE_CONTROL, "GET", "/v2/sandboxes/", "/logs", &sandbox_id, srv_control_unsupported, NULL},
    /* envd (port 49983): its own two answers, /files (files.c), its process service
     * (envd_process.c) and its filesystem service (envd_fs.c) */
    {PLANE_ENVD, "GET", "/health", NULL, NULL, envd_health, NULL},
    {PLANE_ENVD, "GET", "/envs", NULL, NULL, envd_envs, NULL},
    {PLANE_ENVD, "GET", "/files", NULL, NULL, srv_files_get, NULL},
    {PLANE_ENVD, "POST", "/files", NULL, NULL, srv_files_post_end, srv_files_post_begin},
    {PLANE_ENVD, "POST", "/process.Process/Start", NULL, NULL, srv_process_start, NULL},
    {PLANE_ENVD, "POST", "/process.Process/Connect", NULL, NULL, srv_process_connect, NULL},
    {PLANE_ENVD, "POST", "/process.Process/List", NULL, NULL, srv_process_list, NULL},
    {PLANE_ENVD, "POST", "/process.Process/SendInput", NULL, NULL, srv_process_send_input, NULL},
    {PLANE_ENVD, "POST", "/process.Process/SendSignal", NULL, NULL, srv_process_send_signal, NULL},
    {PLANE_ENVD, "POST", "/process.Process/CloseStdin", NULL, NULL, srv_process_close_stdin, NULL},
    {PLANE_ENVD, "POST", "/process.Process/Update", NULL, NULL, srv_process_update, NULL},
    {PLANE_ENVD, "POST", "/process.Process/StreamInput", NULL, NULL, srv_process_unimplemented,
     NULL},
    {PLANE_ENVD, "POST", "/filesystem.Filesystem/Stat", NULL, NULL, srv_fs_stat, NULL},
    {PLANE_ENVD, "POST", "/filesystem.Filesystem/ListDir", NULL, NULL, srv_fs_list_dir, NULL},
    {PLANE_ENVD, "POST", "/filesystem.Filesystem/MakeDir", NULL, NULL, srv_fs_make_dir, NULL},
    {PLANE_ENVD, "POST", "/filesystem.Filesystem/Move", NULL, NULL, srv_fs_move, NULL},
    {PLANE_ENVD, "POST", "/filesystem.Filesystem/Remove", NULL, NULL, srv_fs_remove, NULL},
    {PLANE_ENVD, "POST", "/filesystem.Filesystem/WatchDir", NULL, NULL, srv_watch_dir, NULL},
    {PLANE_ENVD, "POST", "/filesystem.Filesystem/CreateWatcher", NULL, NULL, srv_watch_create,
     NULL},
    {PLANE_ENVD, "POST", "/filesystem.Filesystem/GetWatcherEvents", NULL, NULL, srv_watch_events,
     NULL},
    {PLANE_ENVD, "POST", "/filesystem.Filesystem/RemoveWatcher", NULL, NULL, srv_watch_remove,
     NULL},
    /* the code interpreter (port 49999, interp.c) */
    {PLANE_INTERP, "POST", "/execute", NULL, NULL, srv_interp_execute, NULL},
    {PLANE_INTERP, "POST", "/contexts", NULL, NULL, srv_interp_create_ctx, NULL},
    {PLANE_INTERP, "GET", "/contexts", NULL, NULL, srv_interp_list_ctx, NULL},
    {PLANE_INTERP, "GET", "/health", NULL, NULL, srv_interp_health, NULL},
    {PLANE_INTERP, "DELETE", "/contexts/", "", &context_id, srv_interp_remove_ctx, NULL},
    {PLANE_INTERP, "POST", "/contexts/", "/restart", &context_id, srv_interp_restart_ctx, NULL},
};

/* The id in prefix{id}suffix: *ret (malloc'd). */
static bool match_id(const char *url, const struct route *rt, char **ret)
{
	size_t pl = strlen(rt->prefix), n;

	if (strncmp(url, rt->prefix, pl) != 0)
		return false;
	url += pl;
	n = strspn(url, rt->id->chars);
	if (n == 0 || n > rt->id->max || strcmp(url + n, rt->suffix) != 0)
		return false;
	*ret = strndup(url, n);
	return *ret != NULL;
}

/* The handler of r on plane (its {id} in r->sub), its begin run; NULL: none (or begin
 * answered). */
static srv_handler_fn handler_of(struct srv_req *r, int plane)
{
	for (size_t i = 0; i < CD_ELEMENTSOF(routes); i++) {
		const struct route *rt = &routes[i];

		if (rt->plane != plane || strcmp(r->method, rt->method) != 0)
			continue;
		if (rt->suffix ? !match_id(r->url, rt, &r->sub) : strcmp(r->url, rt->prefix) != 0)
			continue;
		if (rt->begin && (rt->begin(r) != MHD_YES || srv_http_answered(r->http)))
			return NULL;
		return rt->fn;
	}
	return NULL;
}

/* A signed /files URL (the SDK's downloadUrl/uploadUrl): it names no sandbox when
 * E2B_SANDBOX_URL is set, so the signature does: the sandbox whose token makes it. A reference,
 * or NULL. */
static struct srv_sandbox *signed_files(struct srv_req *r)
{
	const char *sig = srv_http_query(r->http, "signature"),
		   *exp = srv_http_query(r->http, "signature_expiration");
	const char *path = srv_http_query(r->http, "path"),
		   *user = srv_http_query(r->http, "username");
	const char *op = strcmp(r->method, "GET") == 0 ? "read" : "write";
	struct srv_sandbox **v, *found = NULL;
	char want[64];
	size_t n;

	if (!sig || !path || strcmp(r->url, "/files") != 0)
		return NULL;
	if (exp && strtoll(exp, NULL, 10) * 1000 < srv_now_ms())
		return NULL; /* expired */
	if (srv_reg_snapshot(&v, &n) < 0)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		if (!found &&
		    srv_auth_signature(path, op, user ? user : "", v[i]->token, exp, want) == 0 &&
		    srv_auth_token_eq(sig, want))
			found = v[i];
		else
			srv_sandbox_unref(v[i]);
	}
	free(v);
	return found;
}

/* The request is the tenant's (an API key's "k<index>", a sandbox's "s<id>"): so is its
 * connection, unless the tenant holds its share of them already (conns.c): 429. */
static bool tenant_ok(struct srv_req *r, const char *tenant)
{
	if (srv_http_tenant(r->http, tenant))
		return true;
	srv_http_close(r->http);
	srv_http_error(r->http, 429,
		       "this %s holds %u connections already (a quarter of --max-connections): "
		       "close some first",
		       tenant[0] == 'k' ? "API key" : "sandbox", srv_conns_tenant_max());
	return false;
}

static bool sandbox_tenant_ok(struct srv_req *r)
{
	char tenant[40];

	snprintf(tenant, sizeof(tenant), "s%s", r->sb->id);
	return tenant_ok(r, tenant);
}

/* A request refused for the user it names (envd_user_check): answered once its body is in (an
 * answer before it would cut the upload short: the client sees a broken pipe, not why) */
struct user_refusal {
	enum srv_auth_user user;
	char name[64];
};

static int drop_body(void *ctx, const char *data, size_t len)
{
	(void)ctx;
	(void)data;
	(void)len;
	return 0;
}

/* in the shape of the request's protocol: a Connect stream, a unary Connect call, plain HTTP */
static enum MHD_Result refuse_user(struct srv_req *r)
{
	const struct user_refusal *u = r->state;
	const char *ctype = srv_http_header(r->http, "Content-Type");
	bool files = strcmp(r->url, "/files") == 0;
	bool stream = ctype && strncmp(ctype, "application/connect+", 20) == 0;
	const char *code = u->user == SRV_USER_ROOT ? "permission_denied" : "unauthenticated";
	char msg[512];

	if (u->user == SRV_USER_ROOT)
		snprintf(msg, sizeof(msg),
			 "user \"root\" is refused: cordon serve runs every command and file "
			 "operation as \"%s\" (uid %u), never as another uid: a uid 0 would need a "
			 "second id mapped into the sandbox and a privileged process inside to switch "
			 "to it, which no sandbox is given (docs/e2b.md, \"Commands run as the "
			 "sandbox's user\")",
			 SRV_SANDBOX_USER, SRV_SANDBOX_UID);
	else /* envd's own words (its authn middleware), and what there is instead */
		snprintf(msg, sizeof(msg), "invalid username: '%s' (the sandbox's user is \"%s\")",
			 u->name, SRV_SANDBOX_USER);
	if (files)
		return srv_http_error(r->http, srv_connect_http_status(code), "%s", msg);
	if (stream)
		return srv_rpc_stream_error(r, code, "%s", msg);
	return srv_rpc_error(r, code, "%s", msg);
}

/* envd acts as the user a request names (auth.c): the sandbox's; any other is refused, by
 * refuse_user once the body is in. False: r's handler is that. */
static bool envd_user_check(struct srv_req *r)
{
	struct user_refusal u = { .user = SRV_USER_SANDBOX };
	bool files = strcmp(r->url, "/files") == 0;

	u.user = srv_auth_user(srv_http_header(r->http, "Authorization"),
			       files ? srv_http_query(r->http, "username") : NULL, u.name,
			       sizeof(u.name));
	if (u.user == SRV_USER_SANDBOX)
		return true;
	r->state = malloc(sizeof(u));
	if (r->state) {
		memcpy(r->state, &u, sizeof(u));
		r->state_free = free;
		r->handler = refuse_user;
		srv_http_body_to(r->http, drop_body, NULL);
	} else {
		srv_http_error(r->http, 500, "out of memory");
	}
	return false;
}

/* A signed /files URL of sb's (r->sb, a reference): envd's /files, without a token. */
static enum MHD_Result route_signed(struct srv_req *r)
{
	srv_sandbox_attach(r->sb, &r->hold, srv_http_conn_fd(r->http));
	if (!sandbox_tenant_ok(r))
		return MHD_YES;
	srv_sandbox_touch(r->sb);
	if (!envd_user_check(r))
		return MHD_YES;
	r->handler = handler_of(r, PLANE_ENVD);
	return r->handler || srv_http_answered(r->http)
		   ? MHD_YES
		   : srv_http_error(r->http, 404, "no such endpoint");
}

/* E2B's APIs cordon serve has nothing for (snapshots, volumes, secrets, template builds and
 * tags): 501 saying so, after the key is checked, rather than a 404 the SDK would read as
 * "not found" (docs/e2b.md, the SDKs call by call) */
static bool e2b_api_lacked(const char *url)
{
	static const char *const trees[] = { "/snapshots", "/volumes", "/volumecontent", "/secrets",
					     "/v3/templates", "/v2/templates", "/templates" };

	for (size_t i = 0; i < CD_ELEMENTSOF(trees); i++) {
		size_t n = strlen(trees[i]);

		if (strncmp(url, trees[i], n) == 0 && (url[n] == '\0' || url[n] == '/'))
			return true;
	}
	return false;
}

/* The control plane: an API key, whose tenant the connection is (/health: anyone's). */
static enum MHD_Result route_control(struct srv_req *r)
{
	char tenant[32];
	int key;

	r->handler = handler_of(r, PLANE_CONTROL);
	if (!r->handler && e2b_api_lacked(r->url))
		r->handler = srv_control_unsupported;
	if (!r->handler)
		return srv_http_error(r->http, 404, "no such endpoint: %s %s", r->method, r->url);
	if (strcmp(r->url, "/health") == 0) {
		srv_http_no_body(r->http);
		return MHD_YES;
	}
	key = srv_auth_api_key_index(srv_http_header(r->http, "X-API-Key"));
	if (key < 0)
		return srv_http_error(r->http, 401, "invalid or missing API key (X-API-Key)");
	snprintf(tenant, sizeof(tenant), "k%d", key);
	tenant_ok(r, tenant);
	return MHD_YES;
}

/* A paused sandbox: resumed first when it was made with autoResume (by its own authenticated
 * traffic only); otherwise what E2B's proxy answers for a sandbox that does not run (502:
 * isRunning() is false, other calls throw). Its agent is frozen: a call to it would wait until
 * the sandbox is resumed. */
static bool paused_ok(struct srv_req *r, bool anonymous)
{
	struct cordon_error err = {0};
	bool resumed;

	if (!srv_sandbox_paused(r->sb))
		return true;
	if (!r->sb->auto_resume || anonymous) {
		srv_http_error(r->http, 502, "sandbox %s is paused: resume it with Sandbox.connect()",
			       r->sb->id);
		return false;
	}
	if (srv_reg_resume(r->sb, &resumed, &err) < 0) {
		srv_http_error(r->http, 502, "sandbox %s is paused and could not be resumed: %s",
			       r->sb->id, err.msg);
		return false;
	}
	return true;
}

/* Another port of a sandbox (ports.c): E2B's rule, anyone's unless the sandbox was made with
 * network.allowPublicTraffic false (or the server runs with --private-ports): then only with
 * its traffic access token, E2B's 403 without. The connection is the tenant of the sandbox's
 * ports ("p<id>"), not of its envd: a public server's clients cannot take the slots the SDK
 * needs to drive the sandbox. */
static enum MHD_Result route_port(struct srv_req *r, const char *id, unsigned port)
{
	const char *token = srv_http_header(r->http, "E2B-Traffic-Access-Token");
	bool need, shown;
	char tenant[40];

	if (port == 0 || port > 65535)
		return srv_http_error(r->http, 400, "port %u: not a port (1 to 65535)", port);
	r->sb = srv_reg_get(id);
	if (!r->sb)
		return srv_http_error(r->http, 502, "sandbox %s not found", id);
	srv_sandbox_attach(r->sb, &r->hold, srv_http_conn_fd(r->http));
	need = r->sb->private_traffic || srv_opts.private_ports;
	shown = token && srv_auth_token_eq(token, r->sb->token);
	if (need && !token)
		return srv_http_error(r->http, 403, "Sandbox is secured with traffic access token. "
				      "Token header 'e2b-traffic-access-token' is missing");
	if (need && !shown)
		return srv_http_error(r->http, 403, "Sandbox is secured with traffic access token. "
				      "Token header 'e2b-traffic-access-token' is invalid");
	/* traffic that showed the token is its sandbox's tenant; public traffic without it, to
	 * every sandbox, is one tenant: clients without credentials never hold more than its
	 * quarter of the slots, however many sandboxes serve ports */
	if (shown)
		snprintf(tenant, sizeof(tenant), "p%s", r->sb->id);
	else
		snprintf(tenant, sizeof(tenant), "p");
	if (!tenant_ok(r, tenant))
		return MHD_YES;
	/* its agent is frozen while it is paused: resumed by traffic that showed its token */
	if (!paused_ok(r, !shown))
		return MHD_YES;
	if (shown) /* anonymous traffic keeps no sandbox from its --idle-ttl */
		srv_sandbox_touch(r->sb);
	return srv_ports_begin(r, port);
}

/* A sandbox's envd or code interpreter: its access token (envd's /health: anyone's). */
static enum MHD_Result route_sandbox(struct srv_req *r, const char *id, unsigned port)
{
	int plane = port == SRV_ENVD_PORT ? PLANE_ENVD : PLANE_INTERP;
	const char *token;
	bool anonymous = false;

	if (port != SRV_ENVD_PORT && port != SRV_INTERP_PORT)
		return route_port(r, id, port);
	r->sb = srv_reg_get(id);
	if (!r->sb) /* the E2B proxy's answer for a sandbox that is gone: the SDK reads 502 so */
		return srv_http_error(r->http, 502, "sandbox %s not found", id);
	srv_sandbox_attach(r->sb, &r->hold, srv_http_conn_fd(r->http));
	token = srv_http_header(r->http, "X-Access-Token");
	if (!token)
		token = srv_http_header(r->http, "E2B-Traffic-Access-Token");
	if (plane == PLANE_ENVD && strcmp(r->url, "/health") == 0) {
		token = r->sb->token; /* envd answers /health to anyone: it says running or not */
		anonymous = true;
		srv_http_no_body(r->http);
	}
	if (!token && plane == PLANE_ENVD) { /* a signed URL of this sandbox's */
		struct srv_sandbox *s = signed_files(r);

		if (s == r->sb)
			token = r->sb->token;
		if (s)
			srv_sandbox_unref(s);
	}
	if (!token || !srv_auth_token_eq(token, r->sb->token))
		return srv_http_error(r->http, 401,
				      "invalid or missing access token (X-Access-Token)");
	if (!anonymous && !sandbox_tenant_ok(r))
		return MHD_YES;
	if (!paused_ok(r, anonymous))
		return MHD_YES;
	srv_sandbox_touch(r->sb);
	if (plane == PLANE_ENVD && !anonymous && !envd_user_check(r))
		return MHD_YES;
	r->handler = handler_of(r, plane);
	if (!r->handler && !srv_http_answered(r->http))
		return srv_http_error(r->http, 404, "no such endpoint: %s %s", r->method, r->url);
	return MHD_YES;
}

/* A request's head: which plane, which sandbox, which handler; authenticated. Answers an error
 * itself. */
static enum MHD_Result begin(struct srv_http *h, void **ret_req)
{
	struct srv_req *r = calloc(1, sizeof(*r));
	const char *id, *port_s;
	unsigned port = SRV_ENVD_PORT;
	char idbuf[64];

	*ret_req = r;
	if (!r)
		return MHD_NO;
	r->http = h;
	r->method = srv_http_method(h);
	r->url = srv_http_url(h);
	id = srv_http_header(h, "E2b-Sandbox-Id");
	port_s = srv_http_header(h, "E2b-Sandbox-Port");
	if (id && port_s)
		port = (unsigned)strtoul(port_s, NULL, 10);
	else if (!id)
		host_route(r, &id, &port, idbuf, sizeof(idbuf));
	if (!id && (r->sb = signed_files(r)))
		return route_signed(r);
	if (!id)
		return route_control(r);
	return route_sandbox(r, id, port);
}

static enum MHD_Result run(void *req)
{
	struct srv_req *r = req;

	return r->handler(r);
}

/* The request's end: what its handler and its route took goes. */
static void end(void *req)
{
	struct srv_req *r = req;

	if (r->state_free)
		r->state_free(r->state);
	if (r->sb) {
		srv_sandbox_detach(r->sb, &r->hold);
		srv_sandbox_unref(r->sb);
	}
	free(r->sub);
	free(r);
}

const struct srv_http_router srv_routes = {.begin = begin, .run = run, .end = end};
