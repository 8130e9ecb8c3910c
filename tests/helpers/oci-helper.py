#!/usr/bin/env python3
"""oci-helper.py - the engine's side of cordon-runtime, for tests/integration/t-oci-cli.sh.

  reap PIDFILE -- CMD...   be a subreaper (as conmon and containerd's shim are), run CMD, and
                           once it has ended wait for the process the pid file names (adopted
                           by us when its parent exits); print "cmd=RC pid=exit:N|signal:N"
  console SOCK -- CREATE... -- START...
                           listen on the unix socket SOCK (as conmon does for
                           --console-socket), run CREATE, take the pty master it sends
                           (SCM_RIGHTS), run START, write "hello" to the terminal and print
                           what the terminal shows until the process ends (EIO)
  frame SOCK TYPE          connect to a holder's control socket, send one frame of TYPE with
                           no payload; print "answer TYPE" or "closed" (the holder hung up)
  fake-holder DIR          be a holder of the container directory DIR as a user could fake one
                           (its lock, a listener at DIR/sock); print "ready", then, for the
                           first request, "got N fds" (what a caller hands it)
"""
import array
import ctypes
import fcntl
import os
import socket
import struct
import sys


def run(argv):
    return os.posix_spawnp(argv[0], argv, os.environ)


def status_text(st):
    if os.WIFSIGNALED(st):
        return "signal:%d" % os.WTERMSIG(st)
    return "exit:%d" % os.WEXITSTATUS(st)


def reap(pidfile, argv):
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(36, 1, 0, 0, 0) != 0:  # PR_SET_CHILD_SUBREAPER
        print("prctl failed")
        return 2
    child = run(argv)
    seen, cmd_rc, target = {}, None, None
    while True:
        try:
            pid, st = os.waitpid(-1, 0)
        except ChildProcessError:
            break
        seen[pid] = st
        if pid == child:
            cmd_rc = os.waitstatus_to_exitcode(st)
            try:
                target = int(open(pidfile).read())
            except (OSError, ValueError):
                target = -1
        if target is not None and (target in seen or target < 0):
            break
    res = status_text(seen[target]) if target in seen else "never-reaped"
    # what else we adopted (exec's proxies, ...) goes with us: reap the rest
    print("cmd=%s pid=%s" % (cmd_rc, res))
    return 0


def console(path, create, start):
    srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    srv.bind(path)
    srv.listen(1)
    c = run(create)
    srv.settimeout(0.5)
    while True:  # create may fail before it connects: then it has ended
        try:
            conn, _ = srv.accept()
            break
        except socket.timeout:
            pid, st = os.waitpid(c, os.WNOHANG)
            if pid:
                print("create failed before it connected: %s" % os.waitstatus_to_exitcode(st))
                return 1
    conn.settimeout(None)
    msg, fds, _, _ = socket.recv_fds(conn, 4096, 1)
    _, st = os.waitpid(c, 0)
    if os.waitstatus_to_exitcode(st) != 0 or len(fds) != 1:
        print("create failed: %s" % os.waitstatus_to_exitcode(st))
        return 1
    master = fds[0]
    print("name=%s" % msg.decode())
    s = run(start)
    os.waitpid(s, 0)
    os.write(master, b"hello\n")
    out = b""
    while True:
        try:
            b = os.read(master, 4096)
        except OSError:
            break
        if not b:
            break
        out += b
    sys.stdout.write(out.decode(errors="replace").replace("\r", ""))
    return 0


def frame(path, typ):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    s.connect(path)
    try:
        s.send(struct.pack("III", int(typ), 0, 0))
        b = s.recv(4096)
    except (ConnectionResetError, BrokenPipeError):
        b = b""
    print("answer %d" % struct.unpack("I", b[:4])[0] if b else "closed")
    return 0


def fake_holder(d):
    dfd = os.open(d, os.O_RDONLY | os.O_DIRECTORY)
    fcntl.flock(dfd, fcntl.LOCK_EX)
    s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    s.bind(d + "/sock")
    s.listen(1)
    print("ready", flush=True)
    c, _ = s.accept()
    _, anc, _, _ = c.recvmsg(1 << 18, socket.CMSG_SPACE(16 * 4))
    fds = array.array("i")
    for lvl, typ, data in anc:
        if lvl == socket.SOL_SOCKET and typ == socket.SCM_RIGHTS:
            fds.frombytes(data[: len(data) - (len(data) % fds.itemsize)])
    print("got %d fds" % len(fds), flush=True)
    return 0


def main():
    a = sys.argv[1:]
    if a[0] == "reap":
        return reap(a[1], a[3:])
    if a[0] == "console":
        rest = a[3:]
        i = rest.index("--")
        return console(a[1], rest[:i], rest[i + 1:])
    if a[0] == "frame":
        return frame(a[1], a[2])
    if a[0] == "fake-holder":
        return fake_holder(a[1])
    return 2


sys.exit(main())
