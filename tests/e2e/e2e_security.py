"""The API half of flexq's security model (docs/api.md, "Security model"):

1. every registered route (GET /debug/routes) and every object resource,
   walked with a developer token of another namespace, shows and changes
   nothing of the victim namespace; the owner's token does (so the walk is
   not vacuous); two tokens with the same user name keep their own
   namespaces (tokens are matched by token);
2. a browser cannot be used against the API: bodies that are not JSON,
   YAML or a patch type get 415 and create nothing, cross-origin writes and
   requests for a rebound host name get 403, the dashboard's own requests
   (same origin) work; a non-loopback --listen without --tokens does not
   start unless --insecure-listen says so;
3. limits answer Kubernetes Status: YAML aliases that expand past the cap,
   descriptors exhausted (the daemon refuses, does not spin or flood its
   log, and serves again once clients leave)."""
import http.client
import json
import os
import resource
import socket
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(__file__))
import harness  # noqa: E402
from harness import Daemon, check, finish  # noqa: E402

ADMIN = "admin-token-0123456789"
DEV_A = "dev-a-token-abcdefghij"   # user bob, team-a (the attacker)
DEV_B = "dev-b-token-klmnopqrst"   # user bob too, team-b (the victim)
VICTIM_NS = "team-b"
FIX = os.environ.get("FLEXQ_FIXTURES",
                     os.path.join(os.path.dirname(__file__), "..", "fixtures"))
QUEUES = open(os.path.join(FIX, "valid", "dws-tpu-queue.yaml")).read()
RAYJOB = open(os.path.join(FIX, "valid", "rayjob-tpu-v6e-dws.yaml")).read()

tokens = tempfile.NamedTemporaryFile("w", suffix=".tokens", delete=False)
tokens.write("%s admin alice\n%s developer bob team-a\n"
             "%s developer bob team-b\n" % (ADMIN, DEV_A, DEV_B))
tokens.close()
os.chmod(tokens.name, 0o600)


def req(d, method, path, body=None, token=None, headers=None,
        timeout=30, stream=False):
    """One request with any headers; returns (status, text, response)."""
    conn = http.client.HTTPConnection("127.0.0.1", d.port, timeout=timeout)
    h = dict(headers or {})
    if token:
        h["Authorization"] = "Bearer " + token
    data = body
    if isinstance(body, (dict, list)):
        data = json.dumps(body).encode()
        h.setdefault("Content-Type", "application/json")
    conn.request(method, path, body=data, headers=h)
    resp = conn.getresponse()
    if stream:
        return resp.status, "", resp, conn
    text = resp.read().decode(errors="replace")
    conn.close()
    return resp.status, text, resp


def status_json(text):
    try:
        v = json.loads(text)
    except ValueError:
        return None
    return v if isinstance(v, dict) and v.get("kind") == "Status" else None


def read_stream_until(resp, marker, limit=4 << 20):
    """Reads a stream until `marker` (or EOF / limit); returns the text."""
    out = b""
    while marker.encode() not in out and len(out) < limit:
        chunk = resp.read1(65536) if hasattr(resp, "read1") else resp.read(1)
        if not chunk:
            break
        out += chunk
    return out.decode(errors="replace")


# --- 1. every route with a foreign token ---------------------------------

def setup_victim(d):
    rc, out, err = d.cli("apply", "-f", "-", stdin=QUEUES, token=ADMIN)
    check(rc == 0, "admin applies the queues: %s %s" % (out, err))
    lq = {"apiVersion": "kueue.x-k8s.io/v1beta1", "kind": "LocalQueue",
          "metadata": {"name": "lq-b", "namespace": VICTIM_NS},
          "spec": {"clusterQueue": "cluster-queue"}}
    st, text, _ = req(d, "POST", "/apis/kueue.x-k8s.io/v1beta1/namespaces/"
                      "team-b/localqueues", lq, token=ADMIN)
    check(st == 201, "admin creates lq-b: %s %s" % (st, text))
    cm = {"apiVersion": "v1", "kind": "ConfigMap",
          "metadata": {"name": "secret-plans"}, "data": {"k": "victim-data"}}
    st, text, _ = req(d, "POST", "/api/v1/namespaces/team-b/configmaps", cm,
                      token=DEV_B)
    check(st == 201, "the owner creates its ConfigMap: %s %s" % (st, text))
    sec = {"apiVersion": "v1", "kind": "Secret",
           "metadata": {"name": "victim-secret"},
           "stringData": {"token": "victim-token"}}
    st, text, _ = req(d, "POST", "/api/v1/namespaces/team-b/secrets", sec,
                      token=DEV_B)
    check(st == 201, "the owner creates its Secret: %s %s" % (st, text))
    job = RAYJOB.replace("rayjob-tpu-v6e-dws-1", "victim-job") \
                .replace("user-queue", "lq-b")
    st, text, _ = req(d, "POST", "/apis/ray.io/v1/namespaces/team-b/rayjobs",
                      job.encode(), token=DEV_B,
                      headers={"Content-Type": "application/yaml"})
    check(st == 201, "the owner creates its RayJob: %s %s" % (st, text))


def leaks(text, path=""):
    """Does an answer show a victim object the request did not name?"""
    return any(s in text and s not in path
               for s in ("victim-job", "secret-plans", "lq-b", "victim-data",
                         "victim-secret", "dmljdGltLXRva2Vu"))


def walk_routes(d):
    st, text, _ = req(d, "GET", "/debug/routes", token=DEV_A)
    check(st == 403, "the route table is admin-only: %s" % st)
    st, text, _ = req(d, "GET", "/debug/routes", token=ADMIN)
    check(st == 200, "admin reads the route table: %s" % st)
    routes = json.loads(text)["items"]
    check(len(routes) >= 8, "routes registered: %d" % len(routes))
    subst = {"{ns}": VICTIM_NS, "{id}": "victim-job", "{name}": "victim-job",
             "{lq}": "lq-b", "{cq}": "cluster-queue"}
    walked = 0
    for rt in routes:
        path = rt["example"]
        for k, v in subst.items():
            path = path.replace(k, v)
        for method in rt["methods"].split(","):
            if method == "HEAD":
                continue
            body = b"{}" if method in ("POST", "PUT", "PATCH") else None
            hdrs = {"Content-Type": "application/json"} if body else {}
            st, text, resp, conn = req(d, method, path, body, token=DEV_A,
                                       headers=hdrs, stream=True)
            if "event-stream" in (resp.getheader("Content-Type") or ""):
                text = read_stream_until(resp, "event: synced")
            else:
                text = resp.read().decode(errors="replace")
            conn.close()
            walked += 1
            what = "%s %s (%s) with a foreign token" % (method, path,
                                                        rt["access"])
            check(not leaks(text, path), "%s leaks: %s %s" % (what, st, text[:300]))
            if rt["access"] == "admin":
                check(st == 403 and status_json(text),
                      "%s: 403 Status, got %s" % (what, st))
            elif method != "GET" or rt["access"] == "namespaced":
                check(st in (403, 404, 405) or
                      (st == 200 and method == "GET"),
                      "%s: refused, got %s %s" % (what, st, text[:200]))
    check(walked >= 10, "route requests walked: %d" % walked)

    # The owner's token sees and stops its job by the same routes.
    st, text, _ = req(d, "GET", "/api/jobs/victim-job", token=DEV_B)
    check(st == 200 and "victim-job" in text, "owner gets its Ray job: %s" % st)
    st, text, _ = req(d, "GET", "/api/jobs/", token=DEV_B)
    check(st == 200 and "victim-job" in text, "owner lists its Ray job")
    st, text, _ = req(d, "GET", "/api/jobs/victim-job", token=DEV_A)
    check(st == 404, "foreign token: the Ray job does not exist: %s" % st)
    st, text, _ = req(d, "POST", "/api/jobs/victim-job/stop", token=DEV_A)
    check(st == 404, "foreign token cannot stop the Ray job: %s" % st)
    st, text, _ = req(d, "GET", "/apis/visibility.kueue.x-k8s.io/v1beta1/"
                      "namespaces/team-b/localqueues/lq-b/pendingworkloads",
                      token=DEV_B)
    check(st == 200, "owner reads its queue's pending workloads: %s" % st)
    # Estimates run off the loop; the owner gets one, /healthz answers
    # meanwhile, several at once are answered (200, or 503 when busy).
    import threading
    est = "/apis/estimates.flexq.dev/v1alpha1/namespaces/team-b/estimates"
    job = RAYJOB.replace("rayjob-tpu-v6e-dws-1", "what-if") \
                .replace("user-queue", "lq-b").encode()
    answers = []

    def ask():
        answers.append(req(d, "POST", est, job, token=DEV_B, headers={
            "Content-Type": "application/yaml"})[:2])
    threads = [threading.Thread(target=ask) for _ in range(4)]
    for t in threads:
        t.start()
    st, _, _ = req(d, "GET", "/healthz", timeout=10)
    check(st == 200, "healthz during estimates: %s" % st)
    for t in threads:
        t.join(60)
    check(len(answers) == 4 and all(
        (a == 200 and '"Estimate"' in b) or (a == 503 and status_json(b))
        for a, b in answers), "estimates answered: %s" %
        [(a, b[:120]) for a, b in answers])
    check(any(a == 200 for a, _ in answers), "one estimate at least")
    st, text, _ = req(d, "POST", est, job, token=DEV_A,
                      headers={"Content-Type": "application/yaml"})
    check(st == 403, "estimate in a foreign namespace: %s" % st)

    st, text, _ = req(d, "GET", "/ui/events", token=DEV_A)
    check(st == 200 and not leaks(text), "events page filtered")
    st, text, _ = req(d, "GET", "/ui/overview", token=DEV_A)
    check(st == 403, "cluster overview refused to a developer: %s" % st)
    st, text, _ = req(d, "GET", "/metrics", token=DEV_B)
    check(st == 403, "metrics refused to a developer: %s" % st)

    # The dashboard's stream gets the owner's objects, not the others'.
    st, _, resp, conn = req(d, "GET", "/ui/stream", token=DEV_B, stream=True)
    text = read_stream_until(resp, "event: synced")
    conn.close()
    check(st == 200 and "victim-job" in text, "owner's stream has its job")
    check('"kind":"ClusterQueue"' not in text,
          "no cluster-scoped objects in a developer's stream")


def walk_objects(d):
    """Every resource of discovery: the foreign developer can neither list,
    read, create nor delete in the victim namespace, nor list across
    namespaces, nor touch cluster-scoped kinds."""
    groups = [("/api/v1", "")]
    st, text, _ = req(d, "GET", "/apis", token=ADMIN)
    for g in json.loads(text)["groups"]:
        groups.append(("/apis/" + g["preferredVersion"]["groupVersion"], ""))
    n = 0
    for base, _ in groups:
        st, text, _ = req(d, "GET", base, token=ADMIN)
        if st != 200:
            continue
        for res in json.loads(text)["resources"]:
            name = res["name"]
            if "/" in name:
                continue
            n += 1
            if res["namespaced"]:
                p = "%s/namespaces/%s/%s" % (base, VICTIM_NS, name)
                for m, path, body in (("GET", p, None),
                                      ("GET", p + "/victim-job", None),
                                      ("POST", p, {"metadata": {"name": "x"}}),
                                      ("DELETE", p + "/victim-job", None),
                                      ("PATCH", p + "/victim-job", {}),
                                      ("GET", "%s/%s" % (base, name), None),
                                      ("GET", p + "?watch=true", None)):
                    h = {"Content-Type": "application/merge-patch+json"} \
                        if m == "PATCH" else {}
                    st, text, _ = req(d, m, path, body, token=DEV_A,
                                      headers=h)
                    check(st == 403 and not leaks(text, path),
                          "%s %s with a foreign token: %s" % (m, path, st))
            else:
                st, text, _ = req(d, "GET", "%s/%s" % (base, name),
                                  token=DEV_A)
                check(st == 403, "cluster-scoped %s: %s" % (name, st))
    check(n >= 15, "resources walked: %d" % n)
    st, text, _ = req(d, "GET", "/api/v1/namespaces/team-b/pods/any/log",
                      token=DEV_A)
    check(st == 403, "foreign pod log: %s" % st)
    # Same user name, other token: its own namespace still works.
    st, text, _ = req(d, "GET", "/api/v1/namespaces/team-a/configmaps",
                      token=DEV_A)
    check(st == 200, "the attacker's own namespace: %s" % st)


d = Daemon(extra=["--tokens", tokens.name]).start()
try:
    setup_victim(d)
    walk_routes(d)
    walk_objects(d)
    st, text, _ = req(d, "GET", "/api/v1/namespaces/team-b/configmaps/"
                      "secret-plans", token=DEV_B)
    check(st == 200 and "victim-data" in text, "the victim's data is intact")
    st, text, _ = req(d, "GET", "/api/v1/namespaces/team-b/secrets/"
                      "victim-secret", token=DEV_B)
    check(st == 200 and "dmljdGltLXRva2Vu" in text,
          "the victim's Secret is intact and its owner reads it: %s" % st)
    st, text, _ = req(d, "GET", "/api/v1/namespaces/team-b/secrets/"
                      "victim-secret", token=DEV_A)
    check(st == 403 and "dmljdGltLXRva2Vu" not in text,
          "a foreign developer cannot read the Secret: %s" % st)
    check(not any("victim-token" in l or "dmljdGltLXRva2Vu" in l
                  for l in d.log), "no Secret value in flexqd's log")
finally:
    d.stop()

# --- 2. the browser cannot be used against the API -----------------------

CM = "/api/v1/namespaces/default/configmaps"


def cm(name):
    return json.dumps({"apiVersion": "v1", "kind": "ConfigMap",
                       "metadata": {"name": name}, "data": {"a": "b"}}).encode()


d = Daemon().start()
try:
    origin = "http://127.0.0.1:%d" % d.port
    for i, ctype in enumerate(("text/plain", "application/x-www-form-urlencoded",
                               "multipart/form-data; boundary=x", None)):
        st, text, _ = req(d, "POST", CM, cm("csrf-%d" % i),
                          headers={"Content-Type": ctype} if ctype else {})
        s = status_json(text)
        check(st == 415 and s and s["reason"] == "UnsupportedMediaType",
              "POST with %s: 415 Status, got %s %s" % (ctype, st, text[:200]))
        st, _, _ = req(d, "GET", CM + "/csrf-%d" % i)
        check(st == 404, "nothing created by the %s POST" % ctype)
    st, text, _ = req(d, "POST", CM, cm("evil"),
                      headers={"Content-Type": "application/json",
                               "Origin": "http://evil.example"})
    check(st == 403 and status_json(text), "cross-origin POST: %s" % st)
    st, text, _ = req(d, "DELETE", CM + "/whatever",
                      headers={"Origin": "null"})
    check(st == 403, "opaque-origin DELETE: %s" % st)
    st, text, _ = req(d, "POST", CM, cm("fetch-meta"),
                      headers={"Content-Type": "application/json",
                               "Sec-Fetch-Site": "cross-site"})
    check(st == 403, "Sec-Fetch-Site cross-site POST: %s" % st)
    st, _, _ = req(d, "GET", CM + "/evil")
    check(st == 404, "nothing created cross-origin")
    st, text, _ = req(d, "POST", CM, cm("same-origin"),
                      headers={"Content-Type": "application/json",
                               "Origin": origin,
                               "Sec-Fetch-Site": "same-origin"})
    check(st == 201, "same-origin POST (the dashboard's own): %s" % st)
    st, text, _ = req(d, "POST", CM, b"apiVersion: v1\nkind: ConfigMap\n"
                      b"metadata: {name: yaml-one}\n",
                      headers={"Content-Type": "application/yaml"})
    check(st == 201, "YAML body accepted: %s %s" % (st, text[:200]))
    # DNS rebinding: a page on evil.example rebound to 127.0.0.1.
    st, text, _ = req(d, "GET", CM, headers={"Host": "evil.example:%d" %
                                             d.port})
    check(st == 403 and status_json(text) and "rebinding" in text,
          "rebound Host refused: %s %s" % (st, text[:200]))
    for host in ("localhost:%d" % d.port, "127.0.0.1:%d" % d.port,
                 "127.0.0.1"):
        st, _, _ = req(d, "GET", "/", headers={"Host": host})
        check(st == 200, "Host %s serves the dashboard: %s" % (host, st))
    st, text, _ = req(d, "GET", "/ui/jobs",
                      headers={"Host": "localhost:%d" % d.port})
    check(st == 200 and "<table" in text, "dashboard page same-origin")

    # YAML aliases: 600 KiB anchored, aliased twice: refused, not stored.
    big = b"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: laughs}\n" \
          b"data:\n  a: &x \"" + b"x" * (600 << 10) + b"\"\n  b: *x\n  c: *x\n"
    st, text, _ = req(d, "POST", CM, big,
                      headers={"Content-Type": "application/yaml"})
    check(st == 413 and status_json(text) and "aliases" in text,
          "alias expansion refused: %s %s" % (st, text[:200]))
    st, _, _ = req(d, "GET", CM + "/laughs")
    check(st == 404, "nothing stored from the alias bomb")
finally:
    d.stop()

# A non-loopback address without tokens needs --insecure-listen.
p = subprocess.run([harness.FLEXQD, "--listen", "0.0.0.0:0", "--data-dir",
                    tempfile.mkdtemp(prefix="flexq-e2e-")],
                   capture_output=True, text=True, timeout=60)
check(p.returncode != 0 and "--insecure-listen" in p.stderr,
      "0.0.0.0 without tokens refused: rc=%d %s" % (p.returncode, p.stderr))
d = Daemon(extra=["--listen", "0.0.0.0:0", "--insecure-listen"]).start()
try:
    check(any("WITHOUT AUTHENTICATION" in l for l in d.log),
          "loud warning with --insecure-listen")
finally:
    d.stop()

# --- 3. descriptors exhausted --------------------------------------------

soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
resource.setrlimit(resource.RLIMIT_NOFILE, (64, hard))
try:
    d = Daemon().start()
finally:
    resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
try:
    socks, answered = [], 0
    for i in range(120):
        try:
            s = socket.create_connection(("127.0.0.1", d.port), timeout=5)
        except OSError:
            continue
        socks.append(s)
    # Those over the limit are answered 503 (a Status) and closed; wait for
    # the first such answer, with a deadline.
    import select
    deadline = time.monotonic() + 20
    pending = list(socks)
    while not answered and pending and time.monotonic() < deadline:
        ready, _, _ = select.select(pending, [], [], 1.0)
        for s in ready:
            try:
                data = s.recv(4096)
            except OSError:
                data = b""
            if b" 503 " in data and b"Status" in data:
                answered += 1
            pending.remove(s)
    check(answered > 0, "connections over the limit get a 503 Status")
    for s in socks:
        s.close()
    deadline = time.monotonic() + 20
    st = 0
    while time.monotonic() < deadline and st != 200:
        try:
            st, _, _ = req(d, "GET", "/healthz", timeout=5)
        except OSError:
            st = 0
    check(st == 200, "serves again once clients leave: %s" % st)
    if st != 200 or not answered:
        print("".join(d.log[-15:]))
    warns = sum("connections refused" in l for l in d.log)
    check(1 <= warns <= 5, "refusal warnings rate-limited: %d lines" % warns)
finally:
    d.stop()

os.unlink(tokens.name)
finish()
