"""Compiled steps of the policy rollouts (:mod:`agents.search.policy_rollout`): many positions played to the end of
their hand in lockstep, a network choosing every move that is not forced.

The batch is the engine's rows (``st``, ``cm`` of :mod:`sm_env.compiled.kernels`, loaded by
:func:`sm_env.compiled.loader.load_game`). One lockstep step is:

1. :func:`advance`: every row plays its forced moves (one legal action) and lists the rows that still have a
   hand to finish: each waits on a real choice;
2. the caller observes those rows (``kernels.observe_games``, the seat to act) and runs the network on them;
3. :func:`apply_best`: each listed row plays its most probable legal action (the first of equal logits, as
   ``np.argmax`` over the masked logits picks).

A row stops when its hand ends: the rule vector's hand limit (``cfg[K_MAX_HANDS]``) is the hand being played, so
the hand's end ends the game (phase over) with the tricks won intact, as in
:func:`agents.search.rollout_kernel.rollout_row`.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from sm_env.compiled import kernels as vk
from sm_env.compiled.cache_key import key_cache_to_sources
from sm_env.core.game import OVER


@njit(cache=True, inline="always")
def _forced(i, st, cm):
    """The only legal action of row i, or -1 when it has a choice (or nothing to play)."""
    bits = vk._legal_bits(i, st, cm)
    if bits == 0 or (bits & (bits - np.uint64(1))) != 0:
        return -1
    b = 0
    while (bits >> np.uint64(b)) & np.uint64(1) == 0:
        b += 1
    return b + vk.legal_shift(st[i, vk.S_PHASE])


@njit(cache=True)
def apply_each(st, cm, cfg, actions):
    """Row i plays ``actions[i]`` (legal there): the candidate move of each rollout."""
    rng = np.zeros(1, dtype=np.uint64)  # never drawn from: a hand that ends ends the game (cfg's hand limit)
    reward = np.zeros(vk.MAX_SEATS, dtype=np.float32)
    for i in range(st.shape[0]):
        vk._apply(i, st, cm, rng, cfg, actions[i], reward)


@njit(cache=True)
def advance(st, cm, cfg, waiting):
    """Play the forced moves of every row; ``waiting[:k]`` gets the rows left with a choice (k is returned), in
    row order. A row whose hand is over is not listed."""
    rng = np.zeros(1, dtype=np.uint64)
    reward = np.zeros(vk.MAX_SEATS, dtype=np.float32)
    k = 0
    for i in range(st.shape[0]):
        while st[i, vk.S_PHASE] != OVER:
            action = _forced(i, st, cm)
            if action < 0:
                waiting[k] = i
                k += 1
                break
            vk._apply(i, st, cm, rng, cfg, action, reward)
    return k


@njit(cache=True)
def apply_best(st, cm, cfg, rows, logits):
    """Row ``rows[j]`` plays its legal action of the highest ``logits[j]`` (the lowest action among equals)."""
    rng = np.zeros(1, dtype=np.uint64)
    reward = np.zeros(vk.MAX_SEATS, dtype=np.float32)
    width = logits.shape[1]
    for j in range(rows.shape[0]):
        i = rows[j]
        bits = vk._legal_bits(i, st, cm)
        shift = vk.legal_shift(st[i, vk.S_PHASE])
        best = -1
        for b in range(64):
            if (bits >> np.uint64(b)) & np.uint64(1) == 0:
                continue
            a = b + shift
            if a >= width:
                break
            if best < 0 or logits[j, a] > logits[j, best]:
                best = a
        vk._apply(i, st, cm, rng, cfg, best, reward)


@njit(cache=True)
def first_layer(obs, w, b, out):
    """``out = obs @ w + b`` (float32; ``w`` [inputs, outputs]) summed over the nonzero entries of each observation
    only: an observation is mostly zeros (about 55 of its 789 entries are set), so this costs a few times less
    than the dense product. The sum runs over the inputs in order, for each row alike (deterministic)."""
    width = w.shape[1]
    for r in range(obs.shape[0]):
        for k in range(width):
            out[r, k] = b[k]
        for j in range(obs.shape[1]):
            v = obs[r, j]
            if v != 0.0:
                for k in range(width):  # no temporary: a vectorised multiply-add along the row
                    out[r, k] += v * w[j, k]


key_cache_to_sources(globals())  # the cache of this file's kernels, keyed to the code they are compiled from
