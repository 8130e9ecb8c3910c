#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""dnspeer.py - DNS by hand, for tests/integration/t-net-hint.sh.

  dnspeer.py serve ADDR LOG     a fake upstream resolver on ADDR:53 (UDP): every query's name
                                appended to LOG, answered with A 192.0.2.1; prints "ready"
  dnspeer.py query HEXLABELS    one query to 127.0.0.1:53, its name as labels given in hex
                                ("0566696c6573" = "files"); prints the answer's rcode
  dnspeer.py flood N            N hostile datagrams to 127.0.0.1:53 (malformed, huge, truncated,
                                compression loops, responses, random names), then one good query:
                                prints its rcode ("timeout" when none came)
  dnspeer.py tcpflood           over TCP: 20 idle connections, a length of 65535, garbage, a
                                half-sent query, then one good query: prints its rcode
  dnspeer.py tcpbound           over TCP, the bounds one by one, a word each: a query of 4096
                                bytes (the most: its rcode), of 4097 ("closed": closed
                                unanswered), three of 65535 sent whole ("closed" each); eight
                                idle connections, a ninth, one of the eight closed, two more:
                                "oldest" when each newcomer took the oldest's place (and "kept"
                                otherwise: which ones stayed); 200 connections opened and closed,
                                then a good query (its rcode)
"""
import os
import random
import socket
import struct
import sys
import time


def query_bytes(labels, qid=0x4242, qtype=1):
    return struct.pack(">HHHHHH", qid, 0x0100, 1, 0, 0, 0) + labels + b"\0" + \
        struct.pack(">HH", qtype, 1)


def encode(name):
    return b"".join(bytes([len(l)]) + l for l in name.split(b".") if l)


def ask(sock, msg, qid):
    sock.sendto(msg, ("127.0.0.1", 53))
    while True:
        try:
            data = sock.recv(4096)
        except socket.timeout:
            return "timeout"
        if len(data) >= 4 and struct.unpack(">H", data[:2])[0] == qid:
            return str(data[3] & 0x0f)


def serve(addr, log):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind((addr, 53))
    print("ready", flush=True)
    while True:
        data, peer = s.recvfrom(4096)
        if len(data) < 17:
            continue
        i, labels = 12, []
        while i < len(data) and data[i]:
            labels.append(data[i + 1:i + 1 + data[i]].decode("latin-1"))
            i += 1 + data[i]
        with open(log, "a") as f:
            f.write(".".join(labels).lower() + "\n")
        question = data[12:i + 5]
        reply = data[:2] + struct.pack(">HHHHH", 0x8180, 1, 1, 0, 0) + question + \
            struct.pack(">HHHIH", 0xc00c, 1, 1, 60, 4) + socket.inet_aton("192.0.2.1")
        s.sendto(reply, peer)


def flood(n):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 1 << 20)
    rnd = random.Random(29)
    good = query_bytes(encode(b"example.org"))
    kinds = [
        lambda: b"",
        lambda: os.urandom(rnd.randrange(1, 12)),             # shorter than a header
        lambda: os.urandom(rnd.randrange(12, 600)),           # noise
        lambda: os.urandom(65000),                            # huge
        lambda: good[:rnd.randrange(12, len(good))],          # truncated
        lambda: good[:12] + b"\xc0\x0c" + b"\0\1\0\1",        # a pointer to itself
        lambda: good[:12] + b"\x3f" + b"a" * 10,              # a label past the end
        lambda: good[:12] + (b"\x3f" + b"a" * 63) * 5 + b"\0\0\1\0\1",  # over 255
        lambda: bytes([good[0], good[1], 0x81]) + good[3:],   # a response
        lambda: good[:4] + b"\xff\xff" + good[6:],            # 65535 questions
        lambda: query_bytes(encode(b"r%d.flood.example" % rnd.randrange(1 << 30))),
        lambda: query_bytes(bytes([5]) + os.urandom(5)),      # binary names
    ]
    for i in range(n):
        try:
            s.sendto(kinds[i % len(kinds)](), ("127.0.0.1", 53))
        except OSError:
            pass  # (a full buffer: the next one)
    # what is left of the answers, then the good query: the resolver still serves
    s.settimeout(0.05)
    try:
        while True:
            s.recv(65536)
    except (socket.timeout, BlockingIOError):
        pass
    s.settimeout(10)
    print(ask(s, query_bytes(encode(b"after.flood.example"), qid=0x2929), 0x2929))


def tcp_ask(msg, timeout=10):
    """One query over TCP, sent whole: its rcode, "closed" (closed unanswered, or reset while
    it was still being sent) or "timeout"
    """
    s = socket.create_connection(("127.0.0.1", 53), timeout=timeout)
    data = b""
    try:
        s.sendall(struct.pack(">H", len(msg)) + msg)
        while True:
            chunk = s.recv(4096)
            if not chunk:
                break
            data += chunk
    except (ConnectionResetError, BrokenPipeError):
        return "closed"
    except socket.timeout:
        return "timeout"
    finally:
        s.close()
    return str(data[5] & 0x0f) if len(data) >= 6 else "closed"


def tcpflood():
    idle = [socket.create_connection(("127.0.0.1", 53)) for _ in range(20)]
    big = socket.create_connection(("127.0.0.1", 53))
    big.sendall(b"\xff\xff" + os.urandom(4000))
    junk = socket.create_connection(("127.0.0.1", 53))
    junk.sendall(b"\x00\x20" + os.urandom(32))
    half = socket.create_connection(("127.0.0.1", 53))
    half.sendall(b"\x00\x40" + b"\x00" * 10)
    print(tcp_ask(query_bytes(encode(b"after.tcp.example"), qid=0x3030)))
    for s in idle + [big, junk, half]:
        s.close()


def closed_by_peer(s, wait):
    """Whether the resolver closed s within wait seconds (EOF or a reset)"""
    s.settimeout(wait)
    try:
        return s.recv(1) == b""
    except ConnectionResetError:
        return True
    except socket.timeout:
        return False


def tcpbound():
    q = query_bytes(encode(b"bound.tcp.example"), qid=0x3131)
    words = [tcp_ask(q + b"\0" * (4096 - len(q))), tcp_ask(q + b"\0" * (4097 - len(q)))]
    words += [tcp_ask(os.urandom(65535)) for _ in range(3)]
    # eight idle (a0..a7), then n1: a0 goes. a1 closed by us (its slot freed), then n2 takes
    # it, then n3: the oldest open is a2, not n2 (a slot's turn is not its age)
    a = []
    for _ in range(8):
        a.append(socket.create_connection(("127.0.0.1", 53)))
        time.sleep(0.05)
    n1 = socket.create_connection(("127.0.0.1", 53))
    first = closed_by_peer(a[0], 10)
    a[1].close()
    time.sleep(1)  # the resolver reads a1's end before n2 comes
    n2 = socket.create_connection(("127.0.0.1", 53))
    time.sleep(0.3)
    n3 = socket.create_connection(("127.0.0.1", 53))
    second = closed_by_peer(a[2], 10)
    kept = [not closed_by_peer(x, 0.5) for x in [n2, n3, n1] + a[3:]]
    words.append("oldest" if first and second and all(kept) else
                 "kept %s %s %s" % (first, second, kept))
    for x in a + [n1, n2, n3]:
        x.close()
    for _ in range(200):
        socket.create_connection(("127.0.0.1", 53)).close()
    words.append(tcp_ask(query_bytes(encode(b"after.bound.example"), qid=0x3232)))
    print(" ".join(words))


def main():
    cmd = sys.argv[1]
    if cmd == "serve":
        serve(sys.argv[2], sys.argv[3])
    elif cmd == "query":
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        s.settimeout(10)
        print(ask(s, query_bytes(bytes.fromhex(sys.argv[2]), qid=0x1717), 0x1717))
    elif cmd == "flood":
        flood(int(sys.argv[2]))
    elif cmd == "tcpflood":
        tcpflood()
    elif cmd == "tcpbound":
        tcpbound()
    else:
        sys.exit("dnspeer.py: serve, query or flood")


if __name__ == "__main__":
    main()
