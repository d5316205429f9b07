"""``sergeant-major config FILE`` accepts every file in configs/ (each one's ``kind:`` names the loader that
validates it), and a file of a wrong kind, an unknown kind or a bad value is one line, exit status 2."""

from __future__ import annotations

import glob
import os

import pytest

from sm_cli.cli import main

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CONFIGS = sorted(glob.glob(os.path.join(ROOT, "configs", "*.yaml")))


def test_configs_are_found():
    assert len(CONFIGS) >= 20


@pytest.mark.parametrize("path", CONFIGS, ids=os.path.basename)
def test_every_config_file_is_valid(path: str, capsys) -> None:
    assert main(["config", path]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"# {path}: a valid ") and "\nkind: " in out


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("kind: playouts\nworkers: 2\n", None),  # the control: a valid file
        ("kind: distill\nworkers: 2\nepochs: 3\n", "unknown key 'epochs'"),  # a play-out key in a distill config
        ("kind: sb3\nname: x\nlabels: []\n", "unknown key 'labels'"),  # a play-out key in an SB3 config
        ("kind: playoffs\n", "kind: unknown kind 'playoffs'; the kinds are sb3, vector"),
        ("kind: playouts\nworkers: 0\n", "workers"),
        ("kind: playouts\nlabels: [{seeds: [1], types: [bid]}]\n", "types must be some of exchange, trump, discard"),
        ("kind: playouts\nenv: {rules: calls}\n", "has 74 actions"),
    ],
)
def test_a_wrong_kind_or_value_is_one_line(tmp_path, capsys, text: str, words: str | None) -> None:
    path = tmp_path / "c.yaml"
    path.write_text(text)
    status = main(["config", str(path)])
    err = capsys.readouterr().err
    if words is None:
        assert status == 0 and err == ""
        return
    assert status == 2 and err.startswith("sergeant-major config: error: ") and err.count("\n") == 1, err
    assert words in err, err


def test_a_file_read_as_another_kind_names_the_command_that_runs_it(tmp_path, capsys) -> None:
    path = tmp_path / "c.yaml"
    path.write_text("kind: playouts\n")
    assert main(["config", str(path), "--kind", "distill"]) == 2
    assert "is a 'playouts' config, not --kind distill" in capsys.readouterr().err
    path.write_text("kind: playouts\nname: x\n")
    assert main(["config", str(path), "kind=vector"]) == 2
    err = capsys.readouterr().err
    assert "this is a 'vector' config, not 'playouts'" in err and err.count("\n") == 1
