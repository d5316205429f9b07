"""Suit symmetry tables: renaming the suits of a deal gives the permuted observations and legal moves."""

from __future__ import annotations

import random

import numpy as np
import pytest

from sm_env.core.cards import from_mask
from sm_env.core.game import Game
from sm_env.core.knowledge import player_view
from sm_env.observation import encode
from training.distill.symmetry import PERMUTATIONS, index_tables


def _mask_vector(legal: int) -> np.ndarray:
    return np.array([(legal >> a) & 1 for a in range(56)], dtype=np.int8)


@pytest.mark.parametrize("k", [1, 7, 23])
def test_a_suit_renamed_deal_has_the_permuted_observations(k):
    obs_index, action_index = index_tables()
    perm = PERMUTATIONS[k]
    rename = [perm[c // 13] * 13 + c % 13 for c in range(52)] + [52 + perm[s] for s in range(4)]
    original = Game("standard", seed=4, first_dealer=1, max_hands=1, start_balances=[3, -1, -2])
    log = original.history[0]
    deal = {"hands": [[rename[c] for c in h] for h in log.deal_hands], "kitty": [rename[c] for c in log.kitty]}
    renamed = Game("standard", seed=4, first_dealer=1, max_hands=1, start_balances=[3, -1, -2], deals=[deal])
    rng = random.Random(k)
    checked = 0
    while original.current_player is not None:
        for seat in range(3):
            a, b = player_view(original, seat), player_view(renamed, seat)
            assert np.array_equal(encode(a)[obs_index[k]], encode(b))
            assert np.array_equal(_mask_vector(a.legal)[action_index[k]], _mask_vector(b.legal))
            checked += 1
        action = rng.choice(from_mask(original.legal_mask()))
        original.apply(action)
        renamed.apply(rename[action])
    assert checked > 150 and original.history[0].tricks_won == renamed.history[0].tricks_won


def test_the_identity_permutation_changes_nothing_and_tables_are_permutations():
    obs_index, action_index = index_tables()
    assert PERMUTATIONS[0] == (0, 1, 2, 3)
    assert np.array_equal(obs_index[0], np.arange(789)) and np.array_equal(action_index[0], np.arange(56))
    for row in obs_index:
        assert sorted(row.tolist()) == list(range(789))
