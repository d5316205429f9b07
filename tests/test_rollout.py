"""agents.search.rollout: a heuristic play-out of a hand to its end, legal and deterministic."""

from __future__ import annotations

from agents.players.unseen import deck_of
from agents.search.rollout import rollout
from sm_env.core.game import DISCARD, PLAY, TRUMP, Game


def _in_play(seed: int, steps: int) -> Game:
    game = Game("independent", seed=seed)
    for _ in range(steps):
        legal = game.legal_mask()
        game.apply((legal & -legal).bit_length() - 1)
    return game


def test_a_rollout_finishes_the_hand_with_legal_moves_only():
    for seed in range(5):
        game = _in_play(seed, 8)
        start_tricks = len(game.log.tricks or [])
        world = game.clone()
        rollout(world, deck_of(world.rules), 0)
        assert world.phase not in (PLAY, DISCARD, TRUMP)
        hand = world.history[0]
        assert sum(hand.tricks_won) == 16 and len(hand.tricks) == 16
        assert len(game.log.tricks or []) == start_tricks  # the original game is untouched


def test_a_rollout_is_deterministic():
    game = _in_play(3, 5)
    results = []
    for _ in range(2):
        world = game.clone()
        rollout(world, deck_of(world.rules), 0)
        results.append([t.cards for t in world.history[0].tricks])
    assert results[0] == results[1]
