/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * httpreq.c - parse the head of a proxy request (CONNECT or absolute-form HTTP) and rewrite an
 * absolute-form head for the origin server.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "httpreq.h"
#include "util.h"

/* The end of the head (after the blank line), or 0. Lines may end in CRLF or LF. */
static size_t head_end(const char *buf, size_t len)
{
	for (size_t i = 0; i + 1 < len; i++) {
		if (buf[i] != '\n')
			continue;
		if (buf[i + 1] == '\n')
			return i + 2;
		if (buf[i + 1] == '\r' && i + 2 < len && buf[i + 2] == '\n')
			return i + 3;
	}
	return 0;
}

static int bad(const char **why, const char *reason)
{
	*why = reason;
	return -1;
}

static bool parse_port(const char *s, size_t n, uint16_t *port)
{
	unsigned v = 0;

	if (n == 0 || n > 5)
		return false;
	for (size_t i = 0; i < n; i++) {
		if (!isdigit((unsigned char)s[i]))
			return false;
		v = v * 10 + (unsigned)(s[i] - '0');
	}
	if (v == 0 || v > 65535)
		return false;
	*port = (uint16_t)v;
	return true;
}

/* "host", "host:port", "[v6]", "[v6]:port" into req; no user info, nothing odd in the name. */
static int parse_authority(const char *s, size_t n, bool need_port, struct cd_http_req *req,
			   const char **why)
{
	const char *host = s, *colon = NULL;
	size_t hlen;

	if (memchr(s, '@', n))
		return bad(why, "user information in the URI is not accepted");
	if (n && *s == '[') {
		const char *end = memchr(s, ']', n);

		if (!end)
			return bad(why, "no ']' after the IPv6 address");
		host = s + 1;
		hlen = (size_t)(end - host);
		if (end + 1 < s + n) {
			if (end[1] != ':')
				return bad(why, "only :port may follow ']'");
			colon = end + 1;
		}
		req->host_is_v6 = true;
	} else {
		colon = memchr(s, ':', n);
		hlen = colon ? (size_t)(colon - s) : n;
	}
	if (hlen == 0)
		return bad(why, "no host in the request");
	if (hlen >= sizeof(req->host))
		return bad(why, "host name too long");
	for (size_t i = 0; i < hlen; i++)
		if (!isalnum((unsigned char)host[i]) && (!host[i] || !strchr(".-_:", host[i])))
			return bad(why, "the host name has characters no host name has");
	memcpy(req->host, host, hlen);
	req->host[hlen] = '\0';
	if (colon) {
		if (!parse_port(colon + 1, (size_t)(s + n - colon - 1), &req->port))
			return bad(why, "the port is not a number in 1-65535");
	} else if (need_port) {
		return bad(why, "CONNECT needs host:port");
	}
	return 0;
}

static int parse_target(const char *buf, size_t off, size_t n, struct cd_http_req *req,
			const char **why)
{
	const char *t = buf + off, *end = t + n, *auth, *slash;

	if (req->connect)
		return parse_authority(t, n, true, req, why);
	if (n >= 8 && strncasecmp(t, "https://", 8) == 0)
		return bad(why, "an https:// URI must go through CONNECT");
	if (n < 7 || strncasecmp(t, "http://", 7) != 0)
		return bad(why, "not a proxy request (CONNECT host:port, or an absolute http:// URI)");
	auth = t + 7;
	for (slash = auth; slash < end && !strchr("/?#", *slash); slash++)
		;
	req->port = 80;
	if (parse_authority(auth, (size_t)(slash - auth), false, req, why) < 0)
		return -1;
	req->path_off = (size_t)(slash - buf);
	req->path_len = (size_t)(end - slash);
	return 0;
}

/* Header lines as RFC 9112 wants them, nothing a lenient origin could read two ways: no
 * control bytes (HTAB aside), no CR but before LF, no folded lines, "name: value" with a token
 * for a name and no space before the colon. */
static int check_headers(const char *buf, size_t i, size_t end, const char **why)
{
	while (i < end) {
		const char *nl = memchr(buf + i, '\n', end - i);
		size_t n = (size_t)(nl - (buf + i)), name = 0;

		if (n && buf[i + n - 1] == '\r')
			n--;
		if (n == 0)
			return 0; /* the blank line */
		if (buf[i] == ' ' || buf[i] == '\t')
			return bad(why, "a folded header line");
		for (size_t k = 0; k < n; k++) {
			unsigned char ch = (unsigned char)buf[i + k];

			if (iscntrl(ch) && ch != '\t')
				return bad(why, "control characters in a header");
		}
		while (name < n && (isalnum((unsigned char)buf[i + name]) ||
				    strchr("!#$%&'*+-.^_`|~", buf[i + name])))
			name++;
		if (name == 0 || name == n || buf[i + name] != ':')
			return bad(why, "a header line is not \"name: value\"");
		i = (size_t)(nl - buf) + 1;
	}
	return 0;
}

int cd_http_parse(const char *buf, size_t len, struct cd_http_req *req, const char **why)
{
	size_t end = head_end(buf, len), sp1, sp2, eol, lend, mlen;

	*req = (struct cd_http_req){ 0 };
	if (!end)
		return len >= CD_HTTP_HEAD_MAX ? bad(why, "request head larger than 8192 bytes") : 0;
	if (end > CD_HTTP_HEAD_MAX)
		return bad(why, "request head larger than 8192 bytes");
	eol = (size_t)((const char *)memchr(buf, '\n', end) - buf);
	lend = eol && buf[eol - 1] == '\r' ? eol - 1 : eol;
	for (size_t i = 0; i < lend; i++)
		if (iscntrl((unsigned char)buf[i]))
			return bad(why, "control characters in the request line");
	for (sp1 = 0; sp1 < lend && buf[sp1] != ' '; sp1++)
		if (!isupper((unsigned char)buf[sp1]))
			return bad(why, "the method is not an upper-case word");
	mlen = sp1;
	if (mlen == 0 || mlen >= sizeof(req->method) || sp1 == lend)
		return bad(why, "no method and target in the request line");
	for (sp2 = sp1 + 1; sp2 < lend && buf[sp2] != ' '; sp2++)
		;
	if (sp2 == lend || sp2 == sp1 + 1)
		return bad(why, "the request line is not METHOD TARGET HTTP/1.x");
	req->version_off = sp2 + 1;
	if (lend - req->version_off != 8 || strncmp(buf + req->version_off, "HTTP/1.", 7) != 0 ||
	    (buf[req->version_off + 7] != '0' && buf[req->version_off + 7] != '1'))
		return bad(why, "not HTTP/1.0 or HTTP/1.1");
	if (check_headers(buf, eol + 1, end, why) < 0)
		return -1;
	memcpy(req->method, buf, mlen);
	req->connect = strcmp(req->method, "CONNECT") == 0;
	if (parse_target(buf, sp1 + 1, sp2 - sp1 - 1, req, why) < 0)
		return -1;
	req->headers_off = eol + 1;
	req->head_len = end;
	return 1;
}

static bool dropped_header(const char *line, size_t n)
{
	static const char *const names[] = { "host", "connection", "keep-alive",
					      "proxy-connection", "proxy-authorization" };

	for (size_t i = 0; i < CD_ELEMENTSOF(names); i++) {
		size_t k = strlen(names[i]);

		if (n > k && line[k] == ':' && strncasecmp(line, names[i], k) == 0)
			return true;
	}
	return false;
}

char *cd_http_origin_head(const char *buf, const struct cd_http_req *req, size_t *len)
{
	size_t cap = 2 * req->head_len + sizeof(req->host) + 64, n; /* LF lines grow to CRLF */
	char *out = malloc(cap), *p;
	const char *line = buf + req->headers_off, *end = buf + req->head_len;
	const char *ver = buf + req->version_off;

	const char *path = buf + req->path_off, *hash;
	size_t plen = req->path_len;

	if (!out)
		return NULL;
	hash = memchr(path, '#', plen); /* a fragment is the client's own business */
	if (hash)
		plen = (size_t)(hash - path);
	n = (size_t)snprintf(out, cap, "%s %s%.*s %.8s\r\nHost: %s%s%s", req->method,
			     plen && *path == '/' ? "" : "/", (int)plen, path, ver,
			     req->host_is_v6 ? "[" : "", req->host, req->host_is_v6 ? "]" : "");
	if (req->port != 80)
		n += (size_t)snprintf(out + n, cap - n, ":%u", req->port);
	n += (size_t)snprintf(out + n, cap - n, "\r\n");
	while (line < end) {
		const char *nl = memchr(line, '\n', (size_t)(end - line));
		size_t ll = (size_t)(nl - line) + 1, text = ll - 1;

		if (text && line[text - 1] == '\r')
			text--;
		if (text == 0)
			break; /* the blank line */
		if (!dropped_header(line, text)) {
			memcpy(out + n, line, text);
			n += text;
			out[n++] = '\r';
			out[n++] = '\n';
		}
		line += ll;
	}
	p = out + n;
	n += (size_t)snprintf(p, cap - n, "Connection: close\r\n\r\n");
	*len = n;
	return out;
}
