"""A full disk (src/daemon/space.c): flexqd's data directory on a 32 MiB
tmpfs, filled by another file until ENOSPC.

While full: a create is answered 507 InsufficientStorage (a Kubernetes
Status) and stores nothing; reads are 200; a delete still works; an open
watch stays open. When the filler is removed, writes are accepted again
without a restart, and the watch delivers them. After a restart, every
acknowledged create is there, and none that was refused.

Needs root (mount); skips with a line otherwise."""
import os
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(__file__))
import harness  # noqa: E402
from harness import Daemon, check, finish  # noqa: E402

CM = "/api/v1/namespaces/default/configmaps"


def cm(name):
    return {"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": name}, "data": {"k": "v" * 2000}}


def names(d):
    code, body, _ = d.request("GET", CM)
    return code, {i["metadata"]["name"] for i in body.get("items", [])} \
        if code == 200 else set()


def fill(path):
    """Writes until the filesystem is full; returns bytes written."""
    chunk = b"\0" * (1 << 20)
    n = 0
    with open(path, "wb", buffering=0) as f:
        while True:
            try:
                n += f.write(chunk)
            except OSError:
                break
        # the last pages: smaller writes
        for size in (1 << 16, 1 << 12, 512):
            while True:
                try:
                    n += f.write(chunk[:size])
                except OSError:
                    break
    return n


def main():
    if os.geteuid() != 0:
        print("SKIP: mounting a small tmpfs needs root")
        sys.exit(77)
    mnt = tempfile.mkdtemp(prefix="flexq-diskfull-")
    r = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=32m", "tmpfs",
                        mnt], capture_output=True, text=True)
    if r.returncode != 0:
        print("SKIP: cannot mount a tmpfs here: %s" % r.stderr.strip())
        os.rmdir(mnt)
        sys.exit(77)
    d = None
    try:
        data = os.path.join(mnt, "data")
        d = Daemon(data_dir=data).start()
        acked, refused = set(), set()
        for i in range(10):
            code, _, _ = d.request("POST", CM, body=cm("before-%d" % i))
            check(code == 201, "create before-%d (%r)" % (i, code))
            acked.add("before-%d" % i)
        wconn, wresp = d.watch(CM + "?watch=true&resourceVersion=0")
        seen = set()
        for _ in range(10):
            ev = harness.read_line(wresp)
            seen.add(ev["object"]["metadata"]["name"])
        check(seen == acked, "the watch lists what exists")

        filler = os.path.join(mnt, "filler")
        filled = fill(filler)
        check(filled > 0, "the filler took the disk (%d bytes)" % filled)

        # The daemon checks the free space at most every 250 ms: the first
        # creates may still land; they are acknowledged and must last.
        got507 = None
        deadline = time.monotonic() + 10
        i = 0
        while time.monotonic() < deadline and got507 is None:
            name = "full-%d" % i
            i += 1
            code, body, _ = d.request("POST", CM, body=cm(name))
            if code == 201:
                acked.add(name)
            elif code == 507:
                refused.add(name)
                got507 = body
            else:
                check(False, "a create on a full disk got %r %r"
                      % (code, body))
                break
            time.sleep(0.05)  # the interval between tries
        check(isinstance(got507, dict) and got507.get("kind") == "Status"
              and got507.get("reason") == "InsufficientStorage"
              and got507.get("code") == 507,
              "a create on a full disk is answered 507 Status (%r)"
              % (got507,))
        for j in range(3):
            name = "refused-%d" % j
            code, body, _ = d.request("POST", CM, body=cm(name))
            check(code == 507, "still 507 while full (%r)" % code)
            refused.add(name)
        code, have = names(d)
        check(code == 200 and acked <= have and not (refused & have),
              "reads are served while full, and show no refused create")
        code, _, _ = d.request("GET", "/healthz")
        check(code == 200, "/healthz answers while full")
        code, body, _ = d.request("DELETE", CM + "/before-0")
        check(code == 200, "a delete works while full (%r %r)"
              % (code, body))
        acked.discard("before-0")

        os.unlink(filler)
        deadline = time.monotonic() + 10
        back = False
        while time.monotonic() < deadline and not back:
            code, _, _ = d.request("POST", CM, body=cm("after"))
            back = code == 201
            if not back:
                time.sleep(0.05)  # the interval between tries
        check(back, "writes are accepted again once there is room, "
              "without a restart")
        acked.add("after")
        check(os.path.getsize(os.path.join(data, "flexq.reserve")) ==
              4 << 20, "the reserve is taken again")
        for line in d.log:
            if "disk" in line or "reserve" in line:
                print("flexqd: " + line.strip())
        # The watch saw the delete and the new object.
        got = {}
        while "after" not in got:
            ev = harness.read_line(wresp)
            if not ev:
                break
            got[ev["object"]["metadata"]["name"]] = ev["type"]
        check(got.get("before-0") == "DELETED" and got.get("after") == "ADDED",
              "the watch stayed open and delivered the delete and the "
              "create (%r)" % got)
        wconn.close()

        check(d.stop() == 0, "flexqd stops cleanly")
        d = Daemon(data_dir=data).start()
        code, have = names(d)
        check(code == 200 and have == acked,
              "after a restart: every acknowledged create and none refused "
              "(missing %r, extra %r)"
              % (sorted(acked - have), sorted(have - acked)))
    finally:
        if d:
            d.cleanup()
        subprocess.run(["umount", "-l", mnt])
        shutil.rmtree(mnt, ignore_errors=True)
    finish()


if __name__ == "__main__":
    main()
