"""The RLlib trainer (the ``rllib`` extra): PPO on Ray with a league of snapshots.

- :mod:`~training.rllib.config`: its configuration (``configs/rllib_*.yaml``)
- :mod:`~training.rllib.league`: ``LeagueEnv``, league opponents played inside the env
- :mod:`~training.rllib.trainer`: the trainer: checkpoints, TensorBoard, final evaluation
"""
