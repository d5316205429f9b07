"""sm_env.files.atomic: a write either replaces the whole file or leaves it as it was."""

from __future__ import annotations

import os

import pytest

from sm_env.files.atomic import atomic_copy, atomic_path


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


def test_a_killed_writers_temporary_file_is_swept_at_the_next_write(tmp_path):
    import subprocess
    import sys

    target = tmp_path / "latest.zip"
    code = (
        "import os, sys\n"
        "from sm_env.files.atomic import atomic_path\n"
        "with atomic_path(sys.argv[1]) as tmp:\n"
        "    open(tmp, 'w').write('half')\n"
        "    os._exit(9)  # killed mid-write: no clean-up runs\n"
    )
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([os.getcwd(), os.environ.get("PYTHONPATH", "")]))
    for _ in range(3):
        assert subprocess.run([sys.executable, "-c", code, str(target)], env=env).returncode == 9
    left = [name for name in os.listdir(tmp_path) if name != "latest.zip"]
    # each killed writer swept its dead predecessor's file: only the last one is left
    assert len(left) == 1 and left[0].startswith(".latest.") and left[0].endswith(".tmp.zip")
    # a living writer's file and files of other naming are kept
    alive = tmp_path / f".latest.{os.getppid()}.abc123.tmp.zip"
    alive.write_text("in progress")
    other = tmp_path / ".rec.abc.tmp.json"
    other.write_text("not ours")
    with atomic_path(target) as tmp:
        with open(tmp, "w") as handle:
            handle.write("whole")
    assert target.read_text() == "whole"
    assert sorted(os.listdir(tmp_path)) == sorted(["latest.zip", alive.name, other.name])


def test_a_copy_replaces_the_target_whole_or_leaves_it(tmp_path):
    source, target = tmp_path / "a.pt", tmp_path / "b.pt"
    source.write_bytes(b"new" * 1000)
    target.write_bytes(b"old")
    atomic_copy(source, target)
    assert target.read_bytes() == b"new" * 1000
    with pytest.raises(FileNotFoundError):
        atomic_copy(tmp_path / "missing.pt", target)
    assert target.read_bytes() == b"new" * 1000 and sorted(os.listdir(tmp_path)) == ["a.pt", "b.pt"]
