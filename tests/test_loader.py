"""sm_env.compiled.loader: a Game at any decision, copied into a kernel row, observes, masks and plays on as the
Game does (to the end of its hand)."""

from __future__ import annotations

import random

import numpy as np
import pytest

from sm_env.compiled import kernels as k
from sm_env.compiled.loader import LoadError, game_row, load_game
from sm_env.core.game import EXCHANGE, OVER, Game
from sm_env.core.knowledge import player_view
from sm_env.observation import encode, observation_size


def _check_row(game: Game, rng: random.Random) -> int:
    """Load ``game`` (a clone is played on), then compare with it decision by decision to the end of the hand;
    returns the number of decisions compared."""
    game = game.clone()
    st = np.zeros((1, k.NUM_S), dtype=np.int32)
    cm = np.zeros((1, k.NUM_C), dtype=np.uint64)
    load_game(st, cm, 0, game)
    cfg = k.rules_config(game.rules, game.hand_number)  # the row stops when the hand ends
    gen, starts = np.zeros(1, dtype=np.uint64), np.zeros((1, 2), dtype=np.uint64)
    log = np.zeros((1, 256), dtype=np.int8)
    seats = game.rules.num_players
    rewards, done = np.zeros((1, seats), dtype=np.float32), np.zeros(1, dtype=np.bool_)
    size = observation_size(game.rules)
    obs, ref = np.zeros((1, size), dtype=np.float32), np.zeros(size, dtype=np.float32)
    mask = np.zeros((1, game.rules.num_actions), dtype=np.int8)
    hand, decisions = game.hand_number, 0
    while True:
        before = list(game.scores)
        for seat in range(seats):
            k.observe_games(st, cm, cfg, np.array([seat]), np.array([0]), obs)
            encode(player_view(game, seat), ref)
            assert np.array_equal(obs[0].view(np.uint32), ref.view(np.uint32)), (game, seat, decisions)
        k.legal_masks(st, cm, mask)
        assert sum(1 << int(a) for a in np.flatnonzero(mask[0])) == game.legal_mask()
        if game.phase == OVER:
            return decisions
        action = rng.choice(game.legal_actions())
        k.step_games(st, cm, gen, starts, cfg, log, np.array([action]), np.ones(1, np.bool_), rewards, done,
                     np.full(1, -1), obs)  # fmt: skip
        game.apply(action)
        decisions += 1
        if game.hand_number != hand or game.phase == OVER:  # the hand ended: the row's game too
            assert done[0]
            after = before if game.history[hand - 1].passed_out else game.history[hand - 1].scores
            assert rewards[0].tolist() == [a - b for a, b in zip(after, before, strict=True)]  # the score's change
            return decisions
        assert not done[0]


@pytest.mark.parametrize(
    "rules",
    [
        "standard",
        "woburn",
        "6-3-8",
        {"pickup_before_discard": True, "max_exchange": 2},
        "3-5-9",
        "9-2-5-variation",
        {"trump_before_exchange": True, "chips": True},
        {"dealer_assigns_quotas": True, "trump_after_send": True},
        "9-5-3-one-card",
        "woburn-auction",
        "calls",
        "four-5-3-2-2",
        {"players": 4, "trump_after_send": True, "max_exchange": 2, "first_up_exchanges_first": True},
    ],
)
def test_a_game_loaded_at_any_decision_plays_on_as_the_game(rules) -> None:
    rng = random.Random(5)
    phases, compared = set(), 0
    for seed in range(3):
        game = Game(rules, seed=seed, max_hands=6)
        while game.phase != OVER:
            if rng.random() < (0.5 if game.phase == EXCHANGE else 0.1):  # exchanges are few: look at more
                phases.add(game.phase)
                compared += _check_row(game, rng)
            game.apply(rng.choice(game.legal_actions()))
        compared += _check_row(game, rng)  # the game over
    assert (EXCHANGE in phases or Game(rules).rules.no_exchange) and compared > 200


def test_a_passed_out_deal_loaded_in_the_auction_ends_the_row() -> None:
    game = Game("woburn-auction", seed=2, first_dealer=1)
    game.apply(58)
    game.apply(58)  # two passes: the third pass passes the deal out
    assert _check_row(game, random.Random(0)) >= 1  # plays on as the Game, the auction included
    clone = game.clone()
    st = np.zeros((1, k.NUM_S), dtype=np.int32)
    cm = np.zeros((1, k.NUM_C), dtype=np.uint64)
    load_game(st, cm, 0, clone)
    assert st[0, k.S_AUC_PASSED] == 0b110 and st[0, k.S_CUR] == 0 and st[0, k.S_PHASE] == clone.phase
    clone.apply(58)
    assert clone.passed_out == 1 and clone.hand_number == 2  # the next deal, the next seat bids first
    load_game(st, cm, 0, clone)
    assert (st[0, k.S_PASSED_OUT], st[0, k.S_AUC_FIRST], st[0, k.S_CUR], st[0, k.S_AUC_PASSED]) == (1, 2, 2, 0)


def test_refused_rules_are_named() -> None:
    with pytest.raises(LoadError, match="target_score"):
        game_row(Game({"target_score": 2**40}, seed=1))  # beyond the kernels' int32 scores
    assert isinstance(LoadError("x"), ValueError)
