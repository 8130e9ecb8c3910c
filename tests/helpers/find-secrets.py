#!/usr/bin/env python3
# find-secrets.py MASKED_JSON - run inside a sandbox: look for secrets in everything of every
# process the sandbox can open: /proc/PID/cmdline, environ, and the memory of each readable
# mapping (/proc/PID/maps, then /proc/PID/mem). MASKED_JSON holds {"name": hex} where hex is the
# secret's bytes XOR 0x5a, so that the secrets are in no process's memory but this one's after it
# decodes them (its own argv and environment are searched before that, its memory is not).
# Prints "found NAME in /proc/PID/PART (COMM)" for each find, then one summary line
# "scanned P processes: C cmdline, E environ, M mem (R regions, B bytes)"; exit 0, or 2 on bad use.
import json
import os
import sys


def unmask(h):
    return bytes(b ^ 0x5A for b in bytes.fromhex(h))


def read(path):
    try:
        with open(path, "rb") as f:
            return f.read()
    except OSError:
        return None


def comm(pid):
    c = read(f"/proc/{pid}/comm")
    return c.decode(errors="replace").strip() if c else "?"


def regions(pid):
    maps = read(f"/proc/{pid}/maps")
    if not maps:
        return
    for line in maps.decode(errors="replace").splitlines():
        f = line.split()
        if len(f) < 2 or not f[1].startswith("r"):
            continue
        if len(f) >= 6 and f[5] in ("[vvar]", "[vsyscall]", "[vvar_vclock]"):
            continue
        lo, hi = (int(x, 16) for x in f[0].split("-"))
        yield lo, hi


def scan_mem(pid, secrets, found, stats):
    try:
        mem = open(f"/proc/{pid}/mem", "rb", buffering=0)
    except OSError:
        return False
    with mem:
        for lo, hi in regions(pid):
            try:
                mem.seek(lo)
                data = mem.read(hi - lo)
            except (OSError, ValueError, OverflowError):
                continue
            if not data:
                continue
            stats["regions"] += 1
            stats["bytes"] += len(data)
            for name, s in secrets.items():
                if s in data:
                    found.add((name, pid, "mem"))
    return True


def main():
    if len(sys.argv) != 2:
        print("usage: find-secrets.py MASKED_JSON", file=sys.stderr)
        return 2
    masked = json.load(open(sys.argv[1]))
    me = os.getpid()
    # before the secrets exist here: our own argv and environment, as exec gave them
    own = {"cmdline": read("/proc/self/cmdline") or b"", "environ": read("/proc/self/environ") or b""}
    secrets = {name: unmask(h) for name, h in masked.items()}
    found = set()
    for part, data in own.items():
        for name, s in secrets.items():
            if s in data:
                found.add((name, me, part))
    stats = {"procs": 0, "cmdline": 0, "environ": 0, "mem": 0, "regions": 0, "bytes": 0}
    for d in os.listdir("/proc"):
        if not d.isdigit() or int(d) == me:
            continue
        pid = int(d)
        stats["procs"] += 1
        for part in ("cmdline", "environ"):
            data = read(f"/proc/{pid}/{part}")
            if data is None:
                continue
            stats[part] += 1
            for name, s in secrets.items():
                if s in data:
                    found.add((name, pid, part))
        if scan_mem(pid, secrets, found, stats):
            stats["mem"] += 1
    for name, pid, part in sorted(found, key=lambda x: (x[0], x[1], x[2])):
        print(f"found {name} in /proc/{pid}/{part} ({comm(pid)})")
    print(f"scanned {stats['procs']} processes: {stats['cmdline']} cmdline, {stats['environ']} environ, "
          f"{stats['mem']} mem ({stats['regions']} regions, {stats['bytes']} bytes)")
    return 0


sys.exit(main())
