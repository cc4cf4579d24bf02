"""`python3 -m flexq.submit`: the RayJob submitter's log, made on flexq.

KubeRay's submitter pod runs `ray job submit --no-wait` then `ray job logs
--follow`, so `kubectl logs job/<rayjob>` shows the submission lines, the
driver's output (worker lines forwarded by Ray Train) and a closing banner.
On flexq this module plays both CLIs: it prints the same lines, runs the
entrypoint as the driver (FLEXQ_RAY_ROLE=driver, so JaxTrainer.fit() follows
the worker pods), and ends with Ray's banner:

    2026-03-20 03:59:51,008	SUCC cli.py:66 -- Job 'rayjob-x-498t6' succeeded

Usage (all optional; env as KubeRay's submitter has it):
    python3 -m flexq.submit [--address URL] [--submission-id ID]
        [--runtime-env-json JSON] [--] ENTRYPOINT...
    env RAY_DASHBOARD_ADDRESS, RAY_JOB_SUBMISSION_ID, FLEXQ_ENTRYPOINT

Exit code: the driver's (0 when the job succeeded). Volumes: the driver runs
the head's entrypoint, so paths under the head pod's volume mounts (the
tutorial's /app) are mapped to the head pod's volume directories when this
pod does not have them itself.
"""

import json
import os
import shlex
import subprocess
import sys
import time


def _ts():
    t = time.time()
    return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(t)) + \
        ",%03d" % int((t % 1) * 1000)


def _cli(level, line, msg, err=False):
    out = sys.stderr if err else sys.stdout
    print("%s\t%s cli.py:%d -- %s" % (_ts(), level, line, msg), file=out,
          flush=True)


def _banner(level, first_line, msg):
    dashes = "-" * len(msg)
    _cli(level, first_line, dashes)
    _cli(level, first_line + 1, msg)
    _cli(level, first_line + 2, dashes)


def _head_mounts():
    """mountPath -> host dir for the volumes of this cluster's head pod."""
    data = os.environ.get("FLEXQ_DATA_DIR")
    cluster = os.environ.get("FLEXQ_RAY_CLUSTER")
    ns = os.environ.get("FLEXQ_POD_NAMESPACE", "default")
    if not data or not cluster:
        return {}
    root = os.path.join(data, "pods", ns)
    try:
        names = sorted(os.listdir(root))
    except OSError:
        return {}
    for n in names:
        try:
            with open(os.path.join(root, n, "pod.json")) as f:
                pod = json.load(f)
        except (OSError, ValueError):
            continue
        labels = pod.get("metadata", {}).get("labels", {})
        if labels.get("ray.io/cluster") != cluster or \
                labels.get("ray.io/node-type") != "head":
            continue
        spec = pod.get("spec", {})
        vols = {v.get("name"): v for v in spec.get("volumes", [])}
        out = {}
        for c in spec.get("containers", [])[:1]:
            for m in c.get("volumeMounts", []):
                v = vols.get(m.get("name"), {})
                if "hostPath" in v:
                    out[m["mountPath"]] = v["hostPath"].get("path", "/")
                else:
                    out[m["mountPath"]] = os.path.join(root, n, "volumes",
                                                       m.get("name", ""))
        return out
    return {}


def _map_paths(argv):
    mounts = {k: v for k, v in _head_mounts().items()
              if not os.path.exists(k)}
    out = []
    for a in argv:
        for mp, host in mounts.items():
            if a == mp or a.startswith(mp.rstrip("/") + "/"):
                a = host + a[len(mp.rstrip("/")):]
                break
        out.append(a)
    return out


def main(args):
    address = os.environ.get("RAY_DASHBOARD_ADDRESS", "127.0.0.1:8265")
    sid = os.environ.get("RAY_JOB_SUBMISSION_ID", "")
    ep = None
    i = 0
    while i < len(args):
        a = args[i]
        if a == "--":
            ep = args[i + 1:]
            break
        if a in ("--address", "--submission-id", "--runtime-env-json",
                 "--metadata-json") and i + 1 < len(args):
            if a == "--address":
                address = args[i + 1]
            elif a == "--submission-id":
                sid = args[i + 1]
            i += 2
            continue
        ep = args[i:]
        break
    if not ep:
        ep_s = os.environ.get("FLEXQ_ENTRYPOINT", "")
        ep = shlex.split(ep_s) if ep_s else []
    if len(ep) == 1 and " " in ep[0]:
        ep = shlex.split(ep[0])
    if not ep:
        print("flexq.submit: no entrypoint", file=sys.stderr)
        return 2
    if not address.startswith("http"):
        address = "http://" + address
    sid = sid or "raysubmit_%d" % os.getpid()

    _cli("INFO", 45, "Job submission server address: %s" % address)
    _banner("SUCC", 64, "Job '%s' submitted successfully" % sid)
    _cli("INFO", 67, "")
    _cli("INFO", 68, "Next steps")
    _cli("INFO", 69, "  Query the logs of the job:")
    _cli("INFO", 70, "    ray job logs %s" % sid)
    _cli("INFO", 71, "  Query the status of the job:")
    _cli("INFO", 72, "    ray job status %s" % sid)
    _cli("INFO", 73, "  Request the job to be stopped:")
    _cli("INFO", 74, "    ray job stop %s" % sid)
    _cli("INFO", 45, "Job submission server address: %s" % address)

    argv = _map_paths(ep)
    env = dict(os.environ)
    env["FLEXQ_RAY_ROLE"] = "driver"
    env["RAY_JOB_SUBMISSION_ID"] = sid
    if argv[0] == "python" and not _which("python"):
        argv[0] = sys.executable
    try:
        proc = subprocess.run(argv, env=env)
        code = proc.returncode
        why = "exit code %d" % code
    except OSError as e:
        code, why = 127, str(e)
    if code == 0:
        _banner("SUCC", 65, "Job '%s' succeeded" % sid)
    else:
        msg = "Job '%s' failed" % sid
        _cli("ERR", 65, "-" * len(msg), err=True)
        _cli("ERR", 66, msg, err=True)
        _cli("ERR", 67, "-" * len(msg), err=True)
        _cli("INFO", 68, "Status message: Job entrypoint command failed "
             "with %s" % why)
    return code


def _which(cmd):
    for d in os.environ.get("PATH", "").split(":"):
        if os.access(os.path.join(d or ".", cmd), os.X_OK):
            return True
    return False


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
