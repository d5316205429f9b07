"""The seeds of :class:`sm_env.compiled.batch.VectorGame` (plain Python, no numba).

A seed is an integer with ``-(2**128) < seed < 2**128``, as ``Game`` takes it
(:data:`sm_env.core.game.SEED_LIMIT`), or None: then :func:`fresh_seed` draws
128 bits of OS entropy. Every bit of it counts:

- :func:`kernel_seed`: the uint64 the slots' generators start from. A seed
  ``0 <= seed < 2**64`` is that number itself (the deals it always gave); any
  other seed (negative, or ``2**64`` and beyond) is hashed in full: the first
  8 bytes (little-endian) of the SHA-256 of its 17-byte little-endian two's
  complement. So ``seed`` and ``seed + 2**64`` deal differently.
- :func:`seed_words` / :func:`seed_from_words`: the seed in a saved state,
  uint64 ``[seed]`` for ``0 <= seed < 2**64`` (the form states always had), or
  ``[low, high, negative]``: the two 64-bit words of ``abs(seed)`` and 1 for a
  negative seed (0 otherwise), for every other seed.
"""

from __future__ import annotations

import hashlib
import operator
from typing import Any

import numpy as np

from sm_env.core.game import SEED_BITS, SEED_LIMIT, fresh_seed

__all__ = ["SEED_BITS", "check_seed", "fresh_seed", "kernel_seed", "seed_from_words", "seed_words"]

_WORD = 2**64


def check_seed(seed: Any) -> int:
    """``seed`` as an int: a whole number (numpy ints too, not bool) with ``-(2**128) < seed < 2**128``."""
    try:
        if isinstance(seed, bool):
            raise TypeError
        value = operator.index(seed)
    except TypeError:
        raise ValueError(f"seed must be an integer or None, got {seed!r:.60}") from None
    if not -SEED_LIMIT < value < SEED_LIMIT:
        raise ValueError(
            f"seed has {value.bit_length()} bits; integer seeds must lie strictly between -2**128 and 2**128"
        )
    return value


def kernel_seed(seed: int) -> int:
    """The uint64 the generators of a batch seeded with ``seed`` start from: ``seed`` for ``0 <= seed < 2**64``,
    any other seed hashed in full (the first 8 bytes of the SHA-256 of its 17-byte two's complement)."""
    if 0 <= seed < _WORD:
        return seed
    digest = hashlib.sha256(seed.to_bytes(17, "little", signed=True)).digest()
    return int.from_bytes(digest[:8], "little")


def seed_words(seed: int) -> np.ndarray:
    """``seed`` as a state holds it: uint64 ``[seed]`` for ``0 <= seed < 2**64``, else ``[low, high, negative]``
    (the 64-bit words of ``abs(seed)``, then 1 if the seed is negative)."""
    if 0 <= seed < _WORD:
        return np.array([seed], dtype=np.uint64)
    size = abs(seed)
    return np.array([size % _WORD, size // _WORD, int(seed < 0)], dtype=np.uint64)


def seed_from_words(words: np.ndarray) -> int:
    """The seed that :func:`seed_words` gave ``words`` (uint64 [1] or [3]); ValueError saying why no seed did."""
    if words.shape == (1,):
        return int(words[0])
    if words.shape != (3,):
        raise ValueError(
            f"seed has shape {words.shape}; it must be (1,) (a seed 0..2**64-1) or (3,) "
            "(the low and high words of abs(seed), then 1 if it is negative, else 0)"
        )
    low, high, negative = (int(w) for w in words)
    if negative > 1:
        raise ValueError(f"seed[2] is {negative}; it is 1 for a negative seed, 0 otherwise")
    seed = -(high * _WORD + low) if negative else high * _WORD + low
    if 0 <= seed < _WORD:
        raise ValueError(f"seed holds {seed} in three words; a seed 0..2**64-1 is one word, shape (1,)")
    return seed
