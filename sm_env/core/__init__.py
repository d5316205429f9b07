"""The rules core: the reference implementation of every rule set, standard library only.

- :mod:`~sm_env.core.cards`: card ids, text, suits and ranks, bit-set helpers
- :mod:`~sm_env.core.rules`: ``RuleSet``, its options, presets and validation
- :mod:`~sm_env.core.logs`: the logs of a hand (exchanges, tricks, the immutable ``HandRecord``)
- :mod:`~sm_env.core.game`: ``Game``, the state machine: phases, whose turn, legality, scoring
- :mod:`~sm_env.core.knowledge`: ``PlayerView``, all that one player may know (the only way to see a game as a player),
  and ``HandKnowledge``, all it observed of a hand (its perfect recall)
- :mod:`~sm_env.core.worlds`: deals consistent with a ``PlayerView`` (the world sampler of search)
- :mod:`~sm_env.core.histories`: whole game histories consistent with a seat's knowledge (OpenSpiel's resampling)
- :mod:`~sm_env.core.episode`: episodes and rewards, shared by every environment

Nothing here imports numpy, numba, PettingZoo or anything above it
(``tests/test_layers.py``).
"""
