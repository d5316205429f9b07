"""sm_env.display.scene: the table as plain data, for one seat (from its view alone) or for every hand."""

from __future__ import annotations

import json

from sm_env.core.cards import CARD_TEXT, from_mask
from sm_env.core.game import Game
from sm_env.core.knowledge import player_view
from sm_env.display.scene import full_table, seat_table, sorted_cards

NAMES = ["You", "Left", "Right"]


def _play_some(game: Game, steps: int) -> None:
    for _ in range(steps):
        legal = game.legal_mask()
        game.apply((legal & -legal).bit_length() - 1)


def test_a_seat_sees_its_own_hand_and_no_other():
    game = Game("standard", seed=5)
    _play_some(game, 10)
    for seat in range(3):
        table = seat_table(player_view(game, seat), NAMES)
        assert table["mode"] == "seat" and table["seat"] == seat
        assert table["hands"][seat] == sorted_cards(game.hands[seat])
        assert [h for s, h in enumerate(table["hands"]) if s != seat] == [None, None]
        hidden = {CARD_TEXT[c] for s in range(3) if s != seat for c in from_mask(game.hands[s])}
        assert hidden.isdisjoint(json.dumps(table).replace('"', " ").split()), "a hidden card reached the scene"


def test_the_full_table_shows_every_hand_and_the_kitty():
    game = Game("standard", seed=5)
    table = full_table(game, NAMES)
    assert table["mode"] == "all" and table["seat"] is None
    assert [len(h) for h in table["hands"]] == [16, 16, 16] and len(table["kitty"]) == 4
    shown = {c for hand in table["hands"] for c in hand} | set(table["kitty"])
    assert len(shown) == 52


def test_legal_cards_are_those_of_the_engine_and_the_scene_is_json():
    game = Game("standard", seed=9)
    _play_some(game, 25)
    seat = game.current
    table = seat_table(player_view(game, seat), NAMES)
    legal_cards = {CARD_TEXT[a] for a in from_mask(game.legal_mask()) if a < 52}
    assert set(table["legal"]) == legal_cards
    assert json.loads(json.dumps(table)) == table


def test_sorted_cards_groups_by_suit():
    cards = sorted_cards((1 << 0) | (1 << 13) | (1 << 12) | (1 << 51))
    assert sorted(cards) == sorted(["2C", "2D", "AC", "AS"]) and len(cards) == 4
    suits = [c[-1] for c in cards]
    assert suits == sorted(suits, key=suits.index)  # each suit in one run
