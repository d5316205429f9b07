"""The step code of the compiled single-game path, shared by its kernel and by ``raw_env``.

:func:`sm_env.compiled.single.step_env` returns one integer per step::

    current seat | hand ended << 2 | given deal needed << 3 | phase << 4 | hand number << 7

``code >> CODE_PHASE_SHIFT`` is the key (phase | hand << 3) that ``raw_env``
keeps to know when its infos change. Plain integers, no numba: ``raw_env``
reads them without loading the compiled engine (numba freezes them into the
kernels as constants).
"""

CODE_HAND_ENDED = 1 << 2
CODE_GIVEN_DEAL = 1 << 3
CODE_PHASE_SHIFT = 4
CODE_HAND_SHIFT = 7
