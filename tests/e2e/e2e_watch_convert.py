"""Watches of Kueue's kinds in the version of their path, as Kueue's
conversion webhook serves them: a watch on kueue.x-k8s.io/v1beta1 gets
every object (the initial ADDED lines, later changes, the changes replayed
from a resourceVersion, DELETED) with apiVersion v1beta1 and v1beta1's
field names (spec.cohort), a watch on v1beta2 gets v1beta2's
(spec.cohortName), whatever version the object was written in; both
watching at once get their own shape from the same changes. BOOKMARKs,
Table watches (kubectl get -w) with the object embedded, single-object
Tables and list envelopes say the path's version too."""
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(__file__))
from harness import Daemon, check, finish  # noqa: E402

G = "/apis/kueue.x-k8s.io/"
TABLE = "application/json;as=Table;g=meta.k8s.io;v=v1"


def cq(version, name, cohort):
    key = "cohortName" if version == "v1beta2" else "cohort"
    return {"apiVersion": "kueue.x-k8s.io/" + version,
            "kind": "ClusterQueue", "metadata": {"name": name},
            "spec": {key: cohort, "namespaceSelector": {},
                     "resourceGroups": [{"coveredResources": ["cpu"],
                                         "flavors": [{"name": "f",
                                                      "resources": [{
                                                          "name": "cpu",
                                                          "nominalQuota":
                                                              1}]}]}]}}


class Watch:
    """A watch stream read line by line, with a deadline per line."""

    def __init__(self, d, path, accept=None):
        import http.client
        self.conn = http.client.HTTPConnection("127.0.0.1", d.port,
                                               timeout=30)
        headers = {"Accept": accept} if accept else {}
        self.conn.request("GET", path, headers=headers)
        self.resp = self.conn.getresponse()
        check(self.resp.status == 200, "watch %s: %s" % (path,
                                                         self.resp.status))

    def next(self):
        line = self.resp.readline()
        return json.loads(line) if line.strip() else None

    def until(self, pred, what):
        """Events up to the first for which pred holds (None at the end
        of the stream)."""
        while True:
            ev = self.next()
            if ev is None:
                check(False, "stream ended before " + what)
                return None
            if pred(ev):
                return ev

    def close(self):
        self.conn.close()


def named(name, etype=None):
    def pred(ev):
        obj = ev["object"]
        if obj.get("kind") == "Table":
            rows = obj.get("rows") or [{}]
            obj = rows[0].get("object", {})
        return obj.get("metadata", {}).get("name") == name and (
            etype is None or ev["type"] == etype)
    return pred


def shape(obj):
    """(apiVersion, the cohort field names present in spec)."""
    spec = obj.get("spec", {})
    return obj.get("apiVersion"), sorted(
        k for k in ("cohort", "cohortName") if k in spec)


d = Daemon(time_scale=100).start()
try:
    st, body, _ = d.request("POST", G + "v1beta1/resourceflavors", {
        "apiVersion": "kueue.x-k8s.io/v1beta1", "kind": "ResourceFlavor",
        "metadata": {"name": "f"}})
    check(st == 201, "flavor: %s %s" % (st, body))
    # written in v1beta2
    st, body, _ = d.request("POST", G + "v1beta2/clusterqueues",
                            cq("v1beta2", "two", "team"))
    check(st == 201, "create in v1beta2: %s %s" % (st, body))
    rv = body["metadata"]["resourceVersion"]

    # initial ADDED lines, in each watch's version
    w1 = Watch(d, G + "v1beta1/clusterqueues?watch=true&"
               "allowWatchBookmarks=true&timeoutSeconds=10")
    w2 = Watch(d, G + "v1beta2/clusterqueues?watch=1")
    ev = w1.until(named("two"), "the initial ADDED of two (v1beta1)")
    check(ev["type"] == "ADDED" and shape(ev["object"]) ==
          ("kueue.x-k8s.io/v1beta1", ["cohort"]) and
          ev["object"]["spec"]["cohort"] == "team",
          "v1beta1 watch, initial line: %s" % ev)
    ev = w2.until(named("two"), "the initial ADDED of two (v1beta2)")
    check(shape(ev["object"]) == ("kueue.x-k8s.io/v1beta2", ["cohortName"]),
          "v1beta2 watch, initial line: %s" % ev)

    # a change written in v1beta1, seen by both at once
    st, body, _ = d.request("POST", G + "v1beta1/clusterqueues",
                            cq("v1beta1", "one", "lab"))
    check(st == 201, "create in v1beta1: %s %s" % (st, body))
    ev = w1.until(named("one"), "ADDED one on v1beta1")
    check(shape(ev["object"]) == ("kueue.x-k8s.io/v1beta1", ["cohort"]),
          "v1beta1 watch, a v1beta1 object: %s" % ev)
    ev = w2.until(named("one"), "ADDED one on v1beta2")
    check(shape(ev["object"]) == ("kueue.x-k8s.io/v1beta2", ["cohortName"])
          and ev["object"]["spec"]["cohortName"] == "lab",
          "v1beta2 watch, a v1beta1 object converted: %s" % ev)

    # a modification through v1beta2, then a delete
    st, body, _ = d.request("PATCH", G + "v1beta2/clusterqueues/two",
                            {"spec": {"cohortName": "other"}},
                            ctype="application/merge-patch+json")
    check(st == 200, "patch in v1beta2: %s %s" % (st, body))
    ev = w1.until(named("two", "MODIFIED"), "MODIFIED two on v1beta1")
    check(ev["object"]["spec"].get("cohort") == "other" and
          shape(ev["object"])[1] == ["cohort"],
          "v1beta1 watch, MODIFIED: %s" % ev)
    st, body, _ = d.request("DELETE", G + "v1beta1/clusterqueues/one")
    check(st == 200, "delete: %s %s" % (st, body))
    ev = w2.until(named("one", "DELETED"), "DELETED one on v1beta2")
    check(shape(ev["object"]) == ("kueue.x-k8s.io/v1beta2", ["cohortName"]),
          "v1beta2 watch, DELETED: %s" % ev)
    w2.close()

    # the closing BOOKMARK of the v1beta1 watch
    ev = w1.until(lambda e: e["type"] == "BOOKMARK", "the BOOKMARK")
    check(ev and ev["object"]["apiVersion"] == "kueue.x-k8s.io/v1beta1",
          "BOOKMARK in the path's version: %s" % ev)
    w1.close()

    # replayed from a resourceVersion (the ring) on v1beta1
    w3 = Watch(d, G + "v1beta1/clusterqueues?watch=true&resourceVersion=" +
               rv)
    ev = w3.until(named("one", "ADDED"), "the replayed ADDED of one")
    check(shape(ev["object"]) == ("kueue.x-k8s.io/v1beta1", ["cohort"]),
          "replay keeps v1beta1: %s" % ev)
    ev = w3.until(named("two", "MODIFIED"), "the replayed MODIFIED of two")
    check(shape(ev["object"]) == ("kueue.x-k8s.io/v1beta1", ["cohort"]),
          "replayed v1beta2 write converted: %s" % ev)
    w3.close()

    # a Table watch (kubectl get -w -o wide) with the object embedded
    w4 = Watch(d, G + "v1beta1/clusterqueues?watch=true&"
               "includeObject=Object", accept=TABLE)
    ev = w4.until(named("two"), "the Table row of two")
    t = ev["object"]
    cols = [c["name"] for c in t["columnDefinitions"]]
    row = t["rows"][0]
    check(row["cells"][cols.index("Cohort")] == "other" and
          shape(row["object"]) == ("kueue.x-k8s.io/v1beta1", ["cohort"]),
          "Table watch row in v1beta1: %s" % ev)
    w4.close()

    # one object as a Table, and the list envelope
    import http.client
    conn = http.client.HTTPConnection("127.0.0.1", d.port, timeout=30)
    conn.request("GET", G + "v1beta2/clusterqueues/two?includeObject=Object",
                 headers={"Accept": TABLE})
    resp = conn.getresponse()
    t = json.loads(resp.read())
    conn.close()
    check(resp.status == 200 and t["kind"] == "Table" and
          shape(t["rows"][0]["object"]) ==
          ("kueue.x-k8s.io/v1beta2", ["cohortName"]),
          "one object as a Table in v1beta2: %s" % t)
    st, body, _ = d.request("GET", G + "v1beta2/clusterqueues")
    check(st == 200 and body["apiVersion"] == "kueue.x-k8s.io/v1beta2" and
          [shape(i) for i in body["items"]] ==
          [("kueue.x-k8s.io/v1beta2", ["cohortName"])],
          "list in v1beta2: %s" % body)
    st, body, _ = d.request("GET", G + "v1beta1/clusterqueues")
    check(st == 200 and body["apiVersion"] == "kueue.x-k8s.io/v1beta1",
          "list in v1beta1: %s" % body.get("apiVersion"))
finally:
    d.cleanup()
finish()
