"""The batched trainer: masked PPO (CleanRL style) over ``VectorGame``, the learner in every seat.

- :mod:`~training.vector.config`: its configuration (``configs/selfplay.yaml``)
- :mod:`~training.vector.ppo`: the trainer, one file from config to result
"""
