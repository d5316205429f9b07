"""Environments: thin adapters from the engines to the interfaces of RL libraries.

- :mod:`~sm_env.envs.aec`: ``raw_env`` / ``env``, the PettingZoo AEC environment
- :mod:`~sm_env.envs.wrappers`: AEC wrappers for other libraries (mask in info, Box observation, key renaming)
- :mod:`~sm_env.envs.rllib_env`: ``TurnBasedEnv``, RLlib's turn-based ``MultiAgentEnv`` (needs ray)
- :mod:`~sm_env.envs.vector_env`: ``LearnerVectorEnv``, a Gymnasium vector env of one learner seat over ``VectorGame``
- :mod:`~sm_env.envs.openspiel_game`: the OpenSpiel game ``"python_sergeant_major"`` (needs open-spiel; registered
  with ``pyspiel`` when imported)

No rule logic lives here: rules come from :mod:`sm_env.core`, episodes and
rewards from :mod:`sm_env.core.episode`, observations from :mod:`sm_env.observation`.
"""
