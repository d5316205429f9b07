"""The compiled path of :class:`sm_env.env.raw_env`: one game held in the
state layout of :mod:`sm_env.vector_kernels` (one row), stepped, observed
and masked by numba kernels.

``raw_env`` keeps the pure-Python :class:`~sm_env.game.Game` as the
reference: it is built at every reset (seed, deals, options, errors), its
RNG decides every deal, and ``env.game``, records, rendering and illegal-action
messages come from it. When the rule set is one that :mod:`sm_env.vector`
runs (:func:`sm_env.vector.unsupported_options` is empty), the env steps
:class:`CompiledGame` instead and brings the ``Game`` up to date only when
it is asked for (see :mod:`sm_env.env`). The observation written here is
``observation.encode(knowledge.player_view(game, seat))`` bit for bit, as
``tests/test_env_kernel.py`` checks in lockstep with the pure-Python path.

Deals: the kernels deal nothing themselves (``K_GIVEN_DEALS``). The deal
of hand 1 is the ``Game``'s own; the deals of later hands are drawn, one hand
ahead, into the ``C_NEXT_*`` columns by :func:`sm_env.game.next_deal` from a
copy of the ``Game``'s RNG and given deals taken right after the ``Game``
was built, so they are the deals the ``Game`` draws when it plays the same
actions.
"""

from __future__ import annotations

import random

import numpy as np
from numba import njit

from . import vector_kernels as vk
from .cards import to_mask
from .env import CODE_HAND_ENDED, CODE_HAND_SHIFT, CODE_NEW_HAND, CODE_PHASE_SHIFT
from .game import NUM_ACTIONS, OVER, Game, next_deal
from .rules import RuleSet
from .vector import unsupported_options

__all__ = ["CompiledGame", "observe_env", "step_env", "supports"]


def supports(rules: RuleSet) -> bool:
    """Whether the compiled path runs this rule set (every rule set VectorGame runs)."""
    return rules.num_actions == NUM_ACTIONS and not unsupported_options(rules)


@njit(cache=True)
def step_env(st, cm, rng, cfg, action, reward):
    """Apply ``action`` if it is legal; returns -1 (nothing changed) if it is not.

    Else the code ``current | phase << 2 | hand ended << 5 | new hand << 6 |
    hand number << 7`` after the action; when a hand ended its balances are
    in ``reward`` (by seat).
    """
    if action < 0 or action >= NUM_ACTIONS or (vk._legal_bits(0, st, cm) >> np.uint64(action)) & vk._ONE == 0:
        return -1
    hand = st[0, vk.S_HAND_NO]
    ended = vk._apply(0, st, cm, rng, cfg, action, reward)
    code = st[0, vk.S_CUR] | st[0, vk.S_PHASE] << CODE_PHASE_SHIFT | st[0, vk.S_HAND_NO] << CODE_HAND_SHIFT
    if ended:
        code |= CODE_HAND_ENDED
    if st[0, vk.S_HAND_NO] != hand:
        code |= CODE_NEW_HAND
    return code


@njit(cache=True)
def observe_env(st, cm, cfg, seat, obs, mask):
    """The observation of ``seat`` into ``obs`` and its action mask into ``mask`` (all 0 unless it is to act)."""
    vk.encode_row(0, seat, st, cm, cfg, obs)
    legal = np.uint64(0)
    if st[0, vk.S_PHASE] != OVER and st[0, vk.S_CUR] == seat:
        legal = vk._legal_bits(0, st, cm)
    for b in range(NUM_ACTIONS // 8):
        bits = vk._BYTE_BITS_I8[(legal >> np.uint64(8 * b)) & np.uint64(0xFF)]
        for k in range(8):
            mask[8 * b + k] = bits[k]


@njit(cache=True)
def _start_env(st, cm, rng, cfg, first_dealer, previous):
    """Hand 1 of a game from the deal in C_NEXT_* (``previous``: start balances by seat, or empty)."""
    for k in range(vk.NUM_S):
        st[0, k] = 0
    st[0, vk.S_FIRST_DEALER] = first_dealer
    for s in range(previous.shape[0]):
        st[0, vk.S_PB + s] = previous[s]
    vk._start_hand(0, st, cm, rng, cfg, first_dealer, previous.shape[0] > 0)


class CompiledGame:
    """The game of a fresh :class:`~sm_env.game.Game` (built just before, nothing played), on the kernels.

    ``st``, ``cm``, ``rng`` and ``cfg`` are one row of :mod:`sm_env.vector_kernels`'s state; ``reward`` holds
    the balances of the last hand that ended.
    """

    def __init__(self, game: Game) -> None:
        self.rules = game.rules
        self.cfg = vk.rules_config(game.rules, game.max_hands, given_deals=True)
        self.st = np.zeros((1, vk.NUM_S), dtype=np.int32)
        self.cm = np.zeros((1, vk.NUM_C), dtype=np.uint64)
        self.rng = np.zeros(1, dtype=np.uint64)  # never drawn from: the deals are given
        self.reward = np.zeros(3, dtype=np.float32)
        # the Game's deal source as it stands after hand 1 was dealt
        self._deal_rng = random.Random()
        self._deal_rng.setstate(game.rng.getstate())
        self._deal_queue = list(game.deal_queue)
        first = game.history[0]
        self._put_next(first.deal_hands, first.kitty)
        previous = np.array(game.start_balances or (), dtype=np.int64)
        _start_env(self.st, self.cm, self.rng, self.cfg, game.first_dealer, previous)
        self.next_hand()

    def _put_next(self, hands: list[list[int]], kitty: list[int]) -> None:
        cm = self.cm
        for seat in range(3):
            cm[0, vk.C_NEXT_HAND + seat] = to_mask(hands[seat])
        cm[0, vk.C_NEXT_KITTY] = to_mask(kitty)

    def next_hand(self) -> None:
        """Put the deal of the hand after the current one in place (after a step that began a new hand)."""
        self._put_next(*next_deal(self._deal_queue, self._deal_rng, self.rules))

    def step(self, action: int) -> int:
        """:func:`step_env` on this game; -1 for an illegal action (nothing changed)."""
        code = step_env(self.st, self.cm, self.rng, self.cfg, action, self.reward)
        if code >= 0 and code & CODE_NEW_HAND:
            self.next_hand()
        return code

    def observe(self, seat: int, obs: np.ndarray, mask: np.ndarray) -> None:
        """Write the observation of ``seat`` into ``obs`` (float32) and its mask into ``mask`` (int8)."""
        observe_env(self.st, self.cm, self.cfg, seat, obs, mask)

    @property
    def phase(self) -> int:
        return int(self.st[0, vk.S_PHASE])

    @property
    def current(self) -> int:
        """The seat to act (the last one to act once the game is over)."""
        return int(self.st[0, vk.S_CUR])

    @property
    def hand_number(self) -> int:
        return int(self.st[0, vk.S_HAND_NO])

    @property
    def winners(self) -> list[int] | None:
        """The winning seats in ascending order (as ``Game.winners``), None while nobody has won."""
        bits = int(self.st[0, vk.S_WINNERS])
        return [s for s in range(3) if bits >> s & 1] or None

    def balances(self) -> tuple[int, int, int]:
        """Balances by seat of the last hand that ended."""
        r = self.reward
        return int(r[0]), int(r[1]), int(r[2])

    def legal_bits(self) -> int:
        """Legal action bit set of the player to act (0 once the game is over)."""
        return int(vk.legal_bits_of(self.st, self.cm, 0))
