"""Pictures of the table (render_mode="rgb_array"): shape, dtype, and no hidden card in a seat's picture."""

from __future__ import annotations

import random

import numpy as np
import pytest

pytest.importorskip("PIL", reason="table pictures need Pillow (pip install pillow)")

from sm_env import env
from sm_env.core.game import PLAY, Game
from sm_env.core.knowledge import player_view
from sm_env.display.picture import table_picture


def _deal(swap: bool) -> dict:
    """A fixed deal; with ``swap`` seats 1 and 2 trade a card and seat 1 trades one with the kitty."""
    cards = list(range(52))
    hands = [cards[0:16], cards[16:32], cards[32:48]]
    kitty = cards[48:52]
    if swap:  # nothing seat 0 (the middle player, not the dealer) can see changes
        hands[1][0], hands[2][0] = hands[2][0], hands[1][0]
        hands[1][5], kitty[0] = kitty[0], hands[1][5]
    return {"hands": [sorted(h) for h in hands], "kitty": sorted(kitty)}


def test_rgb_array_render_returns_an_rgb_uint8_image():
    e = env(render_mode="rgb_array")
    assert "rgb_array" in e.metadata["render_modes"]
    e.reset(seed=3)
    frames = []
    for _ in range(30):
        frame = e.render()
        assert isinstance(frame, np.ndarray) and frame.dtype == np.uint8 and frame.shape == (600, 960, 3)
        frames.append(frame)
        agent = e.agent_selection
        mask = e.observe(agent)["action_mask"]
        e.step(int(np.flatnonzero(mask)[0]))
    assert len({f.tobytes() for f in frames}) > 20  # the picture follows the game
    assert frames[0].std() > 10  # not a blank image


def test_a_seat_picture_ignores_cards_hidden_from_that_seat():
    rng = random.Random(0)
    same = differ = 0
    a = Game(seed=1, first_dealer=1, deals=[_deal(False)])
    b = Game(seed=1, first_dealer=1, deals=[_deal(True)])
    # play the same legal actions in both while they are legal in both
    for _ in range(40):
        if a.phase != b.phase or a.current_player != b.current_player:
            break
        common = sorted(set(a.legal_actions()) & set(b.legal_actions()))
        if not common:
            break
        seat0_a = table_picture(player_view(a, 0))
        seat0_b = table_picture(player_view(b, 0))
        whole_a, whole_b = table_picture(a), table_picture(b)
        assert np.array_equal(seat0_a, seat0_b)  # seat 0 cannot tell the two deals apart
        same += 1
        differ += not np.array_equal(whole_a, whole_b)  # the whole table can
        action = rng.choice(common)
        a.apply(action)
        b.apply(action)
    assert same >= 10 and differ == same


def test_a_seat_picture_shows_its_own_hand_and_the_whole_table_shows_every_hand():
    game = Game(seed=5, first_dealer=1)
    own = table_picture(game, 0)
    assert np.array_equal(own, table_picture(player_view(game, 0)))
    other = table_picture(game, 2)
    assert not np.array_equal(own, other)
    whole = table_picture(game)
    assert not np.array_equal(whole, own)


def test_picture_arguments_are_checked():
    game = Game(seed=1)
    with pytest.raises(TypeError, match="PlayerView or a Game"):
        table_picture("table")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="at least 480 x 300"):
        table_picture(game, width=100)
    small = table_picture(game, 0, width=640, height=400)
    assert small.shape == (400, 640, 3)


def test_pictures_through_a_whole_hand_and_at_the_end():
    game = Game(seed=9, max_hands=1)
    rng = random.Random(2)
    while not game.is_over:
        if game.phase == PLAY and game.tricks_played == 8:
            assert table_picture(player_view(game, game.current_player)).shape == (600, 960, 3)
        game.apply(rng.choice(game.legal_actions()))
    assert table_picture(game).shape == (600, 960, 3)
    assert table_picture(player_view(game, 1)).shape == (600, 960, 3)
