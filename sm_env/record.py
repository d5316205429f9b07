"""Game records: the JSON form of a game (:mod:`sm_env.record_format`: the
format, writing, record files) and its replay (:mod:`sm_env.record_replay`:
reading, validation). Every public name is importable from here::

    from sm_env.record import game_record, save_record, load_record, replay, ReplayError
"""

from __future__ import annotations

from .record_format import (
    EXTRA_KEYS,
    FORMAT,
    HAND_KEYS,
    RECORD_KEYS,
    RecordError,
    ReplayError,
    game_record,
    hand_keys,
    hand_record,
    load_record,
    save_record,
)
from .record_replay import MAX_DEPTH, replay

__all__ = [
    "EXTRA_KEYS",
    "FORMAT",
    "HAND_KEYS",
    "MAX_DEPTH",
    "RECORD_KEYS",
    "RecordError",
    "ReplayError",
    "game_record",
    "hand_keys",
    "hand_record",
    "load_record",
    "replay",
    "save_record",
]
