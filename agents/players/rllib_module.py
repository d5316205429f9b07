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

__all__ = ["ActionMaskingPPOModule"]

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
