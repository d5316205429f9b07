"""``sergeant-major leaderboard``: a leaderboard page (``docs/leaderboard.md`` is one) from its config.

``configs/leaderboard.yaml`` (``kind: leaderboard``) names the page's sections: for each rule preset, the agents
in the order the ``cover`` design takes them (the costly searches last, so they sit at the fewest tables; an
agent appended to a list plays only its own tables) and the deals per table. Each section is a tournament
(:func:`training.evaluation.tournament.tournament`) in its own run folder
``<runs>/<rules>-seed<seed>-<deals>deals``, so a killed run resumes where it stopped and the stored tables are
not played again; the page is written (atomically) once every section is there::

    sergeant-major leaderboard --config configs/leaderboard.yaml
    sergeant-major leaderboard --config configs/leaderboard.yaml --only four-5-3-2-2 --set workers=1

The page goes to the config's ``out``; without one, to ``leaderboard.md`` in its ``runs`` folder, so the command
never overwrites a page of ``docs/`` unless told to: the project's own pages are remade with ``--set
out=docs/leaderboard.md`` (``docs/presets.md`` from ``configs/presets.yaml`` likewise), the command each page
states. ``--only PRESET ...`` plays only those sections and replaces only them in the existing page (the other
sections are kept as they are); ``--deals N`` plays every section at N deals a table (``--quick``: N =
:data:`QUICK_DEALS`, minutes instead of an hour; their own run folders); ``--set KEY=VALUE`` overrides a key of
the config (:data:`SET_KEYS`), a section's by its preset (``--set sections.standard.deals=50``). A refusal is one
line, exit status 2.
"""

from __future__ import annotations

import argparse
import copy
import os
import shlex
import sys
from collections.abc import Sequence
from typing import Any, Literal

from pydantic import field_validator, model_validator

from sm_env.core.rules import RuleSet
from sm_env.files.atomic import atomic_path
from sm_env.files.json_files import JsonError, read_json
from sm_env.files.paths import check_output_path
from training.common.ray_cluster import RayOptions, add_ray_arguments
from training.common.run_config import KindSection
from training.common.runs import add_set_argument
from training.common.yaml_config import (
    Agents,
    ConfigError,
    Section,
    Text,
    Whole,
    load,
    parse_override,
    setting,
    validate,
)
from training.evaluation.evaluate import check_agent
from training.evaluation.leaderboard import markdown
from training.evaluation.statistics import Estimate
from training.evaluation.tournament import DESIGNS, MAX_AGENTS, MAX_DEALS, MAX_WORKERS, tournament

PROG = "sergeant-major leaderboard"
PAGE = "leaderboard.md"  # the page's name in the runs folder when the config names no out
QUICK_DEALS = 10  # --quick: deals a table in every section
SET_KEYS = (
    "title, out, runs, seed, workers, design, sections (the whole list, in YAML) and a section's rules, agents or "
    "deals as sections.PRESET.KEY or sections.N.KEY (N from 0)"
)
"""What ``--set`` takes (named by its refusals)."""


class BoardSection(Section):
    """One section of the page: a tournament of ``agents`` under the preset ``rules``."""

    rules: Text = setting("standard", "the rule preset (sergeant-major rules lists them); one section each")
    agents: Agents = setting(
        lambda: ["random", "heuristic"],
        f"2-{MAX_AGENTS} agent specs, in the order the cover design takes them (the costly ones last)",
    )
    deals: Whole = setting(1000, "deals per table, each in every seating", ge=1, le=MAX_DEALS)

    @field_validator("rules")
    @classmethod
    def _preset(cls, rules: str) -> str:
        RuleSet.from_any(rules)  # a RulesError (a ValueError) names the presets
        return rules

    @model_validator(mode="after")
    def _agents(self) -> BoardSection:
        if not 2 <= len(self.agents) <= MAX_AGENTS:
            raise ValueError(f"agents: a tournament takes 2-{MAX_AGENTS} agents, got {len(self.agents)}")
        repeated = sorted({a for a in self.agents if self.agents.count(a) > 1})
        if repeated:
            raise ValueError(f"agents: each agent is named once; named more than once: {', '.join(repeated)}")
        return self


class LeaderboardConfig(
    KindSection,
    defaults={"kind": "leaderboard"},
    descriptions={"kind": "what runs this file: leaderboard (training.common.run_config.CONFIG_KINDS)"},
):
    """The leaderboard page: where it goes, where its tournaments' run folders go, and its sections (each with its
    own rule set: ``sections[].rules``)."""

    title: Text = setting("Leaderboard", "the page's title")
    out: Text = setting("", f"the page written; empty: {PAGE} in the runs folder (a page of docs/ only when named)")
    runs: Text = setting("runs/leaderboard", "folder of the sections' run folders")
    seed: Whole = setting(0, "seed of the deals (every section, every table)")
    workers: Whole = setting(2, "processes playing the deals", ge=1, le=MAX_WORKERS)
    design: Literal[DESIGNS] = setting("cover", "the tables of each section (sergeant-major tournament --help)")
    sections: list[BoardSection] = setting(lambda: [BoardSection()], "the page's sections, in order", min_length=1)

    @model_validator(mode="after")
    def _one_section_a_preset(self) -> LeaderboardConfig:
        presets = [section.rules for section in self.sections]
        repeated = sorted({p for p in presets if presets.count(p) > 1})
        if repeated:
            raise ValueError(f"sections: one section a preset; more than one for {', '.join(repeated)}")
        if not self.out:
            self.out = os.path.join(self.runs, PAGE)
        return self


def load_leaderboard_config(
    path: str | None, overrides: list[str] | None = None, deals: int | None = None
) -> LeaderboardConfig:
    """Read, override (``KEY=VALUE``: :data:`SET_KEYS`) and validate a leaderboard config, every section at
    ``deals`` a table if given; a ConfigError names the key (or the ``--set``) at fault."""
    plain, per_section = [], []
    for text in overrides or []:
        (per_section if text.partition("=")[0].strip().startswith("sections.") else plain).append(text)

    def check(data: Any, source: str) -> LeaderboardConfig:
        data, set_by = _set_sections(data, per_section, deals)
        try:
            return validate(LeaderboardConfig, data, source)
        except ConfigError as err:
            for index, field, text in reversed(set_by):  # a section's key set here is the --set's fault
                if err.key in (f"sections[{index}].{field}", f"sections[{index}]"):
                    raise ConfigError(f"{text}: {err.detail}", err.key, err.detail) from None
            raise

    return load(check, path, plain)


def _set_sections(data: Any, overrides: list[str], deals: int | None) -> tuple[Any, list[tuple[int, str, str]]]:
    """``data`` with the sections' keys set (``sections.PRESET.KEY=VALUE`` or ``sections.N.KEY=VALUE``; every
    ``deals`` if given), and what was set: (section index, key, the option that set it)."""
    if not overrides and deals is None:
        return data, []
    if not isinstance(data, dict):
        return data, []  # not a config: the validation says so
    data = copy.deepcopy(data)
    if data.get("sections") is None:
        data["sections"] = [{}]  # the default: one section, all its keys' defaults
    listed = data["sections"]
    if not isinstance(listed, list) or not all(isinstance(item, dict) for item in listed):
        return data, []  # no list of sections to set keys of: the validation says what is wrong with it
    presets = [str(item.get("rules", BoardSection.model_fields["rules"].default)) for item in listed]
    set_by: list[tuple[int, str, str]] = []
    for text in overrides:
        path, value = parse_override(text)
        if len(path) != 3 or path[2] not in BoardSection.model_fields:
            raise ConfigError(f"--set {text}: --set takes {SET_KEYS}")
        name = path[1]
        index = presets.index(name) if name in presets else int(name) if name.isdigit() else len(presets)
        if index >= len(presets):
            raise ConfigError(
                f"--set {text}: no section {name!r}; the sections are {', '.join(presets)} (0-{len(presets) - 1})"
            )
        listed[index][path[2]] = value
        set_by.append((index, path[2], f"--set {text}"))
    if deals is not None:
        for index, item in enumerate(listed):
            item["deals"] = deals
            set_by.append((index, "deals", f"--deals {deals}"))
    return data, set_by


def heading(rules: str) -> str:
    """A section's heading: ``Preset `rules```, whose id (``preset-rules``, :func:`anchor`) starts with a letter
    on the site and on GitHub alike (an id such as ``3-5-9`` is no CSS selector: the site's scripts stop on it)."""
    return f"Preset `{rules}`"


def anchor(rules: str) -> str:
    """The id of a section's :func:`heading` (Markdown's slug of it), the target of the summary's links."""
    return f"preset-{rules.strip().lower()}"


def sections(text: str) -> dict[str, str]:
    """The preset sections of a generated leaderboard page: preset -> its Markdown, from its ``## Preset `preset```
    heading (:func:`heading`; ``## `preset``` on a page written before it) to the next level-2 heading (each
    ending in one newline)."""
    found: dict[str, list[str]] = {}
    current: list[str] | None = None
    for line in text.splitlines():
        if line.startswith("## "):
            title = line[3:].strip()
            name = title.split("`")[1] if title.count("`") >= 2 else title
            current = found.setdefault(name, [])
        if current is not None:
            current.append(line)
    return {name: "\n".join(lines).rstrip("\n") + "\n" for name, lines in found.items()}


def section_run(cfg: LeaderboardConfig, section: BoardSection) -> tuple[str, str]:
    """A section's run folder and the ``sergeant-major tournament`` command that plays it alone."""
    out = os.path.join(cfg.runs, f"{section.rules}-seed{cfg.seed}-{section.deals}deals")
    command = ["sergeant-major", "tournament", "--agents", *section.agents, "--rules", section.rules]
    command += ["--deals", str(section.deals), "--design", cfg.design, "--seed", str(cfg.seed)]
    command += ["--workers", str(cfg.workers), "--out", out]
    return out, shlex.join(command)


def _ci(value: dict[str, float | None]) -> str:
    return Estimate.from_dict(value).text()


def one_pair(cfg: LeaderboardConfig) -> tuple[str, str] | None:
    """The two agents every section plays, if every section plays the same two; else None."""
    pairs = {tuple(section.agents) for section in cfg.sections}
    only = next(iter(pairs))
    return (only[0], only[1]) if len(pairs) == 1 and len(only) == 2 else None


def pair_summary(cfg: LeaderboardConfig, boards: dict[str, dict[str, Any]]) -> list[str]:
    """When every section plays the same two agents (:func:`one_pair`): one table, a row per preset, of the
    first agent's balance minus the second's per hand on the same deals in the same seats, overall and by role
    (95% CIs); else nothing. ``boards``: each preset's leaderboard
    (:func:`training.evaluation.leaderboard.leaderboard`)."""
    pair = one_pair(cfg)
    if pair is None:
        return []
    first, second = pair
    lines = [
        "## Summary",
        "",
        f"`{first}` minus `{second}` per hand (balance: tricks minus quota), head to head on the same deals in the",
        "same seats, 95% CIs over deals; by role where the first agent holds that role (the third seat of a",
        "four-player table is under *middle / third*).",
        "",
        "| preset | per hand | dealer | eldest | middle / third | fourth |",
        "| --- | ---: | ---: | ---: | ---: | ---: |",
    ]
    for section in cfg.sections:
        row = next(p for p in boards[section.rules]["pairwise"] if (p["a"], p["b"]) == (first, second))
        by_role = [_ci(row["by_role"][role]) for role in boards[section.rules]["roles"]]
        by_role += ["-"] * (4 - len(by_role))
        cells = [f"[`{section.rules}`](#{anchor(section.rules)})", _ci(row["balance_difference"]), *by_role]
        lines.append("| " + " | ".join(cells) + " |")
    return [*lines, ""]


def page(cfg: LeaderboardConfig, command: str, parts: dict[str, str], summary: list[str] | None = None) -> str:
    """The whole page: its header (the command that made it), the :func:`pair_summary` lines if any, and every
    section's Markdown, in order."""
    workers = f"{cfg.workers} worker" + ("s" if cfg.workers != 1 else "")
    lines = [
        f"# {cfg.title}",
        "",
        "Generated by `sergeant-major leaderboard` (do not edit by hand) from its config: a duplicate tournament of",
        "the shipped agents (`sergeant-major tournament`; the README's section on it). Made with:",
        "",
        "```",
        command,
        "```",
        "",
        "Size: each section states its deals per table and its design (every deal in every seating at each",
        "table; `cover` seats every pair of agents together, see `sergeant-major tournament --help`).",
        f"Cost: each section ends with the time its tables took on {workers} (2 CPU cores, shared with",
        "other work when this file was made, so read the times as upper bounds); it grows linearly with the",
        f"deals. Each preset has its own run folder under `{cfg.runs}`: a killed run resumes with the",
        "same command, and an agent appended to a section's list in the config plays only its own tables.",
        "",
        *(summary or []),
        *(parts[section.rules] for section in cfg.sections),
    ]
    return "\n".join(lines).rstrip("\n") + "\n"


def build(
    cfg: LeaderboardConfig, command: str, only: Sequence[str] | None = None, ray: RayOptions | None = None
) -> str:
    """Play the sections of ``cfg`` (only those of the presets ``only``, if given) and write the page to
    ``cfg.out``; the path written. A ValueError, one line, before any table is played: a bad agent, preset, page
    path or run folder, or ``only`` with no page to keep the other sections of (or one that lacks some)."""
    presets = [section.rules for section in cfg.sections]
    unknown = sorted(set(only or ()) - set(presets))
    if unknown:
        raise ValueError(f"--only {' '.join(unknown)}: the config's sections are {', '.join(presets)}")
    check_output_path(cfg.out, "out")
    check_output_path(cfg.runs, "runs", folder=True)
    kept: dict[str, str] = {}
    if only:
        if not os.path.isfile(cfg.out):
            raise ValueError(
                f"--only: the page {cfg.out} does not exist yet, and it needs every section: run once without --only "
                "(or name the page to update with --set out=PATH)"
            )
        with open(cfg.out, encoding="utf-8") as handle:
            kept = sections(handle.read())
        missing = [p for p in presets if p not in only and p not in kept]
        if missing:
            raise ValueError(
                f"--only: the page {cfg.out} lacks the sections {', '.join(missing)}: add them to --only, or run "
                "without --only"
            )
    played = [section for section in cfg.sections if not only or section.rules in only]
    for section in played:  # every agent of every section checked before any table is played
        for spec in section.agents:
            check_agent(spec, RuleSet.from_any(section.rules))
    # a kept section under the heading this version writes (a page written before it had ## `preset`)
    parts = {rules: _with_heading(rules, kept[rules]) for rules in presets if only and rules not in only}
    # a summary of one pair needs every section's figures: a kept section's from its run folder
    paired = one_pair(cfg) is not None
    boards = {s.rules: _stored_board(cfg, s) for s in cfg.sections if paired and s.rules in parts}
    for section in played:
        out, same = section_run(cfg, section)
        print(f"{section.rules}: {same}", file=sys.stderr)
        result = tournament(
            section.agents, out, section.deals, "hand", cfg.seed, cfg.workers, rules=section.rules,
            design=cfg.design, ray=ray,
        )  # fmt: skip
        parts[section.rules] = markdown(result.board, title=heading(section.rules), command=same)
        boards[section.rules] = result.board
    with atomic_path(cfg.out) as tmp, open(tmp, "w", encoding="utf-8") as handle:
        handle.write(page(cfg, command, parts, pair_summary(cfg, boards)))
    return cfg.out


def _with_heading(rules: str, part: str) -> str:
    """A section's Markdown (:func:`sections`) under its :func:`heading`."""
    return f"## {heading(rules)}\n" + part.split("\n", 1)[1]


def _stored_board(cfg: LeaderboardConfig, section: BoardSection) -> dict[str, Any]:
    """The leaderboard a kept section's run folder holds (``leaderboard.json``); a ValueError if it has none."""
    path = os.path.join(section_run(cfg, section)[0], "leaderboard.json")
    try:
        board = read_json(path, "a section's leaderboard")
    except JsonError as err:
        raise ValueError(f"the section {section.rules} is kept, but {err}; play it again with --only") from None
    if not isinstance(board, dict):
        raise ValueError(f"{path}: not a leaderboard (a JSON object); play the section again with --only")
    return board


def main(argv: Sequence[str] | None = None, prog: str = PROG) -> int:
    """Command line (module docstring); the exit status (2: bad input)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = argparse.ArgumentParser(
        prog=prog,
        description="Make a leaderboard page from its config (by default into its runs folder): one tournament per "
        "section, each in its own resumable run folder.",
    )
    parser.add_argument("--config", metavar="FILE", required=True, help="YAML config (configs/leaderboard.yaml)")
    add_set_argument(
        parser,
        f"override a config key: {SET_KEYS}; e.g. --set out=docs/leaderboard.md, --set sections.standard.deals=50",
    )
    parser.add_argument("--only", nargs="+", metavar="PRESET", help="play only these sections; keep the others")
    short = parser.add_mutually_exclusive_group()
    short.add_argument(
        "--deals", type=int, metavar="N", help=f"every section at N deals a table, 1-{MAX_DEALS} (its own run folders)"
    )
    short.add_argument(
        "--quick", action="store_true", help=f"a short version: --deals {QUICK_DEALS} (minutes instead of an hour)"
    )
    add_ray_arguments(parser, "the deals")
    args = parser.parse_args(argv)
    deals = QUICK_DEALS if args.quick else args.deals
    if deals is not None and not 1 <= deals <= MAX_DEALS:
        parser.error(f"--deals must be 1 to {MAX_DEALS}, got {deals}")
    command = shlex.join([*prog.split(), *_without_only(argv)])
    try:
        cfg = load_leaderboard_config(args.config, args.sets, deals)
        written = build(cfg, command, args.only, RayOptions.from_args(args))
    except (ConfigError, ValueError) as err:
        print(f"{prog}: error: {err}", file=sys.stderr)
        return 2
    print(f"wrote {written}")
    return 0


def _without_only(args: list[str]) -> list[str]:
    """The command line without ``--only P ...``: the command that makes the whole page."""
    kept, skipping = [], False
    for arg in args:
        if arg == "--only":
            skipping = True
        elif skipping and not arg.startswith("-"):
            continue
        else:
            skipping = False
            kept.append(arg)
    return kept


if __name__ == "__main__":
    sys.exit(main())
