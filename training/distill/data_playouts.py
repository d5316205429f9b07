"""Play-out data files: what ``label`` writes and the fit reads, read within bounds.

A data file (``np.savez``, uncompressed) holds one row per decision: ``obs`` f16 [789] (1016 with four players),
``mask`` int8 [56], ``values`` f32 [56] (the deciding seat's hand balance after each legal move, played out in
the real deal; NaN for illegal moves), ``results`` f32 [56] (the seat's result reward where the play-out's hand
ends the game: +1 won, -1 shared by the losers; 0 where the game goes on; absent in files labelled before it was
recorded), ``phase`` (0 exchange, 1 trump, 2 discard, 3 play), ``policy_move``; and ``rules``, the JSON of the
rule set's options (files without it: the standard rules). :func:`load_rows` reads files end to end and holds
out the last tenth of each.
"""

from __future__ import annotations

import json
import math
import os
import zipfile
import zlib

import numpy as np

from sm_env.core.rules import RulesError, RuleSet
from sm_env.files.json_files import JsonError, parse_json
from sm_env.observation import observation_size
from training.common.labels import NOT_FINITE, unfinite_legal
from training.distill.config_playouts import STANDARD, TYPES, labelled_rules
from training.distill.npy import read_header

RULES_KEY = "rules"  # a data file's rule set: the JSON of RuleSet.options() (absent in the first files: standard)

DATA_KINDS = {"obs": "f", "mask": "biu", "values": "f", "results": "f", "phase": "iu", "policy_move": "iu"}
"""A data file's arrays and the numpy kinds of their dtypes (float, or bool / integer)."""
MAX_RULES_CHARS = 1 << 16  # a data file's rules entry: the JSON of a rule set's options (about 1 kB)


class PlayoutsError(ValueError):
    """A data file, a policy or a setting the play-out pipeline cannot use: one line saying what is wrong."""


def _data_error(path: str, problem: str) -> PlayoutsError:
    return PlayoutsError(f"{path}: {problem}")


class DataFile:
    """A play-out data file (module docstring) opened within bounds: a regular zip file of uncompressed
    ``.npy`` entries (``np.savez``), each declaring the dtype kind of :data:`DATA_KINDS` and the file's rows,
    ``obs`` of the rule set's observation size and the moves' arrays of its action count, and declaring no
    more data than the entry holds (checked from the headers before anything is read: memory is bounded by
    the file's real size); ``rules`` read by the bounded JSON reader. Anything else is one line (PlayoutsError)."""

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
        if not required <= set(names) <= set(DATA_KINDS) | {RULES_KEY}:
            raise _data_error(
                path, f"its entries are {sorted(names)[:10]}; a data file holds {sorted(required)}, results, rules"
            )
        for info in names.values():
            if info.compress_type != zipfile.ZIP_STORED:
                raise _data_error(path, f"{info.filename} is compressed; label writes np.savez (uncompressed) files")
        self.ruleset = self._read_rules() if RULES_KEY in names else STANDARD
        obs, actions = observation_size(self.ruleset), self.ruleset.num_actions
        self.headers: dict[str, tuple[tuple[int, ...], np.dtype]] = {}
        for name in sorted(set(names) - {RULES_KEY}):
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

    def _read_rules(self) -> RuleSet:
        with self.archive.open(RULES_KEY + ".npy") as stream:
            shape, dtype = read_header(stream, f"{self.path}: {RULES_KEY}", PlayoutsError)
            if dtype.kind != "U" or shape != () or dtype.itemsize > 4 * MAX_RULES_CHARS:
                raise _data_error(self.path, f"rules: holds {dtype} {list(shape)}; a data file holds one text there")
            text = stream.read(dtype.itemsize + 1)
        if len(text) != dtype.itemsize:
            raise _data_error(self.path, f"rules: the data is not the {dtype.itemsize} bytes its header declares")
        try:
            return labelled_rules(parse_json(str(np.frombuffer(text, dtype=dtype)[0]), f"{self.path}: rules"))
        except (JsonError, RulesError, TypeError) as err:
            raise _data_error(self.path, f"rules: {err}") from None

    def read(self, name: str, out: np.ndarray) -> None:
        """Read the array ``name`` into ``out`` (of the shape and dtype the scan checked)."""
        with self.archive.open(name + ".npy") as stream:
            read_header(stream, f"{self.path}: {name}", PlayoutsError)
            got = stream.readinto(memoryview(out).cast("B")) if out.nbytes else 0
        if got != out.nbytes:
            raise _data_error(self.path, f"{name}: the data is not the {out.nbytes} bytes its header declares")

    def close(self) -> None:
        self.archive.close()


def _stacked(files: list[DataFile], name: str) -> np.ndarray:
    """The array ``name`` of every file, end to end, each file's read straight into its place: the memory it
    takes is the result alone (the files' dtypes of ``name`` agree)."""
    shape, dtype = files[0].headers[name]
    out = np.empty((sum(f.rows for f in files), *shape[1:]), dtype=dtype)
    start = 0
    for f in files:
        f.read(name, out[start : start + f.rows])
        start += f.rows
    return out


def _rows_problem(rows: dict[str, np.ndarray], actions: int) -> tuple[int, str] | None:
    """The first row whose values the fit cannot use and why, or None: a mask of 0 and 1 with a legal move,
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


def load_rows(data: list[str], results: bool = True) -> tuple[dict[str, np.ndarray], np.ndarray, np.ndarray, RuleSet]:
    """The labelled rows of ``data`` (one dict of arrays; the result rewards only if ``results``), the training
    rows, the held-out rows (the last tenth of each file: a file's decisions come hand after hand, so few hands
    straddle the cut) and the rule set the files were labelled on (one for all; refused in one line if they
    differ)."""
    missing = [path for path in data if not os.path.lexists(path)]
    if missing:
        raise PlayoutsError(f"no data file {', '.join(map(repr, missing))} (label makes them)")
    files: list[DataFile] = []
    try:
        for path in data:
            files.append(DataFile(path))
        found = {f.path: f.ruleset for f in files}
        if len({json.dumps(ruleset.options()) for ruleset in found.values()}) > 1:
            named = ", ".join(f"{path}: {ruleset.name}" for path, ruleset in found.items())
            raise PlayoutsError(f"the data files were labelled on different rule sets ({named})")
        names = ["obs", "mask", "values", "phase", "policy_move"]
        if results and all("results" in f.headers for f in files):
            names.append("results")  # the files labelled since the result rewards were recorded
        for name in names:
            dtypes = sorted({str(f.headers[name][1]) for f in files})
            if len(dtypes) > 1:
                raise PlayoutsError(f"the data files hold {name} of different dtypes {dtypes}")
        rows = {name: _stacked(files, name) for name in names}
    finally:
        for f in files:
            f.close()
    sizes = [f.rows for f in files]
    starts = np.cumsum([0, *sizes])
    problem = _rows_problem(rows, files[0].ruleset.num_actions)
    if problem is not None:
        row, why = problem
        k = int(np.searchsorted(starts, row, side="right")) - 1
        raise _data_error(data[k], f"row {row - starts[k]}: {why}; the file is damaged")
    held = np.concatenate([np.arange(starts[i] + int(0.9 * sizes[i]), starts[i + 1]) for i in range(len(files))])
    return rows, np.setdiff1d(np.arange(len(rows["obs"])), held), held, files[0].ruleset


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
