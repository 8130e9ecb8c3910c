/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * spec_example.c - `cordon-runtime spec`: a config.json for a rootfs "rootfs" beside it, as
 * `runc spec` writes, that cordon's floor accepts as it is (tests/unit/test-oci-spec.c loads
 * it). Runs in cordon-runtime.
 */
#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "specdata.h"

static const char example[] =
    "{\"ociVersion\":\"1.2.0\","
    "\"process\":{\"terminal\":true,\"user\":{\"uid\":0,\"gid\":0},\"args\":[\"sh\"],"
    "\"env\":[\"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin\","
    "\"TERM=xterm\"],\"cwd\":\"/\","
    "\"rlimits\":[{\"type\":\"RLIMIT_NOFILE\",\"hard\":1024,\"soft\":1024}],"
    "\"noNewPrivileges\":true},"
    "\"root\":{\"path\":\"rootfs\",\"readonly\":true},"
    "\"hostname\":\"cordon\","
    "\"mounts\":["
    "{\"destination\":\"/proc\",\"type\":\"proc\",\"source\":\"proc\"},"
    "{\"destination\":\"/dev\",\"type\":\"tmpfs\",\"source\":\"tmpfs\","
    "\"options\":[\"nosuid\",\"strictatime\",\"mode=755\",\"size=65536k\"]},"
    "{\"destination\":\"/dev/pts\",\"type\":\"devpts\",\"source\":\"devpts\","
    "\"options\":[\"nosuid\",\"noexec\",\"newinstance\",\"ptmxmode=0666\",\"mode=0620\"]},"
    "{\"destination\":\"/dev/shm\",\"type\":\"tmpfs\",\"source\":\"shm\","
    "\"options\":[\"nosuid\",\"noexec\",\"nodev\",\"mode=1777\",\"size=65536k\"]},"
    "{\"destination\":\"/sys\",\"type\":\"sysfs\",\"source\":\"sysfs\","
    "\"options\":[\"nosuid\",\"noexec\",\"nodev\",\"ro\"]}],"
    "\"linux\":{\"namespaces\":[{\"type\":\"pid\"},{\"type\":\"network\"},{\"type\":\"ipc\"},"
    "{\"type\":\"uts\"},{\"type\":\"mount\"},{\"type\":\"cgroup\"}],"
    "\"maskedPaths\":[\"/proc/acpi\",\"/proc/asound\",\"/proc/kcore\",\"/proc/keys\","
    "\"/proc/latency_stats\",\"/proc/timer_list\",\"/proc/timer_stats\","
    "\"/proc/sched_debug\",\"/sys/firmware\",\"/proc/scsi\"],"
    "\"readonlyPaths\":[\"/proc/bus\",\"/proc/fs\",\"/proc/irq\",\"/proc/sys\","
    "\"/proc/sysrq-trigger\"]}}";

/* rootless: a user namespace mapping root inside to the caller, as `runc spec --rootless`
 * writes (cordon makes that user namespace anyway: the floor finds the mapping its own). */
static int add_rootless(json_object *top)
{
	json_object *lx = json_object_object_get(top, "linux");
	json_object *ns = json_object_object_get(lx, "namespaces");
	const char *keys[] = {"uidMappings", "gidMappings"};

	if (json_object_array_add(ns, json_tokener_parse("{\"type\":\"user\"}")) < 0)
		return -1;
	for (int i = 0; i < 2; i++) {
		json_object *a = json_object_new_array(), *m = json_object_new_object();

		if (!a || !m || json_object_array_add(a, m) < 0) {
			json_object_put(a);
			json_object_put(m);
			return -1;
		}
		json_object_object_add(m, "containerID", json_object_new_int64(0));
		json_object_object_add(
		    m, "hostID", json_object_new_int64(i ? (int64_t)getgid() : (int64_t)getuid()));
		json_object_object_add(m, "size", json_object_new_int64(1));
		if (json_object_object_add(lx, keys[i], a) < 0)
			return -1;
	}
	return 0;
}

char *oci_spec_example(bool rootless)
{
	json_object *top = json_tokener_parse(example);
	char *text = NULL;

	if (top && (!rootless || add_rootless(top) == 0))
		text = cd_strdup_printf(
		    "%s\n", json_object_to_json_string_ext(
				top, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(top);
	return text;
}
