"""agents.players.unseen: the deck of a rule set and the cards a seat has not seen."""

from __future__ import annotations

from agents.players.unseen import deck_of, outstanding_of
from sm_env.core.cards import FULL_DECK
from sm_env.core.game import Game
from sm_env.core.knowledge import player_view
from sm_env.core.rules import RuleSet


def test_the_deck_drops_the_two_of_clubs_only_without_a_kitty():
    assert deck_of(RuleSet.from_any("standard")) == FULL_DECK
    assert deck_of(RuleSet.from_any("6-3-8")) == FULL_DECK & ~1


def test_outstanding_cards_are_exactly_the_other_hands_and_what_the_seat_cannot_know():
    game = Game("standard", seed=4)
    for _ in range(30):
        legal = game.legal_mask()
        game.apply((legal & -legal).bit_length() - 1)
    for seat in range(3):
        view = player_view(game, seat)
        out = outstanding_of(view)
        assert out & view.hand == 0
        others = [game.hands[s] for s in range(3) if s != seat]
        assert (others[0] | others[1]) & ~out == 0, "a card in another hand is not counted as outstanding"
        played = view.played[0] | view.played[1] | view.played[2]
        assert out & played == 0
