#!/bin/sh
# run_fuzz.sh TARGET SEED_DIR ARTIFACT_DIR [SECONDS]
# Runs one libFuzzer target for a bounded time. libFuzzer writes the inputs
# it finds into its first corpus directory, so that is a fresh temporary
# directory; the seed corpus (read only) comes second and the repo is never
# written. A crash leaves its reproducer in ARTIFACT_DIR and fails the test.
set -eu
target=$1
seeds=$2
artifacts=$3
seconds=${4:-${FLEXQ_FUZZ_SECONDS:-20}}
work=$(mktemp -d "${TMPDIR:-/tmp}/flexq-fuzz.XXXXXX")
trap 'rm -rf "$work"' EXIT INT TERM
mkdir -p "$artifacts"
"$target" -max_total_time="$seconds" -rss_limit_mb=1024 -timeout=10 \
    -print_final_stats=1 -artifact_prefix="$artifacts/" "$work" "$seeds"
