"""The HTTP API without the CLI: discovery, CRUD with resourceVersion
conflicts, merge patch, label and field selectors, list pages (limit and
continue), watch streams (replay from a resourceVersion, timeoutSeconds,
BOOKMARK events, 410 Expired for a resourceVersion older than the kept
history: after a restart and after 8192 changes), status subresource, and bad input (malformed JSON/YAML, limits,
unknown kinds, invalid objects with the field path) changing nothing."""
import base64
import http.client
import json
import os
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(__file__))
from harness import Daemon, check, finish, read_line  # noqa: E402

KQ = "/apis/kueue.x-k8s.io/v1beta1"
CM = "/api/v1/namespaces/default/configmaps"


def cm(name, labels=None, data=None):
    return {"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": name, "labels": labels or {}},
            "data": data or {"k": "v"}}


d = Daemon().start()
try:
    st, body, _ = d.request("GET", "/healthz")
    check(st == 200 and body == "ok", "healthz")
    st, body, _ = d.request("GET", "/version")
    check(st == 200 and body["gitVersion"].startswith("v"), "version")

    # --- discovery ------------------------------------------------------
    st, body, _ = d.request("GET", "/api")
    check(st == 200 and body["versions"] == ["v1"], "/api")
    st, body, _ = d.request("GET", "/apis")
    groups = {g["name"] for g in body["groups"]}
    check({"kueue.x-k8s.io", "ray.io", "batch", "autoscaling.x-k8s.io",
           "flexq.dev"} <= groups, "/apis groups: %s" % groups)
    st, body, _ = d.request("GET", KQ)
    res = {r["name"]: r for r in body["resources"]}
    check(res["clusterqueues"]["shortNames"] == ["cq"] and
          not res["clusterqueues"]["namespaced"], "cq discovery")
    check("wl" in res["workloads"]["shortNames"] and
          res["workloads"]["namespaced"], "wl discovery")
    check("workloads/status" in res, "status subresource listed")
    st, body, _ = d.request("GET", "/apis/kueue.x-k8s.io/v1beta2")
    check(st == 200 and body["resources"], "v1beta2 served too")
    st, body, _ = d.request("GET", "/api/v1")
    names = {r["name"] for r in body["resources"]}
    check({"pods", "configmaps", "events", "nodes", "namespaces"} <= names,
          "core resources: %s" % names)

    # --- create / get / list ------------------------------------------
    st, a, _ = d.request("POST", CM, cm("a", {"team": "x"}))
    check(st == 201, "create 201: %s %s" % (st, a))
    md = a["metadata"]
    check(md.get("uid") and md.get("resourceVersion") and
          md.get("creationTimestamp") and md.get("namespace") == "default",
          "server fields: %s" % md)
    st, body, _ = d.request("POST", CM, cm("a"))
    check(st == 409 and body["reason"] == "AlreadyExists" and
          body["kind"] == "Status" and body["code"] == 409,
          "create twice: %s" % body)
    d.request("POST", CM, cm("b", {"team": "y"}))
    d.request("POST", CM, cm("c", {"team": "x", "tier": "gold"}))
    st, body, _ = d.request("GET", CM + "?labelSelector=team%3Dx")
    check([i["metadata"]["name"] for i in body["items"]] == ["a", "c"],
          "labelSelector team=x: %s" % body)
    check(body["kind"] == "ConfigMapList", "list kind")
    st, body, _ = d.request("GET", CM + "?labelSelector=team!%3Dx")
    check([i["metadata"]["name"] for i in body["items"]] == ["b"],
          "team!=x")
    st, body, _ = d.request("GET", CM + "?labelSelector=tier")
    check([i["metadata"]["name"] for i in body["items"]] == ["c"], "exists")
    st, body, _ = d.request("GET", CM + "?labelSelector=team%20in%20(x,y),!tier")
    check([i["metadata"]["name"] for i in body["items"]] == ["a", "b"],
          "in + !: %s" % body)
    st, body, _ = d.request("GET", CM + "?fieldSelector=metadata.name%3Db")
    check([i["metadata"]["name"] for i in body["items"]] == ["b"],
          "fieldSelector")
    st, body, _ = d.request("GET", "/api/v1/configmaps")
    check(len(body["items"]) == 3, "list across namespaces")
    st, body, _ = d.request("GET", CM + "/zzz")
    check(st == 404 and body["reason"] == "NotFound" and
          body["details"]["name"] == "zzz", "404 Status: %s" % body)

    # --- update with resourceVersion conflicts -------------------------
    st, cur, _ = d.request("GET", CM + "/a")
    old_rv = cur["metadata"]["resourceVersion"]
    cur["data"] = {"k": "v2"}
    st, upd, _ = d.request("PUT", CM + "/a", cur)
    check(st == 200 and upd["data"]["k"] == "v2" and
          upd["metadata"]["resourceVersion"] != old_rv, "PUT: %s" % upd)
    check(upd["metadata"]["uid"] == md["uid"], "uid kept")
    cur["data"] = {"k": "stale"}
    st, body, _ = d.request("PUT", CM + "/a", cur)
    check(st == 409 and body["reason"] == "Conflict", "stale PUT: %s" % body)
    st, now, _ = d.request("GET", CM + "/a")
    check(now["data"]["k"] == "v2", "stale PUT changed nothing")
    st, body, _ = d.request("PUT", CM + "/a", cm("other"))
    check(st == 422 and "does not match" in body["message"],
          "name mismatch: %s" % body)

    # --- merge patch -----------------------------------------------------
    st, p, _ = d.request("PATCH", CM + "/a",
                         {"metadata": {"labels": {"team": None, "new": "1"}},
                          "data": {"extra": "e"}},
                         ctype="application/merge-patch+json")
    check(st == 200 and p["metadata"]["labels"] == {"new": "1"} and
          p["data"] == {"k": "v2", "extra": "e"}, "merge patch: %s" % p)
    st, body, _ = d.request("PATCH", CM + "/a",
                            {"metadata": {"resourceVersion": "1"}},
                            ctype="application/merge-patch+json")
    check(st == 409, "patch with stale rv: %s" % st)
    st, body, _ = d.request("PATCH", CM + "/a", [{"op": "add"}],
                            ctype="application/json-patch+json")
    check(st == 400, "a JSON patch operation without a path is 400: %s" %
          st)
    st, body, _ = d.request("PATCH", CM + "/nope", {"data": {}},
                            ctype="application/merge-patch+json")
    check(st == 404, "patch missing: %s" % st)

    # --- server-side apply (what flexq apply uses) ----------------------
    st, body, r = d.request("PATCH", CM + "/applied", cm("applied"),
                            ctype="application/apply-patch+json")
    check(st == 201 and r.getheader("X-Flexq-Result") == "created",
          "apply creates")
    st, body, r = d.request("PATCH", CM + "/applied", cm("applied"),
                            ctype="application/apply-patch+json")
    check(st == 200 and r.getheader("X-Flexq-Result") == "unchanged",
          "apply unchanged")

    # --- watch ------------------------------------------------------------
    conn, resp = d.watch(CM + "?watch=true&labelSelector=w%3D1")
    check(resp.status == 200, "watch 200")
    d.request("POST", CM, cm("w1", {"w": "1"}))
    d.request("POST", CM, cm("ignored", {"w": "2"}))
    ev = read_line(resp)
    check(ev and ev["type"] == "ADDED" and
          ev["object"]["metadata"]["name"] == "w1", "watch ADDED: %s" % ev)
    d.request("PATCH", CM + "/w1", {"data": {"x": "y"}},
              ctype="application/merge-patch+json")
    ev = read_line(resp)
    check(ev and ev["type"] == "MODIFIED" and ev["object"]["data"]["x"] == "y",
          "watch MODIFIED: %s" % ev)
    st, body, _ = d.request("DELETE", CM + "/w1")
    check(st == 200 and body["metadata"]["name"] == "w1", "delete returns it")
    ev = read_line(resp)
    check(ev and ev["type"] == "DELETED", "watch DELETED: %s" % ev)
    conn.close()

    # A watch from a resourceVersion replays what it missed.
    st, x, _ = d.request("POST", CM, cm("x1"))
    rv = x["metadata"]["resourceVersion"]
    d.request("PATCH", CM + "/x1", {"data": {"n": "2"}},
              ctype="application/merge-patch+json")
    conn, resp = d.watch(CM + "?watch=true&resourceVersion=%s"
                         "&fieldSelector=metadata.name%%3Dx1" % rv)
    ev = read_line(resp)
    check(ev and ev["type"] == "MODIFIED" and ev["object"]["data"]["n"] == "2",
          "watch from rv replays: %s" % ev)
    conn.close()
    # Without a resourceVersion it starts with the current objects.
    conn, resp = d.watch(CM + "/x1?watch=true")
    ev = read_line(resp)
    check(ev and ev["type"] == "ADDED" and ev["object"]["metadata"]["name"] ==
          "x1", "watch lists first: %s" % ev)
    conn.close()

    # --- status subresource ----------------------------------------------
    wl = {"apiVersion": "kueue.x-k8s.io/v1beta1", "kind": "Workload",
          "metadata": {"name": "s1"},
          "spec": {"queueName": "nowhere", "podSets": [
              {"name": "main", "count": 1, "template": {"spec": {
                  "containers": [{"name": "c", "image": "x"}]}}}]}}
    WL = KQ + "/namespaces/default/workloads"
    st, body, _ = d.request("POST", WL, wl)
    check(st == 201, "workload with a missing queue accepted: %s" % body)
    st, body, _ = d.request("PATCH", WL + "/s1/status",
                            {"status": {"conditions": [
                                {"type": "Evicted", "status": "True",
                                 "reason": "NodesUnavailable",
                                 "message": "test",
                                 "lastTransitionTime": "2026-01-01T00:00:00Z"}]}},
                            ctype="application/merge-patch+json")
    check(st == 200 and any(c["type"] == "Evicted" for c in
                            body["status"]["conditions"]),
          "status patch: %s" % body)
    spec_before = body["spec"]
    md = {k: v for k, v in body["metadata"].items() if k != "resourceVersion"}
    st, body, _ = d.request("PUT", WL + "/s1/status",
                            dict(body, spec={"queueName": "changed"},
                                 metadata=md))
    check(st == 200 and body["spec"] == spec_before,
          "status PUT ignores spec")

    # --- list pages: limit and continue ----------------------------------
    for i in range(7):
        d.request("POST", CM, cm("p-%d" % i, {"page": "1"}))
    PG = CM + "?labelSelector=page%3D1&limit=3"
    st, p1, _ = d.request("GET", PG)
    check(st == 200 and [i["metadata"]["name"] for i in p1["items"]] ==
          ["p-0", "p-1", "p-2"], "page 1: %s" % p1)
    tok = p1["metadata"].get("continue")
    # With a selector the count left is unknown: Kubernetes leaves it out.
    check(tok and "remainingItemCount" not in p1["metadata"],
          "page 1 continues, no count with a selector: %s" % p1["metadata"])
    st, every, _ = d.request("GET", CM)
    st, u1, _ = d.request("GET", CM + "?limit=2")
    check(st == 200 and len(u1["items"]) == 2 and
          u1["metadata"].get("remainingItemCount") ==
          len(every["items"]) - 2 and u1["metadata"].get("continue"),
          "without a selector, the count left: %s" % u1["metadata"])
    # Changes between pages: p-1 (already listed) and p-4 (not yet) go.
    d.request("DELETE", CM + "/p-1")
    d.request("DELETE", CM + "/p-4")
    st, p2, _ = d.request("GET", PG + "&continue=" + tok)
    check(st == 200 and [i["metadata"]["name"] for i in p2["items"]] ==
          ["p-3", "p-5", "p-6"] and "continue" not in p2["metadata"],
          "page 2 after the key of page 1, without p-4: %s" % p2)
    st, p2, _ = d.request("GET", PG.replace("limit=3", "limit=2") +
                          "&continue=" + tok)
    check([i["metadata"]["name"] for i in p2["items"]] == ["p-3", "p-5"] and
          p2["metadata"].get("continue") and
          "remainingItemCount" not in p2["metadata"],
          "limit 2 from the same token: %s" % p2)
    st, p3, _ = d.request("GET", PG + "&continue=" + p2["metadata"]["continue"])
    check([i["metadata"]["name"] for i in p3["items"]] == ["p-6"] and
          "continue" not in p3["metadata"], "last page: %s" % p3)
    st, body, _ = d.request("GET", CM + "?labelSelector=page%3D1&limit=0")
    check(len(body["items"]) == 5 and "continue" not in body["metadata"],
          "limit=0 is no limit")
    st, body, _ = d.request("GET", CM + "?limit=x")
    check(st == 400 and body["reason"] == "BadRequest", "limit=x: %s" % st)
    bad = base64.urlsafe_b64encode(b"2\0default\0p-0").decode().rstrip("=")
    for t in ("%%%", "!!", bad):
        st, body, _ = d.request("GET", CM + "?limit=2&continue=" + t)
        check(st == 400 and "continue" in body["message"],
              "bad continue token %r: %s %s" % (t, st, body))
    # Across namespaces, (namespace, name) order carries on.
    d.request("POST", "/api/v1/namespaces/zz/configmaps",
              dict(cm("p-9", {"page": "1"}), metadata={
                  "name": "p-9", "namespace": "zz", "labels": {"page": "1"}}))
    seen, tok = [], ""
    while True:
        st, pg, _ = d.request("GET", "/api/v1/configmaps?labelSelector=page"
                              "%3D1&limit=2" + ("&continue=" + tok if tok
                                                else ""))
        seen += ["%s/%s" % (i["metadata"]["namespace"], i["metadata"]["name"])
                 for i in pg["items"]]
        tok = pg["metadata"].get("continue")
        if not tok or len(seen) > 20:
            break
    check(seen == ["default/p-0", "default/p-2", "default/p-3", "default/p-5",
                   "default/p-6", "zz/p-9"], "all pages: %s" % seen)

    # --- bad input changes nothing ---------------------------------------
    st, before, _ = d.request("GET", "/api/v1/configmaps")
    n_before = len(before["items"])
    st, body, _ = d.request("POST", CM, raw=b"{not json", ctype="application/json")
    check(st == 400 and body["reason"] == "BadRequest", "malformed JSON")
    st, body, _ = d.request("POST", CM, raw=b"a: [1, 2", ctype="application/yaml")
    check(st == 400, "malformed YAML: %s" % st)
    # A number JSON cannot carry would be stored as null: refused where it is.
    nan = (b"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: nan\n"
           b"extra:\n  x: .nan\n")
    st, body, _ = d.request("POST", CM, raw=nan, ctype="application/yaml")
    check(st == 400 and "body:6:6" in body.get("message", "")
          and ".nan is not a number JSON can carry" in body["message"],
          "YAML .nan: %s %s" % (st, body))
    st, body, _ = d.request("POST", CM, raw=b'{"apiVersion": "v1", "kind": '
                            b'"ConfigMap", "metadata": {"name": "inf"}, '
                            b'"extra": 1e999}')
    check(st == 400 and "1e999 is not a number" in body.get("message", ""),
          "JSON 1e999: %s %s" % (st, body))
    deep = "[" * 200 + "]" * 200
    st, body, _ = d.request("POST", CM, raw=('{"a":%s}' % deep).encode())
    check(st in (400, 413), "too deep: %s" % st)
    st = d.raw_status("POST %s HTTP/1.1\r\nHost: x\r\nContent-Type: "
                      "application/json\r\nContent-Length: %d\r\n\r\n"
                      % (CM, 5 << 20))
    check(st == 413, "body over the limit: %s" % st)
    st = d.raw_status("GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: %s\r\n\r\n"
                      % ("y" * (70 << 10)))
    check(st in (400, 413, 431), "headers over the limit: %s" % st)
    st, body, _ = d.request("POST", "/apis/example.com/v1/namespaces/default/frobs",
                            {"kind": "Frob"})
    check(st == 404 and body["kind"] == "Status", "unknown kind: %s" % body)
    bad = {"apiVersion": "kueue.x-k8s.io/v1beta1", "kind": "ClusterQueue",
           "metadata": {"name": "bad"},
           "spec": {"resourceGroups": [{"coveredResources": ["cpu"],
                                        "flavors": [{"name": "f", "resources": [
                                            {"name": "cpu",
                                             "nominalQuota": "16x"}]}]}]}}
    st, body, _ = d.request("POST", KQ + "/clusterqueues", bad)
    check(st == 422 and body["reason"] == "Invalid", "invalid object: %s" % body)
    causes = body.get("details", {}).get("causes", [])
    check(causes and "nominalQuota" in causes[0].get("field", ""),
          "field path in causes: %s" % body)
    st, body, _ = d.request("POST", CM, {"apiVersion": "v1", "kind": "Pod",
                                         "metadata": {"name": "p"}})
    check(st == 422, "kind does not match the path: %s" % st)
    st, body, _ = d.request("POST", CM, {"apiVersion": "v1",
                                         "kind": "ConfigMap",
                                         "metadata": {"name": "Bad_Name"}})
    check(st == 422, "invalid name: %s" % st)
    st, after, _ = d.request("GET", "/api/v1/configmaps")
    check(len(after["items"]) == n_before, "bad input created nothing")
    st, body, _ = d.request("GET", KQ + "/clusterqueues/bad")
    check(st == 404, "invalid cq not stored")
    st, body, _ = d.request("DELETE", CM)
    check(st == 405, "DELETE on a collection: %s" % st)
    st, body, _ = d.request("GET", "/nothing/here")
    check(st == 404, "unknown path")
    # A watch still open at shutdown is ended cleanly.
    conn, resp = d.watch(CM + "?watch=true&labelSelector=none%3D1")
    check(d.stop() == 0, "clean shutdown with a watch open")
    try:
        rest = resp.read()
    except http.client.IncompleteRead as e:
        rest = e.partial
    check(rest == b"", "the open watch ends at shutdown: %r" % rest)
    conn.close()

    # --- watch history, timeoutSeconds, bookmarks -------------------------
    d.start()  # same data directory: the watch history starts again
    st, body, _ = d.request("GET", CM + "?watch=true&resourceVersion=%s" % rv)
    check(st == 410 and body["reason"] == "Expired" and body["code"] == 410,
          "watch from before the restart: 410 Expired: %s %s" % (st, body))
    st, lst, _ = d.request("GET", CM)
    now_rv = lst["metadata"]["resourceVersion"]
    t0 = time.monotonic()
    conn, resp = d.watch(CM + "?watch=true&resourceVersion=%s&timeoutSeconds=1"
                         "&allowWatchBookmarks=true&labelSelector=b%%3D1"
                         % now_rv)
    check(resp.status == 200, "watch from the listed rv: %s" % resp.status)
    d.request("POST", CM, cm("b1", {"b": "1"}))
    st, other, _ = d.request("POST", CM, cm("b2", {"b": "2"}))
    lines = [json.loads(x) for x in resp.read().splitlines() if x]
    conn.close()
    waited = time.monotonic() - t0
    types = [x["type"] for x in lines]
    check(types == ["ADDED", "BOOKMARK"], "ADDED then BOOKMARK: %s" % lines)
    if len(lines) == 2:
        bm = lines[1]["object"]
        check(bm["kind"] == "ConfigMap" and bm["apiVersion"] == "v1" and
              int(bm["metadata"]["resourceVersion"]) >=
              int(other["metadata"]["resourceVersion"]),
              "bookmark at the last committed revision: %s" % bm)
        # Resuming from the bookmark misses nothing and repeats nothing.
        d.request("POST", CM, cm("b3", {"b": "1"}))
        conn, resp = d.watch(CM + "?watch=true&labelSelector=b%%3D1"
                             "&timeoutSeconds=1&resourceVersion=%s"
                             % bm["metadata"]["resourceVersion"])
        rest = [json.loads(x) for x in resp.read().splitlines() if x]
        conn.close()
        check([(x["type"], x["object"]["metadata"]["name"]) for x in rest] ==
              [("ADDED", "b3")], "resume from the bookmark: %s" % rest)
    check(0.9 <= waited < 20, "the watch ended by timeoutSeconds: %.2f s"
          % waited)
    st, body, _ = d.request("GET", CM + "?watch=true&timeoutSeconds=-1")
    check(st == 400, "negative timeoutSeconds: %s" % st)

    check(d.stop() == 0, "clean shutdown after restart")
finally:
    d.cleanup()

# The history keeps the last 8192 changes: once more happened, a watch from
# before them is 410 too, and one from within them replays. (--sync normal:
# eight thousand fsyncs would only make the test slow.)
d = Daemon(extra=["--sync", "normal"]).start()
try:
    st, first, _ = d.request("POST", CM, cm("first"))
    rv0 = first["metadata"]["resourceVersion"]

    def churn(k, n):
        c = http.client.HTTPConnection("127.0.0.1", d.port, timeout=30)
        c.request("POST", CM, body=json.dumps(cm("churn-%d" % k)),
                  headers={"Content-Type": "application/json"})
        c.getresponse().read()
        for i in range(n):
            c.request("PATCH", CM + "/churn-%d" % k,
                      body=json.dumps({"data": {"i": str(i)}}),
                      headers={"Content-Type": "application/merge-patch+json"})
            c.getresponse().read()
        c.close()

    threads = [threading.Thread(target=churn, args=(k, 1100))
               for k in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    st, lst, _ = d.request("GET", CM)
    last = int(lst["metadata"]["resourceVersion"])
    check(last - int(rv0) > 8192, "churned past the history: %s" % last)
    st, body, _ = d.request("GET", CM + "?watch=true&timeoutSeconds=1"
                            "&resourceVersion=%s" % rv0)
    check(st == 410 and body["reason"] == "Expired",
          "watch from before the kept history: %s %s" % (st, body))
    conn, resp = d.watch(CM + "?watch=true&timeoutSeconds=1"
                         "&resourceVersion=%d" % (last - 100))
    rest = [json.loads(x) for x in resp.read().splitlines() if x]
    conn.close()
    check(resp.status == 200 and rest and all(
        x["type"] == "MODIFIED" and
        int(x["object"]["metadata"]["resourceVersion"]) > last - 100
        for x in rest) and rest[-1]["object"]["data"]["i"] == "1099",
        "watch from within the history replays: %d lines" % len(rest))
    check(d.stop() == 0, "clean shutdown after the churn")
finally:
    d.cleanup()
finish()
