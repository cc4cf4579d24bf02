"""The dashboard's server side without a browser: embedded assets with a
Content-Security-Policy that keeps the page on 127.0.0.1, the live stream
(server-sent events), the no-JavaScript /ui pages, Prometheus /metrics and
Kueue's visibility API with queue positions (also through
`flexq get workloads --pending -o wide`)."""
import json
import os
import sys
import urllib.request

sys.path.insert(0, os.path.dirname(__file__))
from harness import Daemon, check, finish  # noqa: E402

QUEUES = """apiVersion: kueue.x-k8s.io/v1beta1
kind: ResourceFlavor
metadata: {name: default-cpu}
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata: {name: small}
spec:
  namespaceSelector: {}
  resourceGroups:
  - coveredResources: [cpu]
    flavors:
    - name: default-cpu
      resources: [{name: cpu, nominalQuota: 1}]
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: LocalQueue
metadata: {namespace: default, name: q}
spec: {clusterQueue: small}
"""
WL = """apiVersion: kueue.x-k8s.io/v1beta1
kind: Workload
metadata: {namespace: default, name: %s}
spec:
  queueName: q
  priority: %d
  podSets:
  - name: main
    count: 1
    template: {spec: {containers: [{name: c, image: x,
                                    resources: {requests: {cpu: "%s"}}}]}}
"""


def get(d, path):
    try:
        with urllib.request.urlopen(d.url + path, timeout=10) as r:
            return r.status, dict(r.headers), r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, dict(e.headers), e.read().decode()


d = Daemon().start()
try:
    rc, out, err = d.cli("apply", "-f", "-", stdin=QUEUES)
    check(rc == 0, "apply queues: %s" % err)
    # a fits; b, c, e wait (c first: higher priority)
    for name, prio, cpu in (("a", 0, "1"), ("b", 0, "2"), ("c", 5, "3"),
                            ("e", 0, "500m")):
        rc, out, err = d.cli("apply", "-f", "-", stdin=WL % (name, prio, cpu))
        check(rc == 0, "apply %s: %s" % (name, err))
    rc, out, err = d.cli("wait", "--for=condition=QuotaReserved",
                         "workload/a", "--timeout=20s")
    check(rc == 0, "a reserved: %s" % err)

    st, h, body = get(d, "/")
    check(st == 200 and "text/html" in h.get("Content-Type", ""),
          "index served: %s" % st)
    check('src="/app.js"' in body and "/ui/jobs" in body,
          "index loads app.js and links the no-JS pages")
    csp = h.get("Content-Security-Policy", "")
    check("default-src 'self'" in csp and "connect-src 'self'" in csp,
          "CSP keeps every request on this origin: %r" % csp)
    for asset, ctype in (("/app.js", "javascript"), ("/style.css", "css")):
        st, h, body = get(d, asset)
        check(st == 200 and ctype in h.get("Content-Type", ""),
              "%s served as %s" % (asset, ctype))
        check("http://" not in body and "https://" not in body,
              "%s names no outside address" % asset)
    check(get(d, "/nope.js")[0] == 404, "unknown asset is 404")

    st, h, body = get(d, "/ui/jobs")
    check(st == 200 and "<table>" in body and "<script" not in body,
          "no-JS jobs page is a plain table")
    check("<td>a</td>" in body and "Pending" in body, "jobs page rows")
    st, h, body = get(d, "/ui/overview")
    check(st == 200 and "<td>small</td>" in body and "default-cpu" in body,
          "no-JS overview lists the queue")
    for page in ("capacity", "events"):
        check(get(d, "/ui/" + page)[0] == 200, "/ui/%s" % page)
    check(get(d, "/ui/nope")[0] == 404, "unknown /ui page is 404")

    st, h, text = get(d, "/metrics")
    check(st == 200 and "text/plain" in h.get("Content-Type", ""),
          "/metrics served")
    check("# TYPE kueue_pending_workloads gauge" in text, "pending family")
    lines = set(text.splitlines())
    check('kueue_admitted_workloads_total{cluster_queue="small"} 1' in lines,
          "one admission counted")
    pend = sum(float(line.rsplit(" ", 1)[1]) for line in lines if
               line.startswith('kueue_pending_workloads{cluster_queue="small"'))
    check(pend == 3, "three pending in small: %s" % pend)
    check('kueue_cluster_queue_nominal_quota{cluster_queue="small",cohort="",'
          'flavor="default-cpu",resource="cpu"} 1' in lines, "nominal quota")

    vis = "/apis/visibility.kueue.x-k8s.io/v1beta1/"
    st, h, body = get(d, vis + "clusterqueues/small/pendingworkloads")
    check(st == 200, "visibility cq: %s %s" % (st, body))
    items = json.loads(body).get("items", []) if st == 200 else []
    check([i["metadata"]["name"] for i in items] == ["c", "b", "e"],
          "queue order: priority, then creation: %r" % items)
    check([i["positionInClusterQueue"] for i in items] == [0, 1, 2],
          "positions from 0")
    st, h, body = get(d, vis + "namespaces/default/localqueues/q/"
                      "pendingworkloads?limit=1&offset=1")
    check(st == 200 and [i["metadata"]["name"] for i in
                         json.loads(body)["items"]] == ["b"],
          "local queue with limit/offset: %s" % body)
    check(get(d, vis + "clusterqueues/none/pendingworkloads")[0] == 404,
          "unknown queue is 404")

    rc, out, err = d.cli("get", "workloads", "--pending", "-o", "wide")
    rows = [line.split() for line in out.splitlines()[1:]]
    check(rc == 0 and "POSITION IN CQ" in out, "wide header: %s" % out)
    check([(r[0], r[-3], r[-2]) for r in rows] ==
          [("b", "2", "2"), ("c", "1", "1"), ("e", "3", "3")],
          "positions in the wide table: %r" % rows)

    # the live stream: everything, then "synced"
    req = urllib.request.urlopen(d.url + "/ui/stream", timeout=10)
    check("text/event-stream" in req.headers.get("Content-Type", ""),
          "stream is server-sent events")
    seen, kinds = [], set()
    for raw in req:
        line = raw.decode().strip()
        seen.append(line)
        if line.startswith("data: {\"type\""):
            kinds.add(json.loads(line[6:])["kind"])
        if line == "event: synced":
            break
    req.close()
    check("event: reset" in seen, "stream starts with reset")
    check({"ClusterQueue", "LocalQueue", "Workload"} <= kinds,
          "stream carries the objects: %r" % kinds)
finally:
    d.stop()
    d.cleanup()
finish()
