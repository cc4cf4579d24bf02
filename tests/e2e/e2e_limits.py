"""Client limits answered as Kubernetes Status, before any handler runs
(src/daemon/api/connguard.c):

1. a body over the cap gets 413 RequestEntityTooLarge (declared by
   Content-Length, answered before the body is sent; and a chunked one),
   headers over the cap get 431; nothing is created, and the next client
   is served;
2. a slow-header client (one header byte every 0.3 s) is answered 408 and
   its connection closed, while other clients are served meanwhile
   (--header-timeout 3);
3. one client address holding the per-client cap of connections
   (--max-client-connections 50) gets 429
   for the next one, another address is not affected, and once the first
   closes its connections it connects again."""
import json
import os
import socket
import sys
import time

sys.path.insert(0, os.path.dirname(__file__))
from harness import Daemon, check, finish  # noqa: E402

MAX_BODY = 4 << 20
MAX_HEADERS = 64 << 10
# Set by flags (the defaults, 10 s and 256, are bench/soak's to show).
HEADER_S = 3
PER_CLIENT = 50
CM_PATH = "/api/v1/namespaces/default/configmaps"


def read_answer(s, timeout=30):
    """Reads until the server closes; returns (status, Status dict)."""
    s.settimeout(timeout)
    data = b""
    try:
        while True:
            chunk = s.recv(65536)
            if not chunk:
                break
            data += chunk
    except OSError:
        pass
    head, _, body = data.partition(b"\r\n\r\n")
    parts = head.split(b" ", 2)
    code = int(parts[1]) if len(parts) > 1 and parts[1].isdigit() else 0
    try:
        st = json.loads(body.decode()) if body else None
    except ValueError:
        st = body
    return code, st


def is_status(st, code, reason):
    return (isinstance(st, dict) and st.get("kind") == "Status" and
            st.get("code") == code and st.get("reason") == reason)


def cm_count(d):
    code, body, _ = d.request("GET", CM_PATH)
    return len(body.get("items", [])) if code == 200 else -1


def connect(d, source="127.0.0.1"):
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.bind((source, 0))
    s.connect(("127.0.0.1", d.port))
    return s


def healthz(d):
    code, _, _ = d.request("GET", "/healthz", timeout=10)
    return code


def test_sizes(d):
    before = cm_count(d)
    # Declared too large: answered before any body byte is sent.
    s = connect(d)
    s.sendall(("POST %s HTTP/1.1\r\nHost: 127.0.0.1\r\n"
               "Content-Type: application/json\r\nContent-Length: %d\r\n\r\n"
               % (CM_PATH, MAX_BODY + 1)).encode())
    code, st = read_answer(s)
    s.close()
    check(code == 413 and is_status(st, 413, "RequestEntityTooLarge"),
          "a declared body over the cap is answered 413 Status (got %r %r)"
          % (code, st))
    # Chunked, growing past the cap.
    s = connect(d)
    s.sendall(("POST %s HTTP/1.1\r\nHost: 127.0.0.1\r\n"
               "Content-Type: application/json\r\n"
               "Transfer-Encoding: chunked\r\n\r\n" % CM_PATH).encode())
    chunk = b"%x\r\n%s\r\n" % (1 << 20, b" " * (1 << 20))
    try:
        for _ in range(6):
            s.sendall(chunk)
    except OSError:
        pass
    code, st = read_answer(s)
    s.close()
    check(code == 413 and is_status(st, 413, "RequestEntityTooLarge"),
          "a chunked body over the cap is answered 413 Status (got %r)"
          % code)
    # Headers too large.
    s = connect(d)
    try:
        s.sendall(("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                   "X-Big: %s\r\n\r\n" % ("a" * (MAX_HEADERS + 10))).encode())
    except OSError:
        pass
    code, st = read_answer(s)
    s.close()
    check(code == 431 and is_status(st, 431, "RequestHeaderFieldsTooLarge"),
          "headers over the cap are answered 431 Status (got %r %r)"
          % (code, st))
    check(cm_count(d) == before, "nothing was created by refused requests")
    # Just under the cap still goes through to the handler (3 MiB, most
    # of it white space the JSON parser skips).
    raw = (json.dumps({"apiVersion": "v1", "kind": "ConfigMap",
                       "metadata": {"name": "big"}, "data": {"k": "v"}})
           + " " * (3 << 20)).encode()
    code, _, _ = d.request("POST", CM_PATH, raw=raw)
    check(code == 201, "a 3 MiB body under the cap is created (%r)" % code)


def test_slow_headers(d):
    s = connect(d)
    s.settimeout(1)
    head = b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: " + \
        b"a" * 200
    sent = 0
    others_ok = 0
    closed = False
    start = time.monotonic()
    # One byte each 0.3 s; meanwhile another client is served each time.
    while time.monotonic() - start < HEADER_S + 20:
        try:
            s.sendall(head[sent % len(head):sent % len(head) + 1])
            sent += 1
        except OSError:
            closed = True
            break
        if healthz(d) == 200:
            others_ok += 1
        try:
            data = s.recv(4096)
            if data:
                code = int(data.split(b" ", 2)[1])
                body = data.partition(b"\r\n\r\n")[2]
                check(code == 408 and
                      is_status(json.loads(body), 408, "Timeout"),
                      "the slow-header client is answered 408 Status")
                closed = True
                break
            closed = True
            break
        except socket.timeout:
            pass
        time.sleep(0.3)
    s.close()
    check(closed, "the slow-header client was cut off (sent %d bytes)" % sent)
    check(others_ok >= 3,
          "other clients were served while it dripped (%d)" % others_ok)


def test_per_client(d):
    held = []
    try:
        for _ in range(PER_CLIENT):
            held.append(connect(d, "127.0.0.2"))
        # Each of these was accepted and counted; make sure the daemon saw
        # them all before the next one (a request on the last one).
        last = held[-1]
        last.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        last.settimeout(10)
        got = last.recv(4096)
        check(got.startswith(b"HTTP/1.1 200"),
              "the %dth connection from one address is served" % PER_CLIENT)
        extra = connect(d, "127.0.0.2")
        code, st = read_answer(extra)
        extra.close()
        check(code == 429 and is_status(st, 429, "TooManyRequests"),
              "one more from the same address is answered 429 Status "
              "(got %r %r)" % (code, st))
        check(healthz(d) == 200, "another address is still served")
    finally:
        for s in held:
            s.close()
    # The daemon notices the closes; a new connection is then accepted.
    deadline = time.monotonic() + 20
    ok = False
    while time.monotonic() < deadline and not ok:
        s = connect(d, "127.0.0.2")
        s.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                  b"Connection: close\r\n\r\n")
        code, _ = read_answer(s, 10)
        s.close()
        ok = code == 200
        if not ok:
            time.sleep(0.2)
    check(ok, "after closing its connections the address connects again")


def main():
    d = Daemon(extra=["--header-timeout", str(HEADER_S),
                      "--max-client-connections", str(PER_CLIENT)]).start()
    try:
        test_sizes(d)
        test_per_client(d)
        test_slow_headers(d)
        check(healthz(d) == 200, "flexqd still answers")
    finally:
        d.cleanup()
    finish()


if __name__ == "__main__":
    main()
