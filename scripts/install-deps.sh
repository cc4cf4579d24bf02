#!/bin/sh
# Installs the Debian 12 packages flexq needs to build, test and run, and
# nothing else. Packages already present are left alone, so a second run is
# quick and needs no network. Run as root (or with sudo available).
set -eu

PKGS="build-essential cmake pkg-config clang libclang-rt-14-dev clang-format
libyaml-dev libevent-dev libsqlite3-dev libcurl4-openssl-dev
libcmocka-dev bubblewrap util-linux gettext-base python3 curl
python3-kubernetes"
if [ "${FLEXQ_WITH_BROWSER:-0}" = 1 ]; then
    PKGS="$PKGS chromium"
    # Node.js may come from elsewhere than Debian (as on the project's
    # machines); asking apt for it then conflicts, so only when missing.
    command -v node >/dev/null 2>&1 || PKGS="$PKGS nodejs"
    command -v npm >/dev/null 2>&1 || PKGS="$PKGS npm"
fi
if [ "${FLEXQ_WITH_SLURM:-0}" = 1 ]; then
    # a real Slurm cluster for the slurm executor's tests (label slurm)
    PKGS="$PKGS slurm-wlm slurmctld slurmd slurm-client munge"
fi

# OpenSSL for flexqd's HTTPS listener (libevent_openssl comes with
# libevent-dev).
PKGS="$PKGS libssl-dev"
# kubectl port-forward: zlib for SPDY header blocks, wslay for WebSocket
# framing.
PKGS="$PKGS zlib1g-dev libwslay-dev"
# The unprivileged user flexqd runs pods as (docs/runtime.md); without it
# flexqd falls back to uid 65534 and says so at start.
if ! getent passwd flexq-pod >/dev/null 2>&1; then
    as_root=""
    [ "$(id -u)" = 0 ] || as_root=sudo
    $as_root useradd --system --user-group --no-create-home \
        --home-dir /nonexistent --shell /usr/sbin/nologin flexq-pod ||
        echo "install-deps: could not create the user flexq-pod" >&2
fi

missing=""
for p in $PKGS; do
    if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed"; then
        missing="$missing $p"
    fi
done
[ -z "$missing" ] && exit 0

SUDO=""
if [ "$(id -u)" != 0 ]; then
    command -v sudo >/dev/null 2>&1 || {
        echo "install-deps: missing packages:$missing; run as root" >&2
        exit 1
    }
    SUDO=sudo
fi
echo "install-deps: installing$missing" >&2
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends $missing >&2
