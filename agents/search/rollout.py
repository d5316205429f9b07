"""Heuristic rollouts: play a game (a sampled world) to its end with the heuristic for every seat.

Used by the search agents (:mod:`agents.search.pimc`, :mod:`agents.search.ismcts`) to value
an action in a sampled deal. Each seat plays only from what it would know in
that deal: its own hand, the public play and, for the dealer, its discards, so
the rollout is not clairvoyant; only the deal is.

This is the readable reference. :mod:`agents.search.rollout_kernel` plays the same
cards compiled and batched; :func:`compiled_rollouts` says when the search
agents can use it.
"""

from __future__ import annotations

from typing import Any

from agents.players.heuristic import (
    choose_call,
    choose_discard,
    choose_miz_discard,
    choose_miz_play,
    choose_play,
    choose_take,
    choose_trump,
)
from sm_env.core.episode import result_rewards
from sm_env.core.game import DISCARD, MIZ, PLAY, TAKE, TRUMP, TRUMP_ACTION_BASE, Game


def rollout(game: Game, deck: int, dealer_out: int) -> None:
    """Play ``game`` to its end with the heuristic for every seat.

    ``dealer_out``: cards the dealer knows are out of play (its discards);
    discards made during the rollout are added as they happen.
    """
    played = 0
    for cards in game.played:
        played |= cards
    while True:
        phase = game.phase
        if phase == PLAY:
            seat = game.current
            hand = game.hands[seat]
            out = deck & ~hand & ~played
            if seat == game.dealer:
                out &= ~dealer_out
            if game.call == MIZ:
                card = choose_miz_play(hand, game.trick)
            else:
                card = choose_play(seat, hand, game.trick, game.trump, out, game.voids)
            game.apply(card)
            played |= 1 << card
        elif phase == DISCARD:
            hand = game.hands[game.dealer]
            left = game.rules.kitty_size - len(game.log.discards)
            if game.call == MIZ:
                card = choose_miz_discard(hand)
            else:
                card = choose_discard(hand, game.trump, deck & ~hand & ~dealer_out, left)
            game.apply(card)
            dealer_out |= 1 << card
        elif phase == TRUMP and game.rules.calls:
            game.apply(TRUMP_ACTION_BASE + choose_call(game.hands[game.dealer], game.calls_left[game.dealer]))
        elif phase == TRUMP:
            game.apply(TRUMP_ACTION_BASE + choose_trump(game.hands[game.dealer]))
        elif phase == TAKE:  # one_card_kitty: nothing is played yet; the face-up card is in no hand
            hand = game.hands[game.current]
            game.apply(choose_take(hand, game.face_up, game.trump, deck & ~hand & ~(1 << game.face_up)))
        else:
            return


def played_out_value(game: Game, seat: int, weight: float = 0.0) -> float:
    """``seat``'s value of a search position played out to the end of its hand, which ends the position's game:
    its balance in the hand (an int), plus ``weight`` times its result reward
    (:func:`sm_env.core.episode.result_rewards`) where the hand's end won the game. The reference of
    :func:`agents.search.rollout_kernel.hand_values`."""
    value = game.log.balances[seat]
    if weight and game.winners:
        value += weight * result_rewards(game.winners, game.rules.num_players)[seat]
    return value


def compiled_rollouts(rules: Any) -> type | None:
    """The compiled batch class (:class:`agents.search.rollout_kernel.RolloutBatch`) when numba is installed and the
    kernel plays every option of ``rules``; None when the search must use :func:`rollout`."""
    try:
        from .rollout_kernel import RolloutBatch, supports
    except ImportError:  # numba missing or broken: the pure-Python rollout plays the same cards
        return None
    return RolloutBatch if supports(rules) else None
