"""Crash test: SIGKILL flexqd while clients create objects, restart it on
the same data directory, and check that every acknowledged object is there,
that `flexqd --check` is clean, and that quota usage matches the admitted
workloads (nothing admitted twice). At least 20 rounds.

Each round, 4 client threads create ConfigMaps and Workloads over HTTP and
record every 201; the main thread kills flexqd when the acknowledgements
reach a random count (an event, not a sleep), so kills land at varied
points: mid-request, mid-commit, between turns.

Last, a data directory written by an older flexqd (schema 2, built here
with Python's sqlite3) is opened: the migration to schema 3 keeps its
objects and event history, and writes after it survive a restart."""
import http.client
import json
import os
import random
import shutil
import sqlite3
import subprocess
import sys
import threading

sys.path.insert(0, os.path.dirname(__file__))
from harness import FLEXQD, Daemon, check, finish  # noqa: E402

ROUNDS = int(os.environ.get("FLEXQ_CRASH_ROUNDS", "20"))
CLIENTS = 4
QUOTA = 10
KQ = "/apis/kueue.x-k8s.io/v1beta1"

SETUP = [
    ("/apis/kueue.x-k8s.io/v1beta1/resourceflavors",
     {"apiVersion": "kueue.x-k8s.io/v1beta1", "kind": "ResourceFlavor",
      "metadata": {"name": "f"}}),
    ("/apis/kueue.x-k8s.io/v1beta1/clusterqueues",
     {"apiVersion": "kueue.x-k8s.io/v1beta1", "kind": "ClusterQueue",
      "metadata": {"name": "cq"},
      "spec": {"namespaceSelector": {}, "resourceGroups": [
          {"coveredResources": ["cpu"], "flavors": [
              {"name": "f", "resources": [
                  {"name": "cpu", "nominalQuota": QUOTA}]}]}]}}),
    ("/apis/kueue.x-k8s.io/v1beta1/namespaces/default/localqueues",
     {"apiVersion": "kueue.x-k8s.io/v1beta1", "kind": "LocalQueue",
      "metadata": {"name": "lq", "namespace": "default"},
      "spec": {"clusterQueue": "cq"}}),
]


def workload(name):
    return {"apiVersion": "kueue.x-k8s.io/v1beta1", "kind": "Workload",
            "metadata": {"name": name, "namespace": "default"},
            "spec": {"queueName": "lq", "podSets": [
                {"name": "main", "count": 1, "template": {"spec": {
                    "containers": [{"name": "c", "image": "x", "resources": {
                        "requests": {"cpu": "1"}}}]}}}]}}


def configmap(name):
    return {"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": name, "namespace": "default"},
            "data": {"n": name}}


class Clients:
    def __init__(self, port, rnd, target):
        self.port = port
        self.rnd = rnd
        self.acked = []  # (path, name)
        self.lock = threading.Lock()
        self.target = target
        self.reached = threading.Event()
        self.threads = []

    def run(self, cid):
        conn = None
        i = 0
        while True:
            i += 1
            name = "r%d-c%d-%d" % (self.rnd, cid, i)
            if i % 2:
                path = KQ + "/namespaces/default/workloads"
                body = workload(name)
            else:
                path = "/api/v1/namespaces/default/configmaps"
                body = configmap(name)
            try:
                if conn is None:
                    conn = http.client.HTTPConnection("127.0.0.1", self.port,
                                                      timeout=30)
                conn.request("POST", path, body=json.dumps(body),
                             headers={"Content-Type": "application/json"})
                resp = conn.getresponse()
                resp.read()
            except (OSError, http.client.HTTPException):
                return  # the daemon is gone
            if resp.status == 201:
                with self.lock:
                    self.acked.append((path, name))
                    if len(self.acked) >= self.target:
                        self.reached.set()

    def start(self):
        for c in range(CLIENTS):
            t = threading.Thread(target=self.run, args=(c,), daemon=True)
            t.start()
            self.threads.append(t)

    def join(self):
        for t in self.threads:
            t.join(timeout=60)


def names(d, path):
    st, body, _ = d.request("GET", path)
    if st != 200:
        return None
    return {i["metadata"]["name"] for i in body["items"]}


def cond(obj, t):
    for c in obj.get("status", {}).get("conditions", []):
        if c["type"] == t:
            return c["status"] == "True"
    return False


def quota_consistent(d):
    st, cq, _ = d.request("GET", KQ + "/clusterqueues/cq")
    st2, wls, _ = d.request("GET", KQ + "/workloads")
    reserved = [w for w in wls["items"]
                if cond(w, "QuotaReserved") and not cond(w, "Finished")]
    total = 0
    for f in cq.get("status", {}).get("flavorsReservation", []):
        for r in f["resources"]:
            if r["name"] == "cpu":
                total += int(str(r["total"]))
    ok = total == len(reserved) and len(reserved) <= QUOTA
    return ok, "cq reserves %d cpu, %d workloads hold quota (quota %d)" % (
        total, len(reserved), QUOTA)


def migration_from_schema_2():
    """A schema-2 file (WITHOUT ROWID objects keyed by kind/ns/name, an
    AUTOINCREMENT event history with a name index), as flexqd 2 wrote it."""
    import tempfile
    tmp = tempfile.mkdtemp(prefix="flexq-e2e-mig-")
    try:
        db = sqlite3.connect(os.path.join(tmp, "flexq.db"))
        db.executescript("""
            PRAGMA journal_mode=WAL;
            CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
            CREATE TABLE objects (kind TEXT NOT NULL, ns TEXT NOT NULL,
              name TEXT NOT NULL, rev INTEGER NOT NULL, body TEXT NOT NULL,
              PRIMARY KEY (kind, ns, name)) WITHOUT ROWID;
            CREATE TABLE event_history (id INTEGER PRIMARY KEY AUTOINCREMENT,
              rev INTEGER NOT NULL, ns TEXT NOT NULL, name TEXT NOT NULL,
              body TEXT NOT NULL);
            CREATE INDEX event_history_name ON event_history (ns, name);
            PRAGMA user_version = 2;""")
        for i in range(3):
            cm = configmap("old-%d" % i)
            cm["metadata"].update({"uid": "u-%d" % i, "resourceVersion":
                                   str(10 + i), "generation": 1,
                                   "creationTimestamp": "2026-11-01T00:00:00Z"})
            db.execute("INSERT INTO objects VALUES ('ConfigMap', 'default', "
                       "?, ?, ?)", ("old-%d" % i, 10 + i, json.dumps(cm)))
        db.execute("INSERT INTO event_history (rev, ns, name, body) VALUES "
                   "(9, 'default', 'e', '{}')")
        db.execute("INSERT INTO meta VALUES ('revision', '12')")
        db.commit()
        db.close()
        m = Daemon(data_dir=tmp, time_scale=1).start()
        try:
            got = names(m, "/api/v1/namespaces/default/configmaps")
            check(got == {"old-0", "old-1", "old-2"},
                  "migrated objects served: %s" % got)
            st, body, _ = m.request("POST",
                                    "/api/v1/namespaces/default/configmaps",
                                    configmap("new-0"))
            check(st == 201 and int(body["metadata"]["resourceVersion"]) > 12,
                  "a create after migration continues the revisions: %s" %
                  body)
            st, _, _ = m.request("DELETE",
                                 "/api/v1/namespaces/default/configmaps/old-1")
            check(st == 200, "delete of a migrated object")
            m.kill()
            m.start()
            got = names(m, "/api/v1/namespaces/default/configmaps")
            check(got == {"old-0", "old-2", "new-0"},
                  "after restart: %s" % got)
            check(m.stop() == 0, "migrated daemon stops cleanly")
        finally:
            m.kill()
        p = subprocess.run([FLEXQD, "--check", tmp], capture_output=True,
                           text=True, timeout=60)
        check(p.returncode == 0 and "schema version: 3" in p.stdout and
              "configmaps: 3" in p.stdout,
              "--check after migration: %s %s" % (p.stdout, p.stderr))
        db = sqlite3.connect(os.path.join(tmp, "flexq.db"))
        hist = db.execute("SELECT id, rev FROM event_history").fetchall()
        db.close()
        check(hist == [(1, 9)], "event history migrated: %s" % hist)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


d = Daemon(time_scale=1).start()
all_acked = []
try:
    for path, obj in SETUP:
        st, body, _ = d.request("POST", path, obj)
        check(st == 201, "setup %s: %s" % (obj["metadata"]["name"], body))
    rng = random.Random(int(os.environ.get("FLEXQ_CRASH_SEED", "20261129")))
    for rnd in range(ROUNDS):
        cl = Clients(d.port, rnd, rng.randint(1, 80))
        cl.start()
        cl.reached.wait(timeout=60)
        d.kill()  # SIGKILL, mid-flight
        cl.join()
        all_acked += cl.acked
        d.start()
        wl = names(d, KQ + "/workloads")
        cm = names(d, "/api/v1/configmaps")
        missing = [n for p, n in all_acked
                   if n not in (wl if "workloads" in p else cm)]
        check(not missing, "round %d: acknowledged but lost: %s" %
              (rnd, missing[:5]))
        ok, why = quota_consistent(d)
        check(ok, "round %d: %s" % (rnd, why))
        p = subprocess.run([FLEXQD, "--check", d.data_dir],
                           capture_output=True, text=True, timeout=60)
        check(p.returncode == 0, "round %d: --check: %s %s" %
              (rnd, p.stdout, p.stderr))
    print("%d rounds, %d acknowledged writes, all present" %
          (ROUNDS, len(all_acked)))
    check(len(all_acked) >= ROUNDS, "clients made progress")
    # The event history survives restarts.
    st, ev, _ = d.request("GET", "/api/v1/namespaces/default/events")
    check(st == 200 and any(e.get("reason") == "QuotaReserved"
                            for e in ev["items"]), "events kept")
    check(d.stop() == 0, "clean shutdown")
    p = subprocess.run([FLEXQD, "--check", d.data_dir], capture_output=True,
                       text=True, timeout=60)
    check(p.returncode == 0 and "ok: 0 problem(s)" in p.stdout,
          "final --check: %s" % p.stdout)
finally:
    d.cleanup()
migration_from_schema_2()
finish()
