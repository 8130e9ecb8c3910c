#!/usr/bin/env bash
# tests/run: alone (it edits /etc/subuid and fills a tenant id's kernel limits)
# Tenants apart (README "Identity"): the kernel counts much per user (inotify instances and
# watches, epoll watches, processes, message queue bytes), and charges what a user namespace
# holds to its owner. As root, each sandbox runs as a host id of its own from CORDON_ROOT_HOST_ID's
# range, in a user namespace that id owns: one sandbox that takes every inotify instance and watch
# it can leaves another sandbox, and root, theirs; two sandboxes at once never share an id; a
# cordon killed with SIGKILL frees its id once its sandbox is gone. Unprivileged, sandboxes run as
# the caller and share its budgets, unless --user-share N gives each 1/N.
. "$TAP_LIB"

command -v python3 >/dev/null || { skip "tenants" "no python3"; done_testing; exit; }
H=$TEST_TMP/helpers
mkdir -p "$H" && cp "$(dirname "$0")/../helpers/inotify-hog.py" "$(dirname "$0")/../helpers/fork-hog.py" "$H/" &&
	chmod -R a+rX "$H"
w=$(mkwork)
max_instances=$(cat /proc/sys/fs/inotify/max_user_instances)

hog_pid=
# start_hog [OPTS...]: a sandbox that takes every inotify instance and watch it can, and holds
# them; its line in $w/hog.out once it holds them
start_hog() {
	rm -f "$w/ready" "$w/hog.out"
	(cd "$w" && exec_as_caller "$CORDON" -q --ro-bind "$H" "$@" -- \
		sh -c "python3 $H/inotify-hog.py hog /tmp $w/ready >$w/hog.out") &
	hog_pid=$!
	wait_until 120 test -e "$w/ready"
}
stop_hog() { [ -n "$hog_pid" ] && kill "$hog_pid" 2>/dev/null; wait "$hog_pid" 2>/dev/null; hog_pid=; }
trap stop_hog EXIT
probe() { (cd "$w" && as_caller "$CORDON" -q --ro-bind "$H" "$@" -- python3 "$H/inotify-hog.py" probe /tmp 2>&1); }
caller_probe() { (cd "$TEST_TMP" && as_caller python3 "$H/inotify-hog.py" probe "$w" 2>&1); }

if ! is_user_mode; then
	start_hog
	like_glob "root: a sandbox takes every inotify instance of its host id" "$(cat "$w/hog.out")" \
		"hog: $(glob_quote "$max_instances") instances (EMFILE), * watches (ENOSPC)"
	is "root: another sandbox still makes an inotify instance and a watch" "$(probe)" \
		"probe: instance ok, watch ok"
	is "root: so does root itself" "$(caller_probe)" "probe: instance ok, watch ok"
	uid=$(ps -o uid= -C cordon-init | awk -v lo=2000000000 '$1 >= lo && $1 < lo + 65536' |
		while read -r u; do pgrep -u "$u" -f inotify-hog >/dev/null && echo "$u"; done | head -1)
	between "root: the sandbox runs as an id of the range" "${uid:-0}" 2000000000 2000065535
	slot=$(( ${uid:-2000000000} - 2000000000 ))
	pid1=$(pgrep -u "$uid" -x cordon-init | head -1)
	owner=$(python3 -c 'import fcntl, os, struct, sys
fd = os.open(f"/proc/{sys.argv[1]}/ns/user", os.O_RDONLY)
print(struct.unpack("I", fcntl.ioctl(fd, 0xb704, b"\0" * 4))[0])' "${pid1:-1}" 2>&1)
	is "root: its user namespace is owned by that id (NS_GET_OWNER_UID)" "$owner" "$uid"
	read -r rec_pid rec_start <"/run/cordon/ids/$slot"
	is "root: its slot names its pid 1" "$rec_pid" "$pid1"
	# a supervisor killed with SIGKILL: its sandbox goes, then the slot is free
	sup=$(pgrep -P "$hog_pid" -x cordon || echo "$hog_pid")
	kill -KILL "$sup"
	wait_until 30 sh -c "! pgrep -u $uid >/dev/null"
	wait "$hog_pid" 2>/dev/null; hog_pid=
	if flock -n "/run/cordon/ids/$slot" true; then pass "root: after a kill -9, the id is free once its sandbox is gone"
	else fail "root: after a kill -9, the id is free once its sandbox is gone"; fi
	# eight at once: eight ids
	for i in 1 2 3 4 5 6 7 8; do
		(cd "$w" && "$CORDON" -q -- sh -c "cut -f2 /proc/self/uid_map | tr -d ' ' >$w/id.$i; sleep 2") &
	done
	wait
	ids=$(cat "$w"/id.* | tr -s ' \t' '\n\n' | grep -c .)
	distinct=$(cat "$w"/id.* | tr -s ' \t' '\n\n' | grep . | sort -u | wc -l)
	is "root: eight sandboxes at once run as eight ids" "$ids $distinct" "8 8"
	# ids the system gives a user (a subordinate range, an account) are never a sandbox's: with
	# all but the last of the range given to the test user in /etc/subuid, the sandbox gets that
	restore_subuid() {
		if [ -e "$TEST_TMP/subuid.saved" ]; then cp "$TEST_TMP/subuid.saved" /etc/subuid
		else rm -f /etc/subuid; fi
	}
	[ -e /etc/subuid ] && cp -p /etc/subuid "$TEST_TMP/subuid.saved"
	trap 'restore_subuid; stop_hog' EXIT
	echo "$TEST_USER:2000000000:65535" >>/etc/subuid
	got=$(cd "$w" && "$CORDON" -q -- awk '{print $2}' /proc/self/uid_map)
	# while a sandbox holds that one, another is refused: never given the same id
	# (the slot is free once the last sandbox's pid 1 is gone: its record names it)
	wait_until 20 sh -c '! kill -0 "$(cut -d" " -f1 /run/cordon/ids/65535 2>/dev/null)" 2>/dev/null'
	rm -f "$w/held"
	(cd "$w" && exec "$CORDON" -q -- sh -c "awk '{print \$2}' /proc/self/uid_map >$w/held.tmp && mv $w/held.tmp $w/held; exec sleep 60") &
	holder=$!
	wait_until 20 test -e "$w/held"
	second=$(cd "$w" && "$CORDON" -q -- awk '{print $2}' /proc/self/uid_map 2>&1)
	rc=$?
	kill "$holder" && wait "$holder" 2>/dev/null
	restore_subuid
	is "root: ids /etc/subuid gives a user are skipped: the one left is taken" "$got" 2000065535
	like_glob "root: ... and while a sandbox holds it, another is refused (not given the same id)" \
		"$(cat "$w/held" 2>/dev/null) $rc $second" "2000065535 125 cordon: identity: every host id from 2000000000 to 2000065535 is held by a sandbox*"
	# the owner of the workdir keeps their files, whoever the sandbox is on the host
	u=$(mkwork) && chown "$TEST_USER:" "$u"
	out=$(cd "$u" && "$CORDON" -q -- sh -c 'id -u; touch mine; cut -f2 /proc/self/uid_map')
	like_glob "root: a user's workdir: inside, the user's uid" "$out" "$(glob_quote "$(id -u "$TEST_USER")")*"
	is "root: a user's workdir: what the sandbox writes is the user's" "$(stat -c %U "$u/mine")" "$TEST_USER"
	unlike_glob "root: ... though the sandbox is not that user on the host" "$out" "*
$(glob_quote "$(id -u "$TEST_USER")")"
else
	start_hog
	like_glob "unprivileged: a sandbox takes every inotify instance of the caller's" "$(cat "$w/hog.out")" \
		"hog: * instances (EMFILE)*"
	is "unprivileged, without --user-share: another sandbox gets none (README Identity: shared)" \
		"$(probe)" "probe: instance EMFILE, watch EMFILE"
	stop_hog
	start_hog --user-share 4
	like_glob "unprivileged, --user-share 4: the sandbox takes its quarter" "$(cat "$w/hog.out")" \
		"hog: $((max_instances / 4)) instances (EMFILE), * watches (ENOSPC)"
	is "unprivileged, --user-share 4: another sandbox still makes an instance and a watch" \
		"$(probe --user-share 4)" "probe: instance ok, watch ok"
	is "unprivileged, --user-share 4: so does the caller" "$(caller_probe)" \
		"probe: instance ok, watch ok"
	stop_hog
	# processes (RLIMIT_NPROC's count, per uid up the namespaces' chain): a caller of its own, a
	# uid nothing else runs as (the test user's count moves with whatever else it runs), limited
	# to 80 processes; a sandbox of --user-share 4 forks until refused and holds them
	nuid=$(python3 -c 'import os, pwd
def owner(p):
    try: return os.stat(f"/proc/{p}").st_uid
    except OSError: return None
busy = {owner(p) for p in os.listdir("/proc") if p.isdigit()}
def free(u):
    try: pwd.getpwuid(u); return False
    except KeyError: return u not in busy
print(next(u for u in range(61000, 62000) if free(u)))')
	nd=$(mktemp -d /tmp/cordon-nproc.XXXXXX) && mkdir "$nd/home" "$nd/w" && chown -R "$nuid:$nuid" "$nd" &&
		chmod 755 "$nd"
	as_nuid() { setpriv --reuid="$nuid" --regid="$nuid" --clear-groups env HOME="$nd/home" \
		prlimit --nproc=80:80 "$@"; }
	(cd "$nd/w" && as_nuid "$CORDON" -q --ro-bind "$H" --user-share 4 -- \
		python3 "$H/fork-hog.py" hog "$nd/w/ready" 200 >"$nd/fork.out") &
	hog_pid=$!
	wait_until 120 test -e "$nd/w/ready"
	n=$(sed -n 's/^hog: \([0-9]*\) processes.*/\1/p' "$nd/fork.out")
	between "unprivileged, --user-share 4: the sandbox forks at most its quarter of the caller's processes" \
		"${n:-999}" 1 20
	is "unprivileged, --user-share 4: the caller still forks while it holds them" \
		"$(cd "$nd" && as_nuid python3 "$H/fork-hog.py" probe 2>&1)" "probe: fork ok"
	stop_hog
	pkill -KILL -u "$nuid" 2>/dev/null
	rm -rf "$nd"
fi
rejects "--user-share 0 is refused" 'cordon: --user-share: "0" is not a number of sandboxes in 1-100000' -- --user-share 0 -- true
done_testing
