"""`kubectl port-forward` against flexqd, pod/ and service/, with every
kubectl of the Cloud SDK from 1.27 to 1.33: up to 1.30 kubectl upgrades
straight to SPDY/3.1, from 1.31 it tunnels SPDY in WebSocket messages.

A RayCluster (--provider local: pods are processes of this machine) whose
head runs a small HTTP server on a free port; KubeRay's head Service
`<cluster>-head-svc` must exist with the head's ports, kubectl must print
it with a Service's columns, and bytes fetched through every forward must
be the server's, over several connections of one session, and 3 MiB
sent through must come back intact (more than either side's queue). The
head's
dashboard port (8265) reaches flexqd's own dashboard; a port nobody
listens on gives kubectl the kubelet's error, and so does another pod's
port or flexqd's own (pods share the host's network: only the pod's own
listening ports are forwarded); deleting the cluster deletes
its Service. With --tokens, a developer may open a tunnel to its own
namespace's pods only, and no web page (Origin) may.

Skips (exit 77, with a line saying so) when no kubectl is installed."""
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request

sys.path.insert(0, os.path.dirname(__file__))
from harness import Daemon, check, finish  # noqa: E402


def kubectl_dir():
    g = shutil.which("gcloud")
    if g:
        d = os.path.dirname(os.path.realpath(g))
        if os.path.exists(os.path.join(d, "kubectl")):
            return d
    k = shutil.which("kubectl")
    return os.path.dirname(os.path.realpath(k)) if k else None


KDIR = kubectl_dir()
if not KDIR:
    print("SKIP: kubectl is not installed (neither beside gcloud nor on "
          "PATH)")
    sys.exit(77)
BINS = [os.path.join(KDIR, "kubectl" + v)
        for v in (".1.27", ".1.28", ".1.29", ".1.30", ".1.31", ".1.32",
                  ".1.33")
        if os.access(os.path.join(KDIR, "kubectl" + v), os.X_OK)]
if not BINS:
    BINS = [os.path.join(KDIR, "kubectl")]


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


PORT = free_port()
# The server's answer: 200 KiB, so one response spans many DATA frames.
SERVER = ("import http.server\n"
          "body = b''.join(b'%%06d flexq port-forward\\n' %% i "
          "for i in range(8000))\n"
          "class H(http.server.BaseHTTPRequestHandler):\n"
          "    def do_GET(self):\n"
          "        self.send_response(200)\n"
          "        self.send_header('Content-Length', str(len(body)))\n"
          "        self.end_headers()\n"
          "        self.wfile.write(body)\n"
          "    def do_POST(self):\n"
          "        n = int(self.headers['Content-Length'])\n"
          "        data = self.rfile.read(n)\n"
          "        self.send_response(200)\n"
          "        self.send_header('Content-Length', str(n))\n"
          "        self.end_headers()\n"
          "        self.wfile.write(data)\n"
          "    def log_message(self, *a):\n"
          "        pass\n"
          "http.server.ThreadingHTTPServer(('127.0.0.1', %d), H)"
          ".serve_forever()\n" % PORT)
EXPECTED = b"".join(b"%06d flexq port-forward\n" % i for i in range(8000))

CLUSTER = """apiVersion: ray.io/v1
kind: RayCluster
metadata:
  name: pf
spec:
  headGroupSpec:
    rayStartParams: {}
    template:
      spec:
        containers:
          - name: ray-head
            image: rayproject/ray:2.53.0-py311
            command: ["python3", "-c", %s]
            ports:
              - {name: web, containerPort: %d}
              - {name: dashboard, containerPort: 8265}
            resources:
              requests: {cpu: 100m, memory: 128Mi}
""" % (json.dumps(SERVER), PORT)

tmp = tempfile.mkdtemp(prefix="flexq-pf-")
d = Daemon(extra=["--provider", "local"]).start()


def kubeconfig():
    path = os.path.join(tmp, "kubeconfig")
    with open(path, "w") as f:
        f.write("""apiVersion: v1
kind: Config
clusters:
- cluster: {server: "%s"}
  name: flexq
contexts:
- context: {cluster: flexq, user: me}
  name: flexq
current-context: flexq
users:
- name: me
  user: {}
""" % d.url)
    return path


KUBECONFIG = kubeconfig()


def kubectl(kbin, *args):
    cache = os.path.join(tmp, "cache-" + os.path.basename(kbin))
    p = subprocess.run([kbin, "--kubeconfig", KUBECONFIG, "--cache-dir",
                        cache] + list(args), capture_output=True, text=True,
                       timeout=60)
    return p.returncode, p.stdout, p.stderr


def wait_for(fn, what, timeout=90):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        v = fn()
        if v:
            return v
        # a short pause between polls of the API, not a wait for a state
        time.sleep(0.2)
    check(False, "in time: " + what)
    return None


def head_pod():
    st, lst, _ = d.request("GET", "/api/v1/namespaces/default/pods?"
                           "labelSelector=ray.io/cluster%3Dpf,"
                           "ray.io/node-type%3Dhead")
    for p in (lst or {}).get("items", []) if st == 200 else []:
        if p.get("status", {}).get("phase") == "Running":
            return p["metadata"]["name"]
    return None


def fetch(port, path="/", data=None):
    with urllib.request.urlopen("http://127.0.0.1:%d%s" % (port, path),
                                data=data, timeout=60) as r:
        return r.status, r.read()


# 3 MiB up and back: more than flexqd queues for either side (1 MiB)
UPLOAD = os.urandom(3 << 20)


class Forward:
    """`kubectl port-forward TARGET LOCAL:REMOTE` until stopped."""

    def __init__(self, kbin, target, remote):
        self.local = free_port()
        cache = os.path.join(tmp, "cache-" + os.path.basename(kbin))
        self.p = subprocess.Popen(
            [kbin, "--kubeconfig", KUBECONFIG, "--cache-dir", cache,
             "port-forward", target, "%d:%d" % (self.local, remote)],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.ready = False
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            line = self.p.stdout.readline()
            if not line:
                break
            if line.startswith("Forwarding from 127.0.0.1:%d" % self.local):
                self.ready = True
                break

    def stop(self):
        self.p.terminate()
        try:
            out, err = self.p.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            self.p.kill()
            out, err = self.p.communicate()
        return out + err


try:
    rc, out, err = d.cli("apply", "-f", "-", stdin=CLUSTER)
    check(rc == 0, "apply raycluster: %s %s" % (out, err))
    pod = wait_for(head_pod, "the head pod runs")

    def serving():
        try:
            return fetch(PORT)[1] == EXPECTED
        except OSError:
            return False
    # Running is the process started; its server binds a moment later.
    wait_for(serving, "the head's server answers on its port")

    st, svc, _ = d.request("GET", "/api/v1/namespaces/default/services/"
                           "pf-head-svc")
    check(st == 200, "KubeRay's head service exists: %s %s" % (st, svc))
    spec = svc.get("spec", {}) if isinstance(svc, dict) else {}
    ports = {p.get("name"): p.get("port") for p in spec.get("ports", [])}
    check(ports == {"web": PORT, "dashboard": 8265, "metrics": 8080},
          "the head's ports plus metrics: %s" % ports)
    check(spec.get("selector", {}).get("ray.io/node-type") == "head" and
          spec.get("selector", {}).get("ray.io/cluster") == "pf",
          "selects the head: %s" % spec.get("selector"))
    check(re.match(r"^10\.(9[6-9]|1[01][0-9])\.", spec.get("clusterIP", "")),
          "a cluster IP from 10.96.0.0/12: %s" % spec.get("clusterIP"))
    owners = svc.get("metadata", {}).get("ownerReferences", [])
    check(len(owners) == 1 and owners[0].get("kind") == "RayCluster",
          "owned by the RayCluster: %s" % owners)

    kbin = BINS[-1]
    rc, out, err = kubectl(kbin, "get", "svc")
    check(rc == 0 and re.search(r"^NAME\s+TYPE\s+CLUSTER-IP\s+EXTERNAL-IP\s+"
                                r"PORT\(S\)\s+AGE$", out, re.M) and
          re.search(r"^pf-head-svc\s+ClusterIP\s+10\.\S+\s+<none>\s+"
                    r"8265/TCP,8080/TCP,%d/TCP\s" % PORT, out, re.M),
          "kubectl get svc columns: %s %s" % (out, err))

    # `kubectl create service` (a protobuf body from kubectl 1.32 on); the
    # first one's address is free again for the second.
    ips = set()
    for kbin in (BINS[0], BINS[-1]):
        name = "made-" + os.path.basename(kbin).replace(".", "-")
        rc, out, err = kubectl(kbin, "create", "service", "clusterip", name,
                               "--tcp=5678:8080")
        check(rc == 0, "%s: %s %s" % (name, out, err))
        st, o, _ = d.request("GET", "/api/v1/namespaces/default/services/" +
                             name)
        sp = o.get("spec", {}) if isinstance(o, dict) else {}
        check(sp.get("ports") == [{"name": "5678-8080", "protocol": "TCP",
                                   "port": 5678, "targetPort": 8080}] and
              sp.get("selector") == {"app": name} and
              sp.get("type") == "ClusterIP",
              "%s stored as sent: %s" % (name, sp))
        ips.add(sp.get("clusterIP"))
        rc, out, err = kubectl(kbin, "delete", "service", name)
        check(rc == 0, "delete %s: %s" % (name, err))
    check(all(ip and ip.startswith("10.96.") for ip in ips) and
          spec.get("clusterIP") not in ips,
          "a cluster IP of its own (freed again on delete): %s" % ips)

    for kbin in BINS:
        name = os.path.basename(kbin)
        for target in ("pod/" + pod, "service/pf-head-svc"):
            before = "".join(d.log).count('"port-forward"')
            f = Forward(kbin, target, PORT)
            check(f.ready, "%s port-forward %s is ready" % (name, target))
            if f.ready:
                for i in range(3):  # three connections, one session
                    st, body = fetch(f.local)
                    check(st == 200 and body == EXPECTED,
                          "%s %s fetch %d: %d bytes" % (name, target, i,
                                                        len(body)))
                st, body = fetch(f.local, "/echo", UPLOAD)
                check(st == 200 and body == UPLOAD,
                      "%s %s: 3 MiB echoed intact (%d bytes back)"
                      % (name, target, len(body)))
            log = f.stop()
            check("error" not in log.lower(),
                  "%s %s: no error printed: %s" % (name, target, log))
            check("".join(d.log).count('"port-forward"') > before,
                  "flexqd logged the session")
    # The transports: up to 1.30 SPDY, from 1.31 WebSocket.
    log = "".join(d.log)
    if any(b.endswith(".1.27") for b in BINS):
        check("transport=spdy" in log, "kubectl 1.27 used SPDY")
    if any(b.endswith(".1.33") for b in BINS):
        check("transport=websocket" in log, "kubectl 1.33 used WebSocket")
    check(log.count("transport=") == 2 * len(BINS),
          "one session per forward: %d" % log.count("transport="))

    # The Ray head's dashboard port is flexqd's own dashboard.
    f = Forward(BINS[-1], "service/pf-head-svc", 8265)
    if f.ready:
        st, body = fetch(f.local, "/healthz")
        check(st == 200 and body.strip() == b"ok",
              "the head's 8265 answers as flexqd: %s %r" % (st, body[:80]))
        _, direct = fetch(d.port, "/api/version")
        _, tunnelled = fetch(f.local, "/api/version")
        check(direct == tunnelled, "the Ray API through the forward")
    else:
        check(False, "port-forward to 8265 is ready")
    f.stop()

    # A port nobody listens on: the kubelet's error reaches kubectl.
    f = Forward(BINS[-1], "pod/" + pod, free_port())
    if f.ready:
        try:
            fetch(f.local)
            check(False, "a fetch through a dead port fails")
        except OSError:
            pass
        out = f.stop()
        check("error forwarding port" in out,
              "kubectl prints the forwarding error: %s" % out[-400:])
    else:
        f.stop()
        check(False, "port-forward to a dead port starts")

    # Another pod's port, and flexqd's own: pods share the host's
    # network, so 127.0.0.1:PORT through this pod would reach them; a
    # forward goes only to a port the pod's own processes listen on.
    other = free_port()
    st, body, _ = d.request("POST", "/apis/batch/v1/namespaces/default/jobs",
                            {"apiVersion": "batch/v1", "kind": "Job",
                             "metadata": {"name": "other"},
                             "spec": {"template": {"spec": {
                                 "restartPolicy": "Never", "containers": [{
                                     "name": "c", "image": "python:3",
                                     "command": ["python3", "-c",
                                                 SERVER.replace(str(PORT),
                                                                str(other))]
                                 }]}}}})
    check(st == 201, "another pod with a server: %s" % body)

    def other_serving():
        try:
            return fetch(other)[1] == EXPECTED
        except OSError:
            return False
    wait_for(other_serving, "the other pod's server answers")
    for port, what in ((other, "another pod's port"),
                       (d.port, "flexqd's own port")):
        f = Forward(BINS[-1], "pod/" + pod, port)
        got = None
        if f.ready:
            try:
                got = fetch(f.local)[1]
            except OSError:
                pass
        out = f.stop()
        check(f.ready and got is None and "no process of the pod listens"
              in out, "%s is not forwarded through this pod: %s" %
              (what, out[-400:]))
    d.cli("delete", "job", "other")

    # No Upgrade: 400 as from Kubernetes; another pod: 404.
    st, body, _ = d.request("POST", "/api/v1/namespaces/default/pods/%s/"
                            "portforward" % pod)
    check(st == 400, "portforward without an upgrade: %s %s" % (st, body))
    st, body, _ = d.request("POST", "/api/v1/namespaces/default/pods/nope/"
                            "portforward")
    check(st == 404, "portforward to no pod: %s %s" % (st, body))

    rc, out, err = d.cli("delete", "raycluster", "pf")
    check(rc == 0, "delete raycluster: %s %s" % (out, err))
    wait_for(lambda: d.request("GET", "/api/v1/namespaces/default/services/"
                               "pf-head-svc")[0] == 404,
             "the owner GC deletes the head service")
finally:
    d.cleanup()

# --- tokens: who may open a tunnel -----------------------------------------
ADMIN, BOB, EVE = "admin-" + "a" * 26, "bob-" + "b" * 28, "eve-" + "e" * 28
tokens = os.path.join(tmp, "tokens")
with open(tokens, "w") as f:
    f.write("%s admin alice\n%s developer bob team-a\n"
            "%s developer eve team-b\n" % (ADMIN, BOB, EVE))
os.chmod(tokens, 0o600)
d2 = Daemon(extra=["--provider", "local", "--tokens", tokens]).start()


def upgrade(path, token, extra=""):
    """The status of a SPDY upgrade request (the connection then closed)."""
    s = socket.create_connection(("127.0.0.1", d2.port), timeout=30)
    s.sendall(("POST %s HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n"
               "Authorization: Bearer %s\r\nConnection: Upgrade\r\n"
               "Upgrade: SPDY/3.1\r\n"
               "X-Stream-Protocol-Version: portforward.k8s.io\r\n%s"
               "Content-Length: 0\r\n\r\n" % (path, d2.port, token, extra))
              .encode())
    data = b""
    while b"\r\n" not in data:
        chunk = s.recv(4096)
        if not chunk:
            break
        data += chunk
    s.close()
    parts = data.split(b" ", 2)
    return int(parts[1]) if len(parts) > 1 and parts[1].isdigit() else 0


try:
    st, _, _ = d2.request("POST", "/api/v1/namespaces",
                          {"apiVersion": "v1", "kind": "Namespace",
                           "metadata": {"name": "team-a"}}, token=ADMIN)
    check(st == 201, "namespace team-a: %s" % st)
    rc, out, err = d2.cli("apply", "-n", "team-a", "-f", "-", token=ADMIN,
                          stdin=CLUSTER.replace("name: pf",
                                                "name: pf\n  namespace: "
                                                "team-a"))
    check(rc == 0, "apply in team-a: %s %s" % (out, err))

    def running():
        st, lst, _ = d2.request("GET", "/api/v1/namespaces/team-a/pods",
                                token=ADMIN)
        for p in (lst or {}).get("items", []) if st == 200 else []:
            if p.get("status", {}).get("phase") == "Running":
                return p["metadata"]["name"]
        return None
    pod2 = wait_for(running, "team-a's head pod runs")
    path = "/api/v1/namespaces/team-a/pods/%s/portforward" % pod2
    check(upgrade(path, BOB) == 101, "bob forwards to his namespace's pod")
    check(upgrade(path, EVE) == 403, "eve may not forward into team-a")
    check(upgrade(path, ADMIN, "Origin: http://evil.example\r\n") == 403,
          "a request from a web page (Origin) is refused")
    st, _, _ = d2.request("GET", "/api/v1/namespaces/team-a/services/"
                          "pf-head-svc", token=BOB)
    check(st == 200, "bob reads the head service: %s" % st)
finally:
    d2.cleanup()
    shutil.rmtree(tmp, ignore_errors=True)
finish()
