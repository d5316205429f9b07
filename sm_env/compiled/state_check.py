"""The check of a state given to :meth:`sm_env.compiled.batch.VectorGame.set_state`: nothing reaches a kernel
unless it is a state the batch itself could have reached.

The kernels trust their state (an index out of range is a crash, not an error), so a
saved state is checked in full before it is used:

1. Python: the keys, the dtypes (whole numbers, ``done`` booleans), the shapes
   and the ranges the dtypes must hold (``st`` int32, ``log`` int8).
2. Compiled (:func:`check_rows`): every slot's game is played again from its
   recorded start (``rng_start[i, 0]``) through its log (``log[i, :st[i, S_LOG_LEN]]``,
   each action legal, the log position inside the log), and the result must be
   the slot's ``st`` (every column but ``S_FIN_*``), ``cm`` and ``rng``, exactly.
   With ``done[i]`` the game that just ended is checked the same way (from
   ``rng_start[i, 1]`` through ``log[i, :st[i, S_FIN_LOG_LEN]]``, ending at its
   last action with the hands, winners and truncation of the ``S_FIN_*``
   columns, the next game starting where its stream stopped). Without it the
   ``S_FIN_*`` columns (read only after a step that ended a game) need only be
   in range.

So a state that passes is one whose records replay and which the lockstep check
accepts; the cost is one replay of the games in play (as many actions as the logs hold).
:class:`VectorStateError` (a ValueError) names the field, what it holds and what is allowed.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
from numba import njit

from sm_env.core.game import OVER

from . import kernels as k
from .cache_key import key_cache_to_sources
from .seeding import seed_from_words

__all__ = ["STATE_KEYS", "VectorStateError", "check_rows", "checked_state"]

STATE_KEYS = ("st", "cm", "rng", "rng_start", "log", "done", "seed", "rules")
"""The keys of a state (what ``VectorGame.get_state`` returns)."""

# codes of check_rows
_OK, _LOG_POS, _OVER_EARLY, _ILLEGAL, _NOT_OVER, _ENDED, _ST, _CM, _RNG = range(9)
_DONE_LOG_POS, _FIN_LEN, _FIN_HANDS, _FIN_WINNERS, _FIN_TRUNCATED, _NEXT_START, _FIN_RANGE = range(9, 16)


class VectorStateError(ValueError):
    """A state given to ``VectorGame.set_state`` that the batch could not have reached; nothing was changed."""


@njit(cache=True)
def replay_row(cfg, start, log_row, length, st, cm, rng):
    """Play a game from generator state ``start`` through ``log_row[:length]`` into row 0 of ``st``, ``cm``,
    ``rng``; returns (0, length) when every action was legal, else (code, index of the action)."""
    reward = np.zeros(k.MAX_SEATS, dtype=np.float32)
    rng_start = np.zeros((1, 2), dtype=np.uint64)
    st[0, :] = 0
    cm[0, :] = 0
    rng[0] = start
    k.start_game(0, st, cm, rng, rng_start, cfg)
    for j in range(length):
        if st[0, k.S_PHASE] == OVER:
            return _OVER_EARLY, j
        a = np.int64(log_row[j])
        if not k._is_legal(0, st, cm, cfg, a):
            return _ILLEGAL, j
        k._apply(0, st, cm, rng, cfg, a, reward)
    st[0, k.S_LOG_LEN] = length
    return _OK, length


@njit(cache=True)
def check_rows(st, cm, rng, rng_start, cfg, log, done):
    """(slot, code, detail) of the first slot that is not the game its log replays to (see the module
    docstring), or (-1, 0, 0)."""
    width = log.shape[1]
    rst = np.zeros((1, k.NUM_S), dtype=np.int32)
    rcm = np.zeros((1, k.NUM_C), dtype=np.uint64)
    rrng = np.zeros(1, dtype=np.uint64)
    for i in range(st.shape[0]):
        length = st[i, k.S_LOG_LEN]
        if length < 0 or length >= width:
            return i, _LOG_POS, length
        if done[i]:
            if length != 0:
                return i, _DONE_LOG_POS, length
            fin = st[i, k.S_FIN_LOG_LEN]
            if fin < 1 or fin > width:
                return i, _FIN_LEN, fin
            code, j = replay_row(cfg, rng_start[i, 1], log[i], fin, rst, rcm, rrng)
            if code != _OK:
                return i, code + 100, j
            if rst[0, k.S_PHASE] != OVER:
                return i, _NOT_OVER + 100, fin
            if rst[0, k.S_HAND_NO] != st[i, k.S_FIN_HANDS]:
                return i, _FIN_HANDS, rst[0, k.S_HAND_NO]
            if rst[0, k.S_WINNERS] != st[i, k.S_FIN_WINNERS]:
                return i, _FIN_WINNERS, rst[0, k.S_WINNERS]
            if rst[0, k.S_TRUNCATED] != st[i, k.S_FIN_TRUNCATED]:
                return i, _FIN_TRUNCATED, rst[0, k.S_TRUNCATED]
            if rrng[0] != rng_start[i, 0]:
                return i, _NEXT_START, 0
        else:
            for c in (k.S_FIN_LOG_LEN, k.S_FIN_HANDS):
                if st[i, c] < 0 or (c == k.S_FIN_LOG_LEN and st[i, c] > width):
                    return i, _FIN_RANGE, c
            if st[i, k.S_FIN_WINNERS] < 0 or st[i, k.S_FIN_WINNERS] >= 1 << cfg[k.K_PLAYERS]:
                return i, _FIN_RANGE, k.S_FIN_WINNERS
            if st[i, k.S_FIN_TRUNCATED] < 0 or st[i, k.S_FIN_TRUNCATED] > 1:
                return i, _FIN_RANGE, k.S_FIN_TRUNCATED
        code, j = replay_row(cfg, rng_start[i, 0], log[i], length, rst, rcm, rrng)
        if code != _OK:
            return i, code, j
        if rst[0, k.S_PHASE] == OVER:
            return i, _ENDED, length
        for c in range(k.S_FIN_LOG_LEN):
            if rst[0, c] != st[i, c]:
                return i, _ST, c
        for c in range(k.NUM_C):
            if rcm[0, c] != cm[i, c]:
                return i, _CM, c
        if rrng[0] != rng[i]:
            return i, _RNG, 0
    return -1, _OK, 0


def _column_names(prefix: str, count: int) -> list[str]:
    """The name of each column of a state part: ``S_TRICK+1`` for the second column of ``S_TRICK``."""
    bases = [(getattr(k, name), name) for name in dir(k) if name.startswith(prefix) and name[2:].isupper()]
    bases = sorted((v, name) for v, name in bases if isinstance(v, int))
    names = []
    for c in range(count):
        value, name = max((v, n) for v, n in bases if v <= c)
        names.append(name if value == c else f"{name}+{c - value}")
    return names


_ST_NAMES = _column_names("S_", k.NUM_S)
_CM_NAMES = _column_names("C_", k.NUM_C)


def _array(state: Mapping, name: str, shape: tuple[int | None, ...], kinds: str, what: str, n: int) -> np.ndarray:
    """``state[name]`` as an array of one of the dtype kinds ``kinds`` and the shape (None: any length)."""
    try:
        a = np.asarray(state[name])
    except (ValueError, TypeError):
        raise VectorStateError(f"set_state: {name} is not an array; it must be {what}") from None
    if a.dtype.kind not in kinds:
        raise VectorStateError(f"set_state: {name} has dtype {a.dtype}; it must be {what}")
    if a.ndim != len(shape) or any(want is not None and got != want for got, want in zip(a.shape, shape, strict=True)):
        want = (
            "(" + ", ".join("length" if s is None else str(s) for s in shape) + ("," if len(shape) == 1 else "") + ")"
        )
        raise VectorStateError(f"set_state: {name} has shape {a.shape}; this batch of {n} games needs {want} ({what})")
    return a


def _within(a: np.ndarray, name: str, low: int, high: int, what: str) -> None:
    if a.size and a.dtype.kind in "iu" and (int(a.min()) < low or int(a.max()) > high):
        raise VectorStateError(
            f"set_state: {name} holds values {int(a.min())}..{int(a.max())}; {what} are {low}..{high}"
        )


def checked_state(state: Any, num_games: int, cfg: np.ndarray, describe: str) -> dict[str, Any]:
    """The arrays of ``state`` (what ``VectorGame.get_state`` returned) as the batch holds them, checked in full
    (see the module docstring); raises :class:`VectorStateError`. ``describe`` names the batch's rules for messages."""
    if not isinstance(state, Mapping):
        raise VectorStateError(
            f"set_state: the state must be a dict of arrays (what get_state() returned), got {state!r:.60}"
        )
    missing = [name for name in STATE_KEYS if name not in state]
    if missing:
        raise VectorStateError(f"set_state: the state lacks {missing}; give what get_state() returned")
    unknown = sorted(str(name) for name in state if name not in STATE_KEYS)
    if unknown:
        raise VectorStateError(f"set_state: unknown key(s) {unknown}; a state has {list(STATE_KEYS)}")
    n = num_games
    rules = _array(state, "rules", (k.NUM_K,), "iu", f"the rule vector of {k.NUM_K} integers", n)
    if not np.array_equal(rules, cfg):
        raise VectorStateError(
            f"set_state: the state was saved under other rules, episode or max_hands than this batch's ({describe})"
        )
    whole, bits = "iu", "iu"
    st = _array(state, "st", (n, k.NUM_S), whole, "int32 game columns, one row per game", n)
    _within(st, "st", -(2**31), 2**31 - 1, "int32 columns")
    cm = _array(state, "cm", (n, k.NUM_C), bits, "uint64 card sets, one row per game", n)
    rng = _array(state, "rng", (n,), bits, "the uint64 generator state of each slot", n)
    rng_start = _array(state, "rng_start", (n, 2), bits, "uint64 generator starts of each slot", n)
    log = _array(state, "log", (n, None), whole, "int8 action ids, one row per game", n)
    if log.shape[1] < 1:
        raise VectorStateError("set_state: log has no columns; it must hold at least one action per game")
    _within(log, "log", -128, 127, "int8 entries")
    done = _array(state, "done", (n,), "biu", "one bool per game", n)
    _within(done, "done", 0, 1, "booleans")
    seed = _array(state, "seed", (None,), bits, "the uint64 words of the seed (sm_env.compiled.seeding)", n)
    try:
        seed_value = seed_from_words(seed.astype(np.uint64))
    except ValueError as e:
        raise VectorStateError(f"set_state: {e}") from None
    arrays = {
        "st": st.astype(np.int32),
        "cm": cm.astype(np.uint64),
        "rng": rng.astype(np.uint64),
        "rng_start": rng_start.astype(np.uint64),
        "log": np.ascontiguousarray(log.astype(np.int8)),
        "done": done.astype(np.bool_),
        "seed": seed_value,
    }
    a = arrays
    slot, code, detail = check_rows(a["st"], a["cm"], a["rng"], a["rng_start"], cfg, a["log"], a["done"])
    if slot >= 0:
        raise VectorStateError("set_state: " + _message(a, cfg, int(slot), int(code), int(detail)))
    return arrays


def _message(a: dict[str, Any], cfg: np.ndarray, i: int, code: int, detail: int) -> str:
    """The words for a row check_rows refused."""
    st, width = a["st"], a["log"].shape[1]
    finished = code >= 100
    if finished:
        code -= 100
    which = f"the game that just ended in slot {i} (done[{i}])" if finished else f"slot {i}'s game"
    length = f"st[{i}, S_FIN_LOG_LEN]" if finished else f"st[{i}, S_LOG_LEN]"
    if code == _LOG_POS:
        return (
            f"st[{i}, S_LOG_LEN] (the log position) is {detail}; it must be 0..{width - 1} (log holds {width} actions)"
        )
    if code == _DONE_LOG_POS:
        return f"done[{i}] is set, so a new game has just begun in slot {i}: st[{i}, S_LOG_LEN] must be 0, not {detail}"
    if code == _FIN_LEN:
        return f"st[{i}, S_FIN_LOG_LEN] (the ended game's length, done[{i}]) is {detail}; it must be 1..{width}"
    if code == _FIN_RANGE:
        allowed = {
            k.S_FIN_LOG_LEN: f"0..{width}",
            k.S_FIN_HANDS: ">= 0",
            k.S_FIN_WINNERS: f"0..{(1 << int(cfg[k.K_PLAYERS])) - 1}",
            k.S_FIN_TRUNCATED: "0 or 1",
        }
        return f"st[{i}, {_ST_NAMES[detail]}] is {st[i, detail]}; it must be {allowed[detail]}"
    if code == _OVER_EARLY:
        return f"{which} is over after log[{i}, :{detail}], but {length} says it goes on"
    if code == _ILLEGAL:
        action = int(a["log"][i, detail])
        return f"log[{i}, {detail}] = {action} is not a legal action in {which} (replayed from its start)"
    if code == _NOT_OVER:
        return f"{which} is not over after log[{i}, :{detail}] ({length}), but done[{i}] says it ended"
    if code == _ENDED:
        return f"{which} is over after log[{i}, :{detail}]; a slot always holds a game in play"
    if code in (_FIN_HANDS, _FIN_WINNERS, _FIN_TRUNCATED, _NEXT_START):
        column = {_FIN_HANDS: "S_FIN_HANDS", _FIN_WINNERS: "S_FIN_WINNERS", _FIN_TRUNCATED: "S_FIN_TRUNCATED"}.get(code)
        if column is None:
            return f"rng_start[{i}, 0] is not where the stream of the game that ended in slot {i} stopped"
        return (
            f"st[{i}, {column}] is {st[i, getattr(k, column)]}, but the game that ended in slot {i} replays to {detail}"
        )
    rst = np.zeros((1, k.NUM_S), dtype=np.int32)
    rcm = np.zeros((1, k.NUM_C), dtype=np.uint64)
    rrng = np.zeros(1, dtype=np.uint64)
    replay_row(cfg, a["rng_start"][i, 0], a["log"][i], int(st[i, k.S_LOG_LEN]), rst, rcm, rrng)
    if code == _ST:
        field, got, want = f"st[{i}, {_ST_NAMES[detail]}]", st[i, detail], rst[0, detail]
    elif code == _CM:
        field, got, want = f"cm[{i}, {_CM_NAMES[detail]}]", f"{int(a['cm'][i, detail]):#x}", f"{int(rcm[0, detail]):#x}"
    else:
        field, got, want = f"rng[{i}]", int(a["rng"][i]), int(rrng[0])
    return f"{field} is {got}, but {which}, replayed from rng_start[{i}, 0] through its log, has {want}"


key_cache_to_sources(globals())  # the cache of this file's kernels, keyed to the code they are compiled from
