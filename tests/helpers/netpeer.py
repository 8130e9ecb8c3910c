#!/usr/bin/env python3
"""netpeer.py - both ends of the egress proxy's tests (tests/integration/t-proxy.sh).

Servers (on the host; each prints its port once it listens, then serves until killed):
  http ADDR DIR             an HTTP server for the files in DIR (ADDR ::1:0 for IPv6)
  source ADDR SIZE          each connection gets SIZE bytes of a fixed stream, then EOF
  sink ADDR LOG             each connection is read to EOF; "BYTES SHA256" appended to LOG
Clients (in the sandbox; the proxy is $HTTPS_PROXY):
  get HOST PORT             CONNECT, read to EOF: prints "BYTES SHA256"
  put HOST PORT SIZE        CONNECT, send SIZE bytes of the stream, close: prints "BYTES SHA256"
  raw HEX                   send these bytes, print the answer's first line ("EOF" if none)
  stall HEAD                send an unfinished head, wait: print the answer's first line
  expect SIZE               print "BYTES SHA256" of SIZE bytes of the stream (no network)
For bench/proxy (add "direct" to skip the proxy):
  drain HOST PORT [direct]  read to EOF as fast as possible: prints "BYTES SECONDS"
  conns HOST PORT N [direct] N connections one after another, each read to EOF: "N SECONDS"
"""
import hashlib
import os
import random
import socket
import socketserver
import sys
import threading
import time
import http.server
import urllib.parse

BLOCK = random.Random(42).randbytes(1 << 20)


def stream(size):
    while size > 0:
        chunk = BLOCK[: min(size, len(BLOCK))]
        size -= len(chunk)
        yield chunk


def parse_addr(s):
    host, port = s.rsplit(":", 1)
    return host, int(port)


class Server(socketserver.ThreadingTCPServer):
    allow_reuse_address = True
    daemon_threads = True


def serve(addr, handler):
    srv = Server(parse_addr(addr), handler)
    print(srv.server_address[1], flush=True)
    srv.serve_forever()


def serve_http(addr, directory):
    class Quiet(http.server.SimpleHTTPRequestHandler):
        def __init__(self, *a, **kw):
            super().__init__(*a, directory=directory, **kw)

        def log_message(self, *a):
            pass

    class HTTPServer(http.server.ThreadingHTTPServer):
        allow_reuse_address = True
        address_family = socket.AF_INET6 if ":" in parse_addr(addr)[0] else socket.AF_INET

    srv = HTTPServer(parse_addr(addr), Quiet)
    print(srv.server_address[1], flush=True)
    srv.serve_forever()


def serve_source(addr, size):
    class H(socketserver.BaseRequestHandler):
        def handle(self):
            try:
                for chunk in stream(size):
                    self.request.sendall(chunk)
            except OSError:
                pass

    serve(addr, H)


def serve_sink(addr, log):
    lock = threading.Lock()

    class H(socketserver.BaseRequestHandler):
        def handle(self):
            h, n = hashlib.sha256(), 0
            while True:
                data = self.request.recv(1 << 16)
                if not data:
                    break
                h.update(data)
                n += len(data)
            with lock, open(log, "a") as f:
                f.write(f"{n} {h.hexdigest()}\n")

    serve(addr, H)


def proxy_addr():
    url = urllib.parse.urlsplit(os.environ["HTTPS_PROXY"])
    return url.hostname, url.port


def connect(host, port):
    s = socket.create_connection(proxy_addr())
    s.sendall(f"CONNECT {host}:{port} HTTP/1.1\r\nHost: {host}:{port}\r\n\r\n".encode())
    head = b""
    while b"\r\n\r\n" not in head:
        data = s.recv(1)
        if not data:
            sys.exit(f"netpeer: the proxy closed during the answer: {head!r}")
        head += data
    status = head.split(b"\r\n", 1)[0].decode()
    if " 200 " not in status + " ":
        sys.exit(f"netpeer: {status}")
    return s


def open_to(host, port, direct):
    return socket.create_connection((host, port)) if direct else connect(host, port)


def drain(s):
    buf, n = bytearray(1 << 20), 0
    while True:
        k = s.recv_into(buf)
        if not k:
            return n
        n += k


def first_line(s):
    data = b""
    while b"\n" not in data:
        chunk = s.recv(4096)
        if not chunk:
            break
        data += chunk
    return data.split(b"\r\n", 1)[0].decode(errors="replace") if data else "EOF"


def main():
    mode, args = sys.argv[1], sys.argv[2:]
    if mode == "http":
        serve_http(args[0], args[1])
    elif mode == "source":
        serve_source(args[0], int(args[1]))
    elif mode == "sink":
        serve_sink(args[0], args[1])
    elif mode == "get":
        s = connect(args[0], int(args[1]))
        h, n = hashlib.sha256(), 0
        while True:
            data = s.recv(1 << 16)
            if not data:
                break
            h.update(data)
            n += len(data)
        print(n, h.hexdigest())
    elif mode == "put":
        s = connect(args[0], int(args[1]))
        h, n = hashlib.sha256(), 0
        for chunk in stream(int(args[2])):
            s.sendall(chunk)
            h.update(chunk)
            n += len(chunk)
        s.shutdown(socket.SHUT_WR)
        s.recv(1)
        print(n, h.hexdigest())
    elif mode == "expect":
        h, n = hashlib.sha256(), 0
        for chunk in stream(int(args[0])):
            h.update(chunk)
            n += len(chunk)
        print(n, h.hexdigest())
    elif mode == "drain":
        t = time.monotonic()
        n = drain(open_to(args[0], int(args[1]), args[2:] == ["direct"]))
        print(n, f"{time.monotonic() - t:.6f}")
    elif mode == "conns":
        t = time.monotonic()
        for _ in range(int(args[2])):
            s = open_to(args[0], int(args[1]), args[3:] == ["direct"])
            drain(s)
            s.close()
        print(args[2], f"{time.monotonic() - t:.6f}")
    elif mode in ("raw", "stall"):
        s = socket.create_connection(proxy_addr())
        s.sendall(bytes.fromhex(args[0]) if mode == "raw" else args[0].encode())
        s.settimeout(30)
        print(first_line(s))
    else:
        sys.exit(f"netpeer: unknown mode {mode}")


if __name__ == "__main__":
    main()
