"""Training: the trainers (SB3, vector PPO, RLlib, distillation), what they share, and evaluation.

- :mod:`training.common`: the typed-YAML config toolkit, run folders, resume, progress
- :mod:`training.sb3`, :mod:`training.vector`, :mod:`training.rllib`, :mod:`training.distill`: one trainer each
- :mod:`training.evaluation`: the duplicate evaluation of any agent specs
- :mod:`training.cli`: ``sergeant-major train``
"""
