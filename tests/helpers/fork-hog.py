#!/usr/bin/env python3
# fork-hog.py hog READY [MAX] | probe - the per-user process budget (RLIMIT_NPROC's count) from
# inside a sandbox or as the caller.
#   hog: fork children that sleep until the kernel refuses (EAGAIN) or MAX (default 500) are
#        running; print "hog: N processes (ERR)", touch READY and hold them until killed (or
#        120 s)
#   probe: fork one child; print "probe: fork ok|ERR"
# Exit 0; 2 on bad use.
import errno
import os
import signal
import sys
import time


def hog(ready, most):
    kids, why = [], "MAX"
    while len(kids) < most:
        try:
            pid = os.fork()
        except OSError as e:
            why = errno.errorcode.get(e.errno, str(e.errno))
            break
        if pid == 0:
            time.sleep(120)
            os._exit(0)
        kids.append(pid)
    print(f"hog: {len(kids)} processes ({why})", flush=True)
    open(ready, "w").close()
    try:
        time.sleep(120)
    finally:
        for k in kids:
            os.kill(k, signal.SIGKILL)


def probe():
    try:
        pid = os.fork()
    except OSError as e:
        print("probe: fork", errno.errorcode.get(e.errno, str(e.errno)))
        return
    if pid == 0:
        os._exit(0)
    os.waitpid(pid, 0)
    print("probe: fork ok")


if len(sys.argv) >= 3 and sys.argv[1] == "hog":
    hog(sys.argv[2], int(sys.argv[3]) if len(sys.argv) > 3 else 500)
elif len(sys.argv) == 2 and sys.argv[1] == "probe":
    probe()
else:
    sys.exit(2)
