"""Bounded JSON: the one reader of the JSON files and entries the project reads back (settings, tables,
metadata), so that a broken or hostile one is one line, never a traceback or a large allocation; and the one
writer, so that every file written is one the reader takes back.

    data = read_json(path, "a tournament's settings file", max_bytes=1 << 20)
    meta = parse_json(archive.read(name), f"{path}: sm_policy.json")
    write_json("runs/x/summary.json", summary)        # atomically; a JsonError for NaN or Infinity

The rules, each refused in one :class:`JsonError` that names the source and what is allowed:

- at most ``max_bytes`` bytes are read (a file that holds more, ``/dev/zero`` say, is refused after reading
  ``max_bytes + 1``), of UTF-8 text; a folder, a missing or unreadable file;
- nesting of lists and objects at most ``max_depth`` deep (:data:`MAX_DEPTH`; the project's files need
  fewer than 10 levels), checked without recursion;
- whole numbers of at most :data:`MAX_DIGITS` digits; no ``NaN`` or ``Infinity``, and no number too large
  for a float (``1e999``): every number read is finite;
- with ``max_values``, at most that many values, counted before anything is parsed as the commas and opening
  brackets of the text (an upper bound: those inside strings count too). Each one counted costs at most about
  100 bytes once parsed (measured: 85 for ``{"":0},``, 31 for ``[0],``), so the count bounds the memory,
  which the size alone does not: 249 MiB of ``[],`` parse to 7 GB.

The writer (:func:`write_json`, :func:`dump_json`) refuses a value that is not finite (``NaN``, ``Infinity``)
in one :class:`JsonError` naming the file and where the value lies (``ranking[0].balance.mean``): a figure
that cannot be computed is written as ``null``, by its maker (the statistics' estimates) or, for the logs and
reports of training whose NaN means "none this time" (no episode ended in a rollout), by :func:`nan_to_null`.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
from collections.abc import Callable, Iterator
from typing import Any

from sm_env.files.atomic import atomic_path

MAX_DEPTH = 32  # nested lists and objects (YAML configs too: training.common.yaml_config reads these)
MAX_DIGITS = 100  # digits of a whole number (seeds have at most 20)
MAX_JSON_BYTES = 1 << 20  # the default size limit of a file (the project's settings files are a few kB)


class JsonError(ValueError):
    """A JSON file or entry that is broken, too large, too deep or holds a non-finite number (one line)."""


def _whole_reader(max_digits: int) -> Callable[[str], int]:
    def whole(text: str) -> int:
        digits = len(text.lstrip("-"))
        if digits > max_digits:
            raise JsonError(f"a whole number of {digits} digits; at most {max_digits} are read")
        return int(text)

    return whole


def _finite(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise JsonError(f"the number {text[:20]} is too large for a float")
    return value


def _constant(name: str) -> Any:
    raise JsonError(f"{name} is not a JSON value (every number must be finite)")


def _check_depth(value: Any, max_depth: int) -> None:
    """JsonError if ``value`` nests lists and objects deeper than ``max_depth``: walked a level at a time, the
    lists and objects of each level in one list, no recursion (a million empty objects take 0.1 s)."""
    level = [value]
    for _ in range(max_depth):
        children = (c for item in level for c in (item.values() if type(item) is dict else item))
        level = [c for c in children if type(c) in (dict, list)]
        if not level:
            return
    raise JsonError(f"lists and objects nested more than {max_depth} levels deep")


def count_values(data: bytes | str) -> int:
    """An upper bound of the values in the JSON text ``data``: its commas and opening brackets, plus one (every
    value but the first follows a comma or opens a list or an object; those inside strings count too)."""
    if isinstance(data, bytes):
        return 1 + data.count(b",") + data.count(b"[") + data.count(b"{")
    return 1 + data.count(",") + data.count("[") + data.count("{")


def parse_json(
    data: bytes | str,
    source: str,
    max_depth: int = MAX_DEPTH,
    max_digits: int = MAX_DIGITS,
    max_values: int | None = None,
) -> Any:
    """The JSON value of ``data`` (bytes: UTF-8); a :class:`JsonError` ``"<source>: <what is wrong>"`` for
    anything the module docstring refuses (``data``'s size is the caller's to bound; ``max_values``, if given,
    is checked before anything is parsed)."""
    if max_values is not None:
        count = count_values(data)
        if count > max_values:
            raise JsonError(
                f"{source}: too many values ({count - 1} commas and opening brackets); at most {max_values} are read"
            )
    try:
        text = data.decode("utf-8") if isinstance(data, bytes) else data
        value = json.loads(text, parse_int=_whole_reader(max_digits), parse_float=_finite, parse_constant=_constant)
    except UnicodeDecodeError as err:
        raise JsonError(f"{source}: not UTF-8 text (byte {err.start}); expected JSON") from None
    except json.JSONDecodeError as err:
        raise JsonError(f"{source}: not valid JSON (line {err.lineno}, column {err.colno}: {err.msg})") from None
    except RecursionError:
        raise JsonError(f"{source}: lists and objects nested more than {max_depth} levels deep") from None
    except JsonError as err:
        raise JsonError(f"{source}: {err}") from None
    except ValueError as err:  # an integer past Python's own conversion limit
        raise JsonError(f"{source}: not valid JSON ({str(err).split(':')[0]})") from None
    if isinstance(value, (dict, list)):
        try:
            _check_depth(value, max_depth)
        except JsonError as err:
            raise JsonError(f"{source}: {err}") from None
    return value


def read_json(
    path: str | os.PathLike[str],
    what: str = "a JSON file",
    max_bytes: int = MAX_JSON_BYTES,
    max_depth: int = MAX_DEPTH,
    max_values: int | None = None,
) -> Any:
    """The JSON value of the file ``path`` (``what``: the kind of file, for the messages), read by
    :func:`parse_json` after at most ``max_bytes + 1`` bytes; a :class:`JsonError` naming the path otherwise."""
    target = os.fspath(path)
    try:
        with open(target, "rb") as handle:
            data = handle.read(max_bytes + 1)
    except FileNotFoundError:
        raise JsonError(f"{target}: no such file ({what})") from None
    except IsADirectoryError:
        raise JsonError(f"{target} is a folder, not {what}") from None
    except OSError as err:
        raise JsonError(f"{target}: cannot be read ({err.strerror or type(err).__name__})") from None
    if len(data) > max_bytes:
        raise JsonError(f"{target}: larger than {max_bytes} bytes, the most {what} may hold")
    return parse_json(data, target, max_depth, max_values=max_values)


def _non_finite(value: Any, target: str) -> JsonError | None:
    """The error naming ``target`` and where the first float of ``value`` that is not finite lies
    (``a.b[2]``), or None when there is none; walked without recursion."""
    stack: list[tuple[str, Any]] = [("the value", value)]
    while stack:
        where, item = stack.pop()
        if isinstance(item, float) and not math.isfinite(item):
            return JsonError(f"{target}: not written: {where} is {item}, and JSON holds finite numbers only")
        top = "" if where == "the value" else where
        if isinstance(item, dict):
            stack.extend((f"{top}.{k}" if top else str(k), v) for k, v in reversed(list(item.items())))
        elif isinstance(item, (list, tuple)):
            stack.extend((f"{top}[{i}]", v) for i, v in reversed(list(enumerate(item))))
    return None


def nan_to_null(value: Any) -> Any:
    """``value`` with every float that is not finite (NaN, infinite) replaced by None, JSON's null, in its
    lists, tuples (made lists) and dicts: for a log or report whose NaN means no figure this time."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: nan_to_null(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [nan_to_null(v) for v in value]
    return value


@contextlib.contextmanager
def _finite_only(value: Any, target: str) -> Iterator[None]:
    """Turn the ValueError of ``json.dump(s)(value, allow_nan=False)`` into :func:`_non_finite`'s JsonError."""
    try:
        yield
    except ValueError:
        error = _non_finite(value, target)
        if error is None:
            raise
        raise error from None


def dump_json(value: Any, target: str, indent: int | None = None, sort_keys: bool = False) -> str:
    """``value`` as JSON text (``target``: where it goes, for the message); a :class:`JsonError` naming ``target``
    and where a number that is not finite lies (JSON has no ``NaN`` or ``Infinity``: the reader refuses them)."""
    with _finite_only(value, target):
        return json.dumps(value, indent=indent, sort_keys=sort_keys, allow_nan=False)


def write_json(path: str | os.PathLike[str], value: Any, indent: int | None = 1, sort_keys: bool = False) -> None:
    """Write ``value`` as JSON (and a newline) to ``path``, atomically (:mod:`sm_env.files.atomic`: on any failure
    the file is left as it was); a :class:`JsonError` as :func:`dump_json`'s for a number that is not finite."""
    target = os.fspath(path)
    with _finite_only(value, target), atomic_path(target) as tmp, open(tmp, "w", encoding="utf-8") as handle:
        json.dump(value, handle, indent=indent, sort_keys=sort_keys, allow_nan=False)
        handle.write("\n")
