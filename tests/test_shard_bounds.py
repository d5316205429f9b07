"""training.distill.data.read_shard: a data shard is read within bounds, a hostile one is one clear error."""

from __future__ import annotations

import io
import json
import os
import zipfile

import numpy as np
import pytest

from sm_env.core.rules import PRESETS
from training.common.yaml_config import ConfigError, validate
from training.distill import data as distill_data
from training.distill.data import (
    FIELDS,
    MAX_CHUNK_HANDS,
    MAX_SHARD_ROWS,
    PLAYOUT_FIELDS,
    SHARD_LAYOUT,
    DataSettings,
    ShardError,
)


def rows(n: int, fields: tuple[str, ...] = FIELDS) -> dict[str, np.ndarray]:
    """A valid shard's arrays of ``n`` rows (arbitrary contents; each target a legal action)."""
    rng = np.random.default_rng(n)
    arrays = {
        name: (rng.integers(0, 2, (n, *shape)) if dtype.kind != "f" else rng.random((n, *shape))).astype(dtype)
        for name, (dtype, shape) in ((name, SHARD_LAYOUT[name]) for name in fields)
    }
    for i, target in enumerate(arrays["target"]):
        arrays["legal"][i, target // 8] |= 1 << (target % 8)
    return arrays


def npy(shape: tuple[int, ...], dtype, fortran: bool = False) -> bytes:
    """A ``.npy`` header declaring ``shape`` and ``dtype`` (the data follows it)."""
    buf = io.BytesIO()
    header = {"descr": np.lib.format.dtype_to_descr(np.dtype(dtype)), "fortran_order": fortran, "shape": shape}
    np.lib.format.write_array_header_1_0(buf, header)
    return buf.getvalue()


def write_shard(path, arrays: dict[str, np.ndarray], replace: dict[str, tuple[bytes, int]] | None = None) -> str:
    """A shard as ``np.savez_compressed`` writes it; ``replace``: entry -> (raw header, bytes of zeros after it)."""
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, array in arrays.items():
            with archive.open(name + ".npy", "w") as entry:
                if replace and name in replace:
                    header, zeros = replace[name]
                    entry.write(header)
                    chunk = bytes(1 << 20)
                    for start in range(0, zeros, len(chunk)):
                        entry.write(chunk[: zeros - start])
                else:
                    np.lib.format.write_array(entry, array, allow_pickle=False)
    return str(path)


def refused(path: str, match: str) -> None:
    with pytest.raises(ShardError, match=match) as err:
        distill_data.read_shard(path)
    assert str(err.value).startswith(f"{path}: ") and "\n" not in str(err.value)


def test_a_shard_as_generated_reads_back_unchanged(tmp_path):
    arrays = rows(5)
    path = str(tmp_path / "shard_00000.npz")
    with open(path, "wb") as handle:
        np.savez_compressed(handle, **arrays)  # as _make_shard writes it
    got = distill_data.read_shard(path)
    assert list(got) == list(FIELDS)
    for name in FIELDS:
        np.testing.assert_array_equal(got[name], arrays[name])
        assert got[name].dtype == arrays[name].dtype and got[name].flags.writeable
    np.testing.assert_array_equal(distill_data.load(str(tmp_path))["values"], arrays["values"])
    empty = write_shard(tmp_path / "empty.npz", rows(0))
    assert all(len(a) == 0 for a in distill_data.read_shard(empty).values())


def test_a_zip_bomb_and_headers_that_lie_are_refused_before_the_data_is_read(tmp_path):
    good = rows(3)
    bits = SHARD_LAYOUT["bits"][1]
    # a header declaring more rows than a shard may hold: refused from the header alone
    bomb = write_shard(tmp_path / "bomb.npz", good, {"bits": (npy((10**9, *bits), np.uint8), 20 << 20)})
    assert os.path.getsize(bomb) < 200_000
    refused(bomb, rf"bits: declares 1000000000 rows; a shard holds at most {MAX_SHARD_ROWS}")
    # a header declaring 3 rows in front of 20 MB of data: only the declared bytes (and one more) are read
    longer = write_shard(tmp_path / "long.npz", good, {"values": (npy((3, 56), np.float16), 20 << 20)})
    refused(longer, r"values: the data is not the 336 bytes its header declares")
    # a header declaring more rows than the data holds
    shorter = write_shard(tmp_path / "short.npz", good, {"role": (npy((1000,), np.int8), 10)})
    refused(shorter, r"role: the data is not the 1000 bytes its header declares")


def test_entries_dtypes_shapes_and_damage_are_one_clear_error(tmp_path):
    good = rows(3)
    cases = {
        "pickle": ({"target": (npy((3,), object), 24)}, r"target: holds object \[3\]; a shard holds int8 \[rows\]"),
        "dtype": ({"bits": (npy((3, 91), np.float64), 3 * 91 * 8)}, r"bits: holds float64 \[3, 91\]"),
        "shape": (
            {"scalars": (npy((3, 60), np.float32), 3 * 60 * 4)},
            r"scalars: holds float32 \[3, 60\]; a shard "
            r"holds float32 \[rows, 61\]",
        ),
        "fortran": ({"legal": (npy((3, 7), np.uint8, fortran=True), 21)}, r"legal: holds uint8 \[3, 7\]"),
        "rows": ({"balance": (npy((2,), np.int8), 2)}, r"the entries hold different numbers of rows \(\[2, 3\]\)"),
    }
    for name, (replace, match) in cases.items():
        refused(write_shard(tmp_path / f"{name}.npz", good, replace), match)
    missing = {k: v for k, v in good.items() if k != "role"}
    refused(write_shard(tmp_path / "missing.npz", missing), r"not a data shard: its entries are")
    refused(write_shard(tmp_path / "extra.npz", {**good, "more": good["role"]}), r"not a data shard: its entries are")
    text = tmp_path / "text.npz"
    text.write_text("not a zip")
    refused(str(text), r"not a readable data shard \(File is not a zip file\)")
    whole = write_shard(tmp_path / "whole.npz", good)
    cut = tmp_path / "cut.npz"
    cut.write_bytes(open(whole, "rb").read()[:-40])
    refused(str(cut), r"not a readable data shard")


def test_load_names_the_bad_shard_and_chunk_hands_is_bounded(tmp_path):
    folder = tmp_path / "data"
    folder.mkdir()
    write_shard(folder / "shard_00000.npz", rows(2))
    bad = write_shard(folder / "shard_00001.npz", rows(2), {"role": (npy((10**8,), np.int8), 0)})
    with pytest.raises(ValueError, match=rf"^{bad}: role: declares 100000000 rows"):
        distill_data.load(str(folder))
    with pytest.raises(
        ConfigError, match=rf"^chunk_hands: must be in \[1, {MAX_CHUNK_HANDS}\], got {MAX_CHUNK_HANDS + 1}"
    ):
        validate(DataSettings, {"chunk_hands": MAX_CHUNK_HANDS + 1}, "")
    validate(DataSettings, {"chunk_hands": MAX_CHUNK_HANDS}, "").validate()


def test_values_that_would_break_the_fit_are_refused(tmp_path):
    cases = {
        "target 120": (lambda a: a["target"].__setitem__(1, 120), r"target: row 1 holds action 120; actions are 0-55"),
        "target -3": (lambda a: a["target"].__setitem__(0, -3), r"target: row 0 holds action -3"),
        "illegal target": (
            lambda a: (a["target"].__setitem__(2, 55), a["legal"].__setitem__((2, 6), 0)),
            r"target: row 2 holds action 55, which its legal mask does not allow",
        ),
        "role 3": (lambda a: a["role"].__setitem__(0, 3), r"role: row 0 holds 3; roles are 0-2"),
        "infinite value": (lambda a: a["values"].__setitem__((0, 4), np.inf), r"values or scalars hold infinite"),
        "NaN scalar": (lambda a: a["scalars"].__setitem__((1, 0), np.nan), r"values or scalars hold infinite"),
    }
    for name, (change, match) in cases.items():
        arrays = rows(3)
        arrays["values"][0, 5] = np.nan  # a move not searched: allowed
        change(arrays)
        refused(write_shard(tmp_path / f"{name}.npz", arrays), match + ".*the shard is damaged")


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_a_searched_decision_whose_legal_move_is_not_valued_is_refused(tmp_path, bad):
    """As improve refuses a legal move's non-finite value (training.common.labels), so does distill."""
    arrays = rows(3)
    assert arrays["searched"][0] and arrays["target"][0] == 0  # row 0: searched, move 0 legal
    arrays["values"][0, 0] = bad
    match = r"values or scalars hold infinite" if np.isinf(bad) else r"values: row 0 is a searched decision whose"
    refused(write_shard(tmp_path / "bad.npz", arrays), match + ".*the shard is damaged")
    if np.isnan(bad):
        refused(str(tmp_path / "bad.npz"), r"legal move 0 holds nan; a legal move's value is not finite")
    arrays["searched"][0] = False  # not searched: NaN is what such a row holds
    if np.isnan(bad):
        assert np.isnan(distill_data.read_shard(write_shard(tmp_path / "unsearched.npz", arrays))["values"][0, 0])


def test_the_play_out_entries_are_read_within_the_same_bounds(tmp_path):
    """A play-out label file (the shard format, with results, phase and rules; values f32) reads back unchanged
    with its rule set; a phase that is none, a legal move's result not finite, values of another dtype or rules of
    another shape are one line."""
    arrays = rows(4, (*FIELDS, *PLAYOUT_FIELDS))
    arrays["values"] = arrays["values"].astype(np.float32)
    arrays["rules"] = np.array(json.dumps(PRESETS["standard"].options()))
    got, rules = distill_data.read_labels(write_shard(tmp_path / "labels.npz", arrays))
    assert rules == PRESETS["standard"] and list(got) == [*FIELDS, *PLAYOUT_FIELDS]
    for name in got:
        np.testing.assert_array_equal(got[name], arrays[name])
        assert got[name].dtype == arrays[name].dtype
    cases = {
        "phase": (lambda a: a["phase"].__setitem__(1, 4), r"phase: row 1 holds 4; phases are 0-3"),
        "results": (lambda a: a["results"].__setitem__((2, a["target"][2]), np.nan), r"results: row 2: a legal"),
        "values": (lambda a: a.__setitem__("values", a["values"].astype(np.float64)), r"values: holds float64"),
    }
    for name, (change, match) in cases.items():
        bad = {key: value.copy() for key, value in arrays.items()}
        change(bad)
        refused(write_shard(tmp_path / f"{name}.npz", bad), match)
    arrays["rules"] = np.array(json.dumps(PRESETS["four-5-3-2-2"].options()))
    path = write_shard(tmp_path / "four.npz", arrays)
    with pytest.raises(ShardError, match="its rule set 'four-5-3-2-2' is not of its shape"):
        distill_data.read_labels(path)
    with pytest.raises(ShardError, match="records no rule set"):
        distill_data.read_labels(write_shard(tmp_path / "none.npz", rows(4)))


def test_the_fit_refuses_a_shard_with_a_nan_label_naming_it(tmp_path):
    from training.distill.fit import _load_split

    folder = tmp_path / "data"
    folder.mkdir()
    write_shard(folder / "shard_00000.npz", rows(4))
    arrays = rows(3)
    arrays["values"][2, :] = np.nan  # a searched decision (row 2) with no value at all: the All-NaN slice
    assert arrays["searched"][2]
    bad = write_shard(folder / "shard_00001.npz", arrays)
    with pytest.raises(ShardError, match=r"values: row 2 is a searched decision") as err:
        _load_split([str(folder)], 0.34, 0)
    assert str(err.value).startswith(f"{bad}: ") and "\n" not in str(err.value)


@pytest.mark.parametrize("bad", [np.nan, np.inf])
def test_the_distill_command_refuses_a_shard_with_a_nan_or_inf_value_in_one_line(tmp_path, capsys, bad):
    from training.distill.cli import main

    folder = tmp_path / "data"
    folder.mkdir()
    arrays = rows(4)
    arrays["values"][:, :] = 0.0
    arrays["searched"][:] = True
    arrays["values"][1, arrays["target"][1]] = bad  # a searched decision's chosen move without a finite value
    shard = write_shard(folder / "shard_00000.npz", arrays)
    assert main(["--fit-data", str(folder), "--out", str(tmp_path / "p.pt"), "fit.epochs=1"]) == 2  # it fitted: 0
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and shard in err and "the shard is damaged" in err and "Traceback" not in err, err
    assert not (tmp_path / "p.pt").exists()


def test_a_shard_that_is_not_a_regular_file_is_refused_without_reading_it(tmp_path):
    refused("/dev/zero", r"not a regular file; a data shard is a .npz file")
    folder = tmp_path / "data"
    folder.mkdir()
    (folder / "shard_00000.npz").symlink_to("/dev/zero")
    with pytest.raises(ShardError, match="shard_00000.npz: not a regular file"):
        distill_data.load(str(folder))
    (folder / "shard_00000.npz").unlink()
    (folder / "shard_00000.npz").mkdir()
    with pytest.raises(ShardError, match="shard_00000.npz: not a regular file"):
        distill_data.load(str(folder))


def test_the_whole_data_set_is_capped_before_any_shard_is_read(tmp_path, monkeypatch):
    folders = [tmp_path / "a", tmp_path / "b"]
    for folder in folders:
        folder.mkdir()
        for k in range(3):
            write_shard(folder / f"shard_{k:05d}.npz", rows(4))
    assert len(distill_data.load([str(f) for f in folders])["target"]) == 24
    read = []
    monkeypatch.setattr(distill_data, "MAX_DATA_ROWS", 20)
    monkeypatch.setattr(distill_data, "read_shard", lambda *a, **k: read.append(a))
    last = folders[1] / "shard_00002.npz"
    with pytest.raises(ShardError, match=rf"^{last}: the shards up to this one declare 24 decisions; a fit loads at"):
        distill_data.load([str(f) for f in folders])
    assert read == []
    assert distill_data.check_total_rows([str(folders[0] / "shard_00000.npz")]) == 4


def test_a_deep_or_damaged_meta_json_is_one_line(tmp_path):
    settings = validate(DataSettings, {}, "")
    for text, match in [
        ("[" * 100_000 + "]" * 100_000, "nested more than 32 levels deep"),
        ('{"settings": {"seed": ' + "7" * 400 + "}}", "a whole number of 400 digits"),
        ("[]", "not a data folder's meta.json"),
        ('{"settings": {}, "fingerprints": [1]}', "not a data folder's meta.json"),
    ]:
        (tmp_path / "meta.json").write_text(text)
        with pytest.raises(ValueError, match=match) as err:
            distill_data.check_folder(str(tmp_path), settings)
        assert str(err.value).startswith(str(tmp_path / "meta.json")) and "\n" not in str(err.value)
    (tmp_path / "meta.json").unlink()
    (tmp_path / "meta.json").symlink_to("/dev/zero")
    with pytest.raises(ValueError, match="meta.json: larger than 1048576 bytes"):
        distill_data.check_folder(str(tmp_path), settings)


def test_the_fit_reads_its_folders_within_the_same_bounds(tmp_path, monkeypatch):
    from training.distill.fit import _load_split

    folder = tmp_path / "data"
    folder.mkdir()
    for k in range(3):
        write_shard(folder / f"shard_{k:05d}.npz", rows(4))
    train, valid = _load_split([str(folder)], 0.34, 0)
    assert len(train["target"]) + len(valid["target"]) == 12
    monkeypatch.setattr(distill_data, "MAX_DATA_ROWS", 10)
    with pytest.raises(ShardError, match="declare 12 decisions; a fit loads at most 10"):
        _load_split([str(folder)], 0.34, 0)
    (folder / "meta.json").write_text("[" * 100_000 + "]" * 100_000)
    with pytest.raises(ValueError, match="meta.json: lists and objects nested more than 32 levels deep"):
        _load_split([str(folder)], 0.34, 0, "standard")
    (folder / "meta.json").unlink()
    (folder / "meta.json").symlink_to("/dev/zero")
    with pytest.raises(ValueError, match="meta.json: larger than"):
        _load_split([str(folder)], 0.34, 0, "standard")
