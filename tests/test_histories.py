"""sm_env/core/histories.py: whole game histories drawn from what one seat knows, on every preset.

At random points of random games (a few hands each, every phase), each seat's knowledge is redrawn: the
replayed game gives the seat the same knowledge of every hand and the same view now, the draw changes what the
seat cannot see, and it reads only the seat's knowledge (the redrawn game's knowledge draws the same again).
"""

from __future__ import annotations

import random

import pytest

from sm_env.core.game import OVER, Game
from sm_env.core.histories import GameKnowledge, game_knowledge, sample_history
from sm_env.core.knowledge import player_view
from sm_env.core.rules import PRESETS


def _same_view(a, b) -> bool:
    names = [name for name in type(a).__slots__ if name not in ("rules", "_tricks")]
    return all(getattr(a, name) == getattr(b, name) for name in names) and a.tricks() == b.tricks()


@pytest.mark.parametrize("name", sorted(PRESETS))
def test_sampled_histories_keep_the_seats_knowledge(name):
    rng = random.Random(name)
    checked = redrawn = 0
    for _ in range(3):
        game = Game(name, seed=rng.randrange(2**32), max_hands=3)
        while game.phase != OVER:
            if rng.random() < 0.05:
                seat = rng.randrange(game.rules.num_players)
                known = game_knowledge(game, seat)
                drawn = sample_history(known, random.Random(checked))
                again = game_knowledge(drawn.game, seat)
                assert again.hands == known.hands and _same_view(again.view, known.view)
                redrawn += drawn.deals[-1]["hands"] != [sorted(h) for h in game.history[-1].deal_hands]
                twin = sample_history(again, random.Random(checked))  # the same knowledge draws the same
                assert twin.deals == drawn.deals and twin.actions == drawn.actions
                checked += 1
            game.apply(rng.choice(game.legal_actions()))
    assert checked >= 10 and redrawn >= checked // 2


def test_a_game_over_and_its_first_hands_only():
    game = Game("woburn", seed=5, max_hands=2)
    rng = random.Random(1)
    while game.phase != OVER:
        game.apply(rng.choice(game.legal_actions()))
    known = game_knowledge(game, 1)
    assert known.view is None and len(known.hands) == 2
    drawn = sample_history(known, rng)
    assert drawn.game.phase == OVER and game_knowledge(drawn.game, 1).hands == known.hands
    first = game_knowledge(game, 1, hands=1)
    assert isinstance(first, GameKnowledge) and first.view is None and first.hands == known.hands[:1]
    with pytest.raises(ValueError, match="hands must be between 1 and the 2 hand entries"):
        game_knowledge(game, 1, hands=3)
    assert player_view(drawn.game, 1).scores == player_view(game, 1).scores
