/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * test-passwd.c - an /etc/passwd text read a line at a time (passwd.h): the host's own file
 * read the same as glibc's fgetpwent() reads it; then the lines it skips or keeps whatever
 * their shape (comments, blank lines, a missing shell, too few fields, a uid that is no number,
 * a line longer than a page, no final newline), and a missing file; and the lookup of a uid.
 * TAP.
 */
#include <errno.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "passwd.h"

#include "../lib/tap.h"

static void test_host_file(void)
{
	struct cd_passwd pw;
	FILE *f = fopen("/etc/passwd", "re");
	struct passwd *g;
	int n = 0, same = 0;

	if (!f) {
		tap_skip_("no /etc/passwd here", "the host's file as glibc reads it");
		return;
	}
	is_int(cd_passwd_open(&pw, "/etc/passwd"), 0, "the host's /etc/passwd opens");
	while ((g = fgetpwent(f))) {
		n++;
		if (cd_passwd_next(&pw) == 1 && pw.uid_ok && strcmp(pw.name, g->pw_name) == 0 &&
		    pw.uid == g->pw_uid && strcmp(pw.home, g->pw_dir) == 0)
			same++;
		else
			diag("line %d differs: glibc %s %u %s", n, g->pw_name, (unsigned)g->pw_uid,
			     g->pw_dir);
	}
	ok(n > 0 && same == n, "each of the host's %d accounts: the name, uid and home glibc reads",
	   n);
	is_int(cd_passwd_next(&pw), 0, "... and then the end, as glibc");
	cd_passwd_close(&pw);
	fclose(f);
}

static void test_shapes(void)
{
	char path[] = "/tmp/test-passwd.XXXXXX", *big = malloc(9000);
	int fd = mkstemp(path);
	FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
	struct cd_passwd pw;

	if (!ok(f && big, "a temporary file"))
		exit(1);
	memset(big, 'g', 8999);
	big[8999] = '\0';
	fprintf(f, "# a comment:x:1:1::/comment:/bin/sh\n\n   \n"
		   "short:x:2:2:/nohome\n"
		   "  spaced:x:3:3:gecos:/home/spaced:/bin/sh\n"
		   "noshell:x:4:4:gecos:/home/noshell\n"
		   "word:x:abc:5::/home/word:/bin/sh\n"
		   "huge:x:4294967296:6::/home/huge:/bin/sh\n"
		   "long:x:7:7:%s:/home/long:/bin/sh\n"
		   "last:x:8:8::/home/last:/bin/sh",
		big);
	fclose(f);
	is_int(cd_passwd_open(&pw, path), 0, "a file of every shape opens");
	is_int(cd_passwd_next(&pw), 1, "comments, blank lines and a line of five fields skipped");
	is_str(pw.name, "spaced", "... the first account: leading blanks skipped");
	ok(pw.uid_ok && pw.uid == 3, "... its uid");
	is_str(pw.home, "/home/spaced", "... its home, without the shell");
	is_int(cd_passwd_next(&pw), 1, "a line without the shell field");
	is_str(pw.home, "/home/noshell", "... its home is the last field");
	is_int(cd_passwd_next(&pw), 1, "a uid that is no number: the line is kept");
	ok(!pw.uid_ok, "... with no uid");
	is_str(pw.home, "/home/word", "... and its home (a home is refused whatever the uid)");
	is_int(cd_passwd_next(&pw), 1, "a uid past 32 bits");
	ok(!pw.uid_ok, "... is no uid");
	is_int(cd_passwd_next(&pw), 1, "a line of 9 KiB");
	is_str(pw.home, "/home/long", "... read whole");
	is_int(cd_passwd_next(&pw), 1, "the last line, without a newline");
	is_str(pw.home, "/home/last", "... read whole");
	is_int(cd_passwd_next(&pw), 0, "the end");
	is_int(cd_passwd_next(&pw), 0, "... again");
	cd_passwd_close(&pw);
	{
		char *name = NULL, *home = NULL;

		is_int(cd_passwd_find(path, 4, &name, &home), 1, "find uid 4");
		is_str(name, "noshell", "... its name");
		is_str(home, "/home/noshell", "... its home");
		free(name);
		free(home);
		home = NULL;
		is_int(cd_passwd_find(path, 8, NULL, &home), 1, "find uid 8, the home alone");
		is_str(home, "/home/last", "... its home");
		free(home);
		is_int(cd_passwd_find(path, 1, &name, NULL), 0,
		       "a uid only a comment has: no account");
		is_int(cd_passwd_find(path, 99, &name, NULL), 0, "a uid nobody has: no account");
	}
	unlink(path);
	free(big);
	is_int(cd_passwd_find(path, 0, NULL, NULL), 0, "a missing file: no account");
	is_int(cd_passwd_open(&pw, path), -ENOENT, "a missing file: -ENOENT");
	is_int(cd_passwd_next(&pw), 0, "... and no line");
	cd_passwd_close(&pw);
}

int main(void)
{
	test_host_file();
	test_shapes();
	return done_testing();
}
