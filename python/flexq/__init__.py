"""flexq's training helper: the small part of Ray Train a flexq pod needs.

Standard library only. flexqd puts the directory holding this package on
every pod's PYTHONPATH, so a training script written for Ray Train runs on
flexq with its imports changed:

    from flexq import train                      # was: from ray import train
    from flexq.train import ScalingConfig        # was: from ray.train import ...
    from flexq.train import JaxTrainer           # was: from ray.train.v2.jax ...

How it runs (SPMD): the same script runs in every worker pod of the
RayCluster and in the driver (the RayJob's submitter). The helper knows its
role from the environment the runner and the job controllers give each pod:

    FLEXQ_RAY_ROLE=worker   JaxTrainer.fit() runs train_loop_per_worker
                            once, with RANK / WORLD_SIZE / TPU_WORKER_ID
                            from the rendezvous env; train.report() appends
                            JSON lines to FLEXQ_METRICS_FILE; the process
                            exits when the loop returns.
    otherwise (driver)      fit() finds the cluster's worker pods under
                            FLEXQ_DATA_DIR, forwards their output prefixed
                            "(RayTrainWorker pid=N, ip=HOST)" with Ray's
                            "[repeated Nx across cluster]" folding, waits for
                            every worker, and returns a Result whose metrics
                            are the last ones rank 0 reported.
    no cluster at all       fit() runs the loop once in this process (rank 0
                            of 1), so a script also runs on a laptop.
"""

from . import train
from .train import (JaxTrainer, Result, ScalingConfig, TrainingFailedError,
                    get_context, report)

__all__ = ["train", "report", "ScalingConfig", "JaxTrainer", "Result",
           "TrainingFailedError", "get_context"]
