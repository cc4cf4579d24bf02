"""ray.train.v2 on flexq (the v2 trainers live in its submodules)."""
