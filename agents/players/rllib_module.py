"""The action-masking PPO module for RLlib's new API stack (imports ray and torch).

:class:`ActionMaskingPPOModule` is RLlib's ``DefaultPPOTorchRLModule`` for the
observation of :class:`sm_env.envs.rllib_env.TurnBasedEnv`:
``Dict(observations=Box(N,), action_mask=Box(56,))``. The network sees
``observations``; the logits of actions whose mask entry is 0 are set to
RLlib's ``FLOAT_MIN`` in exploration, inference and training alike, so an
illegal action is never sampled and has probability 0 in the loss. The batch
given to the module is never modified (a new dict is built per call), and the
value function sees the same ``observations``.
"""

from __future__ import annotations

from typing import Any

import torch
from gymnasium import spaces
from ray.rllib.algorithms.ppo.torch.default_ppo_torch_rl_module import DefaultPPOTorchRLModule
from ray.rllib.core.columns import Columns
from ray.rllib.utils.torch_utils import FLOAT_MIN

from sm_env.envs.rllib_env import CRITIC_STATE

__all__ = ["ActionMaskingPPOModule", "FullCriticPPOModule"]

OBS_KEYS = {"observations", "action_mask"}


class ActionMaskingPPOModule(DefaultPPOTorchRLModule):
    """PPO module that reads ``observations`` and masks its logits with ``action_mask``."""

    def __init__(self, *, observation_space: Any = None, **kwargs: Any) -> None:
        if not isinstance(observation_space, spaces.Dict) or set(observation_space.spaces) != OBS_KEYS:
            raise ValueError(
                "ActionMaskingPPOModule needs a Dict observation space with the keys 'observations' and "
                f"'action_mask' (sm_env.envs.rllib_env.TurnBasedEnv), got {observation_space}"
            )
        self.observation_space_with_mask = observation_space
        super().__init__(observation_space=observation_space["observations"], **kwargs)

    def setup(self) -> None:
        """Build the networks for the vector; then report the Dict space as the module's own."""
        super().setup()
        self.observation_space = self.observation_space_with_mask

    @staticmethod
    def _split(batch: dict[str, Any]) -> tuple[Any, dict[str, Any]]:
        obs = batch[Columns.OBS]
        inner = dict(batch)
        inner[Columns.OBS] = obs["observations"]
        return obs["action_mask"], inner

    @staticmethod
    def _mask(out: dict[str, Any], mask: Any) -> dict[str, Any]:
        logits = out[Columns.ACTION_DIST_INPUTS]
        out[Columns.ACTION_DIST_INPUTS] = torch.where(mask > 0, logits, torch.full_like(logits, FLOAT_MIN))
        return out

    def _forward(self, batch: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        mask, inner = self._split(batch)
        return self._mask(super()._forward(inner, **kwargs), mask)

    def _forward_train(self, batch: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        mask, inner = self._split(batch)
        return self._mask(super()._forward_train(inner, **kwargs), mask)

    def compute_values(self, batch: dict[str, Any], embeddings: Any = None) -> Any:
        """Values of ``observations`` (the mask is not an input)."""
        if isinstance(batch[Columns.OBS], dict):
            _, batch = self._split(batch)
        return super().compute_values(batch, embeddings)


class FullCriticPPOModule(ActionMaskingPPOModule):
    """:class:`ActionMaskingPPOModule` whose value function also sees the whole deal in training (an asymmetric
    actor-critic, the vector PPO's ``ppo.critic: full``): a separate MLP (``fcnet_hiddens``, ``fcnet_activation``)
    over ``observations`` and the batch column ``critic_state`` (``model_config["critic_state_size"]`` entries:
    the cards hidden from the seat, :mod:`training.rllib.critic_state`). The policy reads ``observations`` alone,
    as in the base class, so the module acts where no critic state exists (env runners, evaluation, play); only
    :meth:`compute_values` (the learner's GAE and value loss) needs it."""

    def setup(self) -> None:
        super().setup()
        size = int(self.model_config.get("critic_state_size", 0))
        if size <= 0:
            raise ValueError("FullCriticPPOModule needs model_config['critic_state_size'] > 0 (the full state's size)")
        hiddens = list(self.model_config.get("fcnet_hiddens", [256, 256]))
        activation = {"tanh": torch.nn.Tanh, "relu": torch.nn.ReLU}[self.model_config.get("fcnet_activation", "tanh")]
        layers: list[torch.nn.Module] = []
        width = int(self.observation_space_with_mask["observations"].shape[0]) + size
        for hidden in hiddens:
            layers += [torch.nn.Linear(width, hidden), activation()]
            width = hidden
        self.full_critic = torch.nn.Sequential(*layers, torch.nn.Linear(width, 1))

    def compute_values(self, batch: dict[str, Any], embeddings: Any = None) -> Any:
        """Values of ``observations`` with ``critic_state`` beside them (``embeddings``, the policy's, unused)."""
        obs = batch[Columns.OBS]
        vector = obs["observations"] if isinstance(obs, dict) else obs
        if CRITIC_STATE not in batch:
            raise KeyError(
                f"FullCriticPPOModule.compute_values needs the batch column '{CRITIC_STATE}' (a learner batch made "
                "with training.rllib.critic_state.AddCriticState)"
            )
        return self.full_critic(torch.cat([vector, batch[CRITIC_STATE]], dim=-1)).squeeze(-1)
