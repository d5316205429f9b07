"""Suit symmetry of the observation and the actions, for data augmentation.

Under rules where no suit is special (the standard rules: any suit can be
trump, no suit ranks above another), renaming the suits of a position gives
an equally valid position whose best moves are the renamed best moves. A
permutation ``perm`` sends suit ``s`` to suit ``perm[s]``; card ``13 s + r``
becomes ``13 perm[s] + r`` and trump action ``52 + s`` becomes ``52 + perm[s]``.

:func:`index_tables` gives, for each of the 24 permutations, gather indices
``obs_index`` [789] and ``action_index`` [56] such that
``permuted_obs = obs[obs_index]`` and ``permuted_vector = vector[action_index]``
for any per-action vector (logits, values, legal mask). In the observation
(see :mod:`sm_env.observation`) the suit-indexed parts are the 14 card planes
(52 each), the trump and led-suit one-hots (4 each) and the voids (4 per
relative seat); every other entry is suit-free and stays in place.
"""

from __future__ import annotations

import itertools

import numpy as np

from sm_env.core.game import NUM_ACTIONS, TRUMP_ACTION_BASE
from sm_env.observation import OBSERVATION_SIZE, OFFSETS

PERMUTATIONS: tuple[tuple[int, ...], ...] = tuple(itertools.permutations(range(4)))
_CARD_PLANES = OFFSETS["trump"] // 52  # the 14 planes before the scalar features


def _inverse(perm: tuple[int, ...]) -> list[int]:
    inv = [0] * 4
    for s, t in enumerate(perm):
        inv[t] = s
    return inv


def index_tables() -> tuple[np.ndarray, np.ndarray]:
    """(obs_index [24, 789], action_index [24, 56]) int64 gather tables, one row per permutation."""
    obs_tables = np.tile(np.arange(OBSERVATION_SIZE), (len(PERMUTATIONS), 1))
    action_tables = np.tile(np.arange(NUM_ACTIONS), (len(PERMUTATIONS), 1))
    for k, perm in enumerate(PERMUTATIONS):
        inv = _inverse(perm)
        cards = np.array([inv[c // 13] * 13 + c % 13 for c in range(52)])  # new card id -> old card id
        for plane in range(_CARD_PLANES):
            obs_tables[k, plane * 52 : plane * 52 + 52] = plane * 52 + cards
        suits = np.array(inv)  # new suit -> old suit
        for name in ("trump", "led_suit"):
            obs_tables[k, OFFSETS[name] : OFFSETS[name] + 4] = OFFSETS[name] + suits
        for rel in range(3):
            base = OFFSETS["voids"] + 4 * rel
            obs_tables[k, base : base + 4] = base + suits
        action_tables[k, :52] = cards
        action_tables[k, TRUMP_ACTION_BASE : TRUMP_ACTION_BASE + 4] = TRUMP_ACTION_BASE + suits
    return obs_tables, action_tables
