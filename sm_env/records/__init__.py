"""Game records: the JSON form of a game (:mod:`sm_env.records.format`: the
format, writing, record files), its replay (:mod:`sm_env.records.replay`:
reading, validation) and its actions in order (:mod:`sm_env.records.actions`:
stepping through a record decision by decision). Every public name is
importable from here::

    from sm_env.records import game_record, save_record, load_record, replay, ReplayError
"""

from __future__ import annotations

from .actions import MAX_STEPS, RecordActions, record_actions
from .format import (
    EXTRA_KEYS,
    FORMAT,
    HAND_KEYS,
    MAX_RECORD_BYTES,
    RECORD_KEYS,
    RecordError,
    ReplayError,
    game_record,
    hand_keys,
    hand_record,
    load_record,
    save_record,
)
from .replay import MAX_DEPTH, replay

__all__ = [
    "EXTRA_KEYS",
    "FORMAT",
    "HAND_KEYS",
    "MAX_DEPTH",
    "MAX_RECORD_BYTES",
    "MAX_STEPS",
    "RECORD_KEYS",
    "RecordActions",
    "RecordError",
    "ReplayError",
    "game_record",
    "hand_keys",
    "hand_record",
    "load_record",
    "record_actions",
    "replay",
    "save_record",
]
