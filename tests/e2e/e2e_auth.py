"""--tokens: 401 without or with a wrong token, admins change cluster-scoped
objects, developers work in their namespaces only (403 elsewhere), through
plain HTTP and the CLI (--token / FLEXQ_TOKEN)."""
import json
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(__file__))
from harness import Daemon, check, finish  # noqa: E402

ADMIN = "admin-token-0123456789"
DEV = "dev-token-abcdefghij"
tokens = tempfile.NamedTemporaryFile("w", suffix=".tokens", delete=False)
tokens.write("# token role user namespaces\n%s admin alice\n"
             "%s developer bob team-a,team-b\n" % (ADMIN, DEV))
tokens.close()

RF = {"apiVersion": "kueue.x-k8s.io/v1beta1", "kind": "ResourceFlavor",
      "metadata": {"name": "f1"}}
CM = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c1"},
      "data": {"a": "b"}}

d = Daemon(extra=["--tokens", tokens.name]).start()
try:
    st, body, _ = d.request("GET", "/healthz")
    check(st == 200, "healthz needs no token")
    st, body, _ = d.request("GET", "/api/v1/namespaces/team-a/configmaps")
    check(st == 401 and body["reason"] == "Unauthorized" and
          "FLEXQ_TOKEN" in body["message"], "401 without a token: %s" % body)
    st, body, _ = d.request("GET", "/api/v1/namespaces/team-a/configmaps",
                            token="wrong-token-xxxxxxxx")
    check(st == 401 and "not valid" in body["message"], "401 wrong token")

    # Admin: cluster-scoped objects.
    st, body, _ = d.request("POST", "/apis/kueue.x-k8s.io/v1beta1/resourceflavors",
                            RF, token=ADMIN)
    check(st == 201, "admin creates a flavor: %s" % st)
    # Developer: not cluster-scoped, not other namespaces.
    st, body, _ = d.request("POST", "/apis/kueue.x-k8s.io/v1beta1/resourceflavors",
                            dict(RF, metadata={"name": "f2"}), token=DEV)
    check(st == 403 and body["reason"] == "Forbidden" and
          "admin token" in body["message"], "developer flavor 403: %s" % body)
    st, body, _ = d.request("DELETE",
                            "/apis/kueue.x-k8s.io/v1beta1/resourceflavors/f1",
                            token=DEV)
    check(st == 403, "developer cannot delete a flavor")
    st, body, _ = d.request("POST", "/api/v1/namespaces/team-a/configmaps", CM,
                            token=DEV)
    check(st == 201, "developer creates in team-a: %s" % body)
    st, body, _ = d.request("GET", "/api/v1/namespaces/team-a/configmaps/c1",
                            token=DEV)
    check(st == 200, "developer reads in team-a")
    st, body, _ = d.request("POST", "/api/v1/namespaces/team-c/configmaps", CM,
                            token=DEV)
    check(st == 403 and "team-c" in body["message"],
          "developer 403 in team-c: %s" % body)
    other = dict(CM, metadata={"name": "c9", "namespace": "team-c"})
    st, body, _ = d.request("POST", "/api/v1/namespaces/team-a/configmaps",
                            other, token=DEV)
    check(st == 422, "body namespace must match the path: %s" % st)
    st, body, _ = d.request("POST", "/api/v1/configmaps", other, token=DEV)
    check(st == 403, "no namespace in the path means default: %s" % st)
    st, body, _ = d.request("GET", "/api/v1/namespaces/team-c/configmaps/c9",
                            token=ADMIN)
    check(st == 404, "nothing created in team-c")
    st, body, _ = d.request("GET", "/api/v1/configmaps", token=DEV)
    check(st == 403, "developer cannot list all namespaces")
    st, body, _ = d.request("GET", "/api/v1/namespaces/team-a/nodes", token=DEV)
    check(st == 404, "nodes are cluster-scoped")
    st, body, _ = d.request("GET", "/api/v1/nodes", token=DEV)
    check(st == 403, "developer cannot read nodes")
    st, body, _ = d.request("GET", "/api/v1/namespaces/team-b/events", token=DEV)
    check(st == 200, "developer reads events in team-b")
    st, body, _ = d.request("POST", "/api/v1/namespaces/team-a/pods",
                            {"apiVersion": "v1", "kind": "Pod",
                             "metadata": {"name": "p"},
                             "spec": {"containers": [{"name": "c",
                                                      "image": "x"}]}},
                            token=DEV)
    check(st == 403, "developer cannot create pods directly: %s" % st)
    st, body, _ = d.request("GET", "/apis", token=DEV)
    check(st == 200, "discovery with any token")

    # The CLI passes the token and prints the server's message.
    rc, out, err = d.cli("get", "rf")
    check(rc == 1 and "Unauthorized" in err, "CLI without token: %s" % err)
    rc, out, err = d.cli("get", "rf", token=ADMIN)
    check(rc == 0 and "f1" in out, "CLI admin: %s %s" % (out, err))
    rc, out, err = d.cli("--token", DEV, "get", "rf")
    check(rc == 1 and "Forbidden" in err, "CLI developer: %s" % err)
    rc, out, err = d.cli("get", "cm", "-n", "team-a", token=DEV)
    check(rc == 0 and "c1" in out, "CLI developer in team-a")
    rc, out, err = d.cli("create", "configmap", "c2", "--from-literal=a=b",
                         "-n", "team-b", token=DEV)
    check(rc == 0, "CLI developer creates: %s" % err)
    rc, out, err = d.cli("apply", "-f", "-", stdin=json.dumps(RF), token=DEV)
    check(rc == 1 and "Forbidden" in err, "CLI developer apply flavor")
    check(d.stop() == 0, "clean shutdown")
finally:
    d.cleanup()
    os.unlink(tokens.name)

# A broken tokens file stops flexqd with a clear message.
bad = tempfile.NamedTemporaryFile("w", suffix=".tokens", delete=False)
bad.write("sometoken123 superuser carol\n")
bad.close()
import subprocess  # noqa: E402
from harness import FLEXQD  # noqa: E402
import shutil  # noqa: E402
tmp = tempfile.mkdtemp(prefix="flexq-e2e-")
p = subprocess.run([FLEXQD, "--listen", "127.0.0.1:0", "--data-dir", tmp,
                    "--tokens", bad.name], capture_output=True, text=True,
                   timeout=30)
shutil.rmtree(tmp, ignore_errors=True)
check(p.returncode == 1 and "neither admin nor developer" in p.stderr,
      "bad tokens file: %s" % p.stderr)
os.unlink(bad.name)
finish()
