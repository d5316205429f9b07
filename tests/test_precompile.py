"""``sergeant-major compile`` (sm_cli/precompile.py): compiles the cache, reports each part, refuses bad input."""

from __future__ import annotations

import pytest

from sm_cli import cli, precompile


def test_the_engine_part_compiles_and_is_reported():
    lines: list[str] = []
    assert precompile.compile_kernels(["engine"], jobs=1, echo=lines.append)
    assert len(lines) == 1 and lines[0].startswith("engine: compiled (")


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
