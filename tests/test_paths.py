"""sm_env.files.paths: the one check of an output path, one line naming the option, the path and why."""

from __future__ import annotations

import os

import pytest

from sm_env.files import paths
from sm_env.files.paths import OutputPathError, check_output_path


def test_a_path_that_can_be_written_is_returned(tmp_path):
    assert check_output_path(tmp_path / "new" / "deeper" / "out.json", "--out") == str(tmp_path / "new/deeper/out.json")
    (tmp_path / "old.json").write_text("x")
    assert check_output_path(str(tmp_path / "old.json"), "--out") == str(tmp_path / "old.json")
    assert check_output_path(tmp_path, "--run-dir", folder=True) == str(tmp_path)
    assert check_output_path("/dev/shm/sm-out", "--out") == "/dev/shm/sm-out"  # a memory file system, not the kernel's


@pytest.mark.parametrize(
    ("name", "folder", "words"),
    [
        ("afile/sub", False, "--out {tmp}/afile/sub cannot be made: {tmp}/afile is a file, not a folder"),
        ("afile/a/b", True, "--out {tmp}/afile/a/b cannot be made: {tmp}/afile is a file, not a folder"),
        ("afile", True, "--out {tmp}/afile is a file, not a folder: name a folder"),
        ("", False, "--out {tmp} is a folder, not a file: name a file in it"),
        ("/proc/self/x", False, "--out /proc/self/x lies in /proc, a kernel file system: name a file on disk"),
        ("/proc/self/x", True, "--out /proc/self/x lies in /proc, a kernel file system: name a folder on disk"),
        ("/sys/x", True, "--out /sys/x lies in /sys, a kernel file system"),
        ("/dev/null", False, "--out /dev/null lies in /dev, a kernel file system"),
        ("link/x", False, "--out {tmp}/link/x lies in /proc, a kernel file system"),  # through a link
    ],
)
def test_a_path_that_cannot_be_written_is_one_line_naming_it_and_why(tmp_path, name, folder, words):
    (tmp_path / "afile").write_text("x")
    (tmp_path / "link").symlink_to("/proc/self")
    path = os.path.join(tmp_path, name) if name else str(tmp_path)
    with pytest.raises(OutputPathError) as err:
        check_output_path(path, "--out", folder)
    message = str(err.value)
    assert message.startswith(words.format(tmp=tmp_path)) and "\n" not in message, message
    assert (tmp_path / "afile").read_text() == "x"


def test_an_unwritable_folder_is_one_line(tmp_path, monkeypatch):
    monkeypatch.setattr(paths.os, "access", lambda path, mode: os.fspath(path) != str(tmp_path))
    words = rf"^--save {tmp_path}/a/b.json cannot be written: the folder {tmp_path} is not writable$"
    with pytest.raises(OutputPathError, match=words):
        check_output_path(tmp_path / "a" / "b.json", "--save")
    with pytest.raises(OutputPathError, match="^--out is empty: name a folder$"):
        check_output_path("", "--out", folder=True)
