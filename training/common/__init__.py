"""What every trainer shares.

- :mod:`~training.common.yaml_config`: the typed-YAML config toolkit (field types, messages, ``--set``, files)
- :mod:`~training.common.ppo`: the PPO hyper-parameter section of the SB3 and the batched trainers
- :mod:`~training.common.runs`: the run layer: run folders, ``--config/--resume/--set/--run-dir``, Ctrl-C, the end
- :mod:`~training.common.progress`: progress bars
"""
