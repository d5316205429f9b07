"""The compiled path of :class:`sm_env.envs.aec.raw_env`: one game held in the
state layout of :mod:`sm_env.compiled.kernels` (one row), stepped, observed
and masked by numba kernels.

``raw_env`` keeps the pure-Python :class:`~sm_env.core.game.Game` as the
reference: it is built at every reset (seed, deals, options, errors), its
RNG decides every deal, and ``env.game``, records, rendering and illegal-action
messages come from it. When the rule set is one that :mod:`sm_env.compiled.batch`
runs (:func:`sm_env.compiled.support.supports`), the env steps
:class:`CompiledGame` instead and brings the ``Game`` up to date only when
it is asked for (see :mod:`sm_env.envs.aec`). The observation written here is
``observation.encode(knowledge.player_view(game, seat))`` bit for bit, as
``tests/test_env_kernel.py`` checks in lockstep with the pure-Python path.

The game is copied from the ``Game`` by :func:`sm_env.compiled.loader.game_row` (the
one loader from a ``Game`` to a kernel row). Deals (``K_GIVEN_DEALS``: a hand starts
with the deal in the ``C_NEXT_*`` columns): hand 1 is the ``Game``'s own. The deal of the next hand is
put in place one hand ahead, as the ``Game`` will draw it: the next of the
given deals (reset option ``deals``) while some are left, which the caller
puts there (``CODE_GIVEN_DEAL``), else :func:`sm_env.core.game.random_deal`
from a copy of the ``Game``'s generator (MT19937, :mod:`sm_env.compiled.twister`),
taken right after the ``Game`` was built.

State: one uint64 buffer (``STATE_WORDS`` words), so that a kernel call
unboxes one array: ``st`` (int32, two per word), ``cm``, ``rng`` (unused),
``cfg`` (int64), the balances of the last hand that ended (float32, two
per word), the generator (``mt`` uint32, two per word; ``pos``) and the
number of given deals not yet put in place.
The kernels are ``kernels.loop_kernel``'s: compiled without numba's reference counting.

numba's cache (``cache=True``) is keyed to the contents of this file and of the
compiled code it calls (:mod:`sm_env.compiled.kernels`, :mod:`sm_env.compiled.twister`:
:mod:`sm_env.compiled.cache_key`); after a change of the ``CODE_*`` constants of
:mod:`sm_env.compiled.codes`, touch this file (or clear ``__pycache__``) so that its
kernels are compiled again.
"""

from __future__ import annotations

import functools
from collections.abc import Callable

import numba
import numpy as np
from numba import njit

from sm_env.core.cards import to_mask
from sm_env.core.game import OVER, Game
from sm_env.core.rules import RuleSet

from . import kernels as vk
from .cache_key import key_cache_to_sources
from .codes import CODE_GIVEN_DEAL, CODE_HAND_ENDED, CODE_HAND_SHIFT, CODE_PHASE_SHIFT  # numba freezes them
from .loader import game_row
from .support import supports
from .twister import MT_N, randbelow, twister_state

__all__ = ["STATE_WORDS", "CompiledGame", "compiled_kernels", "observe_env", "step_env", "supports"]


_CM = vk.NUM_S // 2
_RNG = _CM + vk.NUM_C
_CFG = _RNG + 1
_REWARD = _CFG + vk.NUM_K
_MT = _REWARD + vk.MAX_SEATS // 2
_POS = _MT + MT_N // 2
_QUEUED = _POS + 1
STATE_WORDS = _QUEUED + 1


@njit(cache=True, inline="always")
def _parts(buf):
    """The views st [1, NUM_S], cm [1, NUM_C], rng [1], cfg [NUM_K] and reward [MAX_SEATS] of a state buffer."""
    st = buf[:_CM].view(np.int32).reshape((1, vk.NUM_S))
    cm = buf[_CM:_RNG].reshape((1, vk.NUM_C))
    return st, cm, buf[_RNG:_CFG], buf[_CFG:_REWARD].view(np.int64), buf[_REWARD:_MT].view(np.float32)[: vk.MAX_SEATS]


@vk.loop_kernel
def _draw_next(buf, cm, cfg):
    """The next deal into C_NEXT_*, as ``game.random_deal`` draws it from the generator in ``buf``."""
    mt = buf[_MT:_POS].view(np.uint32)
    pos = buf[_POS:_QUEUED].view(np.int64)
    first = 1 if cfg[vk.K_NO_KITTY_51] else 0  # no 2C
    m = 52 - first
    deck = vk._stack_int64(52)
    for k in range(m):
        deck[k] = k + first
    for i in range(m - 1, 0, -1):  # random.shuffle
        j = randbelow(mt, pos, i + 1)
        t = deck[i]
        deck[i] = deck[j]
        deck[j] = t
    size = cfg[vk.K_HAND_SIZE]
    n = cfg[vk.K_PLAYERS]
    for s in range(n):
        h = np.uint64(0)
        for k in range(s * size, (s + 1) * size):
            h |= vk._bit(deck[k])
        cm[0, vk.C_NEXT_HAND + s] = h
    kitty = np.uint64(0)
    for k in range(n * size, m):
        kitty |= vk._bit(deck[k])
    cm[0, vk.C_NEXT_KITTY] = kitty


@vk.loop_kernel
def step_env(buf, action):
    """Apply ``action`` if it is legal; returns -1 (nothing changed) if it is not.

    Else the code ``current | hand ended << 2 | given deal needed << 3 |
    phase << 4 | hand number << 7`` after the action (constants in
    :mod:`sm_env.envs.aec`); when a hand ended its balances are in the reward
    part. When a new hand began, the deal of the hand after it is drawn,
    or (given deals left) the code asks the caller for it.
    """
    st, cm, rng, cfg, reward = _parts(buf)
    if not vk._is_legal(0, st, cm, cfg, action):
        return -1
    hand = st[0, vk.S_HAND_NO]
    ended = vk._apply(0, st, cm, rng, cfg, action, reward)
    code = st[0, vk.S_CUR] | st[0, vk.S_PHASE] << CODE_PHASE_SHIFT | st[0, vk.S_HAND_NO] << CODE_HAND_SHIFT
    if ended:
        code |= CODE_HAND_ENDED
    if st[0, vk.S_HAND_NO] != hand:
        if buf[_QUEUED]:
            code |= CODE_GIVEN_DEAL
        else:
            _draw_next(buf, cm, cfg)
    return code


@vk.loop_kernel
def observe_env(buf, seat, obs, mask):
    """The observation of ``seat`` into ``obs`` and its action mask into ``mask`` (all 0 unless it is to act)."""
    st, cm, _, cfg, _ = _parts(buf)
    vk.encode_row(0, seat, st, cm, cfg, obs)
    legal = np.uint64(0)
    if st[0, vk.S_PHASE] != OVER and st[0, vk.S_CUR] == seat:
        legal = vk._legal_bits(0, st, cm)
    vk.write_mask(legal, vk.legal_shift(st[0, vk.S_PHASE]), mask)


@vk.loop_kernel
def _draw_next_deal(buf):
    """The deal of the next hand into C_NEXT_*, drawn from the generator in ``buf``."""
    _, cm, _, cfg, _ = _parts(buf)
    _draw_next(buf, cm, cfg)


@vk.loop_kernel
def _legal_bits(buf):
    st, cm, _, _, _ = _parts(buf)
    return vk._legal_bits(0, st, cm)


_compiled: list = []  # the compiled step_env and observe_env, once loaded


def compiled_kernels() -> tuple[Callable[[np.ndarray, int], int], Callable[..., None]]:
    """step_env and observe_env compiled (or loaded from numba's cache) for the argument types of the
    env's calls: ``step(buf, action)``, ``observe(buf, seat, obs, mask)``.

    ``Dispatcher.compile`` returns the compiled function itself, called
    without numba's per-call type dispatch: the arguments must have exactly
    these types (``buf`` a CompiledGame's, an int action id of the rule set, a seat 0-2 (0-3 with four players),
    a float32 observation and an int8 mask array of the rule set's sizes, C-contiguous).
    """
    if not _compiled:
        buf = numba.typeof(np.zeros(STATE_WORDS, dtype=np.uint64))
        obs, mask = numba.typeof(np.zeros(1, dtype=np.float32)), numba.typeof(np.zeros(1, dtype=np.int8))
        step = step_env.compile((buf, numba.int64))
        observe = observe_env.compile((buf, numba.int64, obs, mask))
        # (should a numba version return no function here, the dispatchers do the same work)
        _compiled[:] = [step if callable(step) else step_env, observe if callable(observe) else observe_env]
    return _compiled[0], _compiled[1]


@functools.lru_cache(maxsize=64)
def _template(rules: RuleSet, max_hands: int | None) -> np.ndarray:
    """A zero state buffer with the rule vector in place."""
    buf = np.zeros(STATE_WORDS, dtype=np.uint64)
    buf[_CFG:_REWARD] = vk.rules_config(rules, max_hands, given_deals=True).view(np.uint64)
    buf.flags.writeable = False
    return buf


class CompiledGame:
    """The game of a fresh :class:`~sm_env.core.game.Game` (built just before, nothing played), on the kernels.

    ``buf`` is the state (see the module docstring); ``deal_queue`` the
    given deals not yet put in place.
    """

    __slots__ = ("buf", "deal_queue")

    def __init__(self, game: Game) -> None:
        buf = self.buf = _template(game.rules, game.max_hands).copy()
        st, cm = game_row(game)  # the one loader from a Game to a kernel row
        buf[:_CM].view(np.int32)[:] = st
        buf[_CM:_RNG] = cm
        more_hands = game.max_hands != 1
        self.deal_queue = list(game.deal_queue) if more_hands else []
        buf[_QUEUED] = len(self.deal_queue)
        if more_hands:
            mt, pos = twister_state(game.rng)
            buf[_MT:_POS].view(np.uint32)[:] = mt
            buf[_POS] = pos
            if self.deal_queue:
                self.next_given_deal()
            else:
                _draw_next_deal(buf)

    def __getstate__(self) -> dict:
        return {"buf": self.buf, "deal_queue": self.deal_queue}

    def __setstate__(self, state: dict) -> None:
        self.buf = np.array(state["buf"], dtype=np.uint64)  # a writable C array, as the compiled calls need
        self.deal_queue = list(state["deal_queue"])

    def _put_next(self, hands: list[list[int]], kitty: list[int]) -> None:
        buf = self.buf
        for seat, hand in enumerate(hands):
            buf[_CM + vk.C_NEXT_HAND + seat] = to_mask(hand)
        buf[_CM + vk.C_NEXT_KITTY] = to_mask(kitty)

    def next_given_deal(self) -> None:
        """Put the next given deal in place as the deal of the next hand (after a step that asked for it)."""
        self._put_next(*self.deal_queue.pop(0))
        self.buf[_QUEUED] -= 1

    def _st(self, column: int) -> int:
        return int(self.buf[:_CM].view(np.int32)[column])

    @property
    def phase(self) -> int:
        return self._st(vk.S_PHASE)

    @property
    def current(self) -> int:
        """The seat to act (the last one to act once the game is over)."""
        return self._st(vk.S_CUR)

    @property
    def hand_number(self) -> int:
        return self._st(vk.S_HAND_NO)

    @property
    def winners(self) -> list[int] | None:
        """The winning seats in ascending order (as ``Game.winners``), None while nobody has won."""
        bits = self._st(vk.S_WINNERS)
        return [s for s in range(vk.MAX_SEATS) if bits >> s & 1] or None

    def _seats(self) -> int:
        """The seats at the table (the rule vector's K_PLAYERS)."""
        return int(self.buf[_CFG:_REWARD].view(np.int64)[vk.K_PLAYERS])

    def balances(self) -> tuple[int, ...]:
        """Balances by seat of the last hand that ended."""
        r = self.buf[_REWARD:_MT].view(np.float32)
        return tuple(int(r[s]) for s in range(self._seats()))

    def scores(self) -> tuple[int, ...]:
        """The running scores by seat (``Game.scores``; the env's ``"score"`` reward is their change)."""
        st = self.buf[:_CM].view(np.int32)
        return tuple(int(st[vk.S_SC + s]) for s in range(self._seats()))

    def card_sets(self) -> tuple[tuple[int, ...], int]:
        """Every seat's hand and the kitty as dealt (card bit sets, as ``Game.hands`` and ``Game.kitty_mask``)."""
        cm = self.buf[_CM:_RNG]
        return tuple(int(cm[vk.C_HAND + s]) for s in range(self._seats())), int(cm[vk.C_KITTY])

    def legal_bits(self) -> int:
        """Legal action bit set of the player to act (0 once the game is over)."""
        return int(_legal_bits(self.buf)) << int(vk.legal_shift(self.phase))


key_cache_to_sources(globals())  # the cache of this file's kernels, keyed to the code they are compiled from
