"""The SB3 trainer: MaskablePPO on one learner seat, with opponents played inside the env.

- :mod:`~training.sb3.config`: the run configuration (``configs/quickstart.yaml``, ``configs/full.yaml``)
- :mod:`~training.sb3.single_agent`: ``SingleSeatEnv``, a Gymnasium view of one learner seat
- :mod:`~training.sb3.warm_start`: imitation of a teacher agent before PPO
- :mod:`~training.sb3.checkpoint`: the checkpoint format (an SB3 zip plus the training state; safe loading)
- :mod:`~training.sb3.trainer`: self-play in resumable segments, snapshots, periodic evaluation
"""
