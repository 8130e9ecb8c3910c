/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * test-sysinfo.c - the hint cordon adds where the host refuses user namespaces (sysinfo.h): on a
 * host whose AppArmor restricts them (Ubuntu 23.10+) it names cordon's profile and the command
 * that loads it, for each way the profile can be missing; no hint where nothing is restricted.
 * TAP.
 */
#include <string.h>

#include "cordon.h"
#include "sysinfo.h"

#include "../lib/tap.h"

#define PROFILE "/etc/apparmor.d/cordon"
#define ATTACH "/usr/local/bin/cordon"

/* Ubuntu 24.04 as it comes: no Debian sysctl, namespaces allowed, AppArmor restricting them */
static struct cd_userns_facts ubuntu(void)
{
	return (struct cd_userns_facts){ .unprivileged_userns_clone = -1,
					 .max_user_namespaces = 63000,
					 .apparmor_restrict = 1,
					 .profile_installed = true,
					 .exe_attached = true };
}

/* The hint as the user reads it: clone_fail()'s line in a struct cordon_error, whose msg must
 * hold it whole (cd_fail cuts what does not fit) */
static bool advice(const struct cd_userns_facts *f, char *line, size_t size)
{
	char hint[400];
	struct cordon_error err;

	if (!cd_sysinfo_userns_advice(f, PROFILE, ATTACH, hint, sizeof(hint)))
		return false;
	snprintf(line, size, "cannot create the sandbox's namespaces: %s (%s)",
		 strerror(1), hint);
	ok(strlen(hint) < sizeof(hint) - 1 && strlen(line) < sizeof(err.msg),
	   "the hint fits the error's line (%zu bytes of %zu)", strlen(line), sizeof(err.msg));
	return true;
}

static void test_apparmor(void)
{
	struct cd_userns_facts f = ubuntu();
	char line[1024];

	ok(advice(&f, line, sizeof(line)), "restricted, the profile installed but not loaded: a hint");
	like_str(line, "sudo apparmor_parser -r " PROFILE, "it names the command loading the profile");
	like_str(line, "not loaded", "and says the profile is not loaded");
	like_str(line, "sudo sysctl -w kernel.apparmor_restrict_unprivileged_userns=0",
		 "and the sysctl lifting the restriction for every program");

	f.profile_installed = false;
	ok(advice(&f, line, sizeof(line)), "the profile not installed: a hint");
	like_str(line, PROFILE " is not installed", "it says the profile is not installed");
	like_str(line, "-Dapparmor=enabled", "and how to install it");
	like_str(line, "sudo apparmor_parser -r " PROFILE, "and to load it");

	f = ubuntu();
	f.exe_attached = false;
	ok(advice(&f, line, sizeof(line)), "a cordon the profile does not attach to: a hint");
	like_str(line, "is for " ATTACH " only", "it names the program the profile is for");

	f = ubuntu();
	f.under_profile = true;
	ok(!cd_sysinfo_userns_advice(&f, PROFILE, ATTACH, line, sizeof(line)),
	   "under cordon's profile: no AppArmor hint (the restriction is lifted for it)");
	f = ubuntu();
	f.privileged = true;
	ok(!cd_sysinfo_userns_advice(&f, PROFILE, ATTACH, line, sizeof(line)),
	   "root: no hint (the restriction is for unprivileged callers)");
	f = ubuntu();
	f.apparmor_restrict = 0;
	ok(!cd_sysinfo_userns_advice(&f, PROFILE, ATTACH, line, sizeof(line)),
	   "the restriction off: no hint");
	f.apparmor_restrict = -1;
	ok(!cd_sysinfo_userns_advice(&f, PROFILE, ATTACH, line, sizeof(line)),
	   "no AppArmor: no hint");
}

static void test_other_sysctls(void)
{
	struct cd_userns_facts f = ubuntu();
	char line[1024];

	f.unprivileged_userns_clone = 0;
	ok(advice(&f, line, sizeof(line)), "Debian's sysctl off: a hint");
	like_str(line, "kernel.unprivileged_userns_clone=1", "naming that sysctl");
	f = ubuntu();
	f.max_user_namespaces = 0;
	ok(advice(&f, line, sizeof(line)), "no user namespaces allowed: a hint");
	like_str(line, "user.max_user_namespaces", "naming that sysctl");
}

int main(void)
{
	test_apparmor();
	test_other_sysctls();
	return done_testing();
}
