"""Training: the trainers (SB3, vector PPO, RLlib, distillation), what they share, and evaluation.

- :mod:`training.common`: the typed-YAML config toolkit, run folders, resume, progress
- :mod:`training.sb3`, :mod:`training.vector`, :mod:`training.rllib`, :mod:`training.distill`: one trainer each
- :mod:`training.evaluation`: the duplicate evaluation of any agent specs
- :mod:`training.cli`: ``sergeant-major train``
"""

from sm_env.old_paths import keep_old_paths

keep_old_paths(
    {
        "training.yaml_config": "training.common.yaml_config",
        "training.progress": "training.common.progress",
        "training.config": "training.sb3.config",
        "training.single_agent": "training.sb3.single_agent",
        "training.warm_start": "training.sb3.warm_start",
        "training.checkpoint": "training.sb3.checkpoint",
        "training.trainer": "training.sb3.trainer",
        "training.ppo_vector": "training.vector.ppo",
        "training.selfplay_config": "training.vector.config",
        "training.rllib_config": "training.rllib.config",
        "training.rllib_league": "training.rllib.league",
        "training.rllib_trainer": "training.rllib.trainer",
        "training.distill_data": "training.distill.data",
        "training.symmetry": "training.distill.symmetry",
        "training.evaluate": "training.evaluation.evaluate",
        "training.ray_eval": "training.evaluation.ray_tasks",
    }
)
