/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* idrange.c - a host id of its own for each root sandbox (idrange.h). Runs in the supervisor. */
#include <ctype.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "idrange.h"

/* Does /proc/self/{uid,gid}_map map [first, first + count) whole? */
static bool range_mapped(const char *map, unsigned first, unsigned count)
{
	char path[64], line[128];
	bool found = false;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/%s", map);
	f = fopen(path, "re");
	if (!f)
		return false;
	while (!found && fgets(line, sizeof(line), f)) {
		unsigned long inside, outside, n;

		if (sscanf(line, "%lu %lu %lu", &inside, &outside, &n) == 3)
			found = first >= inside && first - inside + (unsigned long)count <= n;
	}
	fclose(f);
	return found;
}

bool cd_idrange_usable(void)
{
	static int usable = -1; /* our own maps do not change: read once per process */

	if (usable < 0)
		usable = range_mapped("uid_map", CORDON_ROOT_HOST_ID, CORDON_ID_RANGE_SIZE) &&
			 range_mapped("gid_map", CORDON_ROOT_HOST_ID, CORDON_ID_RANGE_SIZE);
	return usable;
}

/* name under dir: made (mode) if missing, then opened and checked: root's, a directory, not a
 * symlink, no one else may write it (and with private, read it) */
static int open_dir(int dir, const char *name, mode_t mode, bool private, struct cordon_error *err)
{
	_cleanup_close_ int fd = openat(dir, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	struct stat st;

	if (fd < 0 && errno == ENOENT) { /* the first run since boot */
		if (mkdirat(dir, name, mode) < 0 && errno != EEXIST)
			return cd_fail_errno(err, errno, "identity", "mkdir %s", name);
		fd = openat(dir, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	}
	if (fd < 0 || fstat(fd, &st) < 0)
		return cd_fail_errno(err, errno, "identity", "open %s", name);
	if (st.st_uid != 0 || (st.st_mode & (private ? 077 : 022)))
		return cd_fail(err, EPERM, "identity",
			       "%s: not root's, or open to others (mode %o): refusing to keep the "
			       "sandboxes' host ids there (remove it)", name, st.st_mode & 07777);
	return CD_TAKE_FD(fd);
}

static int open_ids_dir(struct cordon_error *err)
{
	_cleanup_close_ int run = open("/run", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	_cleanup_close_ int cordon = -1;

	if (run < 0)
		return cd_fail_errno(err, errno, "identity", "open /run");
	cordon = open_dir(run, "cordon", 0755, false, err);
	if (cordon < 0)
		return cordon;
	return open_dir(cordon, "ids", 0700, true, err);
}

bool cd_idrange_parse_owner(const char *text, pid_t *ret_pid, unsigned long long *ret_start)
{
	long pid;
	unsigned long long start;
	int n = 0;

	if (sscanf(text, "%ld %llu%n", &pid, &start, &n) != 2 || n == 0 || strcmp(text + n, "\n") ||
	    pid <= 0 || pid > INT32_MAX)
		return false;
	*ret_pid = (pid_t)pid;
	*ret_start = start;
	return true;
}

/* Field 22 of /proc/PID/stat, counted after the last ')' (the name may hold spaces and ')') */
bool cd_idrange_parse_starttime(const char *stat, unsigned long long *ret)
{
	const char *p = strrchr(stat, ')');

	if (!p)
		return false;
	/* fields 3..21 are 19 fields before starttime */
	for (int field = 2; field < 22; field++) {
		p = strchr(p + 1, ' ');
		if (!p)
			return false;
	}
	return sscanf(p + 1, "%llu", ret) == 1;
}

static bool starttime_of(pid_t pid, unsigned long long *ret)
{
	char path[64], buf[1024];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return false;
	buf[n] = '\0';
	return cd_idrange_parse_starttime(buf, ret);
}

/* The slot's last pid 1, if it is still there (its supervisor died before it). *ret_empty: the
 * slot names none (nothing to clear). */
static bool owner_alive(int fd, bool *ret_empty)
{
	char buf[64];
	ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);
	unsigned long long start, now;
	pid_t pid;

	*ret_empty = n == 0;
	if (n <= 0)
		return false;
	buf[n] = '\0';
	if (!cd_idrange_parse_owner(buf, &pid, &start))
		return false;
	return starttime_of(pid, &now) && now == start;
}

/* --- ids the system gives to someone: never a sandbox's --- */

bool cd_idrange_parse_sub(const char *line, unsigned long *ret_first, unsigned long *ret_count)
{
	const char *colon = strchr(line, ':');
	unsigned long first, count;
	int n = 0;

	if (!colon || colon == line ||
	    sscanf(colon + 1, "%lu:%lu%n", &first, &count, &n) != 2 || n == 0 ||
	    (colon[1 + n] && colon[1 + n] != '\n'))
		return false;
	*ret_first = first;
	*ret_count = count;
	return true;
}

bool cd_idrange_parse_id(const char *line, unsigned long *ret)
{
	const char *p = strchr(line, ':');
	char *end;

	p = p ? strchr(p + 1, ':') : NULL; /* name:password:ID:... */
	if (!p || !isdigit((unsigned char)p[1]))
		return false;
	errno = 0;
	*ret = strtoul(p + 1, &end, 10);
	return !errno && *end == ':';
}

/* The ids of the range a file gives away: subordinate ranges (sub), or the id field of an
 * account or group; into taken[] (one bit per slot). A missing file gives none. */
static void mark_taken(const char *path, bool sub, uint8_t *taken)
{
	_cleanup_(cd_fclosep) FILE *f = fopen(path, "re");
	_cleanup_free_ char *line = NULL;
	size_t cap = 0;

	while (f && getline(&line, &cap, f) > 0) {
		unsigned long first, count = 1;

		if (sub ? !cd_idrange_parse_sub(line, &first, &count)
			: !cd_idrange_parse_id(line, &first))
			continue;
		for (unsigned long id = first; id - first < count; id++) {
			if (id >= CORDON_ROOT_HOST_ID + (unsigned long)CORDON_ID_RANGE_SIZE)
				break;
			if (id >= CORDON_ROOT_HOST_ID) {
				unsigned slot = (unsigned)(id - CORDON_ROOT_HOST_ID);

				taken[slot / 8] |= (uint8_t)(1u << (slot % 8));
			}
		}
	}
}

/* Once per process: what /etc/subuid, /etc/subgid, /etc/passwd and /etc/group give of the
 * range to users (a subordinate range of rootless podman's, an account's id): a sandbox on such
 * an id would share it with that user, who could signal and trace it. NULL: out of memory. */
static const uint8_t *taken_slots(void)
{
	static uint8_t *taken;

	if (taken)
		return taken;
	taken = calloc(CORDON_ID_RANGE_SIZE / 8, 1);
	if (!taken)
		return NULL;
	mark_taken("/etc/subuid", true, taken);
	mark_taken("/etc/subgid", true, taken);
	mark_taken("/etc/passwd", false, taken);
	mark_taken("/etc/group", false, taken);
	return taken;
}

/* 1: slot taken (fd kept in *ret), 0: busy, -errno */
static int try_slot(int dir, unsigned slot, struct cd_id_lease *ret, struct cordon_error *err)
{
	_cleanup_close_ int fd = -1;
	char name[16];
	struct stat st;
	bool empty;

	snprintf(name, sizeof(name), "%u", slot);
	fd = openat(dir, name, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return cd_fail_errno(err, errno, "identity", "open %s/%s", CD_ID_DIR, name);
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_uid != 0)
		return cd_fail(err, EPERM, "identity", "%s/%s is not a file of root's", CD_ID_DIR,
			       name);
	if (flock(fd, LOCK_EX | LOCK_NB) < 0)
		return errno == EWOULDBLOCK ? 0
					    : cd_fail_errno(err, errno, "identity", "lock %s/%s",
							    CD_ID_DIR, name);
	if (fstat(fd, &st) < 0 || st.st_nlink == 0)
		return 0; /* removed by its last holder as we opened it: a new file holds the slot */
	if (owner_alive(fd, &empty))
		return 0; /* closing lets go of the lock */
	if (!empty && ftruncate(fd, 0) < 0)
		return cd_fail_errno(err, errno, "identity", "truncate %s/%s", CD_ID_DIR, name);
	*ret = (struct cd_id_lease){ .fd = CD_TAKE_FD(fd), .slot = slot };
	return 1;
}

int cd_idrange_sweep_at(int dir, unsigned slot)
{
	_cleanup_close_ int fd = -1;
	char name[16];
	struct stat st;
	bool empty;

	snprintf(name, sizeof(name), "%u", slot);
	fd = openat(dir, name, O_RDWR | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_uid != geteuid())
		return 0; /* none, or not a slot's: not ours to remove */
	if (flock(fd, LOCK_EX | LOCK_NB) < 0)
		return 0; /* held */
	if (fstat(fd, &st) < 0 || st.st_nlink == 0 || owner_alive(fd, &empty))
		return 0; /* removed meanwhile; or its pid 1 still runs */
	/* the name is this file's: another unlink needs the lock we hold, a new file the name */
	return unlinkat(dir, name, 0) == 0;
}

/* Slot files a supervisor killed before it let go leaves behind (a release removes its own):
 * a page of tmpfs each, up to one a slot. Each acquire looks at SWEEP_PROBES random slots and
 * removes those free for good, so that leftovers are found about SWEEP_PROBES × (leftovers /
 * range) times an acquire and stay few; the probes of missing names cost a failed lookup each. */
#define SWEEP_PROBES 8

static void sweep(int dir, unsigned seed)
{
	for (unsigned i = 0; i < SWEEP_PROBES; i++) {
		seed = seed * 1103515245u + 12345u;
		cd_idrange_sweep_at(dir, (seed >> 8) % CORDON_ID_RANGE_SIZE);
	}
}

int cd_idrange_acquire(struct cd_id_lease *ret, struct cordon_error *err)
{
	const uint8_t *taken = taken_slots();
	_cleanup_close_ int dir = -1;
	unsigned start;

	if (!taken)
		return cd_fail(err, ENOMEM, "identity", "out of memory");
	dir = open_ids_dir(err);
	if (dir < 0)
		return dir;
	if (getrandom(&start, sizeof(start), 0) != sizeof(start))
		start = (unsigned)getpid();
	for (unsigned i = 0; i < CORDON_ID_RANGE_SIZE; i++) {
		unsigned slot = (start + i) % CORDON_ID_RANGE_SIZE;
		int r;

		if (taken[slot / 8] & (1u << (slot % 8)))
			continue; /* a user's (/etc/subuid, /etc/passwd, ...) */
		r = try_slot(dir, slot, ret, err);
		if (r > 0)
			sweep(dir, start); /* ours is locked: never swept */
		if (r != 0)
			return r < 0 ? r : 0;
	}
	return cd_fail(err, EAGAIN, "identity",
		       "every host id from %u to %u is held by a sandbox (%u at once at most) or "
		       "given to a user (/etc/subuid, /etc/subgid, /etc/passwd, /etc/group)",
		       CORDON_ROOT_HOST_ID, CORDON_ROOT_HOST_ID + CORDON_ID_RANGE_SIZE - 1,
		       CORDON_ID_RANGE_SIZE);
}

void cd_idrange_record(struct cd_id_lease *l, pid_t pid1)
{
	unsigned long long start;
	char line[64];
	int n;

	if (l->fd < 0 || !starttime_of(pid1, &start))
		return;
	n = snprintf(line, sizeof(line), "%d %llu\n", (int)pid1, start);
	if (pwrite(l->fd, line, (size_t)n, 0) != n) {
		/* unrecorded: a crash of ours would free the slot while pid 1 may still run; the
		 * lock still holds it while we live */
	}
}

void cd_idrange_release(struct cd_id_lease *l, bool gone)
{
	char path[sizeof(CD_ID_DIR) + 16];

	if (l->fd < 0)
		return;
	/* removed while locked, so that the directory holds only the slots in use (a taker that
	 * opened it before finds it unlinked once it has the lock: try_slot()); one whose pid 1
	 * may still run keeps its record */
	snprintf(path, sizeof(path), "%s/%u", CD_ID_DIR, l->slot);
	if (gone && unlink(path) < 0 && ftruncate(l->fd, 0) < 0) {
		/* left as it is: the next taker finds pid 1 gone and takes it anyway */
	}
	l->fd = cd_safe_close(l->fd);
}
