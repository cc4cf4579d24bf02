#!/usr/bin/env python3
"""`flexq wait` when the watch history no longer reaches the object's
revision: the watch is answered 410 Gone, and wait lists the object for
the current revision and watches from there (as Kubernetes' clients do),
rather than failing. A restart makes the history start after the
object's revision; the watch history's 75 s age does the same on a
server that runs on."""
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(__file__))
from harness import FLEXQ, Daemon, check, finish  # noqa: E402

CM = "/api/v1/namespaces/default/configmaps"


def cm(name):
    return {"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": name}, "data": {"k": "v"}}


d = Daemon(extra=["--log-level", "debug"]).start()
try:
    st = d.request("POST", CM, cm("old"))[0]
    check(st == 201, "create old: %s" % st)
    st = d.request("POST", CM, cm("other"))[0]
    check(st == 201, "create other: %s" % st)
    check(d.stop() == 0, "clean stop")
    d.start()
    # The history now starts after old's revision: a watch from it is 410.
    st, obj = d.request("GET", CM + "/old")[:2]
    check(st == 200, "get old after restart: %s %s" % (st, obj))
    rv = obj["metadata"]["resourceVersion"]
    st = d.request("GET", CM + "?watch=true&resourceVersion=%s" % rv)[0]
    check(st == 410, "a watch from the object's revision is 410: %s" % st)

    env = dict(os.environ, FLEXQ_SERVER=d.url)
    env.pop("FLEXQ_TOKEN", None)
    env.pop("FLEXQ_NAMESPACE", None)
    w = subprocess.Popen([FLEXQ, "wait", "configmap/old", "--for=delete",
                          "--timeout=60s"], env=env, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    # Delete once wait watches again: flexqd's debug log names each
    # request's path (without the query); after the restart the list path
    # was asked by the watch above, then by wait's watch (410), its list
    # and its second watch.
    deadline = time.monotonic() + 30
    deleted = False
    while time.monotonic() < deadline and w.poll() is None:
        n = sum(1 for line in list(d.log) if 'msg="request"' in line and
                'method=GET path="%s"' % CM in line)
        if n >= 4:
            st = d.request("DELETE", CM + "/old")[0]
            check(st == 200, "delete old: %s" % st)
            deleted = True
            break
        time.sleep(0.02)
    out, err = w.communicate(timeout=60)
    check(deleted, "wait watched again: %s %s" % (out, err))
    check(w.returncode == 0 and "condition met" in out,
          "wait after 410: rc=%s out=%r err=%r" % (w.returncode, out, err))
finally:
    d.cleanup()
finish()
