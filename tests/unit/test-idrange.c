/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * test-idrange.c - the pure parts of the host id range (idrange.c) and of the shared budgets
 * (share.c): a slot's record, /proc/PID/stat's start time (a name with spaces and parentheses),
 * and the division of a budget; and the sweep of slot files left by killed supervisors, in a
 * scratch directory. TAP.
 */
#include <fcntl.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

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

/* plant name under dir holding text (NULL: an empty file) */
static void plant(int dir, const char *name, const char *text)
{
	int fd = openat(dir, name, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

	if (fd >= 0 && text)
		(void)!write(fd, text, strlen(text));
	if (fd >= 0)
		close(fd);
}

static bool exists(int dir, const char *name)
{
	return faccessat(dir, name, F_OK, AT_SYMLINK_NOFOLLOW) == 0;
}

/* The sweep of slot files left by killed supervisors: only those free for good go. */
static void sweeping(void)
{
	char tmp[] = "/tmp/test-idrange.XXXXXX", me[64], stat[1024], self[64];
	unsigned long long start = 0;
	int dir, held, fd;
	ssize_t n;

	if (!mkdtemp(tmp) || (dir = open(tmp, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0) {
		ok(false, "a scratch directory");
		return;
	}
	fd = open("/proc/self/stat", O_RDONLY | O_CLOEXEC);
	n = fd >= 0 ? read(fd, stat, sizeof(stat) - 1) : -1;
	if (fd >= 0)
		close(fd);
	stat[n > 0 ? n : 0] = '\0';
	ok(cd_idrange_parse_starttime(stat, &start), "our own start time");
	snprintf(me, sizeof(me), "%d %llu\n", (int)getpid(), start);
	snprintf(self, sizeof(self), "%d %llu\n", (int)getpid(), start + 1);
	plant(dir, "1", "2147483646 5\n"); /* a pid 1 that is gone */
	plant(dir, "2", NULL);               /* taken, never recorded, its holder gone */
	plant(dir, "3", "2147483646 5\n");
	held = openat(dir, "3", O_RDONLY | O_CLOEXEC);
	ok(held >= 0 && flock(held, LOCK_EX | LOCK_NB) == 0, "slot 3 held (locked) by a live taker");
	plant(dir, "4", me);   /* its pid 1 still runs: us */
	plant(dir, "5", self); /* our pid, another start time: a pid reused, its pid 1 gone */
	ok(symlinkat("1", dir, "6") == 0, "slot 6 a symlink");
	ok(mkdirat(dir, "7", 0700) == 0, "slot 7 a directory");

	is_int(cd_idrange_sweep_at(dir, 1), 1, "a slot whose pid 1 is gone: removed");
	ok(!exists(dir, "1"), "... and its file is gone");
	is_int(cd_idrange_sweep_at(dir, 2), 1, "an empty slot no one holds: removed");
	is_int(cd_idrange_sweep_at(dir, 3), 0, "a held slot: kept");
	ok(exists(dir, "3"), "... its file there");
	is_int(cd_idrange_sweep_at(dir, 4), 0, "a slot whose pid 1 still runs: kept");
	is_int(cd_idrange_sweep_at(dir, 5), 1, "a slot naming a pid reused by another process: removed");
	is_int(cd_idrange_sweep_at(dir, 6), 0, "a symlink: not followed, not removed");
	ok(exists(dir, "6"), "... it is there");
	is_int(cd_idrange_sweep_at(dir, 7), 0, "a directory: not removed");
	is_int(cd_idrange_sweep_at(dir, 8), 0, "a missing slot: nothing");
	if (held >= 0)
		close(held);
	is_int(cd_idrange_sweep_at(dir, 3), 1, "the held slot, once let go: removed");
	unlinkat(dir, "4", 0);
	unlinkat(dir, "6", 0);
	unlinkat(dir, "7", AT_REMOVEDIR);
	close(dir);
	ok(rmdir(tmp) == 0, "nothing else left in the scratch directory");
}

int main(void)
{
	owner_records();
	stat_start();
	user_ids();
	division();
	sweeping();
	return done_testing();
}
