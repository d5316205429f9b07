"""Games kept per browser session: one person against two agents (three with four players).

A :class:`Session` holds at most one game (and a replay being watched). The
:class:`SessionStore` hands sessions out by a random id (the page's cookie),
bounds how many exist at once, and ends those idle longer than a limit.
Every game that finishes, is stopped, is replaced by a new one, expires or is
still open when the server stops is saved as a standard record
(:func:`sm_env.records.save_record`) when a records folder is set.

What a session sends to its page (:meth:`PlayedGame.state`, the events of
:meth:`PlayedGame.apply`) is built from :func:`sm_env.core.knowledge.player_view`
of the human's seat, plus public facts: the card of a play, who won a trick
and the result of a finished hand (from the engine's hand log).

Opponents are checked by :func:`check_opponent`: only the agents a page is
offered, search parameters within bounds (a decision stays short whatever the
page sends). An agent's move is taken in three parts (:func:`begin_agent_step`
and :func:`finish_agent_step` under the session's lock, :meth:`Turn.decide`
without it), so a search never holds the session; a move whose game was stopped
or replaced meanwhile, or whose request gave up waiting, is dropped. The agents
of one game think at most :data:`GAME_SEARCH_SECONDS` in all. Each agent is seeded
from the game's seed by :func:`agents.agent_seed` (one way per seat: never the deal's
stream). An agent's move is answered no sooner than its :class:`AnswerFloor` (the
time its searches take), forced or not, so the answer's time does not tell a forced move.

Errors are :class:`WebError` with an HTTP status and a message that says what
was wrong and what is allowed; a request that fails changes nothing.
"""

from __future__ import annotations

import logging
import os
import secrets
import threading
import time
from collections import deque
from collections.abc import Callable, Sequence
from typing import Any

from agents import SEED_BITS, AgentSpecError, act, agent_seed, fresh_seed, make_opponent, parse_spec
from agents.advice import AdviceError, advise
from agents.players.base import Param
from agents.players.heuristic import heuristic_action
from sm_env.core.cards import CARD_TEXT, CardError, parse_card
from sm_env.core.game import EXCHANGE, PLAY, SEED_LIMIT, Game, IllegalActionError
from sm_env.core.knowledge import PlayerView, player_view
from sm_env.core.rules import RulesError, RuleSet
from sm_env.display.scene import full_table, seat_table
from sm_env.records import game_record, save_record

from .words import choice_label, describe_action, hand_summary, hint_note, news, prompt, trick_json

MAX_HANDS_LIMIT = 1000
PAGE_SEED_MAX = 2**53 - 1  # the largest whole number a browser's JSON numbers hold exactly (serve --seed)
# what a page may ask for (ppo/rllib: see trusted); search: a median of about 40 ms a decision (docs/agents.md)
WEB_AGENTS = ("random", "heuristic", "pimc", "ismcts", "search", "trained")
MAX_SEARCH_SECONDS = 5.0  # a search agent's seconds= per decision
# the parameters a page may give a search agent, tighter than agents.AGENT_PARAMS so that one decision stays short
WEB_PARAMS: dict[str, dict[str, Param]] = {
    "pimc": {
        "samples": Param(int, 1, 200),
        "seconds": Param(float, 0, MAX_SEARCH_SECONDS, low_open=True),
        "bid": Param(bool),
        "rollout": Param(str, choices=("heuristic", "policy")),  # policy: about 20 times a decision's time
    },
    "search": {  # pimc with the belief's deals and the policy's rollouts (agents.SEARCH_DEFAULTS: 24 deals)
        "samples": Param(int, 1, 200),
        "seconds": Param(float, 0, MAX_SEARCH_SECONDS, low_open=True),
        "game": Param(float, 0, 1000),  # the weight of the game's result: no cost
    },
    "ismcts": {
        "iterations": Param(int, 1, 5000),
        "seconds": Param(float, 0, MAX_SEARCH_SECONDS, low_open=True),
        "c": Param(float, 0, 10),
        "bid": Param(bool),
    },
}
GAME_SEARCH_SECONDS = 900.0  # agents' thinking time per game; past it they play the heuristic's move
HINT_SAMPLES = 20  # the search's deals per hint unless the page asks for another number (at most WEB_PARAMS' samples)
# the search of the hints (agents.advice.SEARCHERS): "search" (pimc where it does not play the rules); at 20 deals
# a median of about 40 ms, at the bound of 200 a 90th percentile of 2.4 s (docs/agents.md): inside DECISION_WAIT
HINT_SEARCH = "search"
FLOOR_WINDOW = 16  # the latest unforced decisions of one seat and phase that set its answer floor (AnswerFloor)
FLOOR_SKIP = 2  # the longest of them left out: strays (a kernel's first call, the machine busy elsewhere)
CALIBRATION_RUNS = 2  # decisions timed on the reference position; the fastest counts (the first may load kernels)
log = logging.getLogger("sm_web")


class WebError(Exception):
    """A request that cannot be served: ``status`` is the HTTP status, the message says why."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


class PlayedGame:
    """One game: the engine, the agents (one per other seat), the human's seat and what the page has been told.

    ``seat`` None: a game watched, every seat an agent (``opponents`` has one spec per seat); the page is then
    shown every hand (:func:`sm_env.display.scene.full_table`: nobody at the table is a person, docs/browser.md)."""

    def __init__(
        self, seat: int | None, opponents: Sequence[str], rules: RuleSet, seed: int, max_hands: int, seeded: bool
    ) -> None:
        self.seat = seat
        self.rules = rules
        self.seed = seed
        self.seeded = seeded
        self.specs = list(opponents)
        self.game = Game(rules, seed=seed, max_hands=max_hands)
        n = rules.num_players
        self.agents: list[Any] = [None] * n
        others = [s for s in range(n) if s != seat]
        for s, spec in zip(others, opponents, strict=True):
            # seeded one way from the game's seed (agents.agent_seed): never the deal's own stream
            agent = make_opponent(spec, seed=agent_seed(seed, s))  # AgentSpecError for "human"
            try:
                agent.check_rules(rules)  # a trained policy plays the rule sets of its observation only
            except ValueError as err:
                raise WebError(400, f"opponent {spec!r}: {err}") from None
            agent.reset(agent_seed(seed, s))
            self.agents[s] = agent
        self.floors: list[AnswerFloor | None] = [None] * n  # how soon each agent's move may be answered
        if seat is not None:  # a watched game shows every hand: its answers' times have nothing to hide
            for s, spec in zip(others, opponents, strict=True):
                self.floors[s] = AnswerFloor(spec, rules, agent_seed(seed, s, "calibration"))
        self.names = ["You" if s == seat else f"player_{s} ({self.specs[others.index(s)]})" for s in range(n)]
        self.watched = seat is None
        self.log: list[str] = []  # what happened in the current hand, as the human may see it
        self.last_hand: dict[str, Any] | None = None
        self.stopped = False
        self.saved_path: str | None = None
        self.moves = 0  # actions applied so far
        self.thinking: Turn | None = None  # an agent's decision in progress
        self.search_seconds = 0.0  # the agents' thinking time so far (bounded by GAME_SEARCH_SECONDS)
        self.hint: tuple[tuple[int, int], dict[str, Any]] | None = None  # ((moves, samples), the last hint)
        # the hints' search seed, plus the moves made: the game's seed only when the player chose it (a hint says
        # its seed, and the seed of an unseeded game would tell the deal)
        self.hint_seed = seed if seeded else fresh_seed()
        self.hinting = False  # a hint is being made (one at a time per game)

    @property
    def finished(self) -> bool:
        """Over by the rules (won or truncated) or stopped by the player."""
        return self.game.is_over or self.stopped

    def apply(self, seat: int, action: int) -> dict[str, Any]:
        """Apply one action of ``seat``; returns the event as the human may see it (state unchanged on error)."""
        game = self.game
        phase = game.phase
        hand = game.hand_number
        log = game.history[-1]
        closed = _closed_tricks(log)
        before = player_view(game, self.seat) if self.seat is not None else None
        face_up = game.face_up if before is None else before.face_up
        receiver = game.exchange_to_send()[0] if phase == EXCHANGE else None
        last_card = phase == PLAY and sum(h.bit_count() for h in game.hands) == 1  # the card that ends the hand
        table_before = self._table() if last_card else None
        game.apply(action)  # raises IllegalActionError before changing anything
        self.moves += 1
        event: dict[str, Any] = {"hand": hand, "seat": seat}
        text = describe_action(seat, phase, action, self.seat, self.names, receiver, rules=self.rules, face_up=face_up)
        if _closed_tricks(log) > closed:
            winner = log.tricks[-1 if log.tricks[-1].winner is not None else -2].winner
            event["trick_winner"] = winner
            text += f"; {'you win' if winner == self.seat else self.names[winner] + ' wins'} the trick"
        if before is not None and self.seat is not None and game.hand_number == hand and not game.is_over:
            for line in news(before, player_view(game, self.seat), self.names):
                text += f". {line}"
        event["text"] = text
        if game.hand_number != hand or game.is_over:
            self.last_hand = hand_summary(game, hand, self.names, self.seat)
            # what the page shows behind "Hand N is over": the hand's table at its end and its log, whole
            end = None if table_before is None else hand_end_table(table_before, game.history[hand - 1])
            event["hand_over"] = dict(self.last_hand, table=end, log=[*self.log, text])
            self.log = []
        else:
            self.log.append(text)
        return event

    def _table(self) -> dict[str, Any]:
        """The table as the human's seat sees it (:func:`sm_env.display.scene.seat_table`); a watched game's with
        every hand (:func:`sm_env.display.scene.full_table`)."""
        if self.seat is None:
            return full_table(self.game, self.names)
        return seat_table(player_view(self.game, self.seat), self.names)

    def state(self) -> dict[str, Any]:
        """What the page shows: the human seat's table (a watched game: every hand), prompt, log and the last
        hand's result."""
        if self.seat is None:
            table = self._table()
            table.update(choices=[], legal=[], your_turn=False, watching=True)
            acting = self.game.current_player
            table["prompt"] = (
                "Game stopped. Start a new one."
                if self.stopped
                else "You are watching; every hand is shown."
                + ("" if acting is None else f" {self.names[acting]} is to act.")
            )
        else:
            view = player_view(self.game, self.seat)
            table = seat_table(view, self.names)
            table["choices"] = [dict(c, label=choice_label(view, c["action"], self.names)) for c in table["choices"]]
            table["prompt"] = prompt(view, self.names) if not self.stopped else "Game stopped. Start a new one."
            table["your_turn"] = not self.finished and view.to_act == self.seat
        table["log"] = list(self.log)
        table["last_hand"] = self.last_hand
        table["finished"] = self.finished
        table["stopped"] = self.stopped
        table["seed"] = self.seed if self.seeded or self.finished else None
        table["seed_text"] = None if table["seed"] is None else str(self.seed)  # whole: a page's numbers hold 53 bits
        table["opponents"] = list(self.specs)
        return table


def hand_end_table(before: dict[str, Any], log: Any) -> dict[str, Any]:
    """The table at the end of a hand, from ``before``, the same table just before the hand's last card (as the
    human's seat saw it, or every hand of a watched game) and the hand's ``log``: that card played, every trick
    closed (the last one drawn as the last trick, each card with its player), the hand's tricks and scores, and
    nobody to act. Nothing in it that ``before`` did not show, but the last card (public once played)."""
    n = len(before["players"])
    last = log.tricks[-1]
    seat, card = (last.leader + len(last.cards) - 1) % n, CARD_TEXT[last.cards[-1]]
    table = dict(before, trick=None, to_act=None, legal=[], choices=[], phase="hand over")
    table["tricks"] = [dict(trick_json(t, n), number=k) for k, t in enumerate(log.tricks, 1)]
    table["players"] = [
        dict(p, tricks=log.tricks_won[s], score=log.scores[s], cards=p["cards"] - (s == seat))
        for s, p in enumerate(before["players"])
    ]
    table["hands"] = [None if h is None else [c for c in h if c != card] for h in before["hands"]]
    return table


def reference_view(rules: RuleSet) -> PlayerView | None:
    """The first lead of a hand of ``rules`` dealt from seed 0, the heuristic deciding what comes before: a
    decision with every card of a full hand legal and the whole hand to play (the longest a search takes), or
    None when the hand never reaches the play."""
    game = Game(rules, seed=0, first_dealer=0, max_hands=1)
    for _ in range(1000):
        seat = game.current_player
        if seat is None:
            return None
        view = player_view(game, seat)
        if game.phase == PLAY:
            return view
        game.apply(heuristic_action(view))
    return None


class AnswerFloor:
    """How soon an agent's move may be answered, per seat of a game: no sooner than ``start``, the time the
    same agent takes on :func:`reference_view` (:meth:`calibrate`, at the seat's first move), nor than the
    longest of its :data:`FLOOR_WINDOW` latest unforced decisions in the same phase (the phase is public) once
    the :data:`FLOOR_SKIP` longest are left out (strays: a kernel's first call, the machine busy elsewhere).
    Every move waits until then, forced or not, so a forced move (one legal action: a void, say) is answered
    as late as nearly every searched one; a fast agent's floor is as short as its decisions."""

    def __init__(self, spec: str, rules: RuleSet, seed: int) -> None:
        self.spec = spec
        self.rules = rules
        self.seed = seed
        self.start: float | None = None
        self.recent: dict[int, deque[float]] = {}

    def calibrate(self) -> None:
        """Set ``start``: a spec's ``seconds=`` (its search runs that long), else the fastest of
        :data:`CALIBRATION_RUNS` decisions of a fresh agent of ``spec`` on :func:`reference_view` (0 when there
        is none or the agent fails there: its own move will say)."""
        self.start = 0.0
        seconds = parse_spec(self.spec)[2].get("seconds")
        if seconds is not None:  # checked by check_opponent: a number above 0, at most MAX_SEARCH_SECONDS
            self.start = float(seconds)
            return
        try:
            view = reference_view(self.rules)
            if view is None:
                return
            agent = make_opponent(self.spec, seed=self.seed)
            agent.check_rules(self.rules)
            times = []
            for _ in range(CALIBRATION_RUNS):
                begun = time.perf_counter()
                act(agent, view)
                times.append(time.perf_counter() - begun)
        except Exception as err:  # the game goes on: its own moves will raise if the agent is broken
            log.warning("timing %s on the reference position failed: %s", self.spec, err)
            return
        self.start = min(times)

    def seconds(self, phase: int) -> float:
        """The floor of a move in ``phase``: ``start``, or the phase's latest unforced times but the
        :data:`FLOOR_SKIP` longest, whichever is longer."""
        kept = sorted(self.recent.get(phase, ()))[: -FLOOR_SKIP or None]
        return max(self.start or 0.0, max(kept, default=0.0))

    def note(self, phase: int, seconds: float) -> None:
        """An unforced decision in ``phase`` took ``seconds``."""
        self.recent.setdefault(phase, deque(maxlen=FLOOR_WINDOW)).append(seconds)


class Turn:
    """An agent's decision in progress: read from the game under the session's lock, thought over without it."""

    def __init__(self, played: PlayedGame, seat: int) -> None:
        self.played = played
        self.seat = seat
        self.view = player_view(played.game, seat)
        self.moves = played.moves
        self.spent = 0.0
        self.fallback = False  # the game's thinking time was spent: the heuristic's move
        self.abandoned = False  # the request gave up waiting: the move is dropped
        self.done = False

    def release(self) -> None:
        """The decision is over (call under the session's lock): the game may be asked for another."""
        if self.played.thinking is self:
            self.played.thinking = None
            self.played.search_seconds += self.spent

    def decide(self) -> int:
        """The agent's action (no lock held: the search may take its seconds), returned no sooner than the seat's
        :class:`AnswerFloor` for the phase, forced or not; an unforced decision's time joins that floor."""
        played = self.played
        floor = played.floors[self.seat]
        start = time.perf_counter()
        if floor is not None and floor.start is None:  # the seat's first move: time its search once
            floor.calibrate()
            self.spent = time.perf_counter() - start
            start = time.perf_counter()
        wait = 0.0 if floor is None else floor.seconds(self.view.phase)
        if played.search_seconds >= GAME_SEARCH_SECONDS:
            self.fallback = True
            action = heuristic_action(self.view)
        else:
            try:
                action = act(played.agents[self.seat], self.view)
            finally:
                self.spent += time.perf_counter() - start
        took = time.perf_counter() - start
        if floor is not None:
            if not self.fallback and self.view.legal & (self.view.legal - 1):  # more than one legal action
                floor.note(self.view.phase, took)
            if wait > took:
                time.sleep(wait - took)
        return action


def _closed_tricks(log: Any) -> int:
    return sum(1 for t in log.tricks or () if t.winner is not None)


class Session:
    """One browser's games (at most one live) and the replay it is watching."""

    def __init__(self, session_id: str, now: float) -> None:
        self.id = session_id
        self.lock = threading.Lock()
        self.last_used = now
        self.played: PlayedGame | None = None
        self.replay: Any = None  # a sm_web.replays.Timeline


class SessionStore:
    """Sessions by id, at most ``max_sessions`` at once; idle ones expire after ``idle_seconds``.

    ``records_dir``: where finished and abandoned games are saved (None: not saved).
    ``clock``: seconds, monotonic (tests pass their own).
    """

    def __init__(
        self,
        max_sessions: int = 64,
        idle_seconds: float = 3600.0,
        records_dir: str | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if max_sessions < 1:
            raise ValueError(f"max_sessions must be >= 1, got {max_sessions}")
        if idle_seconds <= 0:
            raise ValueError(f"idle_seconds must be > 0, got {idle_seconds}")
        self.max_sessions = max_sessions
        self.idle_seconds = idle_seconds
        self.records_dir = records_dir
        self.clock = clock
        self._sessions: dict[str, Session] = {}
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._sessions)

    def sessions(self) -> list[Session]:
        """The live sessions (a copy of the list)."""
        with self._lock:
            return list(self._sessions.values())

    def get(self, session_id: str | None) -> Session | None:
        """The live session with this id (its idle time restarts), or None."""
        self.expire()
        if not session_id:
            return None
        with self._lock:
            session = self._sessions.get(session_id)
            if session is not None:
                session.last_used = self.clock()
            return session

    def create(self) -> Session:
        """A new session; WebError 503 when ``max_sessions`` are live."""
        self.expire()
        with self._lock:
            if len(self._sessions) >= self.max_sessions:
                minutes = self.idle_seconds / 60
                raise WebError(
                    503,
                    f"the server already holds {self.max_sessions} live games (its limit); idle games end after "
                    f"{minutes:g} minutes, so try again later",
                )
            session = Session(secrets.token_urlsafe(18), self.clock())
            self._sessions[session.id] = session
            return session

    def forget(self, session_id: str) -> None:
        """Drop a session that never held anything (a request that failed to start one)."""
        with self._lock:
            self._sessions.pop(session_id, None)

    def expire(self) -> list[str]:
        """End the sessions idle for ``idle_seconds`` or more (their open games are saved); returns their ids."""
        now = self.clock()
        with self._lock:
            old = [s for s in self._sessions.values() if now - s.last_used >= self.idle_seconds]
            for session in old:
                del self._sessions[session.id]
        for session in old:
            with session.lock:
                self.save(session.played)
        return [s.id for s in old]

    def close(self) -> None:
        """Save every open game and forget every session (the server stops)."""
        with self._lock:
            sessions = list(self._sessions.values())
            self._sessions.clear()
        for session in sessions:
            with session.lock:
                self.save(session.played)

    # ------------------------------------------------------------------ games

    def new_game(self, session: Session, request: Any, trusted: Sequence[str] = ()) -> PlayedGame:
        """Start a game from a request dict (seat, opponents, rules, seed, max_hands); the old one is saved.

        ``trusted``: the ``ppo:PATH`` specs that may be asked for (those the server was started with).
        """
        played = build_game(request, trusted)
        self.replace(session, played)
        return played

    def replace(self, session: Session, played: PlayedGame) -> None:
        """Make ``played`` the session's game (call under its lock); the old one is stopped and saved."""
        old = session.played
        if old is not None and not old.finished:
            old.stopped = True  # an agent still thinking there drops its move
        self.save(old)
        session.played = played

    def save(self, played: PlayedGame | None) -> str | None:
        """Write the game's record to the records folder (once per game; None when not saved)."""
        if played is None or self.records_dir is None or played.saved_path is not None:
            return played.saved_path if played is not None else None
        os.makedirs(self.records_dir, exist_ok=True)
        stamp = time.strftime("%Y%m%d-%H%M%S")
        tag = secrets.token_hex(3)
        path = os.path.join(self.records_dir, f"game-{stamp}-seed{played.seed}-{tag}.json")
        save_record(played.game, path)
        played.saved_path = path
        return path


# ---------------------------------------------------------------------- requests


def _field(request: dict[str, Any], key: str, default: Any) -> Any:
    return request.get(key, default) if request.get(key) is not None else default


def build_game(request: Any, trusted: Sequence[str] = ()) -> PlayedGame:
    """A new game from ``{"seat", "opponents", "rules", "seed", "max_hands"}`` (all optional), or a game to
    watch from ``{"watch": true, "agents", "rules", "seed", "max_hands"}``.

    Any rule set (every preset, three or four players). Defaults: seat 0, one
    heuristic opponent per other seat (watching: one heuristic per seat), rules standard, a random seed,
    max_hands 100. A ``ppo:PATH`` or ``rllib:PATH`` agent must be one of ``trusted``:
    a page does not make the server open files of its choosing. WebError 400
    names the bad field and what is allowed.
    """
    fields = ("seat", "opponents", "rules", "seed", "max_hands")
    if not isinstance(request, dict):
        raise WebError(400, f"expected a JSON object with seat, opponents, rules, seed, max_hands; got {request!r:.60}")
    watch = request.get("watch", False)
    if type(watch) is not bool:
        raise WebError(400, f"watch must be true (every seat an agent) or false, got {watch!r:.40}")
    if watch:
        fields = ("agents", "rules", "seed", "max_hands")
    unknown = sorted(set(request) - set(fields) - {"watch"})
    if unknown:
        what = ", ".join(fields)
        mode = "a watched game (watch: true)" if watch else "a new game"
        raise WebError(400, f"unknown field(s) {unknown}; {mode} takes {what}")
    rules_in = _field(request, "rules", "standard")
    try:
        rules = RuleSet.from_any(rules_in)
    except (RulesError, TypeError, ValueError) as err:
        raise WebError(400, f"rules: {err}") from None
    n = rules.num_players
    seat = None if watch else _field(request, "seat", 0)
    if seat is not None and (type(seat) is not int or not 0 <= seat < n):  # not True, not 0.0
        seats = "0, 1 or 2" if n == 3 else "0, 1, 2 or 3"
        raise WebError(400, f"seat must be {seats} with {n} players ({rules.name}), got {seat!r:.40}")
    key, count = ("agents", n) if watch else ("opponents", n - 1)
    opponents = _field(request, key, ["heuristic"] * count)
    if (
        not isinstance(opponents, list)
        or len(opponents) != count
        or not all(isinstance(o, str) and o.strip() for o in opponents)
    ):
        words = {2: "two", 3: "three", 4: "four"}
        per = "one per seat" if watch else "one per other seat"
        raise WebError(
            400,
            f"{key} must be a list of {words[count]} agent specs ({per} of {rules.name}) such as "
            f"{['heuristic', 'pimc', 'random', 'trained'][:count]}, got {opponents!r:.80}",
        )
    opponents = [check_opponent(spec, trusted) for spec in opponents]
    seed = request.get("seed")
    seeded = seed is not None
    if seeded and (type(seed) is not int or not 0 <= seed < SEED_LIMIT):
        raise WebError(
            400, f"seed must be a whole number 0 <= seed < 2**128, or null for a random deal; got {seed!r:.40}"
        )
    if not seeded:
        seed = fresh_seed()
    max_hands = _field(request, "max_hands", 100)
    if type(max_hands) is not int or not 1 <= max_hands <= MAX_HANDS_LIMIT:
        raise WebError(400, f"max_hands must be a whole number from 1 to {MAX_HANDS_LIMIT}, got {max_hands!r:.40}")
    try:
        return PlayedGame(seat, opponents, rules, seed, max_hands, seeded)
    except AgentSpecError as err:
        raise WebError(400, f"opponents: {err}") from None
    except (ValueError, TypeError) as err:
        raise WebError(400, f"cannot start this game: {err}") from None


def offered_agents(trusted: Sequence[str] = ()) -> list[str]:
    """The opponents a page may ask for: :data:`WEB_AGENTS` and the ``ppo:``/``rllib:`` specs in ``trusted``."""
    paths = [t for t in trusted if parse_spec(t)[0] in ("ppo", "rllib")]
    return list(WEB_AGENTS) + [t for i, t in enumerate(paths) if t not in paths[:i]]


def check_page_seed(seed: object) -> None:
    """A ValueError unless ``seed`` is None or a whole number a page holds exactly (``serve --seed``)."""
    if seed is not None and (type(seed) is not int or not 0 <= seed <= PAGE_SEED_MAX):
        raise ValueError(
            f"a whole number from 0 to {PAGE_SEED_MAX} (2**53 - 1, the largest a page holds exactly), or none for "
            f"a random deal; got {seed!r:.40}"
        )


def check_opponent(spec: str, trusted: Sequence[str] = ()) -> str:
    """``spec`` (stripped) if a page may ask for it as an opponent; WebError 400 naming what is allowed.

    Allowed: an agent of :data:`WEB_AGENTS`; the search agents only with the parameters of
    :data:`WEB_PARAMS` in their bounds (``seconds`` finite, at most :data:`MAX_SEARCH_SECONDS`;
    ``samples`` and ``iterations`` capped), so that one decision stays short; a ``ppo:PATH`` or
    ``rllib:PATH`` spec only if it is one of ``trusted`` (the server was started with it: a page does not
    make the server open files of its choosing).
    """
    text = spec.strip()
    if len(text) > 200:
        raise WebError(400, f"opponent {text:.40}...: an agent spec has at most 200 characters")
    try:
        kind, _rest, params = parse_spec(text)
    except AgentSpecError as err:
        raise WebError(400, f"opponent {text!r}: {err}") from None
    if kind in ("ppo", "rllib"):
        if text in trusted:
            return text
        raise WebError(
            400,
            f"opponent {text!r}: a {kind}:PATH agent can be chosen only if the server was started with it "
            f"(serve --opponents {kind}:PATH ...); 'trained' is the shipped policy",
        )
    if kind == "human":
        raise WebError(400, "opponents: 'human' cannot take this seat (you are the only human seat); give an agent")
    offered = ", ".join(offered_agents(trusted))
    if kind not in WEB_AGENTS:
        raise WebError(400, f"opponent {text!r}: unknown agent; this page offers {offered}")
    bounds = WEB_PARAMS.get(kind, {})
    for key, value in params.items():
        if key not in bounds:
            known = ", ".join(f"{k}=" for k in bounds) or "no parameters"
            raise WebError(400, f"opponent {text!r}: {kind} takes {known} on this page, not {key}=")
        try:
            bounds[key].parse(value)
        except ValueError:
            allowed = bounds[key].allowed()
            raise WebError(400, f"opponent {text!r}: {key} must be {allowed} on this page, got {value!r:.20}") from None
    return text


def parse_action(request: Any, played: PlayedGame) -> int:
    """The action id of ``{"action": 12}`` or ``{"action": "AC"}`` (a card as text); WebError 400 otherwise."""
    if not isinstance(request, dict) or set(request) != {"action"}:
        raise WebError(
            400,
            'expected {"action": ID} with an action id (0-51 a card, 52-73 the other choices: docs/interface.md) '
            'or card text like "TH"',
        )
    value = request["action"]
    if isinstance(value, str):
        try:
            return parse_card(value)
        except CardError as err:
            raise WebError(400, str(err)) from None
    if isinstance(value, bool) or not isinstance(value, int):
        raise WebError(400, f"action must be an integer id or a card text like 'TH', got {value!r:.40}")
    return value


def human_act(played: PlayedGame, request: Any) -> dict[str, Any]:
    """The human's action; WebError 409 when it is not the human's turn, 400 when illegal."""
    action = parse_action(request, played)
    game = played.game
    if played.finished:
        raise WebError(409, "the game is over; start a new game")
    if game.current_player != played.seat:
        raise WebError(409, f"it is not your turn: {played.names[game.current_player]} is to act (POST /api/step)")
    try:
        return played.apply(played.seat, action)
    except IllegalActionError as err:
        raise WebError(400, str(err)) from None


def begin_agent_step(played: PlayedGame) -> Turn:
    """The decision of the agent to act, to be made by :meth:`Turn.decide` then applied by
    :func:`finish_agent_step` (call both ends under the session's lock); WebError 409 when the human is to
    act, the game is over or an agent is already thinking."""
    if played.finished:
        raise WebError(409, "the game is over; start a new game")
    if played.thinking is not None:
        raise WebError(409, "an agent is still choosing its move: wait for its answer")
    seat = played.game.current_player
    if seat == played.seat:
        raise WebError(409, "it is your turn: choose an action (POST /api/act)")
    played.thinking = Turn(played, seat)
    return played.thinking


def finish_agent_step(turn: Turn, action: int | None) -> dict[str, Any]:
    """Apply the action ``turn`` decided (None: its search failed); WebError when the move no longer counts
    (the request gave up waiting, or the game was stopped while the agent thought)."""
    played = turn.played
    turn.release()
    if action is None or turn.abandoned:
        raise WebError(503, "the agent's move was dropped (it took too long): ask again (POST /api/step)")
    if played.finished or played.moves != turn.moves:
        raise WebError(409, "the game was stopped while the agent was choosing its move")
    event = played.apply(turn.seat, action)
    if turn.fallback:
        note = " (this game's search time is spent: the heuristic's move)"
        event["text"] += note
        if "hand_over" not in event:
            played.log[-1] += note
    turn.done = True
    return event


def hint_samples(text: str | None) -> int:
    """The samples of a hint request (``?samples=N``; default :data:`HINT_SAMPLES`); WebError 400 unless a
    whole number within the web's pimc bound."""
    if text is None:
        return HINT_SAMPLES
    bound = WEB_PARAMS["pimc"]["samples"]
    try:
        if not (text.isascii() and text.isdigit() and len(text) <= 6):
            raise ValueError(text)
        return bound.parse(text)
    except ValueError:
        raise WebError(400, f"samples must be {bound.allowed()}, got {text!r:.20}") from None


def begin_hint(played: PlayedGame, samples: int) -> tuple[Any, int] | dict[str, Any]:
    """What a hint is made from (call under the session's lock): the human seat's view and the seed, or the
    hint already made for this position and samples; WebError 409 unless it is the human's turn."""
    if played.finished:
        raise WebError(409, "the game is over; start a new game")
    if played.game.current_player != played.seat:
        raise WebError(409, "a hint is for your turn; it is not your turn now")
    key = (played.moves, samples)
    if played.hint is not None and played.hint[0] == key:
        return played.hint[1]
    if played.hinting:
        raise WebError(409, "a hint is still being made: wait for its answer")
    played.hinting = True
    return player_view(played.game, played.seat), (played.hint_seed + played.moves) % 2**SEED_BITS


def make_hint(view: Any, samples: int, seed: int) -> dict[str, Any]:
    """The hint for the human's seat (no lock held: the search may take its time): :func:`agents.advice.advise`
    of that seat's view alone by :data:`HINT_SEARCH`, within the web's bound of samples, with ``note``, its line
    in words (:func:`sm_web.words.hint_note`)."""
    cap = int(WEB_PARAMS["pimc"]["samples"].high or 1)
    try:
        advice = advise(view, samples=samples, seed=seed, cap=cap, searcher=HINT_SEARCH)
    except AdviceError as err:
        raise WebError(400, str(err)) from None
    made = advice.to_json()
    made["note"] = hint_note(made)
    return made


def keep_hint(played: PlayedGame, samples: int, moves: int, hint: dict[str, Any] | None) -> None:
    """The hint begun by :func:`begin_hint` is over (call under the session's lock; None: it failed): keep it,
    if the game is still at position ``moves``, so that asking again costs nothing."""
    played.hinting = False
    if hint is not None and played.moves == moves:
        played.hint = ((moves, samples), hint)


def record_of(played: PlayedGame) -> dict[str, Any]:
    """The game's record, only once the game is finished or stopped (it holds every hand)."""
    if not played.finished:
        raise WebError(
            409,
            "the record shows every hand, so it can be downloaded when the game is over or stopped (POST /api/stop)",
        )
    return game_record(played.game)
