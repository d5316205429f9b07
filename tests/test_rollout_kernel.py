"""The compiled heuristic rollout plays exactly agents.search.rollout.rollout's cards."""

from __future__ import annotations

import random

import numpy as np
import pytest

from agents.players import heuristic
from agents.players.unseen import deck_of
from agents.search import rollout as rollout_module
from agents.search import rollout_kernel as rk
from agents.search.rollout import rollout
from agents.search.rollout_kernel import RolloutBatch
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
        "four-5-3-2-2",
        "four-6-3-2-1",
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


# ---------------------------------------------------------------------------- planted bugs with four players


def reference_plays(rules: str, found: list[tuple[Game, int]], monkeypatch) -> list[tuple[tuple, int]]:
    """Every choose_play call of the reference rollouts of ``found``: its arguments and the card it chose."""
    calls = []

    def recorded(seat, hand, trick, trump, outstanding, voids):
        card = heuristic.choose_play(seat, hand, trick, trump, outstanding, voids)
        calls.append(((seat, hand, tuple(trick), trump, outstanding, tuple(voids)), card))
        return card

    with monkeypatch.context() as patch:
        patch.setattr(rollout_module, "choose_play", recorded)
        for game, dealer_out in found:
            rollout(game.clone(), deck_of(game.rules), dealer_out)
    return calls


def compiled_play(args: tuple, players: int, voids_at: int = 0) -> int:
    """The compiled choose_play on a reference call, its arguments typed as rollout_row passes them (int32 engine
    columns, slices of its buffers); ``players``: the seats whose voids it is given (the table it reads);
    ``voids_at``: the seat offset at which the voids are read (0 = right)."""
    seat, hand, trick, trump, outstanding, voids = args
    cards = np.zeros(4, dtype=np.int64)
    cards[: len(trick)] = trick
    shown = np.array([voids[(s + voids_at) % len(voids)] for s in range(len(voids))] + [0] * (4 - len(voids)))
    i32 = np.int32
    return rk.choose_play(i32(seat), np.int64(hand), cards[: len(trick)], i32(trump), np.int64(outstanding),
                          shown.astype(np.int64)[:players])  # fmt: skip


@pytest.mark.parametrize("rules", ["four-5-3-2-2", "four-6-3-2-1"])
def test_planted_seat_bugs_in_four_player_rollouts_are_caught(rules: str, monkeypatch) -> None:
    """The lockstep above compares every card, so a kernel bug is caught at the first rollout decision where it
    plays another card than the reference. On the decisions of the four-player lockstep's positions the kernel's
    play is the reference's, and each planted bug plays another card in some of them: the table read as three
    seats (``players`` 3, the three-seat search's constant) and the voids read one seat off."""
    calls = reference_plays(rules, positions(rules, 150, seed=len(rules)), monkeypatch)
    assert len(calls) > 2000 and {len(args[2]) for args, _ in calls} == {0, 1, 2, 3}
    assert [compiled_play(args, 4) for args, _ in calls] == [card for _, card in calls]
    for planted in ({"players": 3}, {"players": 4, "voids_at": 1}):
        wrong = sum(compiled_play(args, **planted) != card for args, card in calls)
        assert wrong >= 10, planted


def test_a_planted_bug_in_a_compiled_primitive_is_caught(monkeypatch) -> None:
    """The rollouts compile the heuristic's own rules, with numba's bit primitives in place of Python's: the lockstep
    compares the two engines' cards, so a compiled primitive that counts wrong plays other cards. The rules
    compiled with the true primitives play the reference's cards; with a count capped at 5 they do not."""
    from numba import njit

    @njit
    def capped(mask):
        return min(rk._count(mask), 5)

    calls = reference_plays("standard", positions("standard", 40, seed=5), monkeypatch)
    planted = rk._compile_rules(cache=False, count=capped)["choose_play"]
    differ = {}
    for name, play in (("compiled", rk.choose_play), ("planted", planted)):
        differ[name] = sum(
            card != play(seat, hand, np.array(trick, dtype=np.int64), trump, outstanding, np.array(voids))
            for (seat, hand, trick, trump, outstanding, voids), card in calls
        )
    assert len(calls) > 500 and differ["compiled"] == 0 and differ["planted"] >= 10, differ
