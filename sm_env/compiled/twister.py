"""CPython's ``random.Random`` (MT19937) in numba, drawing the very same numbers.

The state is that of ``random.Random.getstate()``: ``mt`` (uint32 [624])
and ``pos`` (int64 [1], the index of the next word). ``getrandbits(k)``
(k <= 32) is the next 32-bit output shifted right by ``32 - k``;
``randrange(n)`` draws ``n.bit_length()`` bits until the value is below
``n`` (:func:`randbelow`); ``shuffle`` swaps ``x[i]`` with
``x[randrange(i + 1)]`` from the last index down to 1. Used by the compiled
env path (:mod:`sm_env.compiled.single`) to deal as ``Game`` does, and by the
search agents' deal sampling.
"""

from __future__ import annotations

import array
import random

import numpy as np
from numba import njit

__all__ = ["MT_N", "randbelow", "twister_state"]

MT_N = 624
_M = 397


def twister_state(rng: random.Random) -> tuple[np.ndarray, int]:
    """(``mt`` uint32 [624], ``pos``) of a ``random.Random``'s current state."""
    internal = rng.getstate()[1]
    return np.frombuffer(array.array("I", internal[:MT_N]), dtype=np.uint32), internal[MT_N]


@njit(cache=True)
def _next32(mt, pos):
    """The next 32-bit output of MT19937 (CPython's genrand_uint32); ``pos[0]`` is the index into ``mt``."""
    if pos[0] >= MT_N:
        for kk in range(MT_N):
            y = (mt[kk] & np.uint32(0x80000000)) | (mt[(kk + 1) % MT_N] & np.uint32(0x7FFFFFFF))
            v = mt[(kk + _M) % MT_N] ^ (y >> np.uint32(1))
            if y & np.uint32(1):
                v ^= np.uint32(0x9908B0DF)
            mt[kk] = v
        pos[0] = 0
    y = mt[pos[0]]
    pos[0] += 1
    y ^= y >> np.uint32(11)
    y ^= (y << np.uint32(7)) & np.uint32(0x9D2C5680)
    y ^= (y << np.uint32(15)) & np.uint32(0xEFC60000)
    y ^= y >> np.uint32(18)
    return y


@njit(cache=True)
def randbelow(mt, pos, n):
    """random.Random.randrange(n) for 0 < n < 2**32."""
    k = 0
    m = n
    while m:
        k += 1
        m >>= 1
    shift = np.uint32(32 - k)
    r = np.int64(_next32(mt, pos) >> shift)
    while r >= n:
        r = np.int64(_next32(mt, pos) >> shift)
    return r
