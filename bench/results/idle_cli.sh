#!/bin/bash
# bench/results/idle_cli.sh - bench.sh's idle phase through the real daemon
# and CLI: flexqd --provider local (this machine, one node), then PROBES times
# 1 s idle and one `flexq apply -f` of a 1-cpu Job whose bash stamps its own
# start; prints submit -> start (after the call returned) and the call's time.
# Usage: [B=BUILD_DIR] [SYNC=normal] [PROBES=6] [PORT=18265] idle_cli.sh
set -u
B=${B:-$(cd "$(dirname "$0")/../.." && pwd)/build-bench}
W=$(mktemp -d /tmp/flexq-idle-cli-XXXXXX)
PORT=${PORT:-18265}
S=http://127.0.0.1:$PORT
$B/flexqd --provider local --listen 127.0.0.1:$PORT --data-dir $W/data --log-level warn ${SYNC:+--sync $SYNC} > $W/flexqd.log 2>&1 &
D=$!
trap 'kill $D 2>/dev/null; wait $D 2>/dev/null; rm -rf "$W"' EXIT
for i in $(seq 1 100); do $B/flexq --server $S get nodes >/dev/null 2>&1 && break; sleep 0.1; done
cat > $W/setup.yaml <<Y
apiVersion: kueue.x-k8s.io/v1beta1
kind: ResourceFlavor
metadata: {name: default}
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata: {name: cq}
spec:
  namespaceSelector: {}
  resourceGroups:
  - coveredResources: [cpu, memory]
    flavors:
    - name: default
      resources:
      - {name: cpu, nominalQuota: 1}
      - {name: memory, nominalQuota: 1Gi}
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: LocalQueue
metadata: {name: q, namespace: default}
spec: {clusterQueue: cq}
Y
$B/flexq --server $S apply -f $W/setup.yaml >/dev/null || exit 1
ST=$W/stamps.txt
: > $W/sub.txt
for k in $(seq 1 ${PROBES:-6}); do
  sleep 1
  cat > $W/j$k.yaml <<Y
apiVersion: batch/v1
kind: Job
metadata: {name: idle$k, namespace: default, labels: {kueue.x-k8s.io/queue-name: q}}
spec:
  suspend: true
  backoffLimit: 0
  template:
    spec:
      restartPolicy: Never
      containers:
      - name: c
        image: none
        command: [/bin/bash, -c, 'echo "idle$k s \$EPOCHREALTIME" >> $ST; echo "idle$k e \$EPOCHREALTIME" >> $ST']
        resources: {requests: {cpu: "1", memory: 64Mi}}
Y
  t=$EPOCHREALTIME
  $B/flexq --server $S apply -f $W/j$k.yaml >/dev/null || echo apply failed
  t2=$EPOCHREALTIME
  echo "idle$k $t $t2" >> $W/sub.txt
  for i in $(seq 1 2000); do grep -qs "^idle$k e " $ST && break; sleep 0.005; done
done
python3 - "$W" <<'P'
import sys, statistics
w = sys.argv[1]
sub = {l.split()[0]: (float(l.split()[1]), float(l.split()[2])) for l in open(w + "/sub.txt")}
st = {}
for l in open(w + "/stamps.txt"):
    n, k, t = l.split()
    if k == "s": st[n] = float(t)
lat = sorted((st[j] - sub[j][1]) * 1000 for j in sub if j in st)
cli = sorted((sub[j][1] - sub[j][0]) * 1000 for j in sub)
print("cli idle: submit->start p50 %.1f ms (min %.1f max %.1f, n=%d); flexq apply call p50 %.1f ms (min %.1f max %.1f)" % (
    statistics.median(lat), lat[0], lat[-1], len(lat), statistics.median(cli), cli[0], cli[-1]))
P
