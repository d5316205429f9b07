"""The compiled engine: a second implementation of the rules in numba, for speed.

- :mod:`~sm_env.compiled.support`: ``supports(rules)``, the one answer to "does the compiled engine run these
  rules?", which every compiled consumer asks
- :mod:`~sm_env.compiled.kernels`: the state layout and the numba kernels of the rules, observation and masks
- :mod:`~sm_env.compiled.loader`: ``game_row`` / ``load_game``, the one copy of a ``Game`` into a kernel row
- :mod:`~sm_env.compiled.state_check`: the full check of a state given to ``VectorGame.set_state``
- :mod:`~sm_env.compiled.seeding`: ``VectorGame``'s seeds (128 bits, hashed in full to the kernels' uint64)
- :mod:`~sm_env.compiled.batch`: ``VectorGame``, many games at once (numpy in and out)
- :mod:`~sm_env.compiled.single`: ``CompiledGame``, one game, the fast path of ``raw_env``
- :mod:`~sm_env.compiled.adapter`: ``EngineAdapter``, one game stepped on ``CompiledGame`` or on the ``Game``
  (its pending actions, its synced ``Game``, its step): what ``raw_env`` and ``SingleSeatEnv`` hold
- :mod:`~sm_env.compiled.codes`: the step code ``raw_env`` reads (plain integers, no numba)
- :mod:`~sm_env.compiled.twister`: ``random.Random``'s Mersenne Twister in numba, drawing the same numbers
- :mod:`~sm_env.compiled.lockstep`: the lockstep check of ``VectorGame`` against ``Game``, decision by decision

:class:`sm_env.core.game.Game` stays the reference: the lockstep tests play
both engines side by side and compare every decision. Importing this package
loads nothing; its modules load numba when they are imported.
"""
