#!/bin/bash
# cluster.sh start|stop|ctld-stop|ctld-start|node-start N: a private, tutorial-shaped
# Slurm cluster on this machine for flexq's tests, made of Debian's real
# munged, slurmctld and slurmd (nothing faked), every daemon by PID.
#
#   partition default-pool    c1          16 cpus, 32 GiB
#   partition on-demand-pool  t[1-4]      Gres=tpu:4, always on
#   partition dws-pool        d[1-4]      Gres=tpu:4, State=CLOUD: its slurmd
#                                         starts only when Slurm powers the
#                                         node up (ResumeProgram) and stops
#                                         when it powers it down
#   partition batch-a         c2          16 cpus, a partition whose name is
#   partition batch-b         c3          not a pool's (--slurm-partition)
#
# Every node is a slurmd on 127.0.0.1 with its own port (several slurmd on
# one host cannot share one). Knobs: RUN (state dir, required), CTLD_PORT,
# PBASE (11 ports from here), SLURMD_TIMEOUT, SUSPEND_TIME.
# After start: export SLURM_CONF=$RUN/etc/slurm.conf.
set -euo pipefail
RUN=${RUN:?RUN must name the cluster directory}
CTLD_PORT=${CTLD_PORT:-26900}
PBASE=${PBASE:-26901}
HOST=$(hostname -s)
export SLURM_CONF=$RUN/etc/slurm.conf
export PATH=/usr/sbin:/usr/bin:/sbin:/bin:$PATH

alive() { [ -n "$1" ] && kill -0 "$1" 2>/dev/null &&
          [ "$(awk '{print $3}' /proc/$1/stat 2>/dev/null)" != Z ]; }
stop_pid() {
  alive "$1" || return 0
  kill -TERM "$1"
  for _ in $(seq 100); do alive "$1" || return 0; sleep 0.05; done
  kill -KILL "$1" 2>/dev/null || true
}
ctld_start() {
  # -i: keep going with the state saved (a warm restart keeps the jobs)
  setsid slurmctld -D -i "$@" -f "$SLURM_CONF" >>"$RUN/log/slurmctld.stdout" \
    2>&1 </dev/null &
  echo $! >"$RUN/pids/slurmctld.D.pid"
  for _ in $(seq 200); do scontrol ping 2>/dev/null | grep -q UP && return 0
    sleep 0.05; done
  echo "slurmctld did not come up:" >&2; tail -5 "$RUN/log/slurmctld.log" >&2
  return 1
}

port() { case $1 in c1) echo $PBASE;; c2) echo $((PBASE + 9));;
         c3) echo $((PBASE + 10));; t*) echo $((PBASE + ${1#t}));;
         d*) echo $((PBASE + 4 + ${1#d}));; esac; }

start() {
  rm -rf "$RUN"; mkdir -p "$RUN"/{etc,state,spool,pids,log,munge,bin}
  chmod 755 "$RUN/munge"
  dd if=/dev/urandom of="$RUN/munge/munge.key" bs=1024 count=1 status=none
  chmod 400 "$RUN/munge/munge.key"
  munged --force --key-file="$RUN/munge/munge.key" \
    --socket="$RUN/munge/munge.socket" --pid-file="$RUN/pids/munged.pid" \
    --log-file="$RUN/log/munged.log" --seed-file="$RUN/munge/munged.seed" \
    --num-threads=10
  for _ in $(seq 100); do [ -S "$RUN/munge/munge.socket" ] && break; sleep 0.05; done
  # ResumeProgram: slurmctld runs it with TERM, INT, HUP... blocked and a
  # bare PATH; slurmd must not inherit the mask (it would ignore the
  # SuspendProgram's TERM) and must register with -b (else slurmctld
  # ignores a boot older than the power-up request).
  cat >"$RUN/bin/resume.sh" <<R
#!/bin/bash
export SLURM_CONF=$SLURM_CONF PATH=/usr/sbin:/usr/bin:/sbin:/bin
echo "\$(date +%T.%N) resume \$1" >> $RUN/log/power.log
for n in \$(scontrol show hostnames "\$1"); do
  mkdir -p $RUN/spool/\$n
  setsid python3 -c "import os,signal,sys; signal.pthread_sigmask(signal.SIG_SETMASK, []); os.execvp(sys.argv[1], sys.argv[1:])" slurmd -D -b -f $SLURM_CONF -N \$n > $RUN/log/slurmd-\$n.stdout 2>&1 < /dev/null &
  echo \$! > $RUN/pids/slurmd-\$n.D.pid
done
R
  cat >"$RUN/bin/suspend.sh" <<S
#!/bin/bash
export SLURM_CONF=$SLURM_CONF PATH=/usr/sbin:/usr/bin:/sbin:/bin
echo "\$(date +%T.%N) suspend \$1" >> $RUN/log/power.log
for n in \$(scontrol show hostnames "\$1"); do
  f=$RUN/pids/slurmd-\$n.D.pid
  [ -f \$f ] && { echo "\$(date +%T.%N) stop \$n pid \$(cat \$f)" >> $RUN/log/power.log; kill -TERM \$(cat \$f) 2>/dev/null; }
  rm -f \$f
done
S
  chmod +x "$RUN/bin/"*.sh
  {
  cat <<C
ClusterName=flexqtest
SlurmctldHost=$HOST(127.0.0.1)
SlurmctldPort=$CTLD_PORT
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$RUN/munge/munge.socket
StateSaveLocation=$RUN/state
SlurmdSpoolDir=$RUN/spool/%n
SlurmctldPidFile=$RUN/pids/slurmctld.pid
SlurmdPidFile=$RUN/pids/slurmd-%n.pid
SlurmctldLogFile=$RUN/log/slurmctld.log
SlurmdLogFile=$RUN/log/slurmd-%n.log
SlurmctldDebug=info
SlurmdDebug=info
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU_Memory
DefMemPerCPU=256
SchedulerParameters=batch_sched_delay=0,sched_min_interval=0,sched_interval=1
MinJobAge=600
ReturnToService=2
SlurmdTimeout=${SLURMD_TIMEOUT:-30}
SlurmctldTimeout=120
MessageTimeout=30
InactiveLimit=0
KillWait=5
Waittime=0
GresTypes=tpu
SlurmdParameters=config_overrides
SuspendProgram=$RUN/bin/suspend.sh
ResumeProgram=$RUN/bin/resume.sh
SuspendTime=${SUSPEND_TIME:-600}
SuspendTimeout=10
ResumeTimeout=30
SuspendExcNodes=c[1-3],t[1-4]
TreeWidth=65533
PrivateData=cloud
C
  echo "NodeName=c1 NodeHostname=$HOST NodeAddr=127.0.0.1 Port=$(port c1) CPUs=16 RealMemory=32768 Features=default-pool State=UNKNOWN"
  for n in c2 c3; do echo "NodeName=$n NodeHostname=$HOST NodeAddr=127.0.0.1 Port=$(port $n) CPUs=16 RealMemory=32768 State=UNKNOWN"; done
  for i in 1 2 3 4; do echo "NodeName=t$i NodeHostname=$HOST NodeAddr=127.0.0.1 Port=$(port t$i) CPUs=16 RealMemory=32768 Gres=tpu:4 Features=on-demand-pool,tpu-v6e-slice,4x4 State=UNKNOWN"; done
  for i in 1 2 3 4; do echo "NodeName=d$i NodeHostname=$HOST NodeAddr=127.0.0.1 Port=$(port d$i) CPUs=16 RealMemory=32768 Gres=tpu:4 Features=dws-pool,tpu-v6e-slice,4x4 State=CLOUD"; done
  echo "PartitionName=default-pool Nodes=c1 Default=YES MaxTime=INFINITE State=UP"
  echo "PartitionName=on-demand-pool Nodes=t[1-4] MaxTime=INFINITE State=UP"
  echo "PartitionName=dws-pool Nodes=d[1-4] MaxTime=INFINITE State=UP"
  echo "PartitionName=batch-a Nodes=c2 MaxTime=INFINITE State=UP"
  echo "PartitionName=batch-b Nodes=c3 MaxTime=INFINITE State=UP"
  } >"$SLURM_CONF"
  echo "NodeName=t[1-4],d[1-4] Name=tpu Count=4" >"$RUN/etc/gres.conf"
  printf 'CgroupPlugin=autodetect\nIgnoreSystemd=yes\n' >"$RUN/etc/cgroup.conf"
  ulimit -n 65536 2>/dev/null || true
  ctld_start -c
  for n in c1 c2 c3 t1 t2 t3 t4; do
    mkdir -p "$RUN/spool/$n"
    setsid slurmd -D -f "$SLURM_CONF" -N "$n" >"$RUN/log/slurmd-$n.stdout" 2>&1 </dev/null &
    echo $! >"$RUN/pids/slurmd-$n.D.pid"
  done
  for _ in $(seq 400); do
    [ "$(sinfo -h -N -t idle -n 'c[1-3],t[1-4]' -o %N 2>/dev/null | sort -u | wc -l)" -ge 7 ] && return 0
    sleep 0.05
  done
  echo "nodes did not come up:" >&2; sinfo -N >&2; return 1
}

stop() {
  [ -d "$RUN/pids" ] || return 0
  # the jobs first, so that no task outlives its cluster
  if alive "$(cat "$RUN/pids/slurmctld.D.pid" 2>/dev/null)"; then
    scancel --full -u "$(id -un)" 2>/dev/null || true
    for _ in $(seq 100); do
      [ -z "$(squeue -h -t running,completing,configuring -o %i 2>/dev/null)" ] && break
      sleep 0.1
    done
  fi
  for f in "$RUN"/pids/slurmd-*.D.pid; do [ -e "$f" ] && stop_pid "$(cat "$f")"; done
  stop_pid "$(cat "$RUN/pids/slurmctld.D.pid" 2>/dev/null)"
  stop_pid "$(cat "$RUN/pids/munged.pid" 2>/dev/null)"
  return 0
}

case ${1:-} in
  start) start ;;
  stop) stop ;;
  ctld-stop) stop_pid "$(cat "$RUN/pids/slurmctld.D.pid")" ;;
  ctld-start) ctld_start ;;
  node-start)  # a lost node's slurmd back (it re-registers: ReturnToService=2)
    n=${2:?node}
    setsid slurmd -D -f "$SLURM_CONF" -N "$n" >>"$RUN/log/slurmd-$n.stdout" 2>&1 </dev/null &
    echo $! >"$RUN/pids/slurmd-$n.D.pid" ;;
  *) echo "usage: $0 start|stop|ctld-stop|ctld-start|node-start N" >&2; exit 2 ;;
esac
