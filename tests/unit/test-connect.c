/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * test-connect.c - the pure parts of cordon serve: Connect's envelopes (what the SDK sends and
 * what it reads back), its error codes and their HTTP statuses, base64 both ways (protobuf's
 * JSON bytes), the API key's form and the constant-time comparison (src/server/connect.c,
 * auth.c). TAP.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "auth.h"
#include "connect.h"
#include "opts.h"

#include "../lib/tap.h"

static void test_b64(void)
{
	static const char *const plain[] = {"", "f", "fo", "foo", "foob", "fooba", "foobar"};
	static const char *const coded[] = {"",		"Zg==",	    "Zm8=",    "Zm9v",
					    "Zm9vYg==", "Zm9vYmE=", "Zm9vYmFy"};
	uint8_t all[256], *back;
	size_t n;
	char *s;

	for (size_t i = 0; i < 7; i++) {
		srv_b64_encode(plain[i], strlen(plain[i]), &s, &n);
		is_str(s, coded[i], "base64 of \"%s\" (RFC 4648)", plain[i]);
		srv_b64_decode(s, n, &back, &n);
		ok(n == strlen(plain[i]) && memcmp(back, plain[i], n) == 0, "... and back");
		free(s);
		free(back);
	}
	for (int i = 0; i < 256; i++)
		all[i] = (uint8_t)i;
	srv_b64_encode(all, 256, &s, &n);
	ok(srv_b64_decode(s, n, &back, &n) == 0 && n == 256 && memcmp(back, all, 256) == 0,
	   "every byte value round-trips");
	free(back);
	free(s);
	ok(srv_b64_decode("Zm9v", 4, &back, &n) == 0 && n == 3, "unpadded input");
	free(back);
	ok(srv_b64_decode("_-8", 3, &back, &n) == 0 && n == 2 && back[0] == 0xff && back[1] == 0xef,
	   "the URL alphabet too");
	free(back);
	is_int(srv_b64_decode("Zm9v!", 5, &back, &n), -EINVAL, "a byte outside the alphabet");
	is_int(srv_b64_decode("Z", 1, &back, &n), -EINVAL, "a length no encoder makes");
	is_int(srv_b64_decode("Zm 9v", 5, &back, &n), -EINVAL, "whitespace");
}

static void test_frames(void)
{
	const char *msg, *why = NULL;
	char *f;
	size_t fl, ml;

	ok(srv_connect_frame(0, "{}", 2, &f, &fl) == 0 && fl == 7,
	   "a frame is 5 bytes + the message");
	ok(memcmp(f, "\x00\x00\x00\x00\x02{}", 7) == 0, "... flags 0, length big-endian");
	ok(srv_connect_unframe(f, fl, &msg, &ml, &why) == 0 && ml == 2 && memcmp(msg, "{}", 2) == 0,
	   "unframe gives the message back");
	free(f);
	srv_connect_frame(SRV_CONNECT_FLAG_END, "{}", 2, &f, &fl);
	ok((uint8_t)f[0] == 0x02, "the end-stream frame has flag 0x02");
	is_int(srv_connect_unframe(f, fl, &msg, &ml, &why), -EINVAL,
	       "a request's envelope must be a message, not an end (%s)", why);
	free(f);
	is_int(srv_connect_unframe("\x00\x00\x00", 3, &msg, &ml, &why), -EINVAL,
	       "shorter than a prefix (%s)", why);
	is_int(srv_connect_unframe("\x01\x00\x00\x00\x02{}", 7, &msg, &ml, &why), -EINVAL,
	       "compressed (%s)", why);
	is_int(srv_connect_unframe("\x00\x00\x00\x00\x05{}", 7, &msg, &ml, &why), -EINVAL,
	       "a length past the body (%s)", why);
	is_int(srv_connect_unframe("\x00\x00\x00\x00\x01{}", 7, &msg, &ml, &why), -EINVAL,
	       "bytes after the message (%s)", why);
	is_int(srv_connect_unframe("\x00\xff\xff\xff\xff{}", 7, &msg, &ml, &why), -EINVAL,
	       "a 4 GiB length (%s)", why);
}

static void test_errors(void)
{
	char *s;

	is_uint(srv_connect_http_status("not_found"), 404, "not_found is 404");
	is_uint(srv_connect_http_status("invalid_argument"), 400, "invalid_argument is 400");
	is_uint(srv_connect_http_status("unimplemented"), 501, "unimplemented is 501");
	is_uint(srv_connect_http_status("unauthenticated"), 401, "unauthenticated is 401");
	is_uint(srv_connect_http_status("deadline_exceeded"), 504, "deadline_exceeded is 504");
	is_uint(srv_connect_http_status("no such code"), 500, "an unknown code is 500");
	is_str(srv_connect_code_of_errno(ENOENT), "not_found", "ENOENT");
	is_str(srv_connect_code_of_errno(-EEXIST), "already_exists", "-EEXIST");
	is_str(srv_connect_code_of_errno(EACCES), "permission_denied", "EACCES");
	is_str(srv_connect_code_of_errno(ENOTDIR), "invalid_argument", "ENOTDIR");
	is_str(srv_connect_code_of_errno(EIO), "internal", "EIO");
	s = srv_connect_error_json("not_found", "no \"x\"\n", 0);
	is_str(s, "{\"code\":\"not_found\",\"message\":\"no \\\"x\\\"\\n\"}",
	       "a unary error's body");
	free(s);
	s = srv_connect_error_json("internal", "a/b", 1);
	is_str(s, "{\"error\":{\"code\":\"internal\",\"message\":\"a/b\"}}", "an end-stream error");
	free(s);
	s = srv_connect_error_json(NULL, NULL, 1);
	is_str(s, "{}", "a clean end");
	free(s);
}

static void test_auth(void)
{
	char id[21];
	char *keys[] = {"e2b_0123abcd", "e2b_ff", NULL};

	ok(srv_auth_key_valid_form("e2b_0123456789abcdef"), "e2b_<hex> is a key");
	ok(!srv_auth_key_valid_form("e2b_"), "e2b_ alone is not");
	ok(!srv_auth_key_valid_form("e2b_ABCD"), "uppercase hex is not");
	ok(!srv_auth_key_valid_form("sk_1234"), "another prefix is not");
	ok(!srv_auth_key_valid_form("e2b_12 34"), "a space is not");
	ok(srv_auth_token_eq("abc", "abc"), "equal tokens");
	ok(!srv_auth_token_eq("abc", "abd"), "a byte differs");
	ok(!srv_auth_token_eq("abc", "abcd"), "a prefix is not equal");
	ok(!srv_auth_token_eq("", "a"), "empty is not equal to one byte");
	srv_opts.api_keys = keys;
	ok(srv_auth_api_key_ok("e2b_ff"), "a configured key is accepted");
	ok(!srv_auth_api_key_ok("e2b_f"), "its prefix is not");
	ok(!srv_auth_api_key_ok(NULL), "no key is not");
	srv_opts.api_keys = NULL;
	ok(srv_auth_random(id, 20, "0123456789abcdefghijklmnopqrstuvwxyz") == 0 &&
	       strlen(id) == 20 && strspn(id, "0123456789abcdefghijklmnopqrstuvwxyz") == 20,
	   "an id: 20 of [0-9a-z]");
}

int main(void)
{
	test_b64();
	test_frames();
	test_errors();
	test_auth();
	return done_testing();
}
