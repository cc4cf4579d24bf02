#!/bin/sh
# flexq exec provider for Cloud TPU queued resources (flex-start style:
# one request asks for one whole slice and waits in Google's queue).
# UNTESTED: see README.md.
#
# create-nodes / provision ask for one queued resource named after flexq's
# request id, of the pool's accelerator type (pool.tpuTopology mapped
# below), and answer {"waiting"} until it is ACTIVE (flexq asks again every
# FLEXQ_EXEC_SYNC_S); a provision of several slices is not handled (one
# queued resource = one slice);
# list-nodes reports the ACTIVE ones' workers as nodes; delete-nodes
# deletes the queued resource a node belongs to (the whole slice).
set -u
: "${TPU_ZONE:?set TPU_ZONE}" "${TPU_RUNTIME_VERSION:=v2-alpha-tpuv6e}"

fail() { jq -cn --arg m "$1" '{error: $m}'; exit 0; }
command -v jq >/dev/null || { echo '{"error":"jq is not installed"}'; exit 0; }
req=$(cat) || fail "cannot read the request"
op=$(printf '%s' "$req" | jq -r '.op // empty') || fail "request is not JSON"
pool=$(printf '%s' "$req" | jq -r '.pool.name // empty')
topo=$(printf '%s' "$req" | jq -r '.pool.tpuTopology // "4x4"')
[ -n "$pool" ] || fail "request has no pool.name"
# v6e: chips = product of the topology's dimensions
chips=$(printf '%s' "$topo" | awk -Fx '{n=1; for (i=1;i<=NF;i++) n*=$i; print n}')
acc="v6e-$chips"

list_nodes() {
    out=$(gcloud compute tpus queued-resources list --zone "$TPU_ZONE" \
        --filter="name~^.*/$pool-" --format=json 2>&1) ||
        fail "gcloud queued-resources list: $(printf '%s' "$out" | tail -n 1)"
    printf '%s' "$out" | jq -c --arg pool "$pool" --arg topo "$topo" '{nodes: [
        .[] | select(.state.state == "ACTIVE") | (.name | split("/") | last) as $qr
        | range(0; (.tpu.nodeSpec[0].node.acceleratorConfig.topology // $topo
                    | split("x") | map(tonumber) | .[0] * .[1] / 4))
        | {name: "\($qr)-w\(.)",
           labels: {"cloud.google.com/gke-tpu-accelerator": "tpu-v6e-slice",
                    "cloud.google.com/gke-tpu-topology": $topo,
                    "flexq.dev/slice": $qr},
           taints: [{key: "google.com/tpu", value: "present", effect: "NoSchedule"}],
           allocatable: {"google.com/tpu": "4", cpu: "180", memory: "720Gi"},
           ready: true}]}'
}

case "$op" in
list-nodes)
    list_nodes ;;
create-nodes|provision)
    # One queued resource per request, named after flexq's request id, so
    # that asking again (after a {"waiting"} answer) finds it.
    qr=$(printf '%s' "$req" | jq -r '.id // empty')
    [ -n "$qr" ] || qr="$pool-$(date +%s)"
    state=$(gcloud compute tpus queued-resources describe "$qr" --zone "$TPU_ZONE" \
        --format='value(state.state)' 2>/dev/null)
    case "$state" in
    "")
        out=$(gcloud compute tpus queued-resources create "$qr" --zone "$TPU_ZONE" \
            --accelerator-type "$acc" --runtime-version "$TPU_RUNTIME_VERSION" \
            --node-id "$qr" --provisioning-model=flex-start --max-run-duration=7d \
            --valid-until-duration=7d 2>&1) ||
            fail "gcloud queued-resources create: $(printf '%s' "$out" | tail -n 1)"
        jq -cn --arg m "queued resource $qr created, waiting for capacity" '{waiting: $m}' ;;
    ACTIVE)
        list_nodes | jq -c --arg qr "$qr" '{nodes: [.nodes[] | select(.labels["flexq.dev/slice"] == $qr)]}' ;;
    FAILED|SUSPENDED)
        fail "queued resource $qr is $state" ;;
    *)
        jq -cn --arg m "queued resource $qr is $state" '{waiting: $m}' ;;
    esac ;;
delete-nodes)
    for qr in $(printf '%s' "$req" | jq -r '.names[]? | sub("-w[0-9]+$"; "")' | sort -u); do
        out=$(gcloud compute tpus queued-resources delete "$qr" --zone "$TPU_ZONE" \
            --force --quiet 2>&1) ||
            fail "gcloud queued-resources delete $qr: $(printf '%s' "$out" | tail -n 1)"
    done
    printf '%s' "$req" | jq -c '{deleted: .names}' ;;
*)
    fail "unknown op \"$op\"" ;;
esac
