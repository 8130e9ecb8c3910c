#!/usr/bin/env bash
# config.json's hooks through real cordon-runtime create/start/delete (docs/oci.md "hooks"): every
# kind in the runtime-spec's order (prestart, createRuntime, createContainer, startContainer, the
# process, poststart, poststop), each with its argv, exactly its env and the state JSON on stdin;
# host hooks on the host with no fd of the runtime beyond 0-2, createContainer/startContainer
# inside the container (its hostname, its user namespace); a failing createRuntime hook fails
# create and leaves nothing (no container, no holder, no scratch; poststop ran); a hook past its
# timeout is killed and fails create (start, inside) in about its timeout; a failing poststart hook only warns; a
# failing startContainer hook fails start and stops the container; root's delete of a user's
# container runs none of the user's hooks; bad hooks refused (125, one line).
. "$TAP_LIB"
. "$(dirname "$0")/../oci/lib.sh" # oci_rootfs

RT=$CORDON_RUNTIME
[ -x /bin/busybox ] || { skip "cordon-runtime hooks" "busybox-static is not installed"; done_testing; exit; }

w=$(mkwork)
root=$w/root
b=$w/bundle
out=$w/out
oci_rootfs "$b/rootfs"
mkdir -p "$out"
chmod 777 "$out"
# hook KIND: one line into $OUT: its argv (argv[0] is the script's path, the kernel's #! says so), its HK* env, the state's fields, its fds, its hostname
cat >"$w/hook.sh" <<'EOF'
#!/bin/sh
s=$(cat)
f() { printf '%s' "$s" | sed -n "s/.*\"$1\":\"\{0,1\}\([^\",]*\).*/\1/p"; }
echo "$1 argv=$0|$*| env=$(env | grep -vc '^PWD='):$(env | grep '^HK' | tr '\n' ' ')id=$(f id) status=$(f status) pid=$(f pid) bundle=$(f bundle) fds=$(ls /proc/self/fd | tr '\n' ' ')host=$(hostname) uidmap=$(cat /proc/self/uid_map | tr -s ' ' | tr '\n' ' ')netns=$(readlink /proc/$(f pid)/ns/net 2>/dev/null) " >>"$OUT"
[ -z "${HK_SCRATCH:-}" ] || cat "$HK_SCRATCH" >"$HK_SCRATCH_TO"
[ -z "${HK_FORGE:-}" ] || printf 'x" level=error msg="forged\\\n'
[ -z "${HK_SLEEP:-}" ] || sleep "$HK_SLEEP"
exit "${HK_EXIT:-0}"
EOF
chmod 755 "$w/hook.sh"
cp "$w/hook.sh" "$b/rootfs/hook.sh"
(cd "$b" && "$RT" spec)
own "$b" "$w/hook.sh"

# hooks JSON-OF-HOOKS [bind]: the bundle's config with these hooks (and /out bound read-write)
hooks() {
	python3 - "$b/config.json" "$1" "${2:-}" "$out" <<'EOF'
import json, sys
c = json.load(open(sys.argv[1]))
c["process"]["terminal"] = False
c["process"]["args"] = ["sh", "-c", "echo process >>/out/log"]
c["mounts"] = [m for m in c["mounts"] if m["destination"] != "/out"]
if sys.argv[3]:
    c["mounts"].append({"destination": "/out", "type": "bind", "source": sys.argv[4],
                        "options": ["rbind", "rw"]})
else:
    c["process"]["args"] = ["true"]
c["hooks"] = json.loads(sys.argv[2])
json.dump(c, open(sys.argv[1], "w"))
EOF
}
# hk KIND [inside] [extra-env...]: one hook object running hook.sh
hk() {
	local kind=$1 where=$2 path=$w/hook.sh o=$out/log env
	shift 2
	[ "$where" = inside ] && { path=/hook.sh; o=/out/log; }
	env="\"HK=$kind\",\"OUT=$o\""
	for e in "$@"; do env="$env,\"$e\""; done
	printf '{"path":"%s","args":["hook-%s","%s","a b"],"env":[%s],"timeout":10}' \
		"$path" "$kind" "$kind" "$env"
}
rt() {
	out_=$(as_caller "$RT" --root "$root" --log "$w/rt.log" "$@" 2>"$TEST_TMP/stderr")
	rc=$?
	err=$(cat "$TEST_TMP/stderr")
}
create() {
	as_caller "$RT" --root "$root" --log "$w/rt.log" create -b "$b" "$1" >"$w/$1.out" 2>"$w/$1.err" </dev/null
	rc=$?
	err=$(cat "$w/$1.err")
}
line() { grep "^$1 " "$out/log"; }
stopped() { as_caller "$RT" --root "$root" state "$1" 2>/dev/null | grep -q '"status":"stopped"'; }
cleanup() {
	for id in $(as_caller "$RT" --root "$root" list -q 2>/dev/null); do
		as_caller "$RT" --root "$root" delete --force "$id" >/dev/null 2>&1
	done
}
trap cleanup EXIT

# --- every kind, in order
: >"$out/log"
chmod 666 "$out/log"
hooks "{\"prestart\":[$(hk prestart host)],\"createRuntime\":[$(hk createRuntime host)],
\"createContainer\":[$(hk createContainer inside)],\"startContainer\":[$(hk startContainer inside)],
\"poststart\":[$(hk poststart host)],\"poststop\":[$(hk poststop host)]}" bind
create h1
is "create with every kind of hook succeeds" "$rc:$err" "0:"
holder=$(sed -n 's/.*"pid":\([0-9]*\).*/\1/p' "$root/h1/state.json")
spid=$(as_caller "$RT" --root "$root" state h1 | sed -n 's/.*"pid":\([0-9]*\).*/\1/p')
pid=$(line createRuntime | sed -n 's/.* pid=\([0-9]*\) .*/\1/p')
is "create ran prestart, createRuntime, createContainer (in that order), no more" \
	"$(cut -d' ' -f1 "$out/log" | tr '\n' ' ')" "prestart createRuntime createContainer "
rt start h1
is "start succeeds" "$rc:$err" "0:"
wait_until 5 stopped h1
rt delete h1
is "delete succeeds" "$rc:$err" "0:"
is "the order: prestart createRuntime createContainer startContainer process poststart poststop" \
	"$(cut -d' ' -f1 "$out/log" | tr '\n' ' ')" \
	"prestart createRuntime createContainer startContainer process poststart poststop "
like "a host hook gets its args as argv" "$(line createRuntime)" "argv=$w/hook.sh|createRuntime a b|"
like "... and exactly its env (HK, OUT: 2 variables; sh adds PWD)" "$(line createRuntime)" "env=2:HK=createRuntime "
like "... the state on stdin: id, created, a pid, the bundle" "$(line createRuntime)" \
	"id=h1 status=created pid=$pid bundle=$b "
is "... the pid is the container's pid 1 (not the holder's $holder): $pid" \
	"$([ -n "$pid" ] && [ "$pid" != "$holder" ] && [ "$pid" != 0 ] && echo y)" y
is "... the pid state names" "$pid" "$spid"
netns=$(line createRuntime | sed -n 's/.* netns=\([^ ]*\) .*/\1/p')
is "... a host hook entering its namespaces (/proc/PID/ns/net) reaches the container's ($netns), not the runtime's" \
	"$([ -n "$netns" ] && [ "$netns" != "$(as_caller readlink /proc/self/ns/net)" ] && echo y)" y
like "... no fd of the runtime: 0-2 (3 is ls's own)" "$(line createRuntime)" "fds=0 1 2 3 host"
like "... on the host (its hostname)" "$(line prestart)" "host=$(hostname) "
like_glob "createContainer runs inside: the container's hostname, a user namespace" \
	"$(line createContainer)" "*host=cordon uidmap= *0 [0-9]* [0-9]* "
unlike "... not the host's whole id range" "$(line createContainer)" "uidmap=0 0 4294967295"
like "... its argv[0] is its path (resolved in the container's root), then its args" \
	"$(line createContainer)" "argv=/hook.sh|createContainer a b|"
like "... the state on stdin, and no fd beyond 0-2" "$(line createContainer)" \
	"id=h1 status=created pid=$pid bundle=$b fds=0 1 2 3 host"
like "startContainer runs inside, the state created" "$(line startContainer)" \
	"status=created pid=$pid bundle=$b fds=0 1 2 3 host=cordon"
like_glob "poststart: on the host, the state running" "$(line poststart)" \
	"*status=running pid=$pid *host=$(hostname) *"
like "poststop: the state stopped, pid 0" "$(line poststop)" "id=h1 status=stopped pid=0 bundle=$b "
rt state h1
is "the container is gone" "$rc" 1

# --- a failing createRuntime hook: create fails, nothing is left, poststop ran
: >"$out/log"
hooks "{\"prestart\":[$(hk prestart host HK_SCRATCH="$root/h2/scratch" HK_SCRATCH_TO="$w/h2.scratch")],
\"createRuntime\":[$(hk createRuntime host HK_EXIT=3)],\"poststop\":[$(hk poststop host)]}"
create h2
is "a failing createRuntime hook: create fails (1), one line naming it" "$rc:$err" \
	"1:cordon-runtime: hooks.createRuntime[0]: $w/hook.sh: exited with status 3"
pid=$(line prestart | sed -n 's/.* pid=\([0-9]*\) .*/\1/p')
rt state h2
is "... the container does not exist" "$rc:$err" "1:cordon-runtime: container: h2: container does not exist"
ok_gone=yes
[ -n "$pid" ] && kill -0 "$pid" 2>/dev/null && ok_gone=no
is "... its processes are gone (pid 1 was $pid)" "$ok_gone" yes
sp=$(cat "$w/h2.scratch" 2>/dev/null)
is "... its scratch ($sp) is removed" "${sp:+named}:$([ -e "$sp" ] && echo there)" "named:"
is "... the poststop hooks ran (step 13), the state stopped" \
	"$(cut -d' ' -f1 "$out/log" | tr '\n' ' '):$(line poststop | sed -n 's/.*status=\([a-z]*\) .*/\1/p')" \
	"prestart createRuntime poststop :stopped"

# --- a hook past its timeout is killed and fails create in about its timeout
hooks "{\"createRuntime\":[{\"path\":\"/bin/sh\",\"args\":[\"sh\",\"-c\",\"sleep 37; echo late >$w/late\"],\"timeout\":1}]}"
t0=$(date +%s%N)
create h3
t1=$(( ($(date +%s%N) - t0) / 1000000 ))
is "a hook past its timeout fails create, one line" "$rc:$err" \
	"1:cordon-runtime: hooks.createRuntime[0]: /bin/sh: timed out after 1s: killed"
between "... within about its timeout (ms)" "$t1" 900 4000
diag "create with a 1s-timeout hook that sleeps 37s failed after $t1 ms"
sleep 0.3
is "... the hook's process group is killed (no sleep 37 left, nothing written)" \
	"$(pgrep -f "sleep 37; echo late >$w/late" | wc -l):$([ -e "$w/late" ] && echo late)" "0:"
rt state h3
is "... and the container does not exist" "$rc" 1

# --- a failing poststart hook only warns
: >"$out/log"
hooks "{\"poststart\":[$(hk poststart host HK_EXIT=4)]}" bind
create h4
rt start h4
is "a failing poststart hook: start succeeds" "$rc:$err" "0:"
wait_until 5 stopped h4
like "... the process ran" "$(cat "$out/log")" "process"
like "... a warning in the log" "$(cat "$w/rt.log")" "hooks.poststart[0]: $w/hook.sh: exited with status 4, ignoring"
rt delete h4

# --- a failing startContainer hook: start fails, the container stops, its process never runs
: >"$out/log"
hooks "{\"startContainer\":[$(hk startContainer inside HK_EXIT=5 HK_FORGE=1)]}" bind
create h5
rt start h5
is "a failing startContainer hook: start fails, one line, its last output made harmless" "$rc:$err" \
	"1:cordon-runtime: hooks.startContainer[0]: /hook.sh: exited with status 5: x? level=error msg=?forged?"
like "... its output in the log, no quote of its own" "$(cat "$w/rt.log")" \
	'level=info msg="hooks.startContainer[0]: x? level=error msg=?forged?"' 
wait_until 5 stopped h5
rt state h5
like "... the container is stopped" "$out_" '"status":"stopped"'
unlike "... its process never ran" "$(cat "$out/log")" "process"
rt delete h5

# --- an inside hook past its timeout: killed (its process group, in the container), start fails
# (the marker: this run's own, the other mode's run may be beside it)
hooks "{\"startContainer\":[{\"path\":\"/bin/sh\",\"args\":[\"sh\",\"-c\",\"sleep 31; echo late-$$ >>/out/log\"],\"timeout\":1}]}" bind
: >"$out/log"
create h11
t0=$(date +%s%N)
rt start h11
t1=$(( ($(date +%s%N) - t0) / 1000000 ))
is "an inside hook past its timeout fails start, one line" "$rc:$err" \
	"1:cordon-runtime: hooks.startContainer[0]: /bin/sh: timed out after 1s: killed"
between "... within about its timeout (ms)" "$t1" 900 4000
sleep 0.3
is "... nothing of it is left (no sleep 31, nothing written)" \
	"$(pgrep -f "sleep 31; echo late-$$ " | wc -l):$(cat "$out/log")" "0:"
rt delete --force h11

# --- createContainer's path must be in the image
hooks "{\"createContainer\":[{\"path\":\"/not/in/image\"}]}" bind
create h6
is "a createContainer hook not in the image: create fails naming it" "$rc:$err" \
	"1:cordon-runtime: hooks.createContainer[0]: /not/in/image: inside the container: /not/in/image: No such file or directory"
rt state h6
is "... and the container does not exist" "$rc" 1

# --- root's delete of a user's container runs none of the user's hooks
if is_user_mode && [ "$(id -u)" = 0 ]; then
	: >"$out/log"
	hooks "{\"poststop\":[$(hk poststop host)]}"
	create h7
	"$RT" --root "$root" --log "$w/root.log" delete --force h7
	is "root's delete of a user's container succeeds" "$?" 0
	is "... and runs none of the user's poststop hooks" "$(cat "$out/log")" ""
	like "... a warning says so" "$(cat "$w/root.log")" "hooks.json: not this user's"
else
	skip "root's delete of a user's container" "needs root running the suite as $TEST_USER"
fi

# --- refusals: 125, one line, nothing made
hooks '{"prestart":[{"path":"hook.sh"}]}'
create h8
is "a relative hook path is refused (125, one line)" "$rc:$err" \
	"125:cordon-runtime: config: hooks.prestart[0].path: \"hook.sh\": not an absolute path"
hooks "{\"poststart\":[$(hk poststart host),{\"path\":\"/bin/true\",\"timeout\":0}]}"
create h9
is "a timeout of 0 is refused (125, one line)" "$rc:$err" \
	"125:cordon-runtime: config: hooks.poststart[1].timeout: must be a positive integer"
hooks '{"poststop":[{"path":"/bin/true","env":["NOEQUALS"]}]}'
create h10
is "an env entry without = is refused" "$rc:$err" \
	"125:cordon-runtime: config: hooks.poststop[0].env[0]: not KEY=VALUE"
is "... and nothing was made (every other container deleted)" "$(as_caller "$RT" --root "$root" list -q | tr '\n' ' ')" ""

done_testing
