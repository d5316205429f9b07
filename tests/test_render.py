"""The text picture of the table (sm_env.display.render): layout, and a player's picture
never shows cards that player may not know."""

from __future__ import annotations

import random

from helpers import make_deal, mask, sent_not_yet_returned

from sm_env.core.cards import CARD_TEXT, from_mask
from sm_env.core.game import OVER, TRUMP_ACTION_BASE, Game
from sm_env.core.knowledge import player_view
from sm_env.display.render import hand_text, render_table

DEAL = make_deal(
    "S:AJ H:Q98542 D:J862 C:KQ85",
    "S:T7654 H:73 D:KT97 C:J9743",
    "S:KQ9832 H:AJ6 D:AQ53 C:A62",
    "H:KT D:4 C:T",
)


def exchange_game() -> Game:
    return Game(seed=1, first_dealer=0, deals=[DEAL], start_balances=[2, -1, -1])


def test_hand_text_groups_by_suit_spades_first_high_first():
    assert hand_text(mask("AS KS 9S QH 2C")) == "S: A K 9  H: Q  D: -  C: 2"
    assert hand_text(mask("AS KS 9S QH 2C"), unicode_suits=True) == "\u2660: A K 9  \u2665: Q  \u2666: -  \u2663: 2"
    assert hand_text(0) == "S: -  H: -  D: -  C: -"


def test_a_players_picture_shows_its_hand_and_the_exchange_it_must_make():
    game = exchange_game()
    lines = render_table(game, 0).splitlines()
    assert lines[0] == "Sergeant Major [standard]  hand 1  phase: exchange  trump: not named"
    assert lines[2].split()[:3] == ["player_0", "dealer", "8"] and lines[2].endswith("<- you, to act")
    assert "Previous hand balances: player_0 +2, player_1 -1, player_2 -1" in lines
    assert "player_0 hand (16): S: A J  H: Q 9 8 5 4 2  D: J 8 6 2  C: K Q 8 5" in lines
    assert lines[-1].startswith("To act: player_0 (exchange: choose 1 card for player_2, then 1 card for player_1)")
    other = render_table(game, 1).splitlines()
    assert other[-1] == "To act: player_0 (exchange: choose the cards to send)"
    assert render_table(player_view(game, 1)) == render_table(game, 1)  # a view or a game and a seat


def test_a_players_picture_never_names_a_card_it_may_not_know():
    rng = random.Random(3)
    for seed in range(6):
        game = Game(seed=seed, first_dealer=seed % 3, max_hands=1, start_balances=[1, -1, 0] if seed % 2 else None)
        while True:
            for seat in range(3):
                view = player_view(game, seat)
                known = view.hand | view.played[0] | view.played[1] | view.played[2] | view.shown
                known |= view.gave[0] | view.gave[1] | view.gave[2] | view.got[0] | view.got[1] | view.got[2]
                known |= view.kitty or 0
                for c in view.discards or ():
                    known |= 1 << c
                for e in view.exchanges:
                    for c in (e.sent or ()) + (e.returned or ()):
                        known |= 1 << c
                words = set(render_table(game, seat).replace(",", " ").replace(":", " ").split())
                hidden = {CARD_TEXT[c] for c in range(52) if not known >> c & 1}
                assert not words & hidden, (seed, seat, sorted(words & hidden))
            if game.phase == OVER:
                break
            game.apply(rng.choice(game.legal_actions()))


def test_the_whole_table_shows_every_hand_and_the_kitty():
    game = exchange_game()
    text = render_table(game)
    assert text.splitlines()[0].endswith("(whole table)")
    assert "Kitty (face down): KH TH 4D TC" in text
    for seat in range(3):
        assert f"player_{seat} hand (16): {hand_text(game.hands[seat])}" in text


def test_naming_trump_lists_the_action_ids_and_the_end_names_the_winner():
    game = Game(seed=4, first_dealer=2, max_hands=1)
    assert "52=clubs 53=diamonds 54=hearts 55=spades" in render_table(game, 2)
    game.apply(TRUMP_ACTION_BASE + 1)
    assert "trump: D (diamonds)" in render_table(game, 0).splitlines()[0]
    rng = random.Random(4)
    while game.phase != OVER:
        game.apply(rng.choice(game.legal_actions()))
    last = render_table(game, 0).splitlines()
    if game.winner is None:
        assert last[-1] == "Game over: stopped after 1 hand with no winner (truncated)"
    else:
        winners = game.winner if isinstance(game.winner, list) else [game.winner]
        assert last[-1] == "Game over: won by " + ", ".join(f"player_{s}" for s in winners)
    assert last[-2].startswith("Last hand: balances player_0 ")
    assert all(from_mask(hand) == [] for hand in game.hands)  # every card was played


def test_chips_show_in_the_last_hand_line():
    game = Game(rules="chips-12", seed=2, max_hands=1)
    rng = random.Random(2)
    while game.phase != OVER:
        game.apply(rng.choice(game.legal_actions()))
    chips = game.history[-1].chips
    want = "; chips " + ", ".join(f"player_{s} {c:+d}" for s, c in enumerate(chips))
    for text in (render_table(game, 0), render_table(game)):
        assert text.splitlines()[-2].endswith(want)
    plain = Game(rules="fixed-12", seed=2, max_hands=1)
    while plain.phase != OVER:
        plain.apply(rng.choice(plain.legal_actions()))
    assert "chips" not in render_table(plain, 0)


def test_sent_cards_waiting_for_their_return_are_drawn_for_sender_and_receiver_only():
    game = sent_not_yet_returned()
    waiting = "Exchange: player_0 -> player_2 1 card: sent 2C, returned (not yet)"
    assert waiting in render_table(game, 0) and waiting in render_table(game, 2) and waiting in render_table(game)
    third = render_table(game, 1)
    assert "Exchange: player_0 -> player_2 1 card" in third and "2C" not in third
    assert "To act: player_0 (name trump)" in render_table(game, 0)


def test_the_kitty_trick_is_drawn_once_the_discards_are_made():
    game = Game(rules="3-5-9", seed=5, first_dealer=1)
    game.apply(TRUMP_ACTION_BASE)
    line = "Kitty trick: the dealer's discards, won by player_1"
    for _ in range(3):
        game.apply(game.legal_actions()[0])
        assert line not in render_table(game, 0)
    game.apply(game.legal_actions()[0])
    for seat in (0, 1, 2, None):
        assert line in render_table(game, seat)
    assert "player_1  dealer      9       1" in render_table(game, 0)
