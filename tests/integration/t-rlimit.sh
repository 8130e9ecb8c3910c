#!/usr/bin/env bash
# Resource limits reach the command; core dumps are off by default.
. "$TAP_LIB"

w=$(mkwork)
o=$(mkwork) # cordon's outputs (report, audit, capture): never in the workdir
c() { cordon --workdir "$w" "$@"; }

c -- "$PROBE" rlimit core
is "core dumps off by default" "$out" "0 0"
c --rlimit core=1M -- "$PROBE" rlimit core
is "--rlimit core=1M turns them on" "$out" "1048576 1048576"
c --nofile 64 -- "$PROBE" rlimit nofile
is "--nofile 64" "$out" "64 64"
c --nofile 32 -- python3 -c 'import os; [os.open("/dev/null", 0) for _ in range(40)]'
like "... and opening more files fails" "$rc:$err" "1:*Too many open files*"
c --rlimit nofile=32:64 -- "$PROBE" rlimit nofile
is "--rlimit NAME=SOFT:HARD" "$out" "32 64"
c --rlimit RLIMIT_NOFILE=16 -- "$PROBE" rlimit nofile
is "RLIMIT_ prefix and upper case" "$out" "16 16"
c --fsize 1M -- sh -c 'head -c 2M /dev/zero > big; echo $?'
is "--fsize: writing past the limit fails (SIGXFSZ)" "$(stat -c %s "$w/big")" 1048576
c --rlimit as=unlimited -- "$PROBE" rlimit as
is "unlimited" "$out" "unlimited unlimited"
c --rlimit stack=8M -- "$PROBE" rlimit stack
is "sizes for stack" "$out" "8388608 8388608"
c --cpu-time 1 -- "$PROBE" spin
is "--cpu-time 1: a spinner dies of SIGXCPU (152)" "$rc" 152
c --cpu-time 1500ms -- "$PROBE" rlimit cpu
is "--cpu-time rounds up to seconds; hard = soft + 1" "$out" "2 3"
c --rlimit cpu=2 --report "$o/r.json" -- true
is "the report lists the limits" "$(python3 -c 'import json; print(json.load(open("'"$o/r.json"'"))["applied"]["rlimits"]["cpu"])')" "{'soft': 2, 'hard': 2}"

done_testing
