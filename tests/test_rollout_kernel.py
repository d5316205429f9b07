"""The compiled heuristic rollout plays exactly agents.search.rollout.rollout's cards."""

from __future__ import annotations

import random

import numpy as np
import pytest

from agents.search.rollout import rollout
from agents.search.rollout_kernel import RolloutBatch
from agents.unseen import deck_of
from sm_env.core.game import ALL_CALLS, DISCARD, MIZ, NT, PLAY, TRUMP, Game


def positions(rules: str, count: int, seed: int, last_hand: int = 3) -> list[tuple[Game, int]]:
    """Random positions in the trump, discard or play phase of hand 1 to ``last_hand`` (the hand ends the game),
    with the dealer's known-out cards (its discards so far)."""
    rng = random.Random(seed)
    out = []
    while len(out) < count:
        hands = rng.randint(1, last_hand)
        game = Game(rules, seed=rng.randrange(10**9), max_hands=hands)
        stop = rng.randrange(60)
        steps = 0
        while not game.is_over:
            if game.hand_number == hands and game.phase in (TRUMP, DISCARD, PLAY) and steps >= stop:
                break
            game.apply(rng.choice(game.legal_actions()))
            steps += 1
        if game.is_over:
            continue
        discards = sum(1 << c for c in game.log.discards or ())
        out.append((game, discards))
    return out


def python_rollout(game: Game, deck: int, dealer_out: int) -> tuple[list[int], list[int]]:
    actions: list[int] = []

    class Logged(Game):
        __slots__ = ()  # Game's layout: a clone can become one

        def apply(self, action: int) -> None:
            actions.append(action)
            Game.apply(self, action)

    clone = game.clone()
    clone.__class__ = Logged
    rollout(clone, deck, dealer_out)
    return actions, list(clone.tricks_won)


@pytest.mark.parametrize(
    "rules",
    [
        "standard",
        "canadian",
        "6-3-8",
        "woburn",
        "all-sixteen",
        "3-5-9",
        "9-2-5-variation",
        "chips-12",
        "dealer-assigns",
        "9-5-3-one-card",
        "woburn-auction",
        "calls",
    ],
)
def test_rollouts_play_the_reference_cards(rules: str) -> None:
    _check_rollouts(rules, positions(rules, 150, seed=len(rules)))


def test_rollouts_make_the_reference_calls_and_misere_plays() -> None:
    found = positions("calls", 200, seed=8, last_hand=18)  # later hands: calls used up
    calls = {game.call for game, _ in found}
    assert {-1, NT, MIZ} <= calls  # calls to make, no-trump and misère hands
    assert any(game.phase == TRUMP and game.calls_left[game.dealer] != ALL_CALLS for game, _ in found)
    _check_rollouts("calls", found)


def _check_rollouts(rules: str, found: list[tuple[Game, int]]) -> None:
    batch = RolloutBatch(rules, len(found))
    deck = deck_of(batch.rules)
    for row, (game, dealer_out) in enumerate(found):
        batch.load(row, game, deck, dealer_out)
    tricks = batch.run()
    for row, (game, dealer_out) in enumerate(found):
        actions, tricks_won = python_rollout(game, deck, dealer_out)
        got = [int(a) for a in batch.actions[row] if a >= 0]
        assert got == actions, f"position {row}: {got} != {actions}"
        assert tricks[row].tolist() == tricks_won


def test_batch_checks_its_rules_and_positions() -> None:
    batch = RolloutBatch("standard", 1)
    with pytest.raises(RuntimeError, match="load"):
        batch.run()
    game = Game("woburn", seed=1)
    with pytest.raises(ValueError, match="rules"):
        batch.load(0, game, deck_of(game.rules), 0)
    assert np.all(batch.actions == -1)


MIZ_ACTION = 52 + MIZ


@pytest.mark.parametrize("rules", ["standard", "chips-12", "calls"])
def test_values_are_the_balances_game_scores(rules: str) -> None:
    """values_each: the seat's balance in each play-out, as Game._end_hand records it (misère hands included)."""
    if rules == "calls":  # calls to make, misère among them, in later hands (as in the test above)
        found = [p for p in positions(rules, 200, seed=8, last_hand=18) if p[0].phase == TRUMP][:30]
        assert sum(MIZ_ACTION in game.legal_actions() for game, _ in found) >= 10
    else:
        found = positions(rules, 40, seed=3)
    for row, (game, dealer_out) in enumerate(found):
        actions, seat = game.legal_actions(), game.current_player
        batch = RolloutBatch(rules, 1)
        deck = deck_of(batch.rules)
        batch.load(0, game, deck, dealer_out)
        expected = []
        for action in actions:
            played = game.clone()
            played.apply(action)
            rollout(played, deck, dealer_out | (1 << action if game.phase == DISCARD else 0))
            expected.append(played.log.balances[seat])
        assert batch.values_each(actions, seat)[0].tolist() == expected, f"position {row}"
