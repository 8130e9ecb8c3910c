#!/usr/bin/env python3
"""bench/splice-relay.py PORT - the smallest relay there is, for bench/proxy's baseline: accept
one connection on 127.0.0.1 (the port it listens on is printed), connect to 127.0.0.1:PORT, and
move what comes from there to the client with blocking os.splice() through a 256 KiB pipe."""
import fcntl
import os
import socket
import sys

F_SETPIPE_SZ = 1031
ls = socket.socket()
ls.bind(("127.0.0.1", 0))
ls.listen(1)
print(ls.getsockname()[1], flush=True)
client, _ = ls.accept()
server = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
r, w = os.pipe()
fcntl.fcntl(w, F_SETPIPE_SZ, 256 << 10)
while True:
    n = os.splice(server.fileno(), w, 256 << 10)
    if n == 0:
        break
    while n:
        n -= os.splice(r, client.fileno(), n)
client.close()
