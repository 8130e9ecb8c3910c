#!/usr/bin/env bash
# tests/run: alone (munged, slurmctld and slurmd: one engine suite at a time)
# Slurm runs its jobs' containers through cordon's OCI runtime: this suite starts munged,
# slurmctld and slurmd on this one machine (loopback, ports found free, everything under
# $TEST_TMP), writes oci.conf in the RunTimeRun mode (Slurm 22.05's create/start mode hangs: it
# reads create's output to its end, which the container holds), and submits `srun --container`
# jobs as $TEST_USER: the output and exit status come back, the job runs as the user (no host
# root), and scancel ends a sleeping job with nothing of its container left. Root only (the
# daemons); OCI_RUNTIME=runc runs it against runc (the harness's own proof).
. "$TAP_LIB"
shopt -s extglob

if [ "$(id -u)" != 0 ] || [ "${CORDON_AS:-root}" = user ]; then
	skip "slurm: srun --container through the OCI runtime" "needs root (munged, slurmctld, slurmd)"
	done_testing
	exit
fi
for tool in munged munge unmunge slurmctld slurmd srun sinfo squeue scancel; do
	if ! command -v "$tool" >/dev/null; then
		skip "slurm: srun --container through the OCI runtime" "no $tool (packages munge, slurmctld, slurmd, slurm-client)"
		done_testing
		exit
	fi
done
RT=${OCI_RUNTIME:-${CORDON_RUNTIME:-$(dirname "$CORDON")/cordon-runtime}}
RT=$(command -v "$RT") || RT=
if [ -z "$RT" ]; then
	skip "slurm: srun --container through the OCI runtime" "cordon-runtime is not built"
	done_testing
	exit
fi
if [ ! -r /etc/munge/munge.key ]; then
	skip "slurm: srun --container through the OCI runtime" "no /etc/munge/munge.key (made by the munge package)"
	done_testing
	exit
fi
diag "runtime: $RT"

S=$TEST_TMP/slurm M=$TEST_TMP/munge
mkdir -p "$S"/state "$S"/spool "$S"/log "$M"
chown munge: "$M"
chmod 755 "$M" # munged refuses a socket directory that all cannot search
export SLURM_CONF=$S/slurm.conf

pids=()
stop_all() {
	local p
	# the jobs first (their containers), then the daemons, the newest first
	squeue -h -o %i 2>/dev/null | xargs -r scancel 2>/dev/null
	for ((i = ${#pids[@]} - 1; i >= 0; i--)); do
		p=${pids[i]}
		kill "$p" 2>/dev/null && wait "$p" 2>/dev/null
	done
	# what a job's container left (a runtime that failed us): its process, by its pid
	[ -n "${pid:-}" ] && [ "$(readlink "/proc/$pid/ns/pid" 2>/dev/null)" = "${pidns:-none}" ] &&
		kill -KILL "$pid" 2>/dev/null
	return 0
}
trap stop_all EXIT

# two free TCP ports, neither Slurm's defaults (6817, 6818)
free_port() {
	local p
	for ((p = $1; p < $1 + 200; p++)); do
		ss -Htln "sport = :$p" | grep . >/dev/null || { echo "$p"; return; }
	done
}
ctld_port=$(free_port $((16817 + RANDOM % 2000)))
d_port=$(free_port $((ctld_port + 1)))
host=$(hostname -s)

cat >"$SLURM_CONF" <<EOF
ClusterName=cordontest
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$ctld_port
SlurmdPort=$d_port
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$M/munge.sock
CredType=cred/munge
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SchedulerType=sched/backfill
StateSaveLocation=$S/state
SlurmdSpoolDir=$S/spool
SlurmctldPidFile=$S/slurmctld.pid
SlurmdPidFile=$S/slurmd.pid
SlurmctldLogFile=$S/log/slurmctld.log
SlurmdLogFile=$S/log/slurmd.log
SlurmdDebug=debug
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
JobAcctGatherType=jobacct_gather/none
MpiDefault=none
ReturnToService=2
KillWait=5
NodeName=$host NodeAddr=127.0.0.1 CPUs=1 State=UNKNOWN
PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP
EOF

# oci.conf, beside slurm.conf (slurmd reads it from there): docs/oci/slurm-oci.conf's lines,
# with this test's runtime and state root. %u: the job's user (each user its own state root).
ociroot=$TEST_TMP/ocistate
ocid="$RT --rootless=true --root=$ociroot-%u"
cat >"$S/oci.conf" <<EOF
RunTimeQuery="$ocid state %n.%u.%j.%s.%t"
RunTimeKill="$ocid kill -a %n.%u.%j.%s.%t"
RunTimeDelete="$ocid delete --force %n.%u.%j.%s.%t"
RunTimeRun="$ocid run %n.%u.%j.%s.%t -b %b"
EOF
# the job's user makes its state root (the runtime runs as the user: $TEST_TMP is root's)
install -d -m 700 -o "$TEST_USER" -g "$TEST_USER" "$ociroot-$TEST_USER"

# --- munged, then slurmctld and slurmd, each in the foreground (their pid is ours to stop)
setpriv --reuid=munge --regid=munge --init-groups /usr/sbin/munged -F --socket="$M/munge.sock" \
	--pid-file="$M/munged.pid" --log-file="$M/munged.log" --seed-file="$M/seed" 2>"$M/munged.err" &
pids+=($!)
munge_ok() { munge -S "$M/munge.sock" -n 2>/dev/null | unmunge -S "$M/munge.sock" >/dev/null 2>&1; }
if ! wait_until 60 munge_ok; then
	fail "munged answers (munge -n | unmunge)"
	diag "$(tail -5 "$M/munged.log" 2>/dev/null)"
	done_testing
	exit
fi
pass "munged answers (munge -n | unmunge)"

slurmctld -D -f "$SLURM_CONF" >"$S/log/slurmctld.out" 2>&1 &
pids+=($!)
slurmd -D -f "$SLURM_CONF" >"$S/log/slurmd.out" 2>&1 &
pids+=($!)
idle() { [ "$(sinfo -h -o %t 2>/dev/null)" = idle ]; }
if ! wait_until 120 idle; then
	fail "slurmctld and slurmd up: sinfo shows the node idle"
	diag "sinfo: $(sinfo -h 2>&1)"
	diag "$(tail -5 "$S/log/slurmctld.log" "$S/log/slurmd.log" 2>/dev/null)"
	done_testing
	exit
fi
pass "slurmctld and slurmd up: sinfo shows the node idle"

# --- the bundle, the user's: a busybox rootfs, config.json by `RUNTIME spec --rootless` run as
# the user (it maps the user's own id); copied under $TEST_TMP, owned by the user
B=$TEST_TMP/bundle
mkdir -p "$B/rootfs/bin" "$B/rootfs/proc" "$B/rootfs/sys" "$B/rootfs/dev" "$B/rootfs/tmp" "$B/rootfs/etc"
cp /bin/busybox "$B/rootfs/bin/busybox"
for a in sh echo id cat sleep awk true; do ln -s busybox "$B/rootfs/bin/$a"; done
chown -R "$TEST_USER:" "$B"
as_user() {
	setpriv --reuid="$TEST_USER" --regid="$TEST_USER" --clear-groups \
		env HOME=/nonexistent USER="$TEST_USER" LOGNAME="$TEST_USER" SLURM_CONF="$SLURM_CONF" "$@"
}
(cd "$B" && as_user "$RT" spec --rootless) 2>"$TEST_TMP/spec.err"
if [ -s "$B/config.json" ]; then
	pass "the user makes the bundle's config.json: $(basename "$RT") spec --rootless"
else
	fail "the user makes the bundle's config.json: $(basename "$RT") spec --rootless"
	diag "$(cat "$TEST_TMP/spec.err")"
	# the rest of the suite, with a state root given (spec should need none)
	(cd "$B" && as_user "$RT" --root="$ociroot-$TEST_USER" spec --rootless)
fi
uid=$(id -u "$TEST_USER")

# --- a job's output and exit status come back
out=$(cd "$TEST_TMP" && as_user timeout 300 srun --container "$B" sh -c 'echo out; exit 7' 2>"$TEST_TMP/srun.err")
rc=$?
err=$(cat "$TEST_TMP/srun.err")
is "srun --container BUNDLE sh -c 'echo out; exit 7': the output comes back" "$out" "out"
is "... and the exit status (7)" "$rc" 7
if [ "$rc" != 7 ]; then
	diag "$(tail -15 "$S/log/slurmd.log")"
fi

# --- who the command is: the user's own id on the host, never host root
out=$(cd "$TEST_TMP" && as_user timeout 300 srun --container "$B" \
	sh -c 'echo "$(id -u) $(awk "{print \$1, \$2, \$3}" /proc/self/uid_map | tr "\n" ";")"' 2>"$TEST_TMP/srun.err")
err=$(cat "$TEST_TMP/srun.err")
inside=${out%% *} map=${out#* }
diag "inside: uid $inside, uid_map $map"
like_glob "the command runs in a user namespace mapping only the job's user ($TEST_USER, uid $uid)" \
	"$map" "+([0-9]) $uid 1;"
if [[ $inside == +([0-9]) ]]; then
	is "... and its uid inside is that mapped id" "$inside" "${map%% *}"
else
	fail "... and its uid inside is that mapped id"
	diag "no uid came back: $out"
fi

# --- scancel ends a sleeping job, and nothing of its container remains
(cd "$TEST_TMP" && exec setpriv --reuid="$TEST_USER" --regid="$TEST_USER" --clear-groups \
	env HOME=/nonexistent SLURM_CONF="$SLURM_CONF" srun --container "$B" \
	sleep 3061 >"$TEST_TMP/sleep.out" 2>&1) &
srun_pid=$!
# the container's process on the host: the user's `sleep 3061`
sleeper() { pgrep -u "$TEST_USER" -f '^sleep 3061$' | head -1; }
running() { [ -n "$(sleeper)" ]; }
# (a zombie until waited for: its state, not kill -0)
srun_ended() { [[ $(awk '{print $3}' "/proc/$srun_pid/stat" 2>/dev/null) == ?(Z) ]]; }
running_or_ended() { running || srun_ended; }
wait_until 300 running_or_ended
if running; then
	pid=$(sleeper)
	diag "the container's sleep: host pid $pid"
	pidns=$(readlink "/proc/$pid/ns/pid")
	job=$(squeue -h -o %i -u "$TEST_USER")
	id="$host.$TEST_USER.$job.0.0"
	status=$(awk '/^Uid:/ {print $2, $3, $4, $5}' "/proc/$pid/status")
	is "the sleeping job's process runs as the user on the host (Uid real, effective, saved, fs)" \
		"$status" "$uid $uid $uid $uid"
	isnt "... in a pid namespace of its own" "$pidns" "$(readlink /proc/self/ns/pid)"
	st=$("$RT" --root="$ociroot-$TEST_USER" state "$id" 2>/dev/null)
	like "... and the runtime knows the container $id (state, as root on the user's --root)" \
		"$st" '"status"'
	# cordon-runtime names the container's scratch directory (its workdir) there; runc has none
	scratch=$(cat "$ociroot-$TEST_USER/$id/scratch" 2>/dev/null)
	scancel "$job"
	wait_until 300 srun_ended || kill -KILL "$srun_pid"
	wait "$srun_pid"
	diag "srun after scancel: rc $?; $(tr '\n' ' ' <"$TEST_TMP/sleep.out")"
	# (srun's status after a cancel is Slurm's: 0 when it gave up waiting for the step)
	queued() { [ -n "$(squeue -h -o %i -j "$job" 2>/dev/null)" ]; }
	gone() { ! queued && [ ! -e "/proc/$pid" ]; }
	if wait_until 300 gone; then
		pass "scancel ends the job: it leaves the queue and its sleep ends"
	else
		fail "scancel ends the job: it leaves the queue and its sleep ends"
		diag "squeue: $(squeue -h -j "$job" 2>&1); /proc/$pid: $(tr '\0' ' ' <"/proc/$pid/cmdline" 2>&1)"
	fi
	left=
	for p in /proc/[0-9]*; do
		[ "$(readlink "$p/ns/pid" 2>/dev/null)" = "$pidns" ] && left+=" ${p#/proc/}"
	done
	is "... no process of the container is left on the host (none in its pid namespace)" "$left" ""
	st=$("$RT" --root="$ociroot-$TEST_USER" state "$id" 2>/dev/null)
	src=$?
	if [ "$src" != 0 ] || [[ $st == *'"status": "stopped"'* ]] || [[ $st == *'"status":"stopped"'* ]]; then
		pass "... and the container is gone (state fails or says stopped)"
	else
		fail "... and the container is gone (state fails or says stopped)"
		diag "state: $st"
	fi
	if [ -n "$scratch" ]; then
		is "... and its scratch directory is removed ($scratch)" "$(ls -d "$scratch" 2>/dev/null)" ""
	fi
else
	fail "srun --container BUNDLE sleep: the container's process starts"
	diag "$(cat "$TEST_TMP/sleep.out")"
	diag "$(tail -15 "$S/log/slurmd.log")"
fi

# every job has ended: the runtime keeps nothing of them (run's own containers, the cancelled one)
is "the user's state root is empty once every job has ended" \
	"$(find "$ociroot-$TEST_USER" -mindepth 1 -maxdepth 1 -printf '%P ' 2>/dev/null)" ""

done_testing
