"""ray.train on flexq: report, ScalingConfig, get_context, Result, and
the trainers, from flexq's training helper (flexq.train)."""

from flexq.train import (DataParallelTrainer, JaxTrainer, Result,
                         ScalingConfig, TrainingFailedError, get_context,
                         report)

__all__ = ["report", "ScalingConfig", "JaxTrainer", "DataParallelTrainer",
           "Result", "TrainingFailedError", "get_context"]
