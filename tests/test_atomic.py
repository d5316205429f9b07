"""sm_env.atomic: a write either replaces the whole file or leaves it as it was."""

from __future__ import annotations

import os

import pytest

from sm_env.atomic import atomic_path


def test_success_replaces_the_file_and_keeps_the_extension(tmp_path):
    target = tmp_path / "checkpoint.zip"
    target.write_text("old")
    os.chmod(target, 0o600)
    with atomic_path(target) as tmp:
        assert tmp.endswith(".zip") and os.path.dirname(tmp) == str(tmp_path)
        with open(tmp, "w") as handle:
            handle.write("new")
        assert target.read_text() == "old"  # nothing visible before the block ends
    assert target.read_text() == "new"
    assert os.stat(target).st_mode & 0o777 == 0o600
    assert sorted(os.listdir(tmp_path)) == ["checkpoint.zip"]


def test_failure_leaves_the_old_file_and_no_temporary(tmp_path):
    target = tmp_path / "record.json"
    target.write_text("old")
    with pytest.raises(RuntimeError, match="disk on fire"):
        with atomic_path(target) as tmp:
            with open(tmp, "w") as handle:
                handle.write("half")
            raise RuntimeError("disk on fire")
    assert target.read_text() == "old"
    assert sorted(os.listdir(tmp_path)) == ["record.json"]


def test_new_file_gets_ordinary_permissions(tmp_path):
    target = tmp_path / "policy.pt"
    with atomic_path(target) as tmp:
        with open(tmp, "wb") as handle:
            handle.write(b"x")
    assert target.read_bytes() == b"x"
    assert os.stat(target).st_mode & 0o777 == 0o644
