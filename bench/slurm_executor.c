/*
 * bench/slurm_executor.c - what flexq's slurm executor costs on a real
 * Slurm cluster: build/bench/slurm_executor [N].
 *
 * The measurement drives Slurm's client commands, flexq's CLI and a
 * private cluster of Debian's slurmctld, slurmd and munged
 * (tests/e2e/slurm/cluster.sh), so its driver is a script:
 * bench/slurm_executor.py, run here with python3 and the paths of the
 * flexqd and flexq built beside this benchmark. Phases (see the script):
 * N one-task jobs straight through sbatch, the same N through flexqd
 * --executor slurm, and the tutorial's 4-host gang from admission to its
 * tasks' start. It prints the per-job medians, their ratio (target: flexq
 * adds at most 10%), the gang's start after admission (target: 1 s), and
 * one JSON object as the last line. Needs root and Slurm
 * (FLEXQ_WITH_SLURM=1 scripts/install-deps.sh); exit 77 without them.
 *
 * What it does not do: measure throughput under load (bench/jobs does, with
 * the local runner, against ../shared/bench/slurm/bench.sh).
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    char dir[4096];
    ssize_t n = readlink("/proc/self/exe", dir, sizeof(dir) - 1);
    if (n <= 0) {
        fprintf(stderr, "slurm_executor: cannot find itself\n");
        return 1;
    }
    dir[n] = '\0';
    char *slash = strrchr(dir, '/');
    if (slash)
        *slash = '\0'; /* build/bench */
    char flexqd[4200], flexq[4200];
    snprintf(flexqd, sizeof(flexqd), "%s/../flexqd", dir);
    snprintf(flexq, sizeof(flexq), "%s/../flexq", dir);
    static char py[] = "python3";
    static char script[] = FLEXQ_SOURCE_DIR "/bench/slurm_executor.py";
    static char def_n[] = "20";
    char *args[] = {py,  script, flexqd, flexq, argc > 1 ? argv[1] : def_n,
                    NULL};
    execvp("python3", args);
    perror("slurm_executor: python3");
    return 1;
}
