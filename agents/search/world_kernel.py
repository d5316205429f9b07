"""Compiled deal sampling for search: :func:`agents.search.world_sampler.sample_world` in numba, drawing the very
same numbers from the very same ``random.Random`` stream.

:func:`~agents.search.world_sampler.sample_world` is the readable reference. Search
agents sample hundreds of deals per decision, and in Python most of the time
goes to drawing random numbers. This module runs the same algorithm compiled,
on a copy of the agent's Mersenne Twister (MT19937, the generator behind
``random.Random``): :class:`TwisterStream` takes the generator's state,
draws exactly as ``random.Random`` does (:mod:`sm_env.compiled.twister`) and gives
the state back with :meth:`TwisterStream.close`. A seeded search therefore samples the
same deals, and leaves its generator in the same state, with or without
this module (``tests/test_search_kernel.py``).
"""

from __future__ import annotations

import random

import numpy as np
from numba import njit

from sm_env.compiled.cache_key import key_cache_to_sources
from sm_env.compiled.twister import MT_N, randbelow

from .world_sampler import ACROSS, CHECKS_BY_LOCATIONS, KITTY, LEFT, OUT, RIGHT, Constraints, World, WorldError, slacks

_N = MT_N
MAX_LOCATIONS = 5
"""Locations of an unseen card: left, right, kitty, out, and with four players across (world_sampler)."""


def _check_arrays(locations: int) -> tuple[np.ndarray, np.ndarray]:
    """``world_sampler.CHECKS_BY_LOCATIONS[locations]`` as arrays: ``sets[t, loc, :count[t, loc]]`` are the
    location sets whose slack must be >= 1 before a card allowed in ``t`` goes to ``loc``."""
    checks = CHECKS_BY_LOCATIONS[locations]
    count = np.array([[len(checks[t][loc]) for loc in range(locations)] for t in range(1 << locations)])
    sets = np.zeros((1 << locations, locations, int(count.max())), dtype=np.int64)
    for t in range(1 << locations):
        for loc in range(locations):
            sets[t, loc, : count[t, loc]] = checks[t][loc]
    return sets, count.astype(np.int64)


CHECK_TABLES = {locations: _check_arrays(locations) for locations in CHECKS_BY_LOCATIONS}
"""(sets, count) by number of locations (len(Constraints.capacity)): 4 with three players, 5 with four."""


@njit(cache=True)
def _below_entry(mt, pos, n):
    return randbelow(mt, pos, n)


@njit(cache=True)
def sample_placement(mt, pos, allowed, unknown, capacity, slack0, check_sets, check_count, placed):
    """One deal, as world_sampler.sample_world; writes the cards of each location into ``placed`` (room for
    ``MAX_LOCATIONS``). The locations are those of ``capacity`` (4, or 5 with four players), the tables
    ``CHECK_TABLES[len(capacity)]``.

    Returns -1, or the card at which sampling got stuck (impossible for feasible constraints)."""
    locations = capacity.shape[0]
    cards = np.empty(52, dtype=np.int64)
    n = 0
    for c in range(52):
        if (unknown >> c) & 1:
            cards[n] = c
            n += 1
    for i in range(n - 1, 0, -1):  # random.shuffle
        j = randbelow(mt, pos, i + 1)
        cards[i], cards[j] = cards[j], cards[i]
    slack = slack0.copy()
    room = capacity.copy()
    options = np.empty(locations, dtype=np.int64)
    for loc in range(locations):
        placed[loc] = 0
    for idx in range(n):
        c = cards[idx]
        t = allowed[c]
        count = 0
        weights = 0
        for loc in range(locations):
            if (t >> loc) & 1 and room[loc]:
                ok = True
                for q in range(check_count[t, loc]):
                    if slack[check_sets[t, loc, q]] < 1:
                        ok = False
                        break
                if ok:
                    options[count] = loc
                    count += 1
                    weights += room[loc]
        if count == 0:
            return c
        pick = randbelow(mt, pos, weights)
        loc = options[0]
        for q in range(count):
            loc = options[q]
            pick -= room[loc]
            if pick < 0:
                break
        room[loc] -= 1
        placed[loc] |= np.int64(1) << c
        for L in range(1, 1 << locations):
            if (L >> loc) & 1:
                slack[L] -= 1
            if not (t & ~L):
                slack[L] += 1
    return -1


class TwisterStream:
    """A compiled copy of a ``random.Random``'s stream; :meth:`close` writes the advanced state back.

    Between creating it and closing it, draw only through it (not from the ``random.Random`` itself).
    ``mt`` (uint32 [624]) and ``pos`` (int64 [1], the index of the next word) are the generator's state, for
    kernels that draw with :func:`randbelow`.
    """

    def __init__(self, rng: random.Random) -> None:
        if type(rng) is not random.Random:
            raise TypeError(f"TwisterStream copies a random.Random, not {type(rng).__name__}")
        version, internal, gauss = rng.getstate()
        self._rng = rng
        self._version = version
        self._gauss = gauss
        self.mt = np.array(internal[:_N], dtype=np.uint32)
        self.pos = np.array([internal[_N]], dtype=np.int64)
        self._placed = np.zeros(MAX_LOCATIONS, dtype=np.int64)
        self._cons: Constraints | None = None

    def randrange(self, n: int) -> int:
        """``random.Random.randrange(n)`` for ``0 < n < 2**32``."""
        if not 0 < n < 2**32:
            raise ValueError(f"randrange: n must be in 1 .. 2**32 - 1, got {n}")
        return int(_below_entry(self.mt, self.pos, n))

    def sample_world(self, view_hand: int, cons: Constraints) -> World:
        """``world_sampler.sample_world(view, rng, cons)``, where ``view_hand`` is the view's own hand."""
        if cons is not self._cons:
            self._cons = cons
            self._allowed = np.array(cons.allowed, dtype=np.int64)
            self._capacity = np.array(cons.capacity, dtype=np.int64)
            self._slack = np.array(slacks(cons), dtype=np.int64)
            self._checks = CHECK_TABLES[len(cons.capacity)]
        placed = self._placed
        stuck = sample_placement(
            self.mt,
            self.pos,
            self._allowed,
            np.int64(cons.unknown),
            self._capacity,
            self._slack,
            *self._checks,
            placed,
        )
        if stuck >= 0:
            raise WorldError(f"seat {cons.seat}: sampling got stuck at card {stuck}")
        hands = [0] * (len(cons.seats) + 1)
        hands[cons.seat] = view_hand
        for loc, seat in zip((LEFT, RIGHT, ACROSS)[: len(cons.seats)], cons.seats, strict=True):  # ACROSS: four
            hands[seat] = int(placed[loc])
        return World(tuple(hands), int(placed[KITTY]), int(placed[OUT]))

    def close(self) -> None:
        """Write the advanced state back into the ``random.Random``."""
        internal = tuple(int(x) for x in self.mt) + (int(self.pos[0]),)
        self._rng.setstate((self._version, internal, self._gauss))


def compiled_stream(rng: random.Random) -> TwisterStream | None:
    """A compiled copy of ``rng``'s stream that samples deals as :func:`sample_world` does, drawing the same
    numbers (:class:`TwisterStream`; call its ``close()`` to hand the state back); None
    when numba is missing or ``rng`` is not a plain ``random.Random``."""
    if type(rng) is not random.Random:
        return None
    return TwisterStream(rng)


key_cache_to_sources(globals())  # the cache of this file's kernels, keyed to the code they are compiled from
