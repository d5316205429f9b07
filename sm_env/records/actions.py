"""The actions of a game record, in the order the engine asks for them: what re-plays it decision by decision.

:func:`record_actions` checks a record with :func:`sm_env.records.replay.replay`, then re-plays it with the
engine, taking each decision from the record's fields by the phase the engine is in: the exchange's ``sent``
cards in the listed order, ``trump`` (or the ``call`` with ``calls``), ``discards``, the trick cards in play
order, and for the rule sets of docs/rules.md section 10 the ``assignment``, the ``take`` and the
``auction``'s bids and passes. A re-play that does not give back the same record (a rule set with a decision
this reader does not know) is a :class:`ReplayError`, as is a record of more than :data:`MAX_STEPS` actions.

It returns :class:`RecordActions`: the game before the first action (:meth:`RecordActions.start`, a fresh
copy each time) and the actions of each hand entry. The replay viewer and the analysis of a record both step
through a record with it.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from sm_env.core.cards import parse_card
from sm_env.core.game import (
    ASSIGN,
    ASSIGN_ACTION_BASE,
    BID,
    BID_ACTION_BASE,
    CALL_NAMES,
    DISCARD,
    EXCHANGE,
    MAX_ACTIONS,
    PASS_ACTION,
    PHASE_NAMES,
    PLAY,
    TAKE,
    TRUMP,
    TRUMP_ACTION_BASE,
    Game,
    assignment_of,
)
from sm_env.core.rules import RuleSet

from .format import ReplayError, game_record
from .replay import replay

__all__ = ["MAX_STEPS", "RecordActions", "record_actions"]

MAX_STEPS = 100_000
"""The most actions a record may have here (a 100-hand game has about 5,000)."""


def _decisions(hand: dict[str, Any], rules: RuleSet) -> dict[int, list[int]]:
    """The record's choices of one hand (one entry: a passed-out deal of the auction is one), by the phase
    that asks for them."""
    sent = [parse_card(c) for e in hand.get("exchanges") or () for c in e["sent"]]
    if rules.calls:
        trump = [] if hand.get("call") is None else [TRUMP_ACTION_BASE + CALL_NAMES.index(hand["call"])]
    else:
        trump = [] if hand.get("trump") is None else [TRUMP_ACTION_BASE + "CDHS".index(hand["trump"].upper())]
    discards = [parse_card(c) for c in hand.get("discards") or ()]
    plays = [parse_card(c) for t in hand.get("tricks") or () for c in t["cards"]]
    queues = {EXCHANGE: sent, TRUMP: trump, DISCARD: discards, PLAY: plays}
    if hand.get("assignment") is not None:  # checked by replay(): one of the permutations
        wanted = list(hand["assignment"])
        queues[ASSIGN] = [a for a in range(ASSIGN_ACTION_BASE, MAX_ACTIONS) if assignment_of(a, rules) == wanted][:1]
    if hand.get("take") is not None:
        card = hand["take"]["card"]
        queues[TAKE] = [PASS_ACTION if card is None else parse_card(card)]
    if hand.get("auction") is not None:
        queues[BID] = [PASS_ACTION if b["bid"] is None else BID_ACTION_BASE + b["bid"] - 8 for b in hand["auction"]]
    return queues


@dataclass(frozen=True)
class RecordActions:
    """A checked record as actions: ``rules``, the checked (re-played) record, the game before the first
    action, and ``hands[k]``, the actions of hand entry k (every entry; a passed-out deal is one)."""

    rules: RuleSet
    record: dict[str, Any]
    first: Game
    hands: tuple[bytes, ...]  # every action id is below 256

    def start(self) -> Game:
        """A fresh copy of the game before the first action."""
        return self.first.clone()

    def __len__(self) -> int:
        """Number of actions in the record."""
        return sum(len(h) for h in self.hands)

    def steps(self) -> Iterator[tuple[int, Game, int]]:
        """Each action in order, with the game before it: (hand entry index, game, action). The game is one
        object, moved on by the action once the caller takes the next step: read it, do not change it."""
        game = self.start()
        for index, actions in enumerate(self.hands):
            for action in actions:
                yield index, game, action
                game.apply(action)


def record_actions(record: Any) -> RecordActions:
    """A record, checked and read as actions (see the module docstring); :class:`ReplayError` naming what is
    wrong."""
    if not isinstance(record, dict):
        raise ReplayError(f"a game record is a JSON object, got {type(record).__name__}")
    checked = replay(record)  # raises ReplayError naming the first bad field
    hands = checked["hands"]
    max_hands = checked.get("max_hands", len(hands) if checked.get("truncated") else None)
    rules = RuleSet.from_any(checked["rules"])
    game = Game(
        rules,
        seed=checked.get("seed"),
        first_dealer=checked["first_dealer"],
        deals=[h["deal"] for h in hands],
        max_hands=max_hands,
        start_balances=checked.get("start_balances"),
    )
    first = game.clone()
    actions: list[bytes] = []
    total = 0
    for hand in hands:
        queues = _decisions(hand, rules)
        number = hand["number"]
        taken = bytearray()
        while not game.is_over and game.hand_number == number:
            queue = queues.get(game.phase)
            if not queue:
                break
            action = queue.pop(0)
            game.apply(action)
            taken.append(action)
            total += 1
            if total > MAX_STEPS:
                raise ReplayError(f"the record has more than {MAX_STEPS} actions; at most that many are read")
        actions.append(bytes(taken))
        left = [PHASE_NAMES[p] for p, q in queues.items() if q]
        if left:
            raise ReplayError(f"hand {number}: cannot step through the {', '.join(left)} decisions")
    again = game_record(game)
    if any(again.get(k) != checked.get(k) for k in ("hands", "winner", "truncated")):
        raise ReplayError("cannot step through this record (its rule set has decisions this reader does not know)")
    return RecordActions(rules, checked, first, tuple(actions))
