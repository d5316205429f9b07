"""The heuristic's moves, pinned: on thousands of positions of every preset (every phase the heuristic decides),
``heuristic_action`` picks the moves recorded in ``tests/data/heuristic_moves.json``.

The positions are those of games played half by the heuristic and half at random from fixed seeds, so a change
of the heuristic's rules (or of how they are run) that moves a single card shows here. A deliberate change of
the rules records the moves again::

    python -c "import tests.test_heuristic_moves as t; t.record()"
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from agents.players import heuristic as h
from agents.players.heuristic import heuristic_action
from sm_env import PRESETS
from sm_env.core.game import Game
from sm_env.core.knowledge import player_view

FIXTURE = Path(__file__).parent / "data" / "heuristic_moves.json"
PER_PRESET = 400
CALLS = 2000  # random positions per rule function below


def moves(preset: str, count: int = PER_PRESET) -> list[int]:
    """The heuristic's move at each of the first ``count`` decisions of games from fixed seeds, in which every
    move is the heuristic's or, one time in two, a random legal one."""
    rng = random.Random(preset)
    out: list[int] = []
    while len(out) < count:
        game = Game(preset, seed=rng.randrange(10**9), max_hands=rng.randint(1, 8))
        while not game.is_over and len(out) < count:
            action = heuristic_action(player_view(game, game.current_player))
            out.append(action)
            game.apply(action if rng.random() < 0.5 else rng.choice(game.legal_actions()))
    return out


def _cards(rng: random.Random, pool: int, count: int) -> int:
    """``count`` random cards of the bit set ``pool``."""
    cards = [c for c in range(52) if pool >> c & 1]
    return sum(1 << c for c in rng.sample(cards, min(count, len(cards))))


def rule_choices(count: int = CALLS) -> dict[str, list[int]]:
    """Each rule function's choice on ``count`` random positions (hands, tricks, voids, calls left, face-up
    cards), three and four players: branches the games above reach rarely (misere, the face-up card, calls)."""
    rng = random.Random(61)
    every = (1 << 52) - 1
    out: dict[str, list[int]] = {"play": [], "miz_play": [], "discard": [], "trump": [], "call": [], "take": []}
    out["miz_discard"] = []
    for _ in range(count):
        players = rng.choice((3, 4))
        hand = _cards(rng, every, rng.randint(1, 16))
        rest = every & ~hand
        trick_cards = rng.sample([c for c in range(52) if rest >> c & 1], rng.randrange(players))
        played = _cards(rng, rest & ~sum(1 << c for c in trick_cards), rng.randrange(30))
        outstanding = rest & ~played & ~sum(1 << c for c in trick_cards)
        voids = tuple(rng.getrandbits(4) if rng.random() < 0.4 else 0 for _ in range(players))
        trump = rng.choice((-1, 0, 1, 2, 3))
        seat = rng.randrange(players)
        out["play"].append(h.choose_play(seat, hand, tuple(trick_cards), trump, outstanding, voids))
        out["miz_play"].append(h.choose_miz_play(hand, tuple(trick_cards[:3])))
        out["discard"].append(h.choose_discard(hand, trump, outstanding, rng.randint(1, 4)))
        out["trump"].append(h.choose_trump(hand))
        out["call"].append(h.choose_call(hand, rng.randrange(1, 64)))
        face = rng.choice([c for c in range(52) if rest >> c & 1])
        out["take"].append(h.choose_take(hand, face, max(trump, 0), outstanding & ~(1 << face)))
        out["miz_discard"].append(h.choose_miz_discard(hand))
    return out


def record() -> None:
    """Write the fixture from the current heuristic."""
    recorded = {"games": {preset: moves(preset) for preset in PRESETS}, "rules": rule_choices()}
    FIXTURE.write_text(json.dumps(recorded, separators=(",", ":")) + "\n")


@pytest.mark.parametrize("preset", list(PRESETS))
def test_the_heuristic_makes_the_recorded_moves(preset: str) -> None:
    _same(moves(preset), json.loads(FIXTURE.read_text())["games"][preset])


def test_the_rule_functions_make_the_recorded_choices() -> None:
    recorded = json.loads(FIXTURE.read_text())["rules"]
    got = rule_choices()
    assert set(got) == set(recorded)
    for name, expected in recorded.items():
        _same(got[name], expected, name)


def _same(got: list[int], expected: list[int], what: str = "moves") -> None:
    wrong = [k for k, (a, b) in enumerate(zip(got, expected, strict=True)) if a != b]
    assert not wrong, f"{what}: {len(wrong)} differ, the first at {wrong[0]}: {got[wrong[0]]} != {expected[wrong[0]]}"


def test_the_fixture_covers_every_preset_and_choice() -> None:
    recorded = json.loads(FIXTURE.read_text())
    assert set(recorded["games"]) == set(PRESETS) and {len(v) for v in recorded["games"].values()} == {PER_PRESET}
    assert len({a for v in recorded["games"].values() for a in v}) > 55  # cards, trumps, calls, bids, assignments
    for name, choices in recorded["rules"].items():  # varied choices: the PASS of the face-up card included
        assert len(choices) == CALLS and len(set(choices)) >= (4 if name == "trump" else 6), name
