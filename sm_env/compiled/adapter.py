"""EngineAdapter: one game stepped on the compiled kernels or on the pure-Python ``Game``, behind one interface.

Every adapter that steps the engine one decision at a time (:class:`sm_env.envs.aec.raw_env`, and through it
the RLlib env; :class:`training.sb3.single_agent.SingleSeatEnv`) holds an :class:`EngineAdapter` and nothing
else of either engine. It owns:

- the :class:`~sm_env.core.game.Game`, always built by the caller (seed, deals, options: its RNG decides
  every deal) and the reference for records, rendering, search agents and error messages;
- on the compiled path (:class:`~sm_env.compiled.single.CompiledGame`, numba), the actions played since the
  ``Game`` was last brought up to date (``pending``): the ``Game`` is replayed only when someone reads it
  (:meth:`EngineAdapter.synced`), and once handed out (:meth:`EngineAdapter.hand_out`) it is stepped with
  every action, so that a reference to it stays current (``pending`` is None);
- the step: :meth:`EngineAdapter.play` applies an action on the engine that is stepped and returns the step
  code of :mod:`sm_env.compiled.codes` on both paths (player to act, hand ended, phase, hand number), or
  raises the ``Game``'s :class:`~sm_env.core.game.IllegalActionError` with nothing changed.

The pure-Python path (``compiled=False``) steps the ``Game`` itself and observes it as
``observation.encode(knowledge.player_view(game, seat))``, the readable definition; the compiled path gives
the same codes, observations, masks and scores bit for bit (``tests/test_env_kernel.py`` and
``tests/test_single_seat_kernel.py`` play both in lockstep). What the callers do with the code (rewards,
infos, opponents, episodes) is theirs.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import partial
from typing import TYPE_CHECKING, Any

import numpy as np

from sm_env.core.game import OVER, Game
from sm_env.core.knowledge import hidden_sets, player_view
from sm_env.observation import action_mask, card_planes, encode, full_state, observation_size

from .codes import CODE_GIVEN_DEAL, CODE_HAND_ENDED, CODE_HAND_SHIFT, CODE_PHASE_SHIFT

if TYPE_CHECKING:
    from .single import CompiledGame

__all__ = ["EngineAdapter"]

# The compiled step_env and observe_env of sm_env.compiled.single, loaded with each compiled game (importing
# it loads numba), and the columns of the state row read here: the dealer and the tricks won by seat.
_step_kernel: Callable[[np.ndarray, int], int] | None = None
_observe_kernel: Callable[[np.ndarray, int, np.ndarray, np.ndarray], None] | None = None
_STATE_WORDS = _S_DEALER = _S_TW = 0
_F32, _I8 = np.dtype(np.float32), np.dtype(np.int8)


def _load_kernels() -> None:
    """Load the kernels (compiled, or from numba's cache, on first use in a process; at once after)."""
    global _step_kernel, _observe_kernel, _STATE_WORDS, _S_DEALER, _S_TW
    from . import kernels
    from .single import compiled_kernels

    _STATE_WORDS, _S_DEALER, _S_TW = kernels.NUM_S // 2, kernels.S_DEALER, kernels.S_TW
    _step_kernel, _observe_kernel = compiled_kernels()


class EngineAdapter:
    """One game on the engine that steps it: ``CompiledGame`` if ``compiled``, else the ``Game`` itself.

    ``game`` must be fresh (built just before, nothing played or read), as ``CompiledGame`` copies it.
    Attributes: ``fast`` (the ``CompiledGame``, None on the pure-Python path), ``pending`` (the actions not
    yet applied to the ``Game``; None once it was handed out), ``observe_into(seat, obs, mask)``
    (:meth:`observe` into given arrays: a float32 and an int8 array of the rule set's sizes).
    """

    __slots__ = ("_game", "_ended", "_num_actions", "_num_obs", "_state", "fast", "observe_into", "pending")

    def __init__(self, game: Game, compiled: bool) -> None:
        self._game = game
        self._num_actions, self._num_obs = game.rules.num_actions, observation_size(game.rules)
        self._ended: Any = None  # pure-Python path: the log of the last hand that ended
        self.pending: list[int] | None = []
        if compiled:
            from .single import CompiledGame

            self.fast: CompiledGame | None = CompiledGame(game)
        else:
            self.fast = None
        self._bind()

    def _bind(self) -> None:
        """The kernels and the views of the compiled path on this game's buffer (again after a copy)."""
        fast = self.fast
        if fast is None:
            self._state = None
            self.observe_into: Callable[[int, np.ndarray, np.ndarray], None] = self._observe_game
        else:
            _load_kernels()
            self._state = fast.buf[:_STATE_WORDS].view(np.int32)  # the state columns (sm_env.compiled.single)
            self.observe_into = partial(_observe_kernel, fast.buf)

    def __getstate__(self) -> dict[str, Any]:
        return {"game": self._game, "fast": self.fast, "pending": self.pending, "ended": self._ended}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self._game, self.fast, self.pending = state["game"], state["fast"], state["pending"]
        self._ended = state["ended"]
        self._num_actions, self._num_obs = self._game.rules.num_actions, observation_size(self._game.rules)
        self._bind()

    # ------------------------------------------------------------------ the Game

    def synced(self) -> Game:
        """The ``Game`` with the actions played since it was last brought up to date applied."""
        game = self._game
        pending = self.pending
        if pending:
            for action in pending:
                game.apply(action)
            pending.clear()
        return game

    def hand_out(self) -> Game:
        """The ``Game`` up to date, stepped with every action from now on (a reference to it stays current)."""
        game = self.synced()
        self.pending = None
        return game

    @property
    def first_dealer(self) -> int:
        """The dealer of hand 1 (the ``Game``'s, which never changes)."""
        return self._game.first_dealer

    # ------------------------------------------------------------------ the step

    def play(self, action: Any) -> int:
        """Apply the action of the player to act; the step code (:mod:`sm_env.compiled.codes`).

        Raises the ``Game``'s IllegalActionError (its message names the action, the phase and the legal
        actions) if the action is not a legal action id; nothing changes then.
        """
        fast = self.fast
        if fast is None:
            return self._play_game(action)
        if type(action) is not int:
            action = self._game._coerce_action(action)
        code = _step_kernel(fast.buf, action) if 0 <= action < self._num_actions else -1
        if code < 0:
            self.synced().apply(action)  # refused by the Game, unchanged: its message
            raise AssertionError(f"the compiled path refused action {action}, which the Game accepted")  # a bug
        pending = self.pending
        if pending is None:
            self._game.apply(action)
        else:
            pending.append(action)
        if code & CODE_GIVEN_DEAL:
            fast.next_given_deal()
        return code

    def _play_game(self, action: Any) -> int:
        """:meth:`play` on the pure-Python path: the ``Game`` is stepped and the code read from it."""
        game = self._game
        hand = game.hand_number
        game.apply(action)
        phase, number = game.phase, game.hand_number
        code = game.current | phase << CODE_PHASE_SHIFT | number << CODE_HAND_SHIFT
        if number != hand or phase == OVER:
            log = game.history[hand - 1]
            if log.balances is not None:  # else a passed-out deal (auction): no score
                self._ended = log
                code |= CODE_HAND_ENDED
        return code

    # ------------------------------------------------------------------ reading the state

    @property
    def phase(self) -> int:
        return self._game.phase if self.fast is None else self.fast.phase

    @property
    def hand_number(self) -> int:
        return self._game.hand_number if self.fast is None else self.fast.hand_number

    @property
    def current_player(self) -> int | None:
        """The seat to act, None once the game is over."""
        source = self._game if self.fast is None else self.fast
        return None if source.phase == OVER else source.current

    @property
    def winners(self) -> list[int] | None:
        """The winning seats in ascending order, None while nobody has won (``Game.winners``)."""
        return self._game.winners if self.fast is None else self.fast.winners

    @property
    def dealer(self) -> int:
        """The dealer of the hand in progress (or of the last hand)."""
        return self._game.dealer if self.fast is None else int(self._state[_S_DEALER])

    def tricks_won(self, seat: int) -> int:
        """The tricks ``seat`` has won in the hand in progress."""
        return self._game.tricks_won[seat] if self.fast is None else int(self._state[_S_TW + seat])

    def balances(self) -> Sequence[int]:
        """The balances by seat of the last hand that ended (read after a code with ``CODE_HAND_ENDED``)."""
        return tuple(self._ended.balances) if self.fast is None else self.fast.balances()

    def scores(self) -> Sequence[int]:
        """The running scores by seat (``Game.scores``)."""
        return tuple(self._game.scores) if self.fast is None else self.fast.scores()

    def legal_bits(self) -> int:
        """The legal action bit set of the player to act (0 once the game is over)."""
        return self._game.legal_mask() if self.fast is None else self.fast.legal_bits()

    def observe(self, seat: int) -> tuple[np.ndarray, np.ndarray]:
        """The observation of ``seat`` (float32) and its action mask (int8, all 0 unless it is to act), fresh
        arrays; on the pure-Python path ``encode(player_view(game, seat))``."""
        fast = self.fast
        if fast is None:
            view = player_view(self._game, seat)
            legal = view.legal
            n = self._num_actions
            return encode(view), action_mask(legal, n) if legal else np.zeros(n, dtype=np.int8)
        obs = np.empty(self._num_obs, _F32)
        mask = np.empty(self._num_actions, _I8)
        _observe_kernel(fast.buf, seat, obs, mask)
        return obs, mask

    def full_state(self, seat: int) -> np.ndarray:
        """The cards hidden from ``seat`` as float32 planes (:func:`sm_env.observation.full_state`'s layout): for a
        critic in training only, never an actor."""
        if self.fast is None:
            return full_state(self._game, seat)
        return card_planes(hidden_sets(*self.fast.card_sets(), seat))

    def _observe_game(self, seat: int, obs: np.ndarray, mask: np.ndarray) -> None:
        """``observe_into`` on the pure-Python path."""
        obs[:], mask[:] = self.observe(seat)
