"""ray.train.v2.jax on flexq: JaxTrainer from flexq's training helper."""

from flexq.train import JaxTrainer

__all__ = ["JaxTrainer"]
