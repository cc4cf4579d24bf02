"""The official Kubernetes Python client (Debian's python3-kubernetes)
against flexqd: version, namespaces, ConfigMap CRUD with dry_run="All"
and JSON patch, a watch (the client sends watch=True), a Job's pods read
back as V1Pod (containerStatuses with imageID ...), a pod's log, custom
objects (Kueue, KubeRay) and NotFound naming the group. Each write is
checked against the store over HTTP.

The client is installed for /usr/bin/python3; this script re-runs itself
there when started by another interpreter, and skips (exit 77, with a
line saying so) when python3-kubernetes is not installed."""
import os
import sys
import threading
import time

try:
    import kubernetes  # noqa: F401
except ImportError:
    if sys.executable != "/usr/bin/python3" and \
            os.path.exists("/usr/bin/python3") and \
            not os.environ.get("FLEXQ_PYCLIENT_REEXEC"):
        os.environ["FLEXQ_PYCLIENT_REEXEC"] = "1"
        os.execv("/usr/bin/python3", ["/usr/bin/python3"] + sys.argv)
    print("SKIP: the Kubernetes Python client is not installed "
          "(Debian package python3-kubernetes; scripts/install-deps.sh)")
    sys.exit(77)

from kubernetes import client, watch  # noqa: E402
from kubernetes.client.rest import ApiException  # noqa: E402

sys.path.insert(0, os.path.dirname(__file__))
from harness import Daemon, check, finish  # noqa: E402

d = Daemon(time_scale=100).start()


def stored(path):
    st, body, _ = d.request("GET", path)
    return body if st == 200 else None


CM = "/api/v1/namespaces/default/configmaps/"

try:
    conf = client.Configuration()
    conf.host = d.url
    api = client.ApiClient(conf)
    core = client.CoreV1Api(api)
    batch = client.BatchV1Api(api)
    custom = client.CustomObjectsApi(api)

    ver = client.VersionApi(api).get_code()
    check(ver.major == "1" and ver.git_version.startswith("v1."),
          "version: %s" % ver)

    names = {n.metadata.name for n in core.list_namespace().items}
    check({"default", "kube-system"} <= names, "namespaces: %s" % names)

    # --- ConfigMaps: dry run, create, JSON patch, delete -----------------
    body = client.V1ConfigMap(metadata=client.V1ObjectMeta(name="py"),
                              data={"a": "1"})
    out = core.create_namespaced_config_map("default", body, dry_run="All")
    check(out.metadata.name == "py" and stored(CM + "py") is None,
          "dry-run create returns the object and stores nothing")
    core.create_namespaced_config_map("default", body)
    check((stored(CM + "py") or {}).get("data") == {"a": "1"}, "create")
    core.patch_namespaced_config_map(
        "py", "default", [{"op": "add", "path": "/data/b", "value": "2"}])
    check((stored(CM + "py") or {}).get("data") == {"a": "1", "b": "2"},
          "JSON patch from the client")
    core.patch_namespaced_config_map("py", "default",
                                     {"data": {"a": "9"}}, dry_run="All")
    check((stored(CM + "py") or {}).get("data", {}).get("a") == "1",
          "dry-run patch changes nothing")
    core.delete_namespaced_config_map("py", "default", dry_run="All")
    check(stored(CM + "py") is not None, "dry-run delete keeps the object")

    # --- Secrets: stringData merged, dry run answers it, read decoded ----
    SEC = "/api/v1/namespaces/default/secrets/"
    sbody = client.V1Secret(metadata=client.V1ObjectMeta(name="pys"),
                            string_data={"k": "v"})
    out = core.create_namespaced_secret("default", sbody, dry_run="All")
    check(out.data == {"k": "dg=="} and out.type == "Opaque" and
          stored(SEC + "pys") is None,
          "dry-run create of a Secret answers it merged, stores nothing")
    core.create_namespaced_secret("default", sbody)
    got = core.read_namespaced_secret("pys", "default")
    check(got.data == {"k": "dg=="} and got.string_data is None and
          (stored(SEC + "pys") or {}).get("type") == "Opaque",
          "create_namespaced_secret stores data: %s" % got.data)
    core.patch_namespaced_secret("pys", "default",
                                 {"stringData": {"k": "w"}})
    check((stored(SEC + "pys") or {}).get("data") == {"k": "dw=="},
          "a stringData patch changes data")
    core.delete_namespaced_secret("pys", "default")
    check(stored(SEC + "pys") is None, "delete_namespaced_secret")

    # --- watch=True --------------------------------------------------------
    w = watch.Watch()
    events = []

    def create_later():
        d.request("POST", "/api/v1/namespaces/default/configmaps", {
            "apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "py-watched"}, "data": {"x": "y"}})

    started = False
    for ev in w.stream(core.list_namespaced_config_map, "default",
                       timeout_seconds=20):
        events.append((ev["type"], ev["object"].metadata.name))
        if not started:
            started = True
            threading.Thread(target=create_later).start()
        if ev["object"].metadata.name == "py-watched":
            w.stop()
    check(("ADDED", "py") in events and ("ADDED", "py-watched") in events,
          "watch=True streams events: %s" % events)

    core.delete_namespaced_config_map("py", "default")
    check(stored(CM + "py") is None, "delete")

    # --- a Job's pods, read as V1Pod ------------------------------------
    job = client.V1Job(
        metadata=client.V1ObjectMeta(name="pyjob"),
        spec=client.V1JobSpec(template=client.V1PodTemplateSpec(
            spec=client.V1PodSpec(restart_policy="Never", containers=[
                client.V1Container(name="c", image="busybox",
                                   command=["sh", "-c", "echo hi-py"])]))))
    batch.create_namespaced_job("default", job)
    j = batch.read_namespaced_job("pyjob", "default")
    check(j.spec.selector and "batch.kubernetes.io/controller-uid" in
          j.spec.selector.match_labels, "job selector: %s" % j.spec.selector)
    deadline = time.monotonic() + 60
    pods = []
    while time.monotonic() < deadline:
        pods = core.list_namespaced_pod(
            "default", label_selector="job-name=pyjob").items
        if pods and pods[0].status.phase == "Succeeded":
            break
        time.sleep(0.2)
    check(len(pods) == 1 and pods[0].status.phase == "Succeeded",
          "the job's pod succeeded: %s" % [p.status.phase for p in pods])
    if pods:
        p = core.read_namespaced_pod(pods[0].metadata.name, "default")
        cs = p.status.container_statuses or []
        check(len(cs) == 1 and cs[0].image == "busybox" and
              cs[0].image_id is not None and cs[0].container_id and
              cs[0].state.terminated and cs[0].state.terminated.exit_code == 0,
              "read_namespaced_pod: %s" % cs)
        log = core.read_namespaced_pod_log(pods[0].metadata.name, "default")
        check(log.strip() == "hi-py", "pod log: %r" % log)

    # --- custom objects ---------------------------------------------------
    rf = {"apiVersion": "kueue.x-k8s.io/v1beta1", "kind": "ResourceFlavor",
          "metadata": {"name": "py-flavor"}}
    custom.create_cluster_custom_object("kueue.x-k8s.io", "v1beta1",
                                        "resourceflavors", rf)
    got = custom.get_cluster_custom_object("kueue.x-k8s.io", "v1beta1",
                                           "resourceflavors", "py-flavor")
    check(got["metadata"]["name"] == "py-flavor", "custom object read back")
    try:
        custom.get_namespaced_custom_object("ray.io", "v1", "default",
                                            "rayjobs", "nope")
        check(False, "a missing RayJob is an error")
    except ApiException as e:
        import json
        msg = json.loads(e.body).get("message", "")
        check(e.status == 404 and msg == 'rayjobs.ray.io "nope" not found',
              "NotFound names the group: %s" % e.body)
finally:
    d.cleanup()
finish()
