"""The ``sergeant-major`` command.

Subcommands::

    sergeant-major random [--seed N] [--rules R] [--max-hands N] [--verbose] [--save PATH] [--unicode]
        play one game with uniformly random legal actions and print the final
        table (every hand with --verbose); --save writes the game record (JSON)
    sergeant-major replay PATH [--verbose]
        load a record file, re-play it with the engine and print a summary,
        or the first illegal action or inconsistent field
    sergeant-major rules [--json]
        list the rule presets and their options
    sergeant-major config [FILE [KEY=VALUE ...]]
        list the training config fields with their defaults, or show FILE
        resolved and validated (needs the training extra)
    sergeant-major play | analyse | eval | tournament | train | distill [OPTIONS]
        a game against two agents, the analysis of a game record (every
        decision scored by pimc, the costly moves flagged), duplicate
        evaluation of agents, a tournament of any number of agents with its
        leaderboard, self-play training and search distillation; the options
        are those of the function that does the work (``agents.play.main``,
        ``agents.analysis.main``,
        ``training.evaluation.command.main``,
        ``training.evaluation.tournament.main``, ``training.train.main``,
        ``training.distill.cli.main``; try ``sergeant-major eval --help``)
    sergeant-major leaderboard --config FILE [--only PRESET ...] [--quick | --deals N]
        make a leaderboard page (runs/leaderboard/leaderboard.md; the config's
        ``out``, or ``--set out=docs/leaderboard.md``) from its config
        (configs/leaderboard.yaml): one resumable tournament per section
        (``training.evaluation.leaderboard_page.main``)
    sergeant-major improve --config FILE | --resume RUN_DIR
        the play-out part of ``distill`` alone (configs of kind playouts):
        label decisions with every legal move played out in the real deal,
        fit a Q-network, combine it with the policy
        (``training.distill.cli.main``; its steps by hand:
        ``sergeant-major distill label|fit|merge|combine|distil|belief``)
    sergeant-major exploit SPEC [--opponents A,B] [--minutes M] [--steps N] [--deals D] [OPTIONS]
        train a best response against a fixed agent (or pair) on the batched
        engine and measure how much it gains per hand over the agent in each
        seat, with CIs, and the curve over the budget
        (``training.vector.exploit.main``; resumable: ``--resume RUN_DIR``)
    sergeant-major serve | view [OPTIONS]
        play in a browser, or step through a record in a browser (``sm_web``;
        needs the web extra)
    sergeant-major compile [PART ...] [--jobs N]
        compile the numba kernels (engine, threaded engine, search) into
        numba's cache now (``sm_cli.precompile``); the first use in a fresh
        install otherwise waits for them

``sergeant-major --version`` prints the package's version (:func:`package_version`).

``--rules`` takes a preset name (``sergeant-major rules`` lists them) or a
JSON object of rule options such as ``'{"max_exchange": 3}'``.

Exit status: 0 on success; 1 when ``replay`` reads a record that does not
replay; 2 for a usage error or a bad input (unknown preset, bad option,
missing or unreadable file), with one line ``sergeant-major COMMAND: error:
...`` on stderr and no traceback; 130 when interrupted.

This package sits above ``sm_env``, ``agents`` and ``training`` and imports
them plainly; nothing below imports it. ``training`` (torch, SB3) is imported
only when ``eval``, ``tournament``, ``leaderboard``, ``train``, ``distill``, ``improve``,
``exploit`` or ``config`` runs, so the others start fast and work with the core install alone.

Adding a subcommand: write ``_add_NAME(subparsers)`` that builds its parser
and sets ``handler`` with ``set_defaults``, and list it in ``_SUBCOMMANDS``.
A handler takes the parsed arguments and returns the exit status; it raises
:class:`CliError` for a user mistake.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import sys
from collections.abc import Callable, Sequence
from typing import Any

from sm_env.core.game import OVER, PLAY, Game, result_text
from sm_env.core.rules import OPTION_NAMES, PRESETS, STANDARD, RulesError, RuleSet
from sm_env.display.render import render_table
from sm_env.files.paths import OutputPathError, check_output_path
from sm_env.records import MAX_RECORD_BYTES, RecordError, ReplayError, load_record, replay, save_record

PROG = "sergeant-major"
DISTRIBUTION = "sergeant-major-rl"  # the package's name on an index and in its metadata
SOURCE_PYPROJECT = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "pyproject.toml")


def package_version() -> str:
    """The version ``--version`` shows: a source checkout's ``pyproject.toml`` (an editable install's metadata is
    as old as its last ``pip install``), else the installed package's metadata, else ``unknown``."""
    import re

    try:
        with open(SOURCE_PYPROJECT, encoding="utf-8") as handle:
            text = handle.read(1 << 16)
    except OSError:
        text = ""
    project = text.partition("[project]")[2].partition("\n[")[0]  # the [project] table
    if re.search(rf'^name = "{DISTRIBUTION}"$', project, re.M):
        found = re.search(r'^version = "([^"\n]+)"$', project, re.M)
        if found:
            return found.group(1)
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(DISTRIBUTION)
    except PackageNotFoundError:
        return "unknown"


class CliError(Exception):
    """A user mistake: printed as ``sergeant-major: error: ...`` with exit status 2."""


# ---------------------------------------------------------------------- helpers


def parse_rules(text: str) -> RuleSet:
    """A rule set from a preset name or a JSON object of options (CliError if neither)."""
    stripped = text.strip()
    try:
        if stripped.startswith("{"):
            try:
                options = json.loads(stripped)
            except json.JSONDecodeError as err:
                raise CliError(f"--rules: not a valid JSON object ({err.msg} at column {err.colno}): {text}") from None
            return RuleSet.from_any(options)
        return RuleSet.from_any(stripped)
    except RulesError as err:
        raise CliError(f"--rules: {err}") from None


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number >= 1, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number >= 1, got {value}")
    return value


def _int(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None


def _seats(values: Sequence[int]) -> str:
    return " ".join(f"player_{s} {v:+d}" for s, v in enumerate(values))


def _options_text(rules: RuleSet) -> str:
    """The options of a rule set that differ from the standard game."""
    changed = []
    for key in OPTION_NAMES:
        value = getattr(rules, key)
        if value != getattr(STANDARD, key):
            if key == "quotas":
                shown = "-".join(str(q) for q in value)
            else:
                shown = "on" if value is True else "off" if value is None or value is False else value
            changed.append(f"{key}={shown}")
    return ", ".join(changed) or "(the standard game)"


# ---------------------------------------------------------------------- random


def _add_random(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "random",
        help="play one game with random legal actions",
        description="Play one game in which every player picks a uniformly random legal action.",
    )
    parser.add_argument("--seed", type=_int, default=None, help="seed of the game and the players (default: random)")
    parser.add_argument("--rules", default="standard", help="preset name or JSON object of options (default standard)")
    parser.add_argument("--max-hands", type=_positive_int, default=100, help="stop after this many hands (default 100)")
    parser.add_argument("--verbose", "-v", action="store_true", help="show the table of every hand and its result")
    parser.add_argument("--save", metavar="PATH", help="write the game record (JSON) to PATH")
    parser.add_argument("--unicode", action="store_true", help="draw suits as symbols in the hands")
    parser.set_defaults(handler=cmd_random)


def cmd_random(args: argparse.Namespace, out: Any = None) -> int:
    """Play a random game; print the final table and a summary; optionally save the record."""
    out = out or sys.stdout
    rules = parse_rules(args.rules)
    if args.save:
        try:
            check_output_path(args.save, "--save")
        except OutputPathError as err:
            raise CliError(str(err)) from None
    from agents import fresh_seed

    seed = args.seed if args.seed is not None else fresh_seed()
    game = Game(rules, seed=seed, max_hands=args.max_hands)
    players = random.Random(f"{PROG} random players:{seed}")
    described = rules.name if rules == STANDARD else f"{rules.name} ({_options_text(rules)})"
    print(f"Random game: rules {described}, seed {seed}, max hands {args.max_hands}", file=out)
    while game.phase != OVER:
        hand = game.hand_number
        if args.verbose and game.phase == PLAY and game.tricks_played == 0 and not game.trick:
            print(file=out)
            print(render_table(game, unicode_suits=args.unicode), file=out)
        game.apply(players.choice(game.legal_actions()))
        if args.verbose and (game.hand_number != hand or game.phase == OVER):
            log = game.history[hand - 1]
            print(
                f"Hand {hand} (dealer player_{log.dealer}, trump {'CDHS'[log.trump]}): tricks {log.tricks_won}, "
                f"balances {_seats(log.balances)}, "
                + (f"chips {_seats(log.chips)}, " if log.chips is not None else "")
                + f"scores {_seats(log.scores)}",
                file=out,
            )
    print(file=out)
    print(render_table(game, unicode_suits=args.unicode), file=out)
    print(file=out)
    plural = "s" if game.hand_number != 1 else ""
    if game.winner is not None:
        outcome = f"{result_text(game.winner, False, game.hand_number)} after {game.hand_number} hand{plural}"
    else:
        outcome = f"stopped after {game.hand_number} hand{plural} with no winner (truncated)"
    print(f"Game {outcome}; scores {_seats(game.scores)}", file=out)
    if args.save:
        try:
            save_record(game, args.save)
        except OSError as err:
            raise CliError(f"cannot write the record to {args.save}: {err.strerror or err}") from None
        print(f"Record saved to {args.save}", file=out)
    return 0


# ---------------------------------------------------------------------- replay


def _add_replay(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "replay",
        help="re-play and check a game record file",
        description="Re-play a game record with the engine and check every field. Exit status 1 if it does not replay.",
    )
    parser.add_argument(
        "path", help=f"record file (JSON, at most {MAX_RECORD_BYTES >> 20} MiB), e.g. written by 'random --save'"
    )
    parser.add_argument("--verbose", "-v", action="store_true", help="print one line per hand")
    parser.set_defaults(handler=cmd_replay)


def cmd_replay(args: argparse.Namespace, out: Any = None) -> int:
    """Load, replay and summarise a record; 1 (with the error) when it does not replay."""
    out = out or sys.stdout
    try:
        record = load_record(args.path)
    except FileNotFoundError:
        raise CliError(f"no such record file: {args.path}") from None
    except IsADirectoryError:
        raise CliError(f"{args.path} is a directory, not a record file") from None
    except OSError as err:
        raise CliError(f"cannot read {args.path}: {err.strerror or err}") from None
    except RecordError as err:
        raise CliError(str(err)) from None
    try:
        replayed = replay(record)
    except ReplayError as err:
        print(f"{args.path}: does not replay: {err}", file=out)
        return 1
    hands = replayed["hands"]
    if args.verbose:
        for hand in hands:
            status = (
                f"tricks {hand['tricks_won']}, balances {_seats(hand['balances'])}, scores {_seats(hand['scores'])}"
                if hand.get("scores") is not None
                else "in progress"
            )
            trump = hand["trump"] or "-"
            print(f"Hand {hand['number']} (dealer player_{hand['dealer']}, trump {trump}): {status}", file=out)
    finished = [h for h in hands if h.get("scores") is not None]
    scores = finished[-1]["scores"] if finished else [0, 0, 0]
    rules = replayed["rules"].get("name", "custom")
    print(
        f"{args.path}: replays OK: rules {rules}, seed {replayed.get('seed')}, {len(hands)} "
        f"hand{'s' if len(hands) != 1 else ''}, {result_text(replayed['winner'], replayed['truncated'], len(hands))}; "
        f"scores {_seats(scores)}",
        file=out,
    )
    return 0


# ---------------------------------------------------------------------- rules


def _add_rules(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "rules", help="list the rule presets", description="List the rule presets and the options each one sets."
    )
    parser.add_argument("--json", action="store_true", help="print every preset's full option dict as JSON")
    parser.set_defaults(handler=cmd_rules)


def cmd_rules(args: argparse.Namespace, out: Any = None) -> int:
    """List the presets (name and the options that differ from the standard game)."""
    out = out or sys.stdout
    if args.json:
        print(json.dumps({name: rules.options() for name, rules in PRESETS.items()}, indent=2), file=out)
        return 0
    width = max(len(name) for name in PRESETS)
    for name, rules in PRESETS.items():
        print(f"{name:<{width}}  {_options_text(rules)}", file=out)
    print(f"\nUse a name with --rules, or a JSON object of options: {', '.join(OPTION_NAMES)}", file=out)
    return 0


# ---------------------------------------------------------------------- config


# kind -> (module, loader, config class): every kind of config file (training.common.run_config.CONFIG_KINDS)
_CONFIG_LOADERS = {
    "sb3": ("training.sb3.config", "load_config", "Config"),
    "vector": ("training.vector.config", "load_selfplay_config", "SelfPlayConfig"),
    "dmc": ("training.vector.config", "load_dmc_config", "DMCConfig"),
    "rllib": ("training.rllib.config", "load_rllib_config", "RLlibConfig"),
    "distill": ("training.distill.config", "load_distill_config", "DistillConfig"),
    "exploit": ("training.vector.exploit", "load_exploit_config", "ExploitConfig"),
    "playouts": ("training.distill.config_playouts", "load_run_config", "RunConfig"),
    "eval": ("training.evaluation.config", "load_eval_config", "EvalFileConfig"),
    "leaderboard": ("training.evaluation.leaderboard_page", "load_leaderboard_config", "LeaderboardConfig"),
}


def _add_config(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "config",
        help="check a config file of any kind and show it resolved, or list a kind's fields",
        description="With FILE: the config read from FILE (its kind: line says which command runs it: "
        + ", ".join(_CONFIG_LOADERS)
        + "), with the KEY=VALUE overrides applied, validated and printed as YAML with every default filled in. "
        "Without FILE: every field of --kind (default sb3) with its default and meaning.",
    )
    parser.add_argument("file", nargs="?", help="a config file, e.g. configs/quickstart.yaml")
    parser.add_argument("overrides", nargs="*", metavar="KEY=VALUE", help="overrides, e.g. ppo.learning_rate=1e-4")
    parser.add_argument(
        "--kind", choices=list(_CONFIG_LOADERS), default=None, help="without FILE: whose fields to list (default sb3)"
    )
    parser.set_defaults(handler=cmd_config)


def cmd_config(args: argparse.Namespace, out: Any = None) -> int:
    """Print the documented fields of a kind of config, or one config file (any kind) resolved."""
    out = out or sys.stdout
    try:
        import importlib

        import yaml

        from training.common.yaml_config import ConfigError, describe, read_yaml
    except ModuleNotFoundError as err:
        raise CliError(f"needs the training extra ({err.name} is not installed): pip install -e '.[train]'") from None
    if args.file is None:
        if args.overrides:
            raise CliError("KEY=VALUE overrides need a config FILE before them")
        module, _, model = _CONFIG_LOADERS[args.kind or "sb3"]
        print(describe(getattr(importlib.import_module(module), model)), file=out)
        return 0
    try:
        kind = read_yaml(args.file).get("kind", "sb3")  # (a file without kind: is an SB3 config, as train reads it)
        if args.kind is not None and kind != args.kind:
            raise CliError(f"{args.file} is a {kind!r} config, not --kind {args.kind}")
        if not isinstance(kind, str) or kind not in _CONFIG_LOADERS:
            raise CliError(f"{args.file}: kind: unknown kind {kind!r:.40}; the kinds are {', '.join(_CONFIG_LOADERS)}")
        module, loader, _ = _CONFIG_LOADERS[kind]
        cfg = getattr(importlib.import_module(module), loader)(args.file, args.overrides)
    except ConfigError as err:
        raise CliError(str(err)) from None
    except ModuleNotFoundError as err:
        raise CliError(f"a {kind!r} config needs {err.name}, which is not installed") from None
    print(f"# {args.file}: a valid {kind!r} config, with every default filled in", file=out)
    print(yaml.safe_dump(cfg.model_dump(), sort_keys=False), end="", file=out)
    return 0


# ---------------------------------------------------------------------- main

# Commands whose work is done in agents/ or training/: the rest of the
# command line goes to that function, which parses it and returns the exit
# status. training needs the training extra (torch, SB3): it is imported
# when its command runs, with a clear error when it is not installed.


def _run_play(argv: list[str]) -> int:
    from agents import play

    return play.main(argv)


def _run_analyse(argv: list[str]) -> int:
    from agents import analysis

    return analysis.main(argv)


def _run_eval(argv: list[str]) -> int:
    from training.evaluation import command

    return command.main(argv)


def _run_tournament(argv: list[str]) -> int:
    from training.evaluation import tournament

    return tournament.main(argv, prog=f"{PROG} tournament")


def _run_leaderboard(argv: list[str]) -> int:
    from training.evaluation import leaderboard_page

    return leaderboard_page.main(argv, prog=f"{PROG} leaderboard")


def _run_train(argv: list[str]) -> int:
    from training import train

    return train.main(argv)


def _run_distill(argv: list[str]) -> int:
    from training.distill import cli

    return cli.main(argv, prog=f"{PROG} distill")


def _run_improve(argv: list[str]) -> int:
    from training.distill import cli

    return cli.main(argv, prog=f"{PROG} improve", part="playouts")  # the play-out part of distill


def _run_exploit(argv: list[str]) -> int:
    from training.vector import exploit

    return exploit.main(argv, prog=f"{PROG} exploit")


def _run_serve(argv: list[str]) -> int:
    import sm_web

    return sm_web.serve_main(argv)


def _run_view(argv: list[str]) -> int:
    import sm_web

    return sm_web.view_main(argv)


def _run_compile(argv: list[str]) -> int:
    from sm_cli import precompile

    return precompile.main(argv)


_DELEGATED: dict[str, tuple[Callable[[list[str]], int], str]] = {
    "play": (_run_play, "play a game in the terminal against two agents"),
    "analyse": (_run_analyse, "score every decision of a game record with pimc; flag the costly moves"),
    "eval": (_run_eval, "duplicate evaluation of agents (tables, CSV, JSON, plot)"),
    "tournament": (_run_tournament, "every table of any number of agents, and the leaderboard (Markdown, JSON, plot)"),
    "leaderboard": (_run_leaderboard, "a leaderboard page from its config (configs/leaderboard.yaml), in runs/"),
    "train": (_run_train, "self-play training from a config file"),
    "distill": (_run_distill, "label (a search, or real-deal play-outs) and fit a policy, from a config file"),
    "improve": (_run_improve, "distill's play-out part: real-deal play-outs, a Q-network (configs/real_deal_*)"),
    "exploit": (_run_exploit, "train a best response against a fixed agent; its gain per role over it (CIs)"),
    "serve": (_run_serve, "play in a browser against two agents (web extra)"),
    "view": (_run_view, "step through a game record in a browser (web extra)"),
    "compile": (_run_compile, "compile the numba kernels into their cache now (the first use otherwise waits)"),
}


def _add_delegated(subparsers: Any) -> None:
    for name, (_, text) in _DELEGATED.items():
        parser = subparsers.add_parser(name, help=text, add_help=False, description=text)
        parser.add_argument("args", nargs=argparse.REMAINDER, help=f"options of {name} (try {PROG} {name} --help)")
        parser.set_defaults(handler=_run_delegated)


def _run_delegated(args: argparse.Namespace) -> int:
    run = _DELEGATED[args.command][0]
    try:
        status = run(list(args.args))
    except ModuleNotFoundError as err:
        if err.name is None or err.name.split(".")[0] in ("sm_env", "agents", "training", "sm_cli", "sm_web"):
            raise
        extra = "web" if args.command in ("serve", "view") else "train"
        raise CliError(
            f"needs the {extra} extra ({err.name} is not installed): pip install -e '.[{extra}]' from a checkout"
        ) from None
    return 0 if status is None else int(status)


_SUBCOMMANDS: tuple[Callable[[Any], None], ...] = (_add_random, _add_replay, _add_rules, _add_config, _add_delegated)


def build_parser() -> argparse.ArgumentParser:
    """The argument parser with every subcommand."""
    parser = argparse.ArgumentParser(
        prog=PROG,
        description="Sergeant Major (3-5-8): play, replay and inspect games.",
        epilog="Run 'sergeant-major COMMAND --help' for the options of a command.",
    )
    parser.add_argument("--version", action="version", version=f"{PROG} {package_version()}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    subparsers.required = True
    for add in _SUBCOMMANDS:
        add(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status (argparse exits with 2 on usage errors)."""
    parser = build_parser()
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv and argv[0] in _DELEGATED:  # argparse's REMAINDER would not pass on a leading --option
        args = argparse.Namespace(command=argv[0], args=argv[1:], handler=_run_delegated)
    else:
        args = parser.parse_args(argv)
    try:
        return args.handler(args)
    except CliError as err:
        print(f"{PROG} {args.command}: error: {err}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"{PROG}: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # output piped into a command that stopped reading (head)
        with contextlib.suppress(OSError):
            sys.stdout = open(os.devnull, "w")  # so that the interpreter does not fail flushing it at exit
        return 0
