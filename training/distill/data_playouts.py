"""Play-out label files: the rows the Q-fit reads, and the migration of the files of the old format.

A play-out label file is a label shard (:mod:`training.distill.data`: one writer, ``write_labels``, one reader,
``read_shard`` / ``read_labels``) with the play-outs' entries: ``values`` f32 (each legal move's balance played out
in the real deal), ``results``, ``phase``, ``target`` the policy's move and ``rules``. :func:`load_rows` reads files
end to end into the rows the fit takes (``obs`` f16 [O], ``mask`` int8 [A], ``values`` f32, ``results`` f32,
``phase``, ``policy_move``: the arrays the files of the old format held, value for value) and holds out the last
tenth of each. :func:`playout_shard` turns those rows into a file's entries.

Files of the old format (``np.savez`` of those rows, uncompressed) are converted once, in place, by
:func:`convert_old_labels` (``improve --resume`` converts a run's): read within bounds by :class:`_OldFile`, the
one place that reads them.
"""

from __future__ import annotations

import json
import math
import os
import zipfile
import zlib

import numpy as np

from agents.players.ppo_agent import PolicyShape
from sm_env.core.rules import RuleSet
from sm_env.observation import binary_size, observation_size, observed_roles
from training.common.labels import NOT_FINITE, unfinite_legal
from training.distill.config_playouts import STANDARD, TYPES
from training.distill.data import (
    RULES_ENTRY,
    SHAPE_ENTRY,
    ShardError,
    read_labels,
    read_rules,
    shard_rows,
    unpack_legal,
    unpack_observations,
    write_labels,
)
from training.distill.npy import read_header

DATA_KINDS = {"obs": "f", "mask": "biu", "values": "f", "results": "f", "phase": "iu", "policy_move": "iu"}
"""An old-format file's arrays and the numpy kinds of their dtypes (float, or bool / integer)."""
UNPACK_ROWS = 1 << 16  # observations unpacked at a time (float32 [rows, O] beside the float16 result)


class PlayoutsError(ValueError):
    """A data file, a policy or a setting the play-out pipeline cannot use: one line saying what is wrong."""


def _data_error(path: str, problem: str) -> PlayoutsError:
    return PlayoutsError(f"{path}: {problem}")


class _OldFile:
    """A play-out data file of the old format (module docstring) opened within bounds: a regular zip file of
    uncompressed ``.npy`` entries (``np.savez``), each declaring the dtype kind of :data:`DATA_KINDS` and the
    file's rows, ``obs`` of the rule set's observation size and the moves' arrays of its action count, and
    declaring no more data than the entry holds (checked from the headers before anything is read: memory is
    bounded by the file's real size); ``rules`` read by the bounded JSON reader. Anything else is one line
    (PlayoutsError)."""

    def __init__(self, path: str) -> None:
        self.path = path
        if not os.path.isfile(path):
            raise _data_error(path, "not a regular file; a data file is the .npz that label writes")
        try:
            self.archive = zipfile.ZipFile(path)
        except (zipfile.BadZipFile, OSError) as err:
            raise _data_error(path, f"not a readable data file ({err})") from None
        try:
            self._scan()
        except (zipfile.BadZipFile, zlib.error, EOFError, OSError) as err:
            self.archive.close()
            raise _data_error(path, f"not a readable data file ({err})") from None
        except PlayoutsError:
            self.archive.close()
            raise
        except ValueError as err:  # numpy's own header checks
            self.archive.close()
            raise _data_error(path, f"not a data file: {err}") from None

    def _scan(self) -> None:
        path = self.path
        names = {info.filename.removesuffix(".npy"): info for info in self.archive.infolist()}
        required = set(DATA_KINDS) - {"results"}
        if not required <= set(names) <= set(DATA_KINDS) | {RULES_ENTRY}:
            raise _data_error(
                path, f"its entries are {sorted(names)[:10]}; a data file holds {sorted(required)}, results, rules"
            )
        for info in names.values():
            if info.compress_type != zipfile.ZIP_STORED:
                raise _data_error(path, f"{info.filename} is compressed; label writes np.savez (uncompressed) files")
        self.ruleset = read_rules(self.archive, path, PlayoutsError) if RULES_ENTRY in names else STANDARD
        obs, actions = observation_size(self.ruleset), self.ruleset.num_actions
        self.headers: dict[str, tuple[tuple[int, ...], np.dtype]] = {}
        for name in sorted(set(names) - {RULES_ENTRY}):
            with self.archive.open(name + ".npy") as stream:
                shape, dtype = read_header(stream, f"{path}: {name}", PlayoutsError)
                left = names[name].file_size - stream.tell()
            row = {"obs": (obs,), "mask": (actions,), "values": (actions,), "results": (actions,)}.get(name, ())
            if dtype.kind not in DATA_KINDS[name] or dtype.itemsize > 8 or len(shape) != 1 + len(row):
                kind = "numbers" if DATA_KINDS[name] == "f" else "whole numbers"
                rank = "a row" if row else "one"
                raise _data_error(path, f"{name}: holds {dtype} {list(shape)}; a data file holds {kind}, {rank} a move")
            if shape[1:] != row:
                raise _data_error(
                    path, f"{name}: holds rows of {list(shape[1:])}; the rule set {self.ruleset.name!r} has {list(row)}"
                )
            if math.prod(shape) * dtype.itemsize != left:
                raise _data_error(
                    path, f"{name}: declares {math.prod(shape)} entries of {dtype}; the file holds {left} bytes of it"
                )
            self.headers[name] = (shape, dtype)
        rows = {shape[0] for shape, _ in self.headers.values()}
        if len(rows) != 1:
            counts = ", ".join(f"{name} {shape[0]}" for name, (shape, _) in self.headers.items())
            raise _data_error(path, f"its arrays hold different numbers of rows ({counts})")
        self.rows = rows.pop()

    def read(self, name: str, out: np.ndarray) -> None:
        """Read the array ``name`` into ``out`` (of the shape and dtype the scan checked)."""
        with self.archive.open(name + ".npy") as stream:
            read_header(stream, f"{self.path}: {name}", PlayoutsError)
            got = stream.readinto(memoryview(out).cast("B")) if out.nbytes else 0
        if got != out.nbytes:
            raise _data_error(self.path, f"{name}: the data is not the {out.nbytes} bytes its header declares")

    def close(self) -> None:
        self.archive.close()


def _rows_problem(rows: dict[str, np.ndarray], actions: int) -> tuple[int, str] | None:
    """The first row of an old-format file that is not converted and why, or None: a mask of 0 and 1 with a legal move,
    a decision type of :data:`TYPES`, the policy's move legal, the legal moves' values (and result rewards)
    finite."""
    mask = rows["mask"]
    legal = mask.astype(bool)
    checks = [
        (((mask != 0) & (mask != 1)).any(axis=1) | ~legal.any(axis=1), "its mask is not 0 and 1 with a legal move"),
        (~np.isin(rows["phase"], list(TYPES.values())), f"its phase is none of {sorted(TYPES.values())}"),
        ((rows["policy_move"] < 0) | (rows["policy_move"] >= actions), f"its policy_move is no action 0-{actions - 1}"),
    ]
    for name in ("values", "results"):
        if name in rows:
            checks.append((unfinite_legal(rows[name], legal), NOT_FINITE.format(what=name[:-1])))
    for bad, why in checks:
        if bad.any():
            return int(np.argmax(bad)), why
    move = rows["policy_move"].astype(np.int64)
    illegal = ~legal[np.arange(len(move)), move]
    if illegal.any():
        return int(np.argmax(illegal)), "its policy_move is not a legal move"
    return None


def playout_shard(rows: dict[str, np.ndarray], ruleset: RuleSet) -> dict[str, np.ndarray]:
    """A play-out label file's entries (:mod:`training.distill.data`) from its rows (:func:`load_rows`' layout, a
    file of the old format's arrays), losslessly: the observations' card planes must be 0 or 1 and their other
    entries (float16) are stored as float32; the rows without ``results`` (old files) get none."""
    shape = PolicyShape.of(ruleset)
    binary = binary_size(ruleset.num_players)
    obs = rows["obs"]
    if not np.isin(obs[:, :binary], (0, 1)).all():
        raise PlayoutsError(f"observations whose first {binary} entries are not 0 or 1 cannot be packed")
    legal = rows["mask"].astype(bool)
    target = rows["policy_move"].astype(np.int64)
    values = rows["values"].astype(np.float32)
    out = {
        SHAPE_ENTRY: np.array(shape, dtype=np.int64),
        "bits": np.packbits(obs[:, :binary].astype(np.uint8), axis=1, bitorder="little"),
        "scalars": obs[:, binary:].astype(np.float32),
        "legal": np.packbits(legal, axis=1, bitorder="little"),
        "values": values,
        "target": target.astype(np.int8),
        "searched": np.ones(len(target), dtype=np.bool_),
        "balance": np.rint(values[np.arange(len(target)), target]).astype(np.int8),
        "role": observed_roles(obs.astype(np.float32), ruleset.num_players).astype(np.int8),
        "phase": rows["phase"].astype(np.int8),
    }
    if "results" in rows:
        out["results"] = rows["results"].astype(np.float32)
    out[RULES_ENTRY] = np.array(json.dumps(ruleset.options()))
    return out


def _refused(path: str, err: ShardError) -> PlayoutsError:
    """The one line for a label file the reader refused (a file of the old format: how to convert it)."""
    if _old_format(path):
        return _data_error(path, "a label file of the old format: improve --resume converts a run's")
    return PlayoutsError(str(err))


def _read(path: str) -> tuple[dict[str, np.ndarray], RuleSet]:
    """A play-out label file's arrays and rule set (``read_labels``), anything wrong one line (PlayoutsError)."""
    try:
        arrays, ruleset = read_labels(path)
    except ShardError as err:
        raise _refused(path, err) from None
    if "phase" not in arrays:
        raise _data_error(path, "holds no phase: not a play-out label file")
    return arrays, ruleset


def _fill(rows: dict[str, np.ndarray], at: slice, arrays: dict[str, np.ndarray], actions: int) -> None:
    """A label file's rows put in place ``at`` of ``rows`` (the module docstring's layout), the observations
    unpacked to float16 a block at a time (exact: the card planes are 0 or 1, the other entries were float16)."""
    for i in range(0, at.stop - at.start, UNPACK_ROWS):
        part = slice(i, i + UNPACK_ROWS)
        rows["obs"][at][part] = unpack_observations(arrays["bits"][part], arrays["scalars"][part])
    rows["mask"][at] = unpack_legal(arrays["legal"], actions)
    rows["policy_move"][at] = arrays["target"]
    for name in ("values", "phase", "results"):
        if name in rows:
            rows[name][at] = arrays[name]


def load_rows(data: list[str], results: bool = True) -> tuple[dict[str, np.ndarray], np.ndarray, np.ndarray, RuleSet]:
    """The labelled rows of the label files ``data`` (one dict of arrays, the module docstring; the result rewards
    only if ``results`` and every file holds them), the training rows, the held-out rows (the last tenth of each
    file: a file's decisions come hand after hand, so few hands straddle the cut) and the rule set the files were
    labelled on (one for all; refused in one line if they differ). Each file is read into its place: the memory
    is the result's and one file's."""
    missing = [path for path in data if not os.path.lexists(path)]
    if missing:
        raise PlayoutsError(f"no data file {', '.join(map(repr, missing))} (label makes them)")
    sizes, rows, found = [], {}, {}
    for path in data:
        try:
            sizes.append(shard_rows(path))
        except ShardError as err:
            raise _refused(path, err) from None
    starts = np.cumsum([0, *sizes])
    for k, path in enumerate(data):
        arrays, found[path] = _read(path)
        if json.dumps(found[path].options()) != json.dumps(found[data[0]].options()):
            named = ", ".join(f"{path}: {ruleset.name}" for path, ruleset in found.items())
            raise PlayoutsError(f"the data files were labelled on different rule sets ({named})")
        if not rows:
            n, obs, actions = int(starts[-1]), observation_size(found[path]), found[path].num_actions
            rows = {"obs": np.empty((n, obs), np.float16), "mask": np.empty((n, actions), np.int8)}
            rows |= {"values": np.empty((n, actions), np.float32), "phase": np.empty(n, np.int64)}
            rows["policy_move"] = np.empty(n, np.int64)
            if results:
                rows["results"] = np.empty((n, actions), np.float32)
        if "results" not in arrays:
            rows.pop("results", None)  # a file labelled before the result rewards were recorded
        _fill(rows, slice(starts[k], starts[k + 1]), arrays, found[path].num_actions)
    held = np.concatenate([np.arange(starts[i] + int(0.9 * sizes[i]), starts[i + 1]) for i in range(len(data))])
    return rows, np.setdiff1d(np.arange(len(rows["obs"])), held), held, found[data[0]]


def _old_format(path: str) -> bool:
    """Whether ``path`` is a regular zip file with an ``obs`` entry: a label file of the old format."""
    if not os.path.isfile(path):
        return False
    try:
        with zipfile.ZipFile(path) as archive:
            return "obs.npy" in archive.namelist()
    except (zipfile.BadZipFile, OSError):
        return False


def convert_old_labels(path: str) -> bool:
    """Convert the label file ``path``, if it is of the old format (the module docstring), into a play-out label
    file in place, atomically, its rows the same; whether it was one. Its rows are checked as the old reader
    checked them; a damaged file is one line (PlayoutsError) and left as it is."""
    if not _old_format(path):
        return False
    old = _OldFile(path)
    try:
        names = [name for name in DATA_KINDS if name in old.headers]
        rows = {}
        for name in names:
            shape, dtype = old.headers[name]
            rows[name] = np.empty(shape, dtype=dtype)
            old.read(name, rows[name])
    finally:
        old.close()
    problem = _rows_problem(rows, old.ruleset.num_actions)
    if problem is not None:
        row, why = problem
        raise _data_error(path, f"row {row}: {why}; the file is damaged")
    try:
        arrays = playout_shard(rows, old.ruleset)
    except PlayoutsError as err:
        raise _data_error(path, str(err)) from None
    write_labels(path, arrays)
    return True


def move_values(rows: dict[str, np.ndarray], game_weight: float, data: list[str]) -> np.ndarray:
    """The value of each labelled move in tricks: its balance, plus ``game_weight`` times its result reward
    where the play-out's hand ended the game (refused in one line if the files of ``data`` lack the results)."""
    if not game_weight:
        return rows["values"]
    if "results" not in rows:
        raise PlayoutsError(
            f"a game weight of {game_weight} needs the result rewards, which some of {', '.join(data)} lack "
            "(files labelled before they were recorded): label them again, or fit with a game weight of 0"
        )
    return rows["values"] + np.float32(game_weight) * rows["results"]
