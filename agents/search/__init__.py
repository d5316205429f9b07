"""Search agents and what they share: sampled worlds, rollouts, and their compiled twins.

- :mod:`~agents.search.world_sampler`: deals consistent with a ``PlayerView`` (the readable reference,
  :mod:`sm_env.core.worlds`)
- :mod:`~agents.search.world_kernel`: the same sampling compiled, drawing the same numbers
- :mod:`~agents.search.rollout`: play a sampled world to the end with the heuristic
- :mod:`~agents.search.rollout_kernel`: ``RolloutBatch``, the same rollouts compiled, many positions at once
- :mod:`~agents.search.pimc`: perfect-information Monte Carlo over sampled worlds
- :mod:`~agents.search.ismcts`: information-set MCTS; :mod:`~agents.search.ismcts_kernel` its compiled iterations

Each compiled module is a port of the readable one beside it, checked equal
by ``tests/test_search_kernel.py`` and ``tests/test_rollout_kernel.py``.
"""
