"""sm_env.files.json_files: the bounded JSON reader of the files the project reads back (settings, tables, metadata)."""

from __future__ import annotations

import pytest

from sm_env.files.json_files import MAX_DEPTH, MAX_DIGITS, JsonError, parse_json, read_json


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
