#!/usr/bin/env python3
# inotify-hog.py hog DIR [READY] | probe DIR - the per-user inotify budgets from inside a sandbox.
#   hog: make inotify instances until the kernel refuses (EMFILE), then watches on files made in
#        DIR, each file in every instance, until it refuses (ENOSPC); print
#        "hog: N instances (ERR), M watches (ERR)", touch READY if given, and hold them until
#        killed (or 120 s)
#   probe: make one instance and one watch; print "probe: instance ok|ERR, watch ok|ERR"
# Exit 0; 2 on bad use.
import ctypes
import errno
import os
import sys
import time

libc = ctypes.CDLL(None, use_errno=True)
IN_MODIFY = 0x2


def instance():
    fd = libc.inotify_init1(os.O_CLOEXEC)
    return fd, (0 if fd >= 0 else ctypes.get_errno())


def watch(fd, path):
    wd = libc.inotify_add_watch(fd, path.encode(), IN_MODIFY)
    return 0 if wd >= 0 else ctypes.get_errno()


def name(e):
    return errno.errorcode.get(e, str(e)) if e else "ok"


def hog(d, ready):
    fds, err = [], 0
    while len(fds) < 100000:
        fd, err = instance()
        if fd < 0:
            break
        fds.append(fd)
    d = os.path.join(d, f"inotify-hog.{os.getpid()}")
    os.mkdir(d)
    watches, werr, files = 0, 0, []
    while fds and not werr and len(files) < 1000000:
        path = os.path.join(d, f"w{len(files)}")
        open(path, "w").close()
        files.append(path)
        for fd in fds:
            werr = watch(fd, path)
            if werr:
                break
            watches += 1
    print(f"hog: {len(fds)} instances ({name(err)}), {watches} watches ({name(werr)})", flush=True)
    if ready:
        open(ready, "w").close()
    time.sleep(120)


def probe(d):
    fd, err = instance()
    path = os.path.join(d, f"inotify-probe.{os.getpid()}")
    open(path, "w").close()
    werr = watch(fd, path) if fd >= 0 else err
    print(f"probe: instance {name(err)}, watch {name(werr)}", flush=True)


if len(sys.argv) >= 3 and sys.argv[1] == "hog":
    hog(sys.argv[2], sys.argv[3] if len(sys.argv) > 3 else None)
elif len(sys.argv) == 3 and sys.argv[1] == "probe":
    probe(sys.argv[2])
else:
    print("usage: inotify-hog.py hog DIR [READY] | probe DIR", file=sys.stderr)
    sys.exit(2)
