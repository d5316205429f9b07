"""Every command's ``--help`` (``sergeant-major COMMAND --help``, in-process: the parsers only, no work) names
``sergeant-major``, not ``python -m``, and every ``--set KEY=VALUE`` example in it is accepted by that command's
config loader (the loader of the ``--config FILE`` the example names, else the command's own kind)."""

from __future__ import annotations

import argparse
import contextlib
import importlib
import io
import os
import re

import pytest

pytest.importorskip("pydantic")

from sm_cli.cli import _CONFIG_LOADERS, build_parser, main  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OWN_KIND = {  # the config kind of each command that takes --set (or, for config, KEY=VALUE overrides)
    "train": "sb3",
    "config": "sb3",
    "distill": "distill",
    "improve": "playouts",
    "exploit": "exploit",
    "leaderboard": "leaderboard",
}
GIVEN = {"exploit": ["target.agent=heuristic"]}  # what the command line gives besides --set (exploit's SPEC)
EXAMPLE = re.compile(r"(?:--set\s+|e\.g\.\s+)([A-Za-z_][\w.\[\]]*=[^\s,;)]+)")
CONFIG = re.compile(r"--config\s+(\S+)")


def _commands() -> list[list[str]]:
    """Every subcommand of ``sergeant-major``."""
    parser = build_parser()
    subparsers = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return [[name] for name in subparsers.choices]


def _help(argv: list[str]) -> str:
    """What ``sergeant-major ARGV --help`` prints (its exit status 0)."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out), pytest.raises(SystemExit) as info:
        main([*argv, "--help"])
    if info.value.code != 0 and "extra" in out.getvalue():
        pytest.skip(f"{' '.join(argv)} needs an extra that is not installed")
    assert info.value.code == 0, out.getvalue()
    return out.getvalue()


def _examples(text: str) -> list[tuple[str, str | None]]:
    """Each ``KEY=VALUE`` example of a help text (after ``--set`` or ``e.g.``, wrapped lines included), with the
    config file its line names (None: none)."""
    found = []
    for match in EXAMPLE.finditer(text):
        if match.group(1).startswith("KEY="):
            continue
        line = text[text.rfind("\n", 0, match.start()) + 1 : text.find("\n", match.end())]
        config = CONFIG.search(line)
        found.append((match.group(1), config.group(1) if config else None))
    return found


def _load(kind: str, path: str | None, override: str, given: list[str] | None = None) -> None:
    """Load a config of ``kind`` (``path``, or the defaults) with ``override`` after ``given``."""
    module, loader, _ = _CONFIG_LOADERS[kind]
    getattr(importlib.import_module(module), loader)(path, [*(given or []), override])


@pytest.mark.parametrize("argv", _commands(), ids=" ".join)
def test_every_help_names_the_command_and_its_set_examples_load(argv: list[str]) -> None:
    text = _help(argv)
    assert "python -m" not in " ".join(text.split()), text
    examples = _examples(text)
    if argv[0] in ("train", "distill", "improve", "exploit") and len(argv) == 1:
        assert examples, f"{argv[0]} --help shows no --set example"
    for override, config in examples:
        path = os.path.join(ROOT, config) if config else None
        if path is not None:
            from training.common.yaml_config import read_yaml

            kind = read_yaml(path).get("kind", "sb3")
        else:
            assert argv[0] in OWN_KIND, f"{' '.join(argv)} --help: {override} but no config loader for the command"
            kind = OWN_KIND[argv[0]]
        _load(kind, path, override, GIVEN.get(argv[0]))  # a ConfigError fails the test, naming the example


def test_a_refused_example_is_caught() -> None:
    """The check can fail: an example the command's loader refuses raises."""
    from training.common.yaml_config import ConfigError

    ((override, config),) = _examples("  e.g. --set ppo.learning_rate=1e-4\n")
    assert config is None
    _load("sb3", None, override)
    with pytest.raises(ConfigError, match="unknown key 'ppo'"):
        _load("distill", None, override)
