#!/bin/sh
# flexq exec provider for GKE node pools. UNTESTED: see README.md.
#
# Requests (stdin, one JSON object):
#   {"op":"list-nodes","pool":{"name":P,...}}
#   {"op":"create-nodes","id":ID,"pool":{"name":P,...},"count":N,...}
#   {"op":"delete-nodes","pool":{"name":P,...},"names":[...]}
# (full protocol: README.md). Answers (stdout):
#   {"nodes":[{"name","labels","allocatable","ready"}]} -- create answers
#   with all of the pool's nodes; flexq gives its templates to the new
#   ones -- {"deleted":[...]}, or {"error":"..."}. A resize returns when
#   the nodes are registered, so it never answers {"waiting"}; queued
#   pools (op "provision") are not handled here.
set -u
: "${GKE_CLUSTER:?set GKE_CLUSTER}" "${GKE_LOCATION:?set GKE_LOCATION}"

fail() { jq -cn --arg m "$1" '{error: $m}'; exit 0; }
command -v jq >/dev/null || { echo '{"error":"jq is not installed"}'; exit 0; }
req=$(cat) || fail "cannot read the request"
op=$(printf '%s' "$req" | jq -r '.op // empty') || fail "request is not JSON"
pool=$(printf '%s' "$req" | jq -r '.pool.name // empty')
[ -n "$pool" ] || fail "request has no pool.name"

list_nodes() {
    out=$(kubectl get nodes -l "cloud.google.com/gke-nodepool=$pool" -o json 2>&1) ||
        fail "kubectl get nodes: $out"
    printf '%s' "$out" | jq -c '{nodes: [.items[] | {
        name: .metadata.name,
        labels: .metadata.labels,
        taints: (.spec.taints // []),
        allocatable: .status.allocatable,
        ready: ([.status.conditions[] | select(.type=="Ready") | .status][0] == "True")}]}'
}

size_now() {
    gcloud container node-pools describe "$pool" --cluster "$GKE_CLUSTER" \
        --location "$GKE_LOCATION" --format='value(initialNodeCount)' 2>/dev/null || echo 0
}

case "$op" in
list-nodes)
    list_nodes ;;
create-nodes)
    n=$(printf '%s' "$req" | jq -r '.count // 1')
    cur=$(kubectl get nodes -l "cloud.google.com/gke-nodepool=$pool" -o name 2>/dev/null | wc -l)
    out=$(gcloud container clusters resize "$GKE_CLUSTER" --node-pool "$pool" \
        --location "$GKE_LOCATION" --num-nodes $((cur + n)) --quiet 2>&1) ||
        fail "gcloud resize: $(printf '%s' "$out" | tail -n 1)"
    list_nodes ;;
delete-nodes)
    names=$(printf '%s' "$req" | jq -r '.names[]?')
    for node in $names; do
        inst=$(kubectl get node "$node" -o jsonpath='{.spec.providerID}' 2>/dev/null | sed 's|.*/||')
        group=$(gcloud container node-pools describe "$pool" --cluster "$GKE_CLUSTER" \
            --location "$GKE_LOCATION" --format='value(instanceGroupUrls[0])' | sed 's|.*/||')
        out=$(gcloud compute instance-groups managed delete-instances "$group" \
            --instances "$inst" --zone "$GKE_LOCATION" --quiet 2>&1) ||
            fail "gcloud delete-instances $node: $(printf '%s' "$out" | tail -n 1)"
    done
    printf '%s' "$req" | jq -c '{deleted: .names}' ;;
*)
    fail "unknown op \"$op\"" ;;
esac
