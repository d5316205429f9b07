"""The batched trainers over ``VectorGame``, CleanRL style, the learner in every seat.

- :mod:`~training.vector.config`: their configuration (``configs/selfplay.yaml``, ``configs/dmc.yaml``)
- :mod:`~training.vector.ppo`: masked PPO, one file from config to result (``--backend vector``)
- :mod:`~training.vector.dmc`: deep Monte-Carlo (DouZero style) from scratch, one file from config to result
  (``--backend dmc``), built on ppo.py's pieces (the network, the timers, the checkpoint files)
- :mod:`~training.vector.exploit`: a best response to a fixed agent (``sergeant-major exploit``)
"""
