"""Bounded JSON: the one reader of the JSON files and entries the project reads back (settings, tables,
metadata), so that a broken or hostile one is one line, never a traceback or a large allocation.

    data = read_json(path, "a tournament's settings file", max_bytes=1 << 20)
    meta = parse_json(archive.read(name), f"{path}: sm_policy.json")

The rules, each refused in one :class:`JsonError` that names the source and what is allowed:

- at most ``max_bytes`` bytes are read (a file that holds more, ``/dev/zero`` say, is refused after reading
  ``max_bytes + 1``), of UTF-8 text; a folder, a missing or unreadable file;
- nesting of lists and objects at most ``max_depth`` deep (:data:`MAX_DEPTH`; the project's files need
  fewer than 10 levels), checked without recursion;
- whole numbers of at most :data:`MAX_DIGITS` digits; no ``NaN`` or ``Infinity``, and no number too large
  for a float (``1e999``): every number read is finite.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Callable
from typing import Any

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


def parse_json(data: bytes | str, source: str, max_depth: int = MAX_DEPTH, max_digits: int = MAX_DIGITS) -> Any:
    """The JSON value of ``data`` (bytes: UTF-8); a :class:`JsonError` ``"<source>: <what is wrong>"`` for
    anything the module docstring refuses (``data``'s size is the caller's to bound)."""
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
    path: str | os.PathLike[str], what: str = "a JSON file", max_bytes: int = MAX_JSON_BYTES, max_depth: int = MAX_DEPTH
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
    return parse_json(data, target, max_depth)
