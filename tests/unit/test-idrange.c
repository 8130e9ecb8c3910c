/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * test-idrange.c - the pure parts of the host id range (idrange.c) and of the shared budgets
 * (share.c): a slot's record, /proc/PID/stat's start time (a name with spaces and parentheses),
 * and the division of a budget. TAP.
 */
#include <string.h>

#include "idrange.h"
#include "share.h"

#include "../lib/tap.h"

static void owner_records(void)
{
	unsigned long long start = 0;
	pid_t pid = 0;

	ok(cd_idrange_parse_owner("1234 987654321\n", &pid, &start) && pid == 1234 &&
		   start == 987654321ull,
	   "a record: pid and start time");
	ok(!cd_idrange_parse_owner("", &pid, &start), "an empty record (a free slot): none");
	ok(!cd_idrange_parse_owner("1234\n", &pid, &start), "no start time: none");
	ok(!cd_idrange_parse_owner("0 5\n", &pid, &start), "pid 0: none");
	ok(!cd_idrange_parse_owner("-3 5\n", &pid, &start), "a negative pid: none");
	ok(!cd_idrange_parse_owner("99999999999 5\n", &pid, &start), "a pid past 32 bits: none");
	ok(!cd_idrange_parse_owner("12 5\nextra", &pid, &start), "trailing bytes: none");
	ok(!cd_idrange_parse_owner("12 5", &pid, &start), "no newline (a torn write): none");
}

static void stat_start(void)
{
	/* field 22 after the name; the name may hold ") " and spaces */
	const char *plain = "42 (cordon-init) S 1 42 42 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 1 0 "
			    "123456 1000 50";
	const char *tricky = "42 (a) b) c (d) S 1 42 42 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 1 0 "
			     "777 1000 50";
	unsigned long long v = 0;

	ok(cd_idrange_parse_starttime(plain, &v) && v == 123456, "start time of a plain name");
	ok(cd_idrange_parse_starttime(tricky, &v) && v == 777,
	   "start time of a name with ') ' in it (counted after the last ')')");
	ok(!cd_idrange_parse_starttime("42 (x) S 1 2 3", &v), "a short stat: none");
	ok(!cd_idrange_parse_starttime("no parenthesis", &v), "no name: none");
}

static void user_ids(void)
{
	unsigned long a = 0, b = 0;

	ok(cd_idrange_parse_sub("ann:2000000000:65536\n", &a, &b) && a == 2000000000ul &&
		   b == 65536,
	   "a subordinate range: first and count");
	ok(cd_idrange_parse_sub("ann:100000:65536", &a, &b), "... without a newline too");
	ok(!cd_idrange_parse_sub("# a comment", &a, &b) && !cd_idrange_parse_sub("ann:x:1", &a, &b) &&
		   !cd_idrange_parse_sub(":1:2", &a, &b) && !cd_idrange_parse_sub("ann:1:2:3", &a, &b),
	   "comments, words and extra fields: not a range");
	ok(cd_idrange_parse_id("svc:x:2000000005:2000000005:Service:/var/lib/svc:/bin/false\n", &a) &&
		   a == 2000000005ul,
	   "an account's uid");
	ok(cd_idrange_parse_id("grp:x:2000000007:\n", &a) && a == 2000000007ul, "a group's gid");
	ok(!cd_idrange_parse_id("broken:x:\n", &a) && !cd_idrange_parse_id("nofields\n", &a),
	   "a line without an id: none");
}

static void division(void)
{
	is_uint(cd_share_of(128, 1), 128, "one sandbox: the whole budget");
	is_uint(cd_share_of(128, 19), 6, "19: 6 each (16 sandboxes, a pool of 2, the caller)");
	is_uint(cd_share_of(128, 4), 32, "4: a quarter");
	is_uint(cd_share_of(128, 1000), 1, "more sandboxes than the budget: 1 each, never 0");
	is_uint(cd_share_of(0, 5), 1, "a budget of 0 read: 1");
}

int main(void)
{
	owner_records();
	stat_start();
	user_ids();
	division();
	return done_testing();
}
