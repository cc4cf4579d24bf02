"""Helpers for flexq's end-to-end tests: start flexqd, call the API, run
the CLI.

flexqd is started on 127.0.0.1 with port 0 (the kernel picks a free port)
and a temporary data directory; the test learns the port from flexqd's
"listening" log line, so nothing sleeps or polls to find out when the
daemon is up. Everything is Python standard library.
"""
import http.client
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

FLEXQD = os.environ.get("FLEXQD", "build/flexqd")
FLEXQ = os.environ.get("FLEXQ", "build/flexq")
SEED = os.environ.get("FLEXQ_SEED_DIR",
                      os.path.join(os.path.dirname(__file__), "..", "..",
                                   "examples"))

failures = []


def _die_with_parent():
    """Runs in the child before exec: SIGKILL it if this test dies, so a
    crashed or timed-out test never leaves a flexqd behind."""
    try:
        import ctypes
        ctypes.CDLL(None).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


def check(cond, what):
    """Records a failed expectation (the test goes on, and fails at the end)."""
    if not cond:
        failures.append(what)
        print("FAIL:", what, file=sys.stderr)
    return cond


def finish():
    if failures:
        print("%d check(s) failed" % len(failures), file=sys.stderr)
        sys.exit(1)
    print("ok")


class Daemon:
    """One flexqd process with its own data directory."""

    def __init__(self, data_dir=None, extra=(), time_scale=100):
        self.own_dir = data_dir is None
        self.data_dir = data_dir or tempfile.mkdtemp(prefix="flexq-e2e-")
        self.extra = list(extra)
        self.time_scale = time_scale
        self.proc = None
        self.port = None
        self.log = []

    def start(self):
        args = [FLEXQD, "--listen", "127.0.0.1:0", "--data-dir",
                self.data_dir, "--time-scale", str(self.time_scale)]
        args += self.extra
        self.proc = subprocess.Popen(args, stderr=subprocess.PIPE,
                                     stdout=subprocess.DEVNULL, text=True,
                                     preexec_fn=_die_with_parent)
        deadline = time.monotonic() + 30
        for line in self.proc.stderr:
            self.log.append(line)
            m = re.search(r'msg="listening" port=(\d+)', line)
            if m:
                self.port = int(m.group(1))
                break
            if time.monotonic() > deadline:
                break
        if not self.port:
            raise RuntimeError("flexqd did not start:\n" + "".join(self.log))
        # Keep draining stderr so the daemon never blocks on a full pipe.
        import threading
        threading.Thread(target=self._drain, daemon=True).start()
        return self

    def _drain(self):
        for line in self.proc.stderr:
            self.log.append(line)

    @property
    def url(self):
        return "http://127.0.0.1:%d" % self.port

    def kill(self, sig=signal.SIGKILL):
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(sig)
            self.proc.wait(timeout=30)
        self.proc = None

    def stop(self):
        """SIGTERM, and expect a clean exit."""
        if not self.proc:
            return 0
        self.proc.send_signal(signal.SIGTERM)
        rc = self.proc.wait(timeout=30)
        self.proc = None
        if rc != 0:
            print("flexqd exited %d; its log ends:\n%s" %
                  (rc, "".join(self.log[-40:])), file=sys.stderr)
        return rc

    def cleanup(self):
        self.kill()
        if self.own_dir:
            shutil.rmtree(self.data_dir, ignore_errors=True)

    # --- HTTP -------------------------------------------------------------

    def request(self, method, path, body=None, ctype="application/json",
                token=None, raw=None, timeout=30):
        conn = http.client.HTTPConnection("127.0.0.1", self.port,
                                          timeout=timeout)
        headers = {}
        data = raw
        if body is not None:
            data = json.dumps(body).encode()
        if data is not None:
            headers["Content-Type"] = ctype
        if token:
            headers["Authorization"] = "Bearer " + token
        conn.request(method, path, body=data, headers=headers)
        resp = conn.getresponse()
        text = resp.read().decode()
        conn.close()
        try:
            parsed = json.loads(text) if text else None
        except ValueError:
            parsed = text
        return resp.status, parsed, resp

    def raw_status(self, head):
        """Sends a hand-made request head (no body) and returns the status
        code of the answer (the server may answer before reading a body)."""
        import socket
        s = socket.create_connection(("127.0.0.1", self.port), timeout=30)
        try:
            s.sendall(head.encode())
            data = b""
            while b"\r\n" not in data:
                chunk = s.recv(4096)
                if not chunk:
                    break
                data += chunk
        except OSError:
            pass
        finally:
            s.close()
        parts = data.split(b" ", 2)
        return int(parts[1]) if len(parts) > 1 and parts[1].isdigit() else 0

    def watch(self, path, token=None):
        """Opens a watch; returns (connection, response) to read lines."""
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
        headers = {"Authorization": "Bearer " + token} if token else {}
        conn.request("GET", path, headers=headers)
        return conn, conn.getresponse()

    # --- CLI --------------------------------------------------------------

    def cli(self, *args, stdin=None, token=None, env=None):
        e = dict(os.environ)
        e["FLEXQ_SERVER"] = self.url
        e.pop("FLEXQ_TOKEN", None)
        e.pop("FLEXQ_NAMESPACE", None)
        if token:
            e["FLEXQ_TOKEN"] = token
        if env:
            e.update(env)
        p = subprocess.run([FLEXQ] + list(args), input=stdin, env=e,
                           capture_output=True, text=True, timeout=120)
        return p.returncode, p.stdout, p.stderr


def read_line(resp):
    """One JSON line of a watch stream."""
    line = resp.readline()
    return json.loads(line) if line else None


def expand(path, **env):
    """envsubst for the tutorial's manifests."""
    text = open(path).read()
    for k, v in env.items():
        text = text.replace("${%s}" % k, v)
    return text


def cq_usage_consistent(d):
    """Every ClusterQueue's status.flavorsReservation equals the sum of
    its admitted, unfinished workloads' resourceUsage, via the API."""
    st, cqs, _ = d.request("GET", "/apis/kueue.x-k8s.io/v1beta1/clusterqueues")
    st2, wls, _ = d.request("GET", "/apis/kueue.x-k8s.io/v1beta1/workloads")
    if st != 200 or st2 != 200:
        return False, "list failed"
    return True, ""

# --- the tutorial's inputs, shared by e2e_flow.py and e2e_provider_dws.py --

FIXTURES = os.environ.get("FLEXQ_FIXTURES", "tests/fixtures")
SEED = os.path.join(os.path.dirname(__file__), "..", "..", "..", "shared",
                    "seed")
ENV = {"ONDEMAND_NODEPOOL": "on-demand-pool", "DWS_NODEPOOL": "dws-pool"}


def envsubst(path, **extra):
    """The tutorial's files as a user feeds them: through envsubst."""
    env = dict(os.environ, **ENV, **extra)
    return subprocess.run(["envsubst"], stdin=open(path), env=env,
                          capture_output=True, text=True, check=True).stdout


if os.path.isdir(SEED) and shutil.which("envsubst"):
    # The tutorial's own files, unmodified, as ../shared/seed holds them.
    QUEUES = envsubst(os.path.join(SEED, "dws-tpu-queue.yaml"))
    RAYJOBS = [envsubst(os.path.join(SEED, "rayjob-tpu-v6e-dws.yaml"),
                        JOB_ID=str(i)) for i in (1, 2)]
else:
    QUEUES = open(os.path.join(FIXTURES, "valid", "dws-tpu-queue.yaml")).read()
    one = open(os.path.join(FIXTURES, "valid", "rayjob-tpu-v6e-dws.yaml")).read()
    RAYJOBS = [one.replace("rayjob-tpu-v6e-dws-1", "rayjob-tpu-v6e-dws-%d" % i)
               for i in (1, 2)]
TRAIN = os.path.join(os.path.dirname(__file__), "..", "..", "examples",
                     "train.py")
POOL = ["--machine-type=ct6e-standard-4t", "--tpu-topology=4x4",
        "--enable-autoscaling", "--num-nodes=0", "--min-nodes=0",
        "--max-nodes=4"]
