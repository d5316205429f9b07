"""A batched, compiled Sergeant Major engine: many games stepped at once,
numpy arrays in and out (numba kernels in :mod:`sm_env.compiled.kernels`).

The rules are those of :class:`sm_env.core.game.Game` (the readable reference),
every option of :mod:`sm_env.core.rules`, three or four players
(:func:`sm_env.compiled.support.supports`; ``num_players`` seats); observations are
``observation.encode(knowledge.player_view(game, seat))`` bit for bit. The
test suite and ``benchmarks/lockstep_vector.py`` check both in lockstep with
``Game``, decision by decision.

Interface::

    from sm_env.compiled.batch import VectorGame
    g = VectorGame(num_games=1024, rules="standard", seed=0, episode="game", max_hands=100)
    g.reset()                  # deals every game (seeded)
    g.current_player           # int32 [N]: seat to act
    g.legal_mask()             # int8 [N, A]: 1 exactly for the legal actions (A = 56)
    g.observe()                # float32 [N, O]: observation of the player to act (O = 789; 1016 with four)
    r, done = g.step(actions)  # actions int [N]; r float32 [N, P]: score changes paid (P = g.num_players seats)
                               # this step; done bool [N]: the game (or hand) in the slot ended
    g.record(i)                # the game now in slot i, as a standard record
    g.finished_record(i)       # after a step with done[i]: the game that just ended in slot i
    g.copy_slots(other, [3], [0])  # slot 0 now holds a copy of other's slot 3 (play-outs of one position)

- ``rules``, ``episode`` (``"game"`` or ``"hand"``) and ``max_hands``: as
  :func:`sm_env.env` takes them. With ``episode="hand"`` every episode is a
  new game of one hand (hand 1, no exchange), as in ``env()``.
- Autoreset: ``done[i]`` is True on the step that ended the game in slot i,
  and slot i then already holds a new game. ``truncated[i]`` tells a game
  stopped by ``max_hands`` from one won under the rules (episode "hand":
  a hand episode always ends by termination, as in ``env()``).
- ``r`` is the change of each seat's running score in the hand that ended
  at this step, by absolute seat, 0 on every other step: env()'s "score"
  reward (the default), so a game's rewards add up to its final scores.
  Without ``chips`` it is the hand's balance (tricks - quota, or maximum -
  tricks in a misère hand), env()'s "balance" reward too; a passed-out deal
  (``auction``) pays nothing.
- ``step(actions, active)``: with a bool mask ``active`` only those slots
  move (the others keep their game; their action is ignored). An illegal
  action raises :class:`VectorActionError` naming the slot, the action and
  the legal ones, and no slot moves.
- ``parallel=True`` runs the kernels in numba's threads (``prange`` over
  the slots); the default runs them in the calling thread, which is faster
  on a busy machine with few cores.
- ``observe(rows=None, seats=None, out=None)``: the observations of some
  slots, of the player to act or of given seats; ``out`` (float32 [len, O])
  is filled instead of a fresh array.
- ``full_state(rows=None, seats=None, out=None)``: float32 [len, 52 * P]
  (``full_state_size``), the cards hidden from that seat (the other hands,
  relative to it, and the kitty): the extra input of a critic that sees the whole deal during
  training. Never part of :meth:`observe`, never for an actor.
- ``get_state()`` / ``set_state(state)``: every slot's game and random
  stream as a dict of arrays (checkpoints; a restored batch continues
  exactly as the saved one would have). ``set_state`` checks the state in
  full first (:mod:`sm_env.compiled.state_check`: every game is replayed
  from its log) and raises :class:`VectorStateError` naming the field for
  anything the batch could not have reached; nothing changes then.

Seeding: a seed is an integer with ``-(2**128) < seed < 2**128`` (as ``Game``
takes it) and every bit of it counts (:mod:`sm_env.compiled.seeding`): slot
``i`` draws from its own SplitMix64 generator, whose state starts at
``mix64(mix64(s) ^ mix64(i + 1))``, where ``s`` is the seed itself for
``0 <= seed < 2**64`` and the seed hashed in full (SHA-256) otherwise
(``mix64`` is SplitMix64's output function); ``below(n) = (next >> 32) * n >> 32`` is a number
0..n-1. Each game draws its first dealer (``below(P)``, P seats) and then, for each
hand, shuffles the deck (cards in id order; 51 without 2C with
``no_kitty_51``) by swapping card ``k`` with card ``below(k + 1)`` for
``k`` from the last down to 1, and deals it in order: seat 0, 1, 2 (and 3
with four players), then the kitty. The next game in the slot continues the stream. So a slot's
games depend only on (seed, slot, the actions played in that slot): same
seed + same actions give the same games, records and observations,
whatever the number of slots or the other slots' actions. ``reset(seed)``
restarts every stream; ``seed=None`` at construction draws a 128-bit seed
from the OS (``VectorGame.seed`` tells which). The deals differ from
``Game(seed=...)``'s; :meth:`VectorGame.deals` gives them as
``Game(deals=..., first_dealer=...)`` takes them.

Layout of the state (struct of arrays, one row per game; card sets as
uint64 bit sets): see :mod:`sm_env.compiled.kernels`.
"""

from __future__ import annotations

import operator
from typing import Any

import numpy as np

from sm_env.core.cards import from_mask
from sm_env.core.episode import check_episode, engine_max_hands
from sm_env.core.game import Game, IllegalActionError, action_text
from sm_env.core.rules import RuleSet
from sm_env.observation import observation_size
from sm_env.records import game_record

from . import kernels as k
from .readiness import first_compile
from .seeding import check_seed, fresh_seed, kernel_seed, seed_words
from .state_check import VectorStateError, checked_state
from .support import INT32_MAX, supported_presets, unsupported

__all__ = [
    "FULL_STATE_SIZE",
    "NUM_PLAYERS",
    "VectorActionError",
    "VectorGame",
    "VectorStateError",
    "supported_presets",
    "unsupported_options",
]

NUM_PLAYERS = 3  # the default rule set's seats; a VectorGame's own are ``num_players`` (3, or 4: docs/rules.md 10.6)
FULL_STATE_SIZE = k.FULL_STATE_SIZE  # with three players; ``VectorGame.full_state_size`` is the batch's own
_STATE_ARRAYS = ("st", "cm", "rng", "rng_start", "log", "done")
_INITIAL_LOG = 256


class VectorActionError(IllegalActionError):
    """An illegal action given to :meth:`VectorGame.step`; no slot moved."""


def unsupported_options(rules: RuleSet) -> list[str]:
    """The options of ``rules`` that VectorGame cannot run (empty: it can run the rule set):
    :func:`sm_env.compiled.support.unsupported`, kept under this name."""
    return unsupported(rules)


def _whole(values: Any, name: str, what: str) -> np.ndarray:
    """``values`` as an int64 array, refusing what is not whole numbers (floats are not truncated)."""
    a = np.asarray(values)
    if a.dtype.kind not in "iu" and not (a.size == 0 and a.dtype.kind == "f"):  # [] reads as a float array
        raise ValueError(f"{name} must be whole numbers ({what}), got a {a.dtype} array")
    return a.astype(np.int64, copy=False)


class VectorGame:
    """``num_games`` games of Sergeant Major stepped together (see the module docstring)."""

    def __init__(
        self,
        num_games: int,
        rules: RuleSet | str | dict[str, Any] | None = "standard",
        seed: int | None = None,
        episode: str = "game",
        max_hands: int | None = 100,
        parallel: bool = False,
    ) -> None:
        if isinstance(num_games, bool) or not isinstance(num_games, (int, np.integer)) or num_games < 1:
            raise ValueError(f"num_games must be a whole number >= 1, got {num_games!r}")
        check_episode(episode, "balance", max_hands)  # the episode kinds and hand limit (reward: any of them)
        if max_hands is not None and max_hands > INT32_MAX:
            raise ValueError(f"max_hands must be at most {INT32_MAX} (or None: no limit), got {max_hands}")
        if not isinstance(parallel, (bool, np.bool_)):
            raise ValueError(f"parallel must be True or False, got {parallel!r}")
        self.num_games = int(num_games)
        self.rules = RuleSet.from_any(rules)
        refused = unsupported(self.rules)
        if refused:
            raise ValueError(
                f"VectorGame runs the rule sets of sm_env.compiled.support; rule set {self.rules.name!r} uses "
                f"{', '.join(refused)}, which the compiled engine does not run"
            )
        self.episode = episode
        self.max_hands = max_hands
        self.game_max_hands = engine_max_hands(episode, max_hands)
        self.num_actions = self.rules.num_actions
        self.num_players = self.rules.num_players
        self.observation_size = observation_size(self.rules)
        self.full_state_size = k.full_state_size(self.num_players)
        self.seed = check_seed(seed) if seed is not None else fresh_seed()
        self._cfg = k.rules_config(self.rules, self.game_max_hands)
        n = self.num_games
        self._st = np.zeros((n, k.NUM_S), dtype=np.int32)
        self._cm = np.zeros((n, k.NUM_C), dtype=np.uint64)
        self._rng = np.zeros(n, dtype=np.uint64)
        self._rng_start = np.zeros((n, 2), dtype=np.uint64)
        self._log = np.zeros((n, _INITIAL_LOG), dtype=np.int8)
        self._all = np.ones(n, dtype=np.bool_)
        self._rows = np.arange(n, dtype=np.int64)
        self._to_act = np.full(n, -1, dtype=np.int64)
        self._done = np.zeros(n, dtype=np.bool_)
        self._no_final = np.full(n, -1, dtype=np.int64)
        self._final_obs = np.zeros((1, self.observation_size), dtype=np.float32)
        self._has_reset = False
        self.parallel = bool(parallel)
        self._step = k.step_games_parallel if parallel else k.step_games
        self._legal = k.legal_masks_parallel if parallel else k.legal_masks
        self._observe = k.observe_games_parallel if parallel else k.observe_games

    # ------------------------------------------------------------------ reset, queries

    def reset(self, seed: int | None = None) -> None:
        """Deal a new game in every slot.

        With ``seed``, and at the first reset (the constructor's seed), every
        slot's stream starts afresh; a later reset without a seed continues
        the streams, so it deals new games (as ``env().reset()`` does).
        """
        if seed is not None:
            self.seed = check_seed(seed)
        if seed is not None or not self._has_reset:
            self._rng[:] = k.slot_states(np.uint64(kernel_seed(self.seed)), self.num_games)
        self._st[:] = 0
        self._log[:] = 0
        self._done[:] = False
        with first_compile("batch"):
            k.start_games(self._st, self._cm, self._rng, self._rng_start, self._cfg)
        self._has_reset = True

    def _need_reset(self) -> None:
        if not self._has_reset:
            raise RuntimeError("call reset() first: the games are dealt by reset()")

    @property
    def current_player(self) -> np.ndarray:
        """int32 [N]: the seat (0 to num_players - 1) to act in each slot (a copy)."""
        self._need_reset()
        return self._st[:, k.S_CUR].copy()

    @property
    def hand_number(self) -> np.ndarray:
        """int32 [N]: the hand being played in each slot (1 = first)."""
        self._need_reset()
        return self._st[:, k.S_HAND_NO].copy()

    @property
    def scores(self) -> np.ndarray:
        """int32 [N, P]: running scores by absolute seat (P = num_players)."""
        self._need_reset()
        return self._st[:, k.S_SC : k.S_SC + self.num_players].copy()

    @property
    def truncated(self) -> np.ndarray:
        """bool [N]: among the slots done at the last step, the games stopped by ``max_hands``
        (always False with ``episode="hand"``)."""
        if self.episode == "hand":
            return np.zeros(self.num_games, dtype=np.bool_)
        return self._done & (self._st[:, k.S_FIN_TRUNCATED] != 0)

    @property
    def final_observations(self) -> np.ndarray:
        """float32 [N, O]: after ``step(..., final_seats=...)``, row i holds the final observation
        of ``final_seats[i]`` where ``done[i]`` (other rows are stale)."""
        return self._final_obs

    @property
    def winners(self) -> np.ndarray:
        """int32 [N]: among the slots done at the last step, the bit set of winning seats (0: none)."""
        return np.where(self._done, self._st[:, k.S_FIN_WINNERS], 0)

    def legal_mask(self, out: np.ndarray | None = None) -> np.ndarray:
        """int8 [N, A]: 1 exactly for the legal actions in each slot."""
        self._need_reset()
        if out is None:
            out = np.empty((self.num_games, self.num_actions), dtype=np.int8)
        elif out.shape != (self.num_games, self.num_actions) or out.dtype != np.int8:
            raise ValueError(
                f"legal_mask: out must be an int8 array of shape ({self.num_games}, {self.num_actions}) (this rule "
                f"set has {self.num_actions} actions), got {out.dtype} {out.shape}"
            )
        self._legal(self._st, self._cm, out)
        return out

    def observe(
        self, rows: np.ndarray | None = None, seats: np.ndarray | None = None, out: np.ndarray | None = None
    ) -> np.ndarray:
        """float32 [len(rows), O]: observation of ``seats`` (default: the player to act) in ``rows`` (default all)."""
        self._need_reset()
        rows, seats = self._rows_seats(rows, seats)
        out = self._out(out, rows, self.observation_size)
        self._observe(self._st, self._cm, self._cfg, seats, rows, out)
        return out

    def _rows_seats(self, rows: np.ndarray | None, seats: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
        """Checked (rows, seats) of :meth:`observe` and :meth:`full_state`; seat -1 is the player to act."""
        if rows is None:
            rows = self._rows
        else:
            rows = _whole(rows, "rows", f"slot indices 0-{self.num_games - 1}")
            if rows.ndim != 1 or (len(rows) and (rows.min() < 0 or rows.max() >= self.num_games)):
                raise ValueError(f"rows must be a list of slot indices 0-{self.num_games - 1}")
        if seats is None:
            seats = self._to_act if rows is self._rows else np.full(len(rows), -1, dtype=np.int64)
        else:
            seats = _whole(seats, "seats", f"seats {self._seat_words} (or -1: the player to act)")
            try:
                seats = np.broadcast_to(seats, rows.shape)
            except ValueError:
                raise ValueError(
                    f"seats has shape {seats.shape}; it must be one seat or one per row {rows.shape}"
                ) from None
        if len(seats) and (seats.min() < -1 or seats.max() >= self.num_players):
            raise ValueError(f"seats must be {self._seat_words} (or -1: the player to act)")
        # the kernels are compiled for C-contiguous, writable int64 arrays: a view, a slice or one broadcast seat
        # (read-only) would otherwise compile another specialisation of them (a minute or more on first use)
        return np.require(rows, np.int64, ["C", "W"]), np.require(seats, np.int64, ["C", "W"])

    @property
    def _seat_words(self) -> str:
        return ", ".join(str(s) for s in range(self.num_players))

    @staticmethod
    def _out(out: np.ndarray | None, rows: np.ndarray, width: int) -> np.ndarray:
        if out is None:
            return np.empty((len(rows), width), dtype=np.float32)
        if out.shape != (len(rows), width) or out.dtype != np.float32 or not out.flags.c_contiguous:
            raise ValueError(f"out must be a C-contiguous float32 array of shape {(len(rows), width)}")
        return out

    def full_state(
        self, rows: np.ndarray | None = None, seats: np.ndarray | None = None, out: np.ndarray | None = None
    ) -> np.ndarray:
        """float32 [len(rows), 52 * P]: the cards hidden from ``seats`` (default: the player to act) in ``rows``
        (``full_state_size``: 156 with three players, 208 with four).

        Layout, relative to the seat: [0:52] the left player's hand (seat + 1), [52:104] that of seat + 2
        (the right player; with four the one across, then [104:156] the right player, seat + 3), and the
        last 52 entries the kitty as dealt; entry 13 * suit + rank is 1.0 for a
        card in the set (card ids of :mod:`sm_env.core.cards`). For a critic that sees the whole deal during
        training (asymmetric actor-critic): it leaks every hidden card, so never give it to an actor.
        """
        self._need_reset()
        rows, seats = self._rows_seats(rows, seats)
        out = self._out(out, rows, self.full_state_size)
        k.full_state_games(self._st, self._cm, self._cfg, seats, rows, out)
        return out

    def get_state(self) -> dict[str, np.ndarray]:
        """Copies of every slot's game, log and random stream (see :meth:`set_state`)."""
        self._need_reset()
        arrays = (self._st, self._cm, self._rng, self._rng_start, self._log, self._done)
        state = {name: a.copy() for name, a in zip(_STATE_ARRAYS, arrays, strict=True)}
        state["seed"] = seed_words(self.seed)  # one word, or three beyond 0..2**64-1 (sm_env.compiled.seeding)
        state["rules"] = self._cfg.copy()  # the rule set and hand limit the games are played under
        return state

    def set_state(self, state: dict[str, np.ndarray]) -> None:
        """Restore what :meth:`get_state` returned (same number of games and rules).

        The state is checked in full first (:mod:`sm_env.compiled.state_check`: keys, dtypes, shapes, ranges,
        and every slot's game replayed from its log); anything else raises :class:`VectorStateError`
        naming the field, and nothing changes.
        """
        describe = f"{self.rules.name}, episode {self.episode}, max_hands {self.max_hands}"
        arrays = checked_state(state, self.num_games, self._cfg, describe)
        self._st = arrays["st"]
        self._cm = arrays["cm"]
        self._rng = arrays["rng"]
        self._rng_start = arrays["rng_start"]
        self._log = arrays["log"]
        self._done = arrays["done"]
        self.seed = arrays["seed"]
        self._has_reset = True

    def copy_slots(self, source: VectorGame, source_rows: np.ndarray, rows: np.ndarray) -> None:
        """Put copies of the games in ``source``'s slots ``source_rows`` into this batch's slots ``rows``: the
        game, its log and its random stream, so each copy continues exactly as its original would under the
        same actions (play-outs of one position under each of its moves). ``source`` (it may be this batch)
        must have the same rules, episode and hand limit; ``rows`` must be distinct slots."""
        if not isinstance(source, VectorGame):
            raise ValueError(f"copy_slots: source must be a VectorGame, got {type(source).__name__}")
        self._need_reset()
        source._need_reset()
        if not np.array_equal(source._cfg, self._cfg) or source.episode != self.episode:
            raise ValueError(
                f"copy_slots: the source plays {source.rules.name!r}, episode {source.episode}, max_hands "
                f"{source.max_hands}; this batch {self.rules.name!r}, episode {self.episode}, "
                f"max_hands {self.max_hands}"
            )
        src = _whole(source_rows, "source_rows", f"slot indices 0-{source.num_games - 1}")
        dst = _whole(rows, "rows", f"slot indices 0-{self.num_games - 1}")
        if src.ndim != 1 or dst.shape != src.shape:
            raise ValueError(f"copy_slots: source_rows {src.shape} and rows {dst.shape} must be lists of one length")
        if len(src) and (src.min() < 0 or src.max() >= source.num_games):
            raise ValueError(f"copy_slots: source_rows must be slot indices 0-{source.num_games - 1}")
        if len(dst) and (dst.min() < 0 or dst.max() >= self.num_games or len(np.unique(dst)) != len(dst)):
            raise ValueError(f"copy_slots: rows must be distinct slot indices 0-{self.num_games - 1}")
        width = source._log.shape[1]
        if width > self._log.shape[1]:
            grown = np.zeros((self.num_games, width), dtype=np.int8)
            grown[:, : self._log.shape[1]] = self._log
            self._log = grown
        arrays = [source._st[src], source._cm[src], source._rng[src], source._rng_start[src], source._log[src]]
        self._st[dst], self._cm[dst], self._rng[dst], self._rng_start[dst] = arrays[:4]
        self._log[dst] = 0
        self._log[dst, :width] = arrays[4]
        self._done[dst] = source._done[src]

    # ------------------------------------------------------------------ step

    def step(
        self, actions: np.ndarray, active: np.ndarray | None = None, final_seats: np.ndarray | None = None
    ) -> tuple[np.ndarray, np.ndarray]:
        """Play one action in every (active) slot; returns (rewards float32 [N, P], done bool [N]), P = num_players.

        ``final_seats`` (int [N], -1 for none): for each slot whose game ends
        at this step, the observation of that seat at the end of the game is
        written into :attr:`final_observations` (before the slot is reset).
        """
        self._need_reset()
        n = self.num_games
        actions = np.asarray(actions)
        if actions.shape != (n,) or actions.dtype.kind not in "iu":
            raise VectorActionError(
                f"actions must be an integer array of shape ({n},) (one action id 0-{self.num_actions - 1} per slot), "
                f"got {actions.dtype} array of shape {actions.shape}"
            )
        actions = actions.astype(np.int64, copy=False)
        if active is None:
            active = self._all
        else:
            active = np.asarray(active)
            if active.shape != (n,) or active.dtype != np.bool_:
                raise ValueError(f"active must be a bool array of shape ({n},), got {active.dtype} {active.shape}")
        if final_seats is None:
            final_seats = self._no_final
        else:
            last = self.num_players - 1
            final_seats = _whole(final_seats, "final_seats", f"seats 0-{last} (or -1) of shape ({n},)")
            if final_seats.shape != (n,) or final_seats.min() < -1 or final_seats.max() > last:
                raise ValueError(f"final_seats must be seats 0-{last} (or -1) of shape ({n},)")
        bad = k.first_illegal(self._st, self._cm, self._cfg, actions, active)
        if bad >= 0:
            raise self._illegal(bad, int(actions[bad]))
        if final_seats is not self._no_final and self._final_obs.shape[0] != n:
            self._final_obs = np.zeros((n, self.observation_size), dtype=np.float32)
        rewards = np.empty((n, self.num_players), dtype=np.float32)
        done = np.empty(n, dtype=np.bool_)
        state = (self._st, self._cm, self._rng, self._rng_start, self._cfg, self._log)
        full = self._step(*state, actions, active, rewards, done, final_seats, self._final_obs)
        if full:
            grown = np.zeros((n, 2 * self._log.shape[1]), dtype=np.int8)
            grown[:, : self._log.shape[1]] = self._log
            self._log = grown
        self._done = done
        return rewards, done.copy()

    def _illegal(self, slot: int, action: int) -> VectorActionError:
        bits = int(k.legal_bits_of(self._st, self._cm, slot)) << int(k.legal_shift(self._st[slot, k.S_PHASE]))
        legal = " ".join(action_text(a, self.rules) for a in from_mask(bits))
        n = self.num_actions
        what = action_text(action, self.rules) if 0 <= action < n else f"{action} (action ids are 0-{n - 1})"
        return VectorActionError(
            f"slot {slot}: action {what} is not legal for player_{self._st[slot, k.S_CUR]}; legal: {legal}; "
            "no slot moved"
        )

    # ------------------------------------------------------------------ records

    def deals(self, slot: int, num_hands: int, finished: bool = False) -> tuple[int, list[dict[str, list[int]]]]:
        """(first dealer, deals of the first ``num_hands`` hands) of the game in ``slot``
        (or of the one that ended last there), as ``Game(first_dealer=..., deals=...)`` takes them."""
        start = self._rng_start[self._slot(slot), 1 if finished else 0]
        if isinstance(num_hands, bool) or not isinstance(num_hands, (int, np.integer)) or num_hands < 0:
            raise ValueError(f"num_hands must be a whole number >= 0, got {num_hands!r}")
        first, decks = k.game_deals(start, self._cfg, int(num_hands))
        size, seats = self.rules.hand_size, self.num_players
        cards = 51 if self.rules.no_kitty_51 else 52
        deals = [
            {
                "hands": [sorted(int(c) for c in deck[s * size : (s + 1) * size]) for s in range(seats)],
                "kitty": sorted(int(c) for c in deck[seats * size : cards]),
            }
            for deck in decks
        ]
        return int(first), deals

    def _slot(self, slot: int) -> int:
        self._need_reset()
        try:
            if isinstance(slot, bool):
                raise TypeError
            slot = operator.index(slot)
        except TypeError:
            raise ValueError(f"slot must be an integer 0-{self.num_games - 1}, got {slot!r}") from None
        if not 0 <= slot < self.num_games:
            raise ValueError(f"slot must be 0-{self.num_games - 1}, got {slot}")
        return slot

    def game(self, slot: int, finished: bool = False) -> Game:
        """The game in ``slot`` re-played through the pure-Python :class:`Game` (for records and checks)."""
        slot = self._slot(slot)
        st = self._st[slot]
        if finished:
            if not self._done[slot]:
                raise ValueError(f"slot {slot}: no game ended there at the last step (done[{slot}] was False)")
            hands, length = int(st[k.S_FIN_HANDS]), int(st[k.S_FIN_LOG_LEN])
        else:
            hands, length = int(st[k.S_HAND_NO]), int(st[k.S_LOG_LEN])
        first, deals = self.deals(slot, hands, finished)
        game = Game(self.rules, first_dealer=first, deals=deals, max_hands=self.game_max_hands)
        for action in self._log[slot, :length]:
            game.apply(int(action))
        return game

    def actions_played(self, slot: int) -> tuple[int, np.ndarray]:
        """(key, actions) of the game now in ``slot``: ``key`` names that game (the start of its random stream;
        the next game in the slot has another), ``actions`` the action ids played in it so far (int64, a copy).
        A host that keeps a :class:`Game` of the slot applies the actions it has not applied yet."""
        slot = self._slot(slot)
        length = int(self._st[slot, k.S_LOG_LEN])
        return int(self._rng_start[slot, 0]), self._log[slot, :length].astype(np.int64)

    def record(self, slot: int) -> dict[str, Any]:
        """The game now in ``slot`` as a standard game record (``sm_env.replay`` accepts it)."""
        return game_record(self.game(slot))

    def finished_record(self, slot: int) -> dict[str, Any]:
        """After a step with ``done[slot]``: the record of the game that just ended there (until the next step)."""
        return game_record(self.game(slot, finished=True))

    def __repr__(self) -> str:
        return (
            f"<VectorGame {self.num_games} games, rules {self.rules.name}, episode {self.episode}, "
            f"max_hands {self.max_hands}, seed {self.seed}>"
        )
