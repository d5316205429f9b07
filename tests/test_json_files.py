"""sm_env.files.json_files: the bounded JSON reader of the files the project reads back (settings, tables, metadata)."""

from __future__ import annotations

import json
import math
import os

import pytest

from sm_env.files import json_files
from sm_env.files.json_files import (
    MAX_DEPTH,
    MAX_DIGITS,
    JsonError,
    count_values,
    dump_json,
    nan_to_null,
    parse_json,
    read_json,
    write_json,
)


def test_plain_json_reads_as_json():
    assert parse_json(b'{"a": [1, 2.5, "x", null, true]}', "f") == {"a": [1, 2.5, "x", None, True]}
    nested = "[" * MAX_DEPTH + "]" * MAX_DEPTH
    assert parse_json(nested, "f") is not None  # exactly MAX_DEPTH levels: read
    assert parse_json("9" * MAX_DIGITS, "f") == int("9" * MAX_DIGITS)


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("[" * (MAX_DEPTH + 1) + "]" * (MAX_DEPTH + 1), f"nested more than {MAX_DEPTH} levels deep"),
        ("[" * 100_000 + "]" * 100_000, f"nested more than {MAX_DEPTH} levels deep"),
        ('{"a": ' * 40 + "1" + "}" * 40, f"nested more than {MAX_DEPTH} levels deep"),
        ("9" * (MAX_DIGITS + 1), f"a whole number of {MAX_DIGITS + 1} digits; at most {MAX_DIGITS}"),
        ("-" + "9" * 5000, "a whole number of 5000 digits"),
        ("[1, NaN]", "NaN is not a JSON value"),
        ('{"x": -Infinity}', "-Infinity is not a JSON value"),
        ("1e999", "too large for a float"),
        ("{oops", r"not valid JSON \(line 1, column 2"),
        (b"\xff\xfe{}", "not UTF-8 text"),
    ],
)
def test_what_is_refused_is_one_line_naming_the_source(text, words):
    with pytest.raises(JsonError, match=words) as err:
        parse_json(text, "where.json")
    assert str(err.value).startswith("where.json: ") and "\n" not in str(err.value)


def test_a_file_is_read_no_further_than_its_limit(tmp_path):
    path = tmp_path / "a.json"
    path.write_text('{"a": 1}')
    assert read_json(path, "a settings file") == {"a": 1}
    with pytest.raises(JsonError, match=r"a.json: larger than 4 bytes, the most a settings file may hold"):
        read_json(path, "a settings file", max_bytes=4)
    with pytest.raises(JsonError, match="larger than 1024 bytes"):
        read_json("/dev/zero", max_bytes=1024)
    with pytest.raises(JsonError, match=rf"{tmp_path} is a folder, not a settings file"):
        read_json(tmp_path, "a settings file")
    with pytest.raises(JsonError, match=r"missing.json: no such file \(a settings file\)"):
        read_json(tmp_path / "missing.json", "a settings file")


def test_a_count_of_values_past_the_limit_is_refused_before_anything_is_parsed(monkeypatch):
    text = "[" + "0," * 999 + "0]"  # 1,001 values: the list and its 1,000 numbers
    assert count_values(text) == count_values(text.encode()) == 1001  # commas and opening brackets, plus one
    assert len(parse_json(text, "f", max_values=1001)) == 1000
    monkeypatch.setattr(json_files.json, "loads", lambda *a, **k: pytest.fail("parsed past the limit"))
    words = r"^where.json: too many values \(1000 commas and opening brackets\); at most 1000 are read$"
    with pytest.raises(JsonError, match=words):
        parse_json(text.encode(), "where.json", max_values=1000)


@pytest.mark.parametrize(
    "text", ['{"a": [1, 2, {"b": null}], "c": "x"}', '"a, [b, {c"', "[[[]], {}, 1.5, true]", "7", '{"k": []}']
)
def test_the_count_of_values_is_never_below_the_values_read(text):
    def values(value):
        inner = value.values() if isinstance(value, dict) else value if isinstance(value, list) else ()
        return 1 + sum(values(v) for v in inner)

    assert count_values(text) >= values(parse_json(text, "f"))


def test_the_writer_writes_what_the_reader_reads_back(tmp_path):
    path = tmp_path / "a.json"
    value = {"a": [1, 2.5, None, "x"], "b": {"c": -3}}
    write_json(path, value)
    assert read_json(path) == value and path.read_text().endswith("}\n")
    write_json(path, value, indent=None, sort_keys=True)
    assert path.read_text() == json.dumps(value, sort_keys=True) + "\n"


@pytest.mark.parametrize(
    ("value", "where"),
    [
        ({"ranking": [{"balance": {"mean": math.nan}}]}, r"ranking\[0\]\.balance\.mean is nan"),
        ([1.0, [2.0, math.inf]], r"\[1\]\[1\] is inf"),
        (-math.inf, "the value is -inf"),
    ],
)
def test_writing_a_number_that_is_not_finite_is_one_line_naming_where_and_writes_nothing(tmp_path, value, where):
    path = tmp_path / "board.json"
    path.write_text("old")
    with pytest.raises(JsonError, match=rf"^{path}: not written: {where}, and JSON holds finite numbers only$"):
        write_json(path, value)
    assert path.read_text() == "old" and os.listdir(tmp_path) == ["board.json"]
    with pytest.raises(JsonError, match=where):
        dump_json(value, "an entry")


def test_a_log_whose_nan_means_no_figure_writes_it_as_null(tmp_path):
    row = {"episode_return": math.nan, "loss": [0.5, math.inf, (-math.inf, 2)], "step": 3, "name": "x"}
    assert nan_to_null(row) == {"episode_return": None, "loss": [0.5, None, [None, 2]], "step": 3, "name": "x"}
    write_json(tmp_path / "m.json", nan_to_null(row))
    assert read_json(tmp_path / "m.json")["episode_return"] is None
