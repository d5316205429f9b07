"""The PPO hyper-parameters and the network, one section for the trainers that share them.

:class:`PPOSection` is the ``ppo:`` section of the SB3 trainer (:class:`training.sb3.config.PPOConfig`) and of
the batched trainer (:class:`training.vector.config.VectorPPOConfig`): the same keys, types, bounds and
descriptions; each trainer changes only the defaults (and the wording of ``n_steps``, whose rollout differs)
with ``class X(PPOSection, defaults={...}, descriptions={...})`` and adds its own keys. The RLlib trainer keeps
RLlib's own names (``lr``, ``lambda_``, ...; :mod:`training.rllib.config`).
"""

from __future__ import annotations

from typing import Literal

from training.common.yaml_config import Flag, Number, Section, Sizes, Whole, setting

ACTIVATIONS = ("tanh", "relu")


class PPOSection(Section):
    """Clipped PPO hyper-parameters and the MLP of the actor and the critic."""

    learning_rate: Number = setting(3e-4, "Adam learning rate", gt=0)
    lr_schedule: Literal[("constant", "linear")] = setting(
        "constant", "'linear' decays the learning rate to 0 over train.total_timesteps"
    )
    n_steps: Whole = setting(256, "steps per rollout", gt=0)
    batch_size: Whole = setting(512, "minibatch size (learner decisions)", ge=2)
    n_epochs: Whole = setting(4, "passes over each rollout", gt=0)
    gamma: Number = setting(
        1.0, "discount per decision of the learner (episodes are short and end for sure: 1.0 is fine)", gt=0, le=1
    )
    gae_lambda: Number = setting(0.95, "GAE lambda", ge=0, le=1)
    clip_range: Number = setting(0.2, "PPO clipping of the probability ratio", gt=0)
    ent_coef: Number = setting(0.01, "entropy bonus (entropy over the legal actions)", ge=0)
    vf_coef: Number = setting(0.5, "value loss weight", ge=0)
    max_grad_norm: Number = setting(0.5, "gradient clipping (global norm)", gt=0)
    target_kl: Number | None = setting(None, "stop an update's epochs beyond this approximate KL (null: never)", gt=0)
    normalize_advantage: Flag = setting(True, "normalise advantages per minibatch")
    net_arch: Sizes = setting(lambda: [256, 256], "hidden layer sizes of the actor and of the critic")
    activation: Literal[ACTIVATIONS] = setting("tanh", "activation of the hidden layers")
