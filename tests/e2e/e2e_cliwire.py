"""The CLI's two HTTP transports: the plain HTTP/1.1 client it uses for
http:// servers (src/cli/httpwire.c) and libcurl, loaded only for https://,
a proxy or FLEXQ_HTTP_CLIENT=curl, give the same results; answers in
chunks or until close are read; a proxy in the environment is honoured
(and no_proxy too)."""
import http.server
import json
import os
import socket
import subprocess
import sys
import tempfile
import threading

sys.path.insert(0, os.path.dirname(__file__))
from harness import FLEXQ, Daemon, check, finish  # noqa: E402

CURL = {"FLEXQ_HTTP_CLIENT": "curl"}
NO_PROXY_ENV = {"http_proxy": "", "all_proxy": "", "ALL_PROXY": ""}


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


d = Daemon().start()
try:
    for label, env in (("plain", dict(NO_PROXY_ENV)),
                       ("curl", dict(NO_PROXY_ENV, **CURL))):
        name = "cm-" + label
        f = tempfile.NamedTemporaryFile("w", suffix=".yaml", delete=False)
        f.write("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: %s}\n"
                "data: {k: v}\n" % name)
        f.close()
        rc, out, err = d.cli("create", "-f", f.name, env=env)
        check(rc == 0 and name in out, "%s: create: %s %s" % (label, out, err))
        rc, out, err = d.cli("get", "configmap", name, "-o", "json", env=env)
        check(rc == 0 and json.loads(out)["data"] == {"k": "v"},
              "%s: get -o json: %s %s" % (label, out, err))
        rc, out, err = d.cli("create", "-f", f.name, env=env)
        check(rc != 0 and "already exists" in err,
              "%s: a second create is refused: %s %s" % (label, out, err))
        rc, out, err = d.cli("get", "configmap", "nothere", env=env)
        check(rc != 0 and "nothere" in err,
              "%s: a missing object is an error naming it: %s" % (label, err))
        os.unlink(f.name)
    rc1, t1, _ = d.cli("get", "configmaps", env=NO_PROXY_ENV)
    rc2, t2, _ = d.cli("get", "configmaps", env=dict(NO_PROXY_ENV, **CURL))

    def but_age(t):
        """The table without its last column, AGE, which may tick over
        between the two calls on a loaded machine (0s, then 1s)."""
        return [ln.rsplit(None, 1)[0] for ln in t.splitlines()]

    check(rc1 == 0 and rc2 == 0 and t1.split("\n", 1)[0].endswith("AGE") and
          but_age(t1) == but_age(t2),
          "the same table through both transports:\n%s\n%s" % (t1, t2))

    # A proxy nobody listens on: requests go to it, unless no_proxy
    # names the server.
    dead = "http://127.0.0.1:%d" % free_port()
    rc, out, err = d.cli("get", "configmaps",
                         env=dict(NO_PROXY_ENV, http_proxy=dead))
    check(rc != 0 and "cannot reach flexqd" in err,
          "http_proxy is used: %s" % err)
    rc, out, err = d.cli("get", "configmaps",
                         env=dict(NO_PROXY_ENV, http_proxy=dead,
                                  no_proxy="localhost,127.0.0.1"))
    check(rc == 0 and "cm-plain" in out, "no_proxy is honoured: %s" % err)
finally:
    d.stop()

# Nothing listening: the error says where and what to do (checked below).
env = dict(NO_PROXY_ENV, FLEXQ_SERVER="http://127.0.0.1:%d" % free_port())
port = free_port()
obj = {"apiVersion": "v1", "kind": "ConfigMap",
       "metadata": {"name": "x", "namespace": "default"},
       "data": {"big": "y" * 100000}}
body = json.dumps(obj).encode()


class Stub(http.server.BaseHTTPRequestHandler):
    """Answers every GET with the object: until close (HTTP/1.0) when the
    path ends in "close", else chunked."""

    def do_GET(self):
        chunked = not self.path.rstrip("/").endswith("close")
        if not chunked:
            self.protocol_version = "HTTP/1.0"
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        if chunked:
            self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        if chunked:
            for i in range(0, len(body), 7000):
                part = body[i:i + 7000]
                self.wfile.write(b"%x\r\n%s\r\n" % (len(part), part))
            self.wfile.write(b"0\r\n\r\n")
        else:
            self.wfile.write(body)
            self.wfile.flush()
            self.close_connection = True

    def log_message(self, *args):
        pass


class Stub11(Stub):
    protocol_version = "HTTP/1.1"


srv = http.server.ThreadingHTTPServer(("127.0.0.1", port), Stub11)
th = threading.Thread(target=srv.serve_forever, daemon=True)
th.start()
try:
    for what in ("x", "close"):
        e = dict(os.environ, **NO_PROXY_ENV)
        e["FLEXQ_SERVER"] = "http://127.0.0.1:%d" % port
        p = subprocess.run([FLEXQ, "get", "configmap", what, "-o", "json"],
                           env=e, capture_output=True, text=True, timeout=60)
        check(p.returncode == 0 and
              json.loads(p.stdout)["data"]["big"] == "y" * 100000,
              "a %s answer is read whole: %s" %
              ("chunked" if what == "x" else "close-delimited", p.stderr))
    e = dict(os.environ, **env)
    p = subprocess.run([FLEXQ, "get", "configmaps"], env=e,
                       capture_output=True, text=True, timeout=60)
    check(p.returncode != 0 and "cannot reach flexqd" in p.stderr and
          "FLEXQ_SERVER" in p.stderr, "unreachable: %s" % p.stderr)
finally:
    srv.shutdown()
finish()
