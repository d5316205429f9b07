"""The critic's training-only view of the whole deal, carried beside the observation (``ppo.critic: full``).

The env (:class:`sm_env.envs.rllib_env.TurnBasedEnv` with ``critic_state=True``) puts, with every observation it
gives an agent, the cards hidden from that agent (:func:`sm_env.observation.full_state`: 52 entries per other seat,
then the kitty) in the agent's *infos* under ``CRITIC_STATE``, never in the observation: the env runners'
modules act on the observation alone and never read infos. On the learner, :class:`AddCriticState` (a learner
connector piece, placed by RLlib after PPO's extra bootstrap timestep and before the default pieces) copies those
vectors into the train batch as the column ``CRITIC_STATE``, one row per observation in the order of RLlib's
own observation column, where :class:`agents.players.rllib_module.FullCriticPPOModule`'s value function reads it
(GAE's values and the value loss): the asymmetric actor-critic of the vector PPO (``ppo.critic: full``).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from ray.rllib.connectors.connector_v2 import ConnectorV2

from sm_env.envs.rllib_env import CRITIC_STATE


class AddCriticState(ConnectorV2):
    """Learner connector piece: the column ``critic_state`` from the episodes' infos (module docstring)."""

    def __call__(
        self,
        *,
        rl_module: Any,
        batch: dict[str, Any],
        episodes: list[Any],
        explore: bool | None = None,
        shared_data: dict | None = None,
        **kwargs: Any,
    ) -> Any:
        if CRITIC_STATE in batch:
            return batch
        for sa_episode in self.single_agent_episode_iterator(episodes, agents_that_stepped_only=False):
            infos = sa_episode.get_infos(slice(0, len(sa_episode)))
            rows = []
            for step, info in enumerate(infos):
                if CRITIC_STATE not in info:
                    raise ValueError(
                        f"agent {sa_episode.agent_id!r}: observation {step} came without its '{CRITIC_STATE}' info; "
                        "ppo.critic: full needs the env's critic_state=True (training.rllib.trainer sets it)"
                    )
                rows.append(np.asarray(info[CRITIC_STATE], dtype=np.float32))
            self.add_n_batch_items(
                batch, CRITIC_STATE, np.stack(rows), num_items=len(sa_episode), single_agent_episode=sa_episode
            )
        return batch
