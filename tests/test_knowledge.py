"""What one player knows (sm_env.core.knowledge): own hand only, exchange cards only
to the two players in it and only when due, kitty and discards only to the dealer."""

from __future__ import annotations

import random

import pytest
from helpers import card, make_deal

from sm_env.core.game import DISCARD, EXCHANGE, OVER, PLAY, TRUMP, TRUMP_ACTION_BASE, Game
from sm_env.core.knowledge import PlayerView, player_view
from sm_env.core.logs import NO_SUIT, Exchange, Trick

# seat 0 deals; start balances +2 -1 -1: seat 0 sends one card to seat 2 (lower quota first), then one to seat 1
DEAL = make_deal(
    "S:AJ H:Q98542 D:J862 C:KQ85",
    "S:T7654 H:73 D:KT97 C:J9743",
    "S:KQ9832 H:AJ6 D:AQ53 C:A62",
    "H:KT D:4 C:T",
)


def exchange_game() -> Game:
    return Game(seed=1, first_dealer=0, deals=[DEAL], start_balances=[2, -1, -1])


def test_a_view_holds_its_own_hand_and_only_public_counts_of_the_others():
    game = exchange_game()
    for seat in range(3):
        view = player_view(game, seat)
        assert isinstance(view, PlayerView)
        assert view.hand == game.hands[seat]
        assert view.hand_sizes == (16, 16, 16)
        assert view.kitty is None and view.shown == 0
        assert view.discards == (() if seat == 0 else None)  # the dealer's own discards, none yet
        assert view.trump == NO_SUIT and view.led_suit == NO_SUIT
        assert view.role() == (seat - 0) % 3 and view.role(2) == 2
        assert not hasattr(view, "__dict__")  # read-only slots, no stray state


def test_to_send_is_shown_only_to_the_sender_and_counts_down():
    game = exchange_game()
    assert player_view(game, 0).to_send == ((2, 1), (1, 1)) == game.cards_to_send()
    assert player_view(game, 1).to_send == () and player_view(game, 2).to_send == ()
    assert player_view(game, 1).legal == 0 and player_view(game, 0).legal == game.legal_mask()
    game.apply(card("2H"))  # to seat 2
    assert player_view(game, 0).to_send == ((1, 1),)


def test_exchange_cards_reach_the_receiver_only_when_the_round_completes():
    game = exchange_game()
    game.apply(card("2H"))  # seat 0 -> seat 2
    sender, receiver, third = (player_view(game, s) for s in (0, 2, 1))
    assert sender.exchanges == (Exchange(0, 2, 1, (card("2H"),), None),)
    assert receiver.exchanges == (Exchange(0, 2, 1, None, None),)  # chosen, but nothing moved yet
    assert third.exchanges == receiver.exchanges
    assert sender.gave == (0, 0, 1 << card("2H")) and receiver.got == (0, 0, 0)
    game.apply(card("5C"))  # seat 0 -> seat 1: the round completes, the cards move
    assert game.phase == TRUMP
    receiver = player_view(game, 2)
    (to_two,) = [e for e in receiver.exchanges if e.receiver == 2]
    assert to_two.sent == (card("2H"),) and to_two.returned == (card("AH"),)  # top heart of seat 2 comes back
    assert receiver.got[0] == 1 << card("2H") and receiver.gave[0] == 1 << card("AH")
    outsider = player_view(game, 1)
    (seen,) = [e for e in outsider.exchanges if e.receiver == 2]
    assert seen == Exchange(0, 2, 1, None, None)  # the third player sees counts only


def test_kitty_and_discards_are_the_dealers_alone():
    game = Game(seed=2, first_dealer=1)
    game.apply(TRUMP_ACTION_BASE + 3)
    assert game.phase == DISCARD
    discard = game.legal_actions()[0]
    game.apply(discard)
    dealer, other = player_view(game, 1), player_view(game, 2)
    assert dealer.discards == (discard,) and other.discards is None
    assert dealer.discard_count == other.discard_count == 1  # how many is public
    assert dealer.kitty is None  # not taken yet (standard: the kitty comes after the discards)
    while game.phase == DISCARD:
        game.apply(game.legal_actions()[0])
    dealer, other = player_view(game, 1), player_view(game, 2)
    assert dealer.kitty_taken and other.kitty_taken
    assert dealer.kitty == game.kitty_mask and other.kitty is None
    assert dealer.trump == other.trump == 3


def test_tricks_voids_and_the_end_are_public():
    game = Game(seed=5, max_hands=1)
    rng = random.Random(5)
    while game.phase != PLAY:
        game.apply(rng.choice(game.legal_actions()))
    views = [player_view(game, s) for s in range(3)]
    assert all(v.tricks() == () for v in views)  # no card played yet: no trick listed
    while game.phase != OVER:
        game.apply(rng.choice(game.legal_actions()))
        views = [player_view(game, s) for s in range(3)]
        assert views[0].tricks() == views[1].tricks() == views[2].tricks()
        assert views[0].voids == tuple(game.voids) and views[0].played == tuple(game.played)
    tricks = views[0].tricks()
    assert len(tricks) == 16 and all(isinstance(t, Trick) and len(t.cards) == 3 for t in tricks)
    assert sum(1 for t in tricks for s in range(3) if t.winner == s) == 16
    with pytest.raises(AttributeError):
        tricks[0].winner = 1  # immutable
    assert views[0].winner == game.winner and views[0].truncated == game.truncated
    assert views[0].to_act is None and views[0].legal == 0


def test_exchange_phase_constant_is_the_views_phase():
    assert player_view(exchange_game(), 0).phase == EXCHANGE
