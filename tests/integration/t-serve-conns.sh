#!/usr/bin/env bash
# cordon serve on a unix socket tells its clients apart by uid (SO_PEERCRED): a uid other than
# the server's may hold at most a sixteenth of --max-connections in connections without
# credentials (further ones are closed at once, pushing out no one's), while the server's own uid
# is not capped so (as loopback TCP clients are not: they share one address). Then a request
# with the key still works. (The TCP floods are in tests/e2b/conns.mjs.)
. "$TAP_LIB"

command -v python3 >/dev/null && command -v curl >/dev/null || {
	skip "serve: connections on a unix socket" "python3 and curl are needed"
	done_testing
	exit
}
if [ "$(id -u)" != 0 ]; then
	skip "serve: connections on a unix socket" "needs root (a client of another uid)"
	done_testing
	exit
fi
dir=$(mkwork)
key=e2b_$(head -c 20 /dev/urandom | od -An -tx1 | tr -d ' \n')
sock=$dir/serve.sock
( CORDON_SERVE_API_KEY=$key exec_as_caller "$CORDON" serve --socket "$sock" --state-dir "$dir/s" \
	--max-connections 64 --pool 0 2>"$TEST_TMP/serve.log" ) &
server=$!
trap 'kill $server 2>/dev/null; wait $server 2>/dev/null' EXIT
wait_until 20 curl -s -o /dev/null --unix-socket "$sock" http://x/health
chmod 666 "$sock" # any local user may connect: the point is what one may hold

# held N: N connections, each a half-sent request; how many the server holds once it has dealt
# with them all: it accepts in order, one thread, deciding at the accept, so once a connection
# made after them is answered (or refused), it has (no pause, which a loaded machine outlasts)
held='
import socket, sys
conns = []
for _ in range(int(sys.argv[2])):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(sys.argv[1])
    try:  # one refused may be closed before this is sent
        s.sendall(b"POST /sandboxes HTTP/1.1\r\nHost: x\r\nContent-Le")
    except OSError:
        pass
    conns.append(s)
probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
probe.connect(sys.argv[1])
probe.settimeout(60)
try:
    probe.sendall(b"GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
    while probe.recv(4096):
        pass
except OSError:
    pass
n = 0
for s in conns:
    s.setblocking(False)
    try:
        n += s.recv(1) != b""
    except BlockingIOError:
        n += 1
    except OSError:
        pass
print(n)
'
py=$(command -v /usr/bin/python3 || command -v python3) # one every user can run
if is_user_mode; then
	other() { "$py" -c "$held" "$@"; } # root: a uid other than the server's
else
	other() { setpriv --reuid="$TEST_USER" --regid="$TEST_USER" --clear-groups "$py" -c "$held" "$@"; }
fi
is "another uid's 10 connections without a key: 4 held (64 / 16)" "$(other "$sock" 10)" 4
is "the server's own uid's 10: all held (no cap per uid of its own)" \
	"$(as_caller "$py" -c "$held" "$sock" 10)" 10
is "a request with the key still works" \
	"$(curl -s -o /dev/null -w '%{http_code}' --unix-socket "$sock" -H "X-API-Key: $key" http://x/sandboxes)" 200
done_testing
