"""`python3 -m flexq.node`: flexq's stand-in for a Ray node image.

The runner runs it for a container without command or args. A head or an
idle worker prints what `ray start --block` would and waits for SIGTERM; a
worker given FLEXQ_ENTRYPOINT runs that entrypoint (SPMD) and exits with
its code.
"""

import os
import shlex
import signal
import sys


def main():
    role = os.environ.get("FLEXQ_RAY_ROLE", "head")
    ep = os.environ.get("FLEXQ_ENTRYPOINT")
    if role == "worker" and ep:
        argv = shlex.split(ep)
        os.execvp(argv[0], argv)
    print("Ray runtime started (flexq %s node %s).  --block: waiting for "
          "SIGTERM." % (role, os.environ.get("FLEXQ_POD_NAME", "")),
          flush=True)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    while True:
        signal.pause()


if __name__ == "__main__":
    main()
