"""``sergeant-major compile`` (sm_cli/precompile.py): compiles the cache, reports each part, refuses bad input."""

from __future__ import annotations

import re

import pytest

from sm_cli import cli, precompile


def test_the_engine_part_compiles_and_is_reported():
    lines: list[str] = []
    assert precompile.compile_kernels(["engine"], jobs=1, echo=lines.append)
    done = [line for line in lines if "not done yet" not in line]  # an empty cache takes longer than a heartbeat
    assert len(done) == 1 and done[0].startswith("engine: compiled (")


def test_a_line_names_the_parts_still_compiling_every_heartbeat(monkeypatch):
    import time

    monkeypatch.setitem(precompile._WORK, "engine", lambda: time.sleep(1.0))
    monkeypatch.setitem(precompile._WORK, "parallel", lambda: None)
    lines: list[str] = []
    assert precompile.compile_kernels(["parallel", "engine"], jobs=1, echo=lines.append, heartbeat=0.1)
    assert lines[-1].startswith("engine: compiled (")
    beats = [line for line in lines[:-1] if line != "parallel: compiled (0 s)"]
    assert len(beats) == len(lines) - 2, lines
    assert all(re.fullmatch(r"  \d+ s: not done yet: (parallel, )?engine", b) for b in beats), lines
    assert sum(b.endswith(" s: not done yet: engine") for b in beats) >= 3, lines  # parallel done: not named


def test_a_part_compiles_without_the_first_compile_announcements(tmp_path, monkeypatch, capsys):
    """Each worker would print the same "compiling the batched engine" line: the command says it once itself."""
    from sm_env.compiled import readiness

    monkeypatch.setattr(readiness, "_group_stamp", lambda group: tmp_path / f"sm_env-{group}-test.ready")
    monkeypatch.setattr(readiness, "_groups_done", set())

    def uses_the_batched_engine() -> None:
        with readiness.first_compile("batch"):
            pass

    monkeypatch.setitem(precompile._WORK, "engine", uses_the_batched_engine)
    assert precompile.compile_kernels(["engine"], jobs=1, echo=lambda line: None)
    assert capsys.readouterr().err == ""
    monkeypatch.setattr(readiness, "_groups_done", set())
    (tmp_path / "sm_env-batch-test.ready").unlink()
    with readiness.first_compile("batch"):  # outside the command: announced as before
        pass
    assert "compiling the batched engine" in capsys.readouterr().err


def test_without_torch_compile_skips_what_needs_it_in_one_line_and_succeeds(tmp_path):
    """The core install (no torch): every part compiles but pimc's policy rollouts, one line says so, exit 0."""
    import os
    import subprocess
    import sys

    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    fake = tmp_path / "torch"
    fake.mkdir()
    (fake / "__init__.py").write_text('raise ModuleNotFoundError("No module named \'torch\'", name="torch")\n')
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), root])}
    code = "import sys; from sm_cli.cli import main; sys.exit(main(sys.argv[1:]))"
    done = subprocess.run(
        [sys.executable, "-c", code, "compile", "--jobs", "2"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith("compiling engine, parallel, search with numba, 2 at once")
    assert precompile.ABOUT in lines[0] and sum("compiling engine" in line for line in lines) == 1
    (search,) = [line for line in lines if line.startswith("search: ")]
    assert search.startswith("search: compiled (") and search.endswith(precompile.NO_TORCH)
    assert sum("skipped" in line for line in lines) == 1 and "FAILED" not in done.stdout
    assert lines[-1].startswith("done in ")
    assert "sm_env: compiling" not in done.stderr and "Traceback" not in done.stderr, done.stderr


def test_a_failing_part_is_reported_with_its_error(monkeypatch):
    def broken() -> None:
        raise RuntimeError("planted")

    monkeypatch.setitem(precompile._WORK, "engine", broken)
    lines: list[str] = []
    assert not precompile.compile_kernels(["engine"], jobs=1, echo=lines.append)
    assert lines == ["engine: FAILED: RuntimeError: planted (0 s)"]


@pytest.mark.parametrize(
    "parts, jobs, message",
    [(["engine", "nope"], 1, "unknown part 'nope'; allowed: engine, parallel, search"), (["engine"], 0, "jobs")],
)
def test_bad_input_is_a_clear_error(parts, jobs, message):
    with pytest.raises(ValueError, match=message):
        precompile.compile_kernels(parts, jobs=jobs)


def test_the_command_line_refuses_an_unknown_part(capsys):
    with pytest.raises(SystemExit) as exit_info:
        cli.main(["compile", "nope"])
    assert exit_info.value.code == 2
    assert "unknown part 'nope'; allowed: engine, parallel, search" in capsys.readouterr().err
