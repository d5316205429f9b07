"""Suit symmetry tables: renaming the suits of a deal gives the permuted observations and legal moves, under
every rule set's layout and actions (docs/rules.md 10.8), with only the renamings that keep a singled-out
suit where a rule set has one."""

from __future__ import annotations

import random

import numpy as np
import pytest

from sm_env.core.cards import from_mask
from sm_env.core.game import DealError, Game
from sm_env.core.knowledge import player_view
from sm_env.core.rules import PRESETS, RuleSet
from sm_env.observation import encode, observation_size
from training.distill.symmetry import PERMUTATIONS, index_tables, permutations

PASS = 58  # the auction's pass (docs/rules.md 10.8): a passed-out deal is dealt again at random, not renamed


def _mask_vector(legal: int, actions: int) -> np.ndarray:
    return np.array([(legal >> a) & 1 for a in range(actions)], dtype=np.int8)


def _renamed_pair(rules: RuleSet, perm: tuple[int, ...], seed: int) -> tuple[Game, Game, list[int]]:
    """A hand and the same hand with the suits renamed by ``perm``, and the renaming of the action ids."""
    n = rules.num_players
    rename = [perm[c // 13] * 13 + c % 13 for c in range(52)] + [52 + perm[s] for s in range(4)]
    rename += list(range(56, rules.num_actions))  # 56-73 name no suit
    balances = None if rules.no_exchange or rules.auction else ([3, -1, -2] if n == 3 else [2, -1, 1, -2])
    kwargs = {"seed": seed, "first_dealer": 1, "max_hands": 1, "start_balances": balances}
    original = Game(rules, **kwargs)
    log = original.history[0]
    deal = {"hands": [[rename[c] for c in h] for h in log.deal_hands], "kitty": [rename[c] for c in log.kitty]}
    return original, Game(rules, deals=[deal], **kwargs), rename


def _play_both(rules: RuleSet, k: int, perm: tuple[int, ...], obs_index: np.ndarray, action_index: np.ndarray):
    """Plays a hand and its renamed twin with the renamed actions; every seat's view compared at every step.
    Returns the number of views compared, or the first (view, renamed view) pair that differs."""
    original, renamed, rename = _renamed_pair(rules, perm, seed=4 + k)
    rng = random.Random(k)
    checked = 0
    while original.current_player is not None:
        for seat in range(rules.num_players):
            a, b = player_view(original, seat), player_view(renamed, seat)
            same_obs = np.array_equal(encode(a)[obs_index], encode(b))
            same_legal = np.array_equal(
                _mask_vector(a.legal, rules.num_actions)[action_index], _mask_vector(b.legal, rules.num_actions)
            )
            if not (same_obs and same_legal):
                return None
            checked += 1
        legal = from_mask(original.legal_mask())
        action = rng.choice([a for a in legal if a != PASS] or legal)
        original.apply(action)
        renamed.apply(rename[action])
    assert original.history[0].tricks_won == renamed.history[0].tricks_won
    return checked


@pytest.mark.parametrize("preset", sorted(PRESETS))
def test_a_suit_renamed_deal_has_the_permuted_observations(preset):
    rules = PRESETS[preset]
    obs_index, action_index = index_tables(rules)
    perms = permutations(rules)
    assert obs_index.shape == (len(perms), observation_size(rules))
    assert action_index.shape == (len(perms), rules.num_actions)
    k = len(perms) - 1 if preset != "standard" else 7  # a renaming that moves every suit it may
    checked = _play_both(rules, k, perms[k], obs_index[k], action_index[k])
    assert checked is not None and checked > 100


@pytest.mark.parametrize(("preset", "fixed"), [("9-5-3-one-card", 1), ("6-3-8", 0)])
def test_a_rule_set_that_singles_out_a_suit_keeps_it(preset, fixed):
    """one_card_kitty: the holder of 2D decides on the face-up card; no_kitty_51: 2C is out of the deck. A
    renaming that moves that suit is no symmetry there (the renamed hand differs), so none is in the tables."""
    rules = PRESETS[preset]
    perms = permutations(rules)
    assert len(perms) == 6 and all(p[fixed] == fixed for p in perms)
    moving = next(p for p in PERMUTATIONS if p[fixed] != fixed)
    obs_index, action_index = index_tables(rules, (moving,))  # the tables of a renaming that is not allowed
    broken = 0
    for k in range(4):
        try:
            broken += _play_both(rules, k, moving, obs_index[0], action_index[0]) is None
        except DealError:  # the renamed deal is not a deal of these rules (2C dealt under no_kitty_51)
            broken += 1
    assert broken > 0


def test_the_identity_permutation_changes_nothing_and_tables_are_permutations():
    for preset in ("standard", "dealer-assigns", "9-5-3-one-card", "calls", "four-5-3-2-2"):
        rules = PRESETS[preset]
        obs_index, action_index = index_tables(rules)
        size = observation_size(rules)
        assert permutations(rules)[0] == (0, 1, 2, 3)
        assert np.array_equal(obs_index[0], np.arange(size))
        assert np.array_equal(action_index[0], np.arange(rules.num_actions))
        for row in obs_index:
            assert sorted(row.tolist()) == list(range(size))
        assert (action_index[:, 56:] == np.arange(56, rules.num_actions)).all()  # 56-73 name no suit
