"""Step through a saved game record, action by action.

A :class:`Timeline` reads a record as actions with
:func:`sm_env.records.actions.record_actions` (which checks it with :func:`sm_env.records.replay` and
refuses, with a clear error, a record it cannot step through or one of more than ``MAX_STEPS`` actions),
then keeps the actions (one byte each) and a copy of the game every few hands; a frame re-plays from the
nearest copy, and says who acted at that step and what happened. Step 0 is the deal of hand 1; step k is the
table after k actions.

:meth:`Timeline.frame` is the table at a step, with every hand (``viewer``
None) or as one seat saw it (through :func:`sm_env.core.knowledge.player_view`). :meth:`Timeline.keep_stored`
keeps an analysis read from a file (``sergeant-major view RECORD --analysis FILE``), split by hand, so that the
viewer shows it without searching.
"""

from __future__ import annotations

import threading
from typing import Any

from agents.advice import AdviceError, check_settings
from agents.analysis import AnalysisError, analyse_actions, check_threshold, hand_analyses
from sm_env.core.cards import CARD_TEXT
from sm_env.core.game import EXCHANGE, Game
from sm_env.core.knowledge import player_view
from sm_env.display.scene import full_table, seat_table
from sm_env.records.actions import record_actions

from .words import describe_action, end_text

CHECKPOINT_HANDS = 16  # a copy of the game is kept at every 16th hand start
ANALYSIS_SAMPLES = 50  # the most pimc samples per decision of an analysis asked for by the viewer
KEPT_ANALYSES = 64  # analyses kept per record (by hand and settings); past it the oldest is dropped


class Step:
    """One action of the record and what it caused (public facts and the hidden card, kept apart)."""

    __slots__ = (
        "hand",
        "seat",
        "phase",
        "action",
        "receiver",
        "face_up",
        "trick_winner",
        "trick_number",
        "moved",
        "shown",
    )

    def __init__(self, hand: int, seat: int, phase: int, action: int, receiver: int | None, face_up: int) -> None:
        self.hand = hand
        self.seat = seat
        self.phase = phase
        self.action = action
        self.receiver = receiver
        self.face_up = face_up  # the face-up card of one_card_kitty (public), else -1
        self.trick_winner: int | None = None
        self.trick_number = 0
        self.moved: list[dict[str, Any]] = []  # exchanges whose cards changed hands with this step
        self.shown: list[tuple[int, list[int]]] = []  # show rule: kitty cards shown when the kitty was taken


def analysis_key(hands: int, hand: Any, samples: Any, seed: Any, threshold: Any) -> tuple[int, int, int, float]:
    """The settings of the analysis of one hand of a record of ``hands`` hand entries, checked, as the key it is
    kept under: (hand, samples, seed, threshold as a float). AnalysisError naming the first bad setting and what
    is allowed: ``hand`` a whole number from 1 to ``hands``, ``samples`` one from 1 to :data:`ANALYSIS_SAMPLES`,
    ``seed`` one :func:`agents.advice.check_settings` takes, ``threshold`` a number from 0 to 100 (tricks).
    Checked before any use, so that no value (a list, a dict, true) reaches the search or the kept analyses."""
    if type(hand) is not int or not 1 <= hand <= hands:
        raise AnalysisError(f"hand must be a whole number from 1 to {hands} (the record's hands), got {hand!r:.40}")
    try:
        check_settings(samples, seed, ANALYSIS_SAMPLES)
    except AdviceError as err:
        raise AnalysisError(str(err)) from None
    return hand, samples, seed, check_threshold(threshold)


def _step(game: Game, action: int) -> Step:
    """Apply ``action`` to ``game`` and return the step: who acted and what it caused."""
    log = game.history[-1]
    closed = sum(1 for t in log.tricks or () if t.winner is not None)
    moved = {id(e) for e in log.exchanges if e.returned is not None}
    had_shown = log.shown is not None
    receiver = game.exchange_to_send()[0] if game.phase == EXCHANGE else None
    step = Step(game.hand_number, game.current, game.phase, action, receiver, game.face_up)
    game.apply(action)
    tricks = [t for t in log.tricks or () if t.winner is not None]
    if len(tricks) > closed:
        step.trick_winner = tricks[-1].winner
        step.trick_number = len(tricks)
    step.moved = [
        {"from": e.sender, "to": e.receiver, "sent": list(e.sent), "returned": list(e.returned)}
        for e in log.exchanges
        if e.returned is not None and id(e) not in moved
    ]
    if not had_shown and log.shown:
        step.shown = [(to, list(cards)) for to, cards in log.shown]
    return step


class Timeline:
    """A checked record and the actions that re-play it, kept compact: one byte per action and a copy of
    the game at every :data:`CHECKPOINT_HANDS`-th hand start; a frame re-plays from the last frame's game
    when it lies on the way (stepping forward), else from the nearest copy."""

    def __init__(self, record: Any) -> None:
        read = record_actions(record)  # raises ReplayError naming the first bad field
        checked, rules = read.record, read.rules
        game = read.start()
        self.players = rules.num_players
        self.names = [f"player_{s}" for s in range(self.players)]
        self._starts: list[int] = []  # the step at which each hand starts
        self._copies: list[tuple[int, Game]] = []  # (step, the game then) at every CHECKPOINT_HANDS-th hand start
        done = 0
        for k, hand in enumerate(read.hands):
            self._starts.append(done)
            if k % CHECKPOINT_HANDS == 0:
                copy = game.clone()
                # play from here reads the current hand's log and the one before (who exchanges first): the
                # older logs are dropped, so the copies do not hold the whole game many times over
                copy.history = copy.history[-2:]
                self._copies.append((done, copy))
            for action in hand:
                game.apply(action)
            done += len(hand)
        self.actions = b"".join(read.hands)
        self.read = read
        self._rules = rules
        self._lock = threading.Lock()
        self._cursor: tuple[int, Game] | None = None  # (step, the game then): where the last frame was drawn
        self._analyses: dict[tuple[int, int, int, float], dict[str, Any]] = {}
        self._stored: dict[tuple[int, int, int, float], dict[str, Any]] = {}  # from a file: never dropped
        self._summary = {
            "steps": len(self.actions),
            "hand_starts": list(self._starts),
            "rules": checked["rules"].get("name", "custom"),
            "seed": checked.get("seed"),
            "hands": len(read.hands),
            "players": self.players,
            "stored_analysis": None,
        }

    def __getstate__(self) -> dict[str, Any]:
        """What a pickle holds (a checked record comes back so from the web's record checks' process): every field
        but the lock and the last frame's game."""
        state = dict(self.__dict__)
        del state["_lock"]
        state["_cursor"] = None
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._lock = threading.Lock()

    def analysis(self, hand: int, samples: int, seed: int, threshold: float) -> dict[str, Any]:
        """The analysis of one hand of the record (:func:`agents.analysis.analyse_actions`: every decision
        scored by pimc from the acting seat's view, the moves costing more than ``threshold`` flagged), with at
        most :data:`ANALYSIS_SAMPLES` samples; kept, so that asking again costs nothing. AnalysisError naming a
        bad setting (:func:`analysis_key`)."""
        key = analysis_key(len(self._starts), hand, samples, seed, threshold)
        hand, samples, seed, threshold = key
        if key in self._stored:
            return self._stored[key]
        if key not in self._analyses:
            made = analyse_actions(self.read, samples, seed, threshold, hand, 1, cap=ANALYSIS_SAMPLES)
            if len(self._analyses) >= KEPT_ANALYSES:
                del self._analyses[next(iter(self._analyses))]
            self._analyses[key] = made
        return self._analyses[key]

    def keep_stored(self, analysis: dict[str, Any]) -> None:
        """Keep an analysis of this record read from a file, already checked by
        :func:`agents.analysis.check_analysis`: split by hand (:func:`agents.analysis.hand_analyses`), served by
        :meth:`stored_analyses`, and by :meth:`analysis` for its hands and settings (no search)."""
        search, threshold = analysis["search"], analysis["threshold"]
        for hand, made in hand_analyses(analysis, self.read).items():
            self._stored[(hand, search["samples"], search["seed"], threshold)] = made
        self._summary["stored_analysis"] = {"search": search, "threshold": threshold, "hands": analysis["hands"]}

    def stored_analyses(self) -> list[dict[str, Any]]:
        """The analyses of :meth:`keep_stored`, one per hand, in order (as :meth:`analysis` gives them)."""
        return [self._stored[key] for key in sorted(self._stored)]

    def summary(self) -> dict[str, Any]:
        """What the viewer is told on loading: steps, hand_starts, rules (name), seed, hands, players, and
        stored_analysis (``{"search", "threshold", "hands"}`` of an analysis kept by :meth:`keep_stored`, else
        None)."""
        return dict(self._summary, hand_starts=self.hand_starts)

    @property
    def hand_starts(self) -> list[int]:
        """The step at which each hand of the record starts (its deal)."""
        return list(self._starts)

    def __len__(self) -> int:
        """Number of actions (the last step index)."""
        return len(self.actions)

    def _advance(self, index: int) -> Game:
        """The cursor game moved to ``index`` actions (call under ``_lock``): from where it is when that is on
        the way, else from the nearest copy; it keeps the logs of its last two hands only, like the copies."""
        start_step, start = self._copies[0]
        for step_no, copy in self._copies:
            if step_no <= index:
                start_step, start = step_no, copy
        if self._cursor is not None and start_step <= self._cursor[0] <= index:
            start_step, game = self._cursor
        else:
            game = start.clone()
        for action in self.actions[start_step:index]:
            game.apply(action)
        del game.history[:-2]
        self._cursor = (index, game)
        return game

    def game_at(self, index: int) -> Game:
        """The game after ``index`` actions (0 <= index <= len(self)), with its whole history (re-played from
        the start: frames use the copies instead)."""
        game = self._copies[0][1].clone()
        for action in self.actions[:index]:
            game.apply(action)
        return game

    def frame(self, index: int, viewer: int | None) -> dict[str, Any]:
        """The table after ``index`` actions, with every hand (viewer None) or as seat ``viewer`` saw it."""
        with self._lock:  # stepping forward moves the cursor on by one action
            game = self._advance(max(index - 1, 0))
            step = None
            if index > 0:
                step = _step(game, self.actions[index - 1])
                self._cursor = (index, game)
            return self._table(game, step, index, viewer)

    def _table(self, game: Game, step: Step | None, index: int, viewer: int | None) -> dict[str, Any]:
        table = full_table(game, self.names) if viewer is None else seat_table(player_view(game, viewer), self.names)
        table["step"] = index
        table["steps"] = len(self.actions)
        table["event"] = None if step is None else self._event(step, viewer)
        table["hand_starts"] = self.hand_starts
        if game.is_over:
            table["result"] = end_text(game.winner, game.truncated, game.hand_number, self.names)
        return table

    def _event(self, step: Step, viewer: int | None) -> dict[str, Any]:
        """What ``step`` did, as ``viewer`` may see it."""
        text = describe_action(
            step.seat,
            step.phase,
            step.action,
            viewer,
            self.names,
            step.receiver,
            rules=self._rules,
            face_up=step.face_up,
        )
        marks = []
        if step.trick_winner is not None:
            marks.append({"kind": "trick", "text": f"{self.names[step.trick_winner]} wins trick {step.trick_number}"})
        for e in step.moved:
            if viewer is None or viewer in (e["from"], e["to"]):
                detail = f"sent {' '.join(_texts(e['sent']))}, returned {' '.join(_texts(e['returned']))}"
            else:
                detail = f"{len(e['sent'])} card(s)"
            marks.append(
                {"kind": "exchange", "text": f"exchange {self.names[e['from']]} -> {self.names[e['to']]}: {detail}"}
            )
        for to, cards in step.shown:
            if viewer is None or viewer == to:
                text_cards = " ".join(_texts(cards))
                marks.append(
                    {
                        "kind": "shown",
                        "text": f"show rule: the dealer shows {text_cards} of the kitty to {self.names[to]}",
                    }
                )
        return {"hand": step.hand, "seat": step.seat, "text": text, "marks": marks}


def _texts(cards: list[int]) -> list[str]:
    return [CARD_TEXT[c] for c in cards]
