"""Generate ``docs/leaderboard.md``: a tournament of the shipped agents under five presets.

Sections (:data:`SECTIONS`): ``standard`` and ``3-5-9`` (docs/rules.md section 10.4) with the baselines
(random, heuristic), standard policies (``standard``: ``standard_v0``, ``standard_v2``, ``standard_v5`` and,
appended last, the shipped ``standard_v7``; ``3-5-9``: ``standard_v0`` to ``standard_v2`` and, appended last,
``standard_v7``, which ``trained`` plays on ``3-5-9``), pimc and ismcts
(``standard``: also pimc with ``standard_v5``'s rollouts); ``calls`` and
``woburn-auction`` (10.3, 10.2) with the baselines, the searches and the shipped policy of the rule set; and
``four-5-3-2-2`` with the agents that play four players. Each is
``sergeant-major tournament`` (:func:`training.evaluation.tournament.tournament`) in its own run folder
under ``--runs`` (default ``runs/leaderboard``), so a killed run resumes where it stopped, and a new agent
appended to its list in :data:`SECTIONS` plays only its own tables.

    python benchmarks/leaderboard.py --deals 1000 --four-deals 200 --workers 2
    python benchmarks/leaderboard.py --deals 300 --size standard=1000 --four-deals 100

``--deals``: deals per table of the three-player presets; ``--four-deals``: of the four-player one;
``--size PRESET=DEALS`` sets one section's. ``--design`` (default ``cover``: every pair of agents seated
together, 11 tables for 7 agents instead of the 35 of ``sets``, the searches, named last, at the fewest).
The file states the size it was made with and the command that made it. ``--only PRESET ...`` plays only
those sections and replaces only them in the existing file (its header then quotes the command without
``--only``, the one that remakes the whole file from the stored tables).
"""

from __future__ import annotations

import argparse
import os
import shlex
import sys

from agents.trained import TRAINED_POLICIES
from sm_env.files.atomic import atomic_path
from training.evaluation.leaderboard import markdown
from training.evaluation.tournament import tournament

POLICIES = [f"ppo:agents/policies/standard_v{v}.pt" for v in range(3)]
# the standard section: the first PPO policy, the first distilled one and the one shipped when it was made
STANDARD_POLICIES = [f"ppo:agents/policies/standard_v{v}.pt" for v in (0, 2, 5)]
BASELINES = ["random", "heuristic"]
SEARCHES = ["pimc", "ismcts"]  # the costly agents: last, so the cover design seats them at the fewest tables
# pimc with rollouts played by standard_v5 (docs/results.md, "Search with policy rollouts"): the costliest
# agent, so named last; its policy named, so the tables stay valid if `trained` moves.
GUIDED = "pimc:rollout=policy,policy=agents/policies/standard_v5.pt"
# the policy `trained` plays on the standard rules (agents/trained.py; standard_v7 today): appended last, so that
# the tables above stand and it plays only its own (4 tables in each section), again when `trained` moves on
SHIPPED = f"ppo:agents/policies/{TRAINED_POLICIES['standard']}"
SECTIONS = [  # (preset, agents in the order the cover design takes them, players)
    ("standard", [*BASELINES, *STANDARD_POLICIES, *SEARCHES, GUIDED, SHIPPED], 3),
    ("3-5-9", [*BASELINES, *POLICIES, *SEARCHES, SHIPPED], 3),
    ("four-5-3-2-2", [*BASELINES, *SEARCHES, "ppo:agents/policies/four-5-3-2-2_v1.pt"], 4),
    ("calls", [*BASELINES, "ppo:agents/policies/calls_v1.pt", *SEARCHES], 3),
    ("woburn-auction", [*BASELINES, "ppo:agents/policies/woburn-auction_v1.pt", *SEARCHES], 3),
]


def _size(text: str) -> tuple[str, int]:
    preset, sep, deals = text.partition("=")
    presets = [p for p, _, _ in SECTIONS]
    if not sep or preset not in presets or not deals.isdigit() or int(deals) < 1:
        raise argparse.ArgumentTypeError(f"expected PRESET=DEALS with PRESET one of {', '.join(presets)}, got {text!r}")
    return preset, int(deals)


def _without_only(args: list[str]) -> list[str]:
    """The command line without ``--only P ...``: the command that makes the whole file."""
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


def sections(text: str) -> dict[str, str]:
    """The preset sections of a generated leaderboard file: preset -> its Markdown, from its ``## `preset```
    heading to the next level-2 heading (each ending in one newline)."""
    found: dict[str, list[str]] = {}
    current: list[str] | None = None
    for line in text.splitlines():
        if line.startswith("## "):
            name = line[3:].strip().strip("`")
            current = found.setdefault(name, [])
        if current is not None:
            current.append(line)
    return {name: "\n".join(lines).rstrip("\n") + "\n" for name, lines in found.items()}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--deals", type=int, default=1000, help="deals per table, three-player presets")
    parser.add_argument("--four-deals", type=int, default=200, help="deals per table, four-player preset")
    parser.add_argument(
        "--size", type=_size, action="append", default=[], help="PRESET=DEALS: one section's deals per table"
    )
    parser.add_argument(
        "--design", choices=("cover", "sets"), default="cover", help="tables of each section (default cover)"
    )
    parser.add_argument("--workers", type=int, default=2, help="processes (default 2)")
    parser.add_argument(
        "--ray",
        nargs="?",
        const="",
        default=None,
        metavar="ADDRESS",
        help="play the deals as Ray tasks, locally or on the cluster at ADDRESS",
    )
    parser.add_argument("--seed", type=int, default=0, help="seed of the deals (default 0)")
    parser.add_argument("--runs", default=os.path.join("runs", "leaderboard"), help="folder of the run folders")
    parser.add_argument("--docs", default=os.path.join("docs", "leaderboard.md"), help="the file to write")
    parser.add_argument(
        "--only",
        nargs="+",
        default=None,
        choices=[p for p, _, _ in SECTIONS],
        help="play only these presets and replace only their sections of an existing --docs file",
    )
    args = parser.parse_args(argv)
    given = list(sys.argv[1:] if argv is None else argv)
    command = shlex.join(["python", "benchmarks/leaderboard.py", *_without_only(given)])
    parts: dict[str, str] = {}
    for preset, agents, players in SECTIONS:
        if args.only and preset not in args.only:
            continue
        deals = dict(args.size).get(preset, args.deals if players == 3 else args.four_deals)
        out = os.path.join(args.runs, f"{preset}-seed{args.seed}-{deals}deals")
        same = shlex.join(
            [
                "sergeant-major",
                "tournament",
                "--agents",
                *agents,
                "--rules",
                preset,
                "--deals",
                str(deals),
                "--design",
                args.design,
                "--seed",
                str(args.seed),
                "--workers",
                str(args.workers),
                "--out",
                out,
            ]
        )
        print(f"{preset}: {same}", file=sys.stderr)
        result = tournament(
            agents, out, deals, "hand", args.seed, args.workers, rules=preset, design=args.design, ray=args.ray
        )
        parts[preset] = markdown(result.board, title=f"`{preset}`", command=same)
    if args.only:
        if not os.path.exists(args.docs):
            print(f"{args.docs} not written: it needs every section; run without --only", file=sys.stderr)
            return 0
        with open(args.docs, encoding="utf-8") as handle:
            kept = sections(handle.read())
        missing = [p for p, _, _ in SECTIONS if p not in parts and p not in kept]
        if missing:
            print(f"{args.docs} not written: it lacks the sections {', '.join(missing)}", file=sys.stderr)
            return 0
        parts = {p: parts.get(p, kept.get(p, "")) for p, _, _ in SECTIONS}
    text = "\n".join(
        [
            "# Leaderboard",
            "",
            "Generated by `benchmarks/leaderboard.py` (do not edit by hand): a duplicate tournament of the shipped",
            "agents (`sergeant-major tournament`; the README's section on it). Made with:",
            "",
            "```",
            command,
            "```",
            "",
            "Size: each section states its deals per table and its design (every deal in every seating at each",
            "table; `cover` seats every pair of agents together, see `sergeant-major tournament --help`).",
            f"Cost: each section ends with the time its tables took on {args.workers} workers (2 CPU cores, "
            "shared with",
            "other work when this file was made, so read the times as upper bounds); it grows linearly with the",
            "deals. Each preset has its own run folder under `runs/leaderboard`: a killed run resumes with the",
            "same command, and an agent appended to a section's list in the script plays only its own tables.",
            "",
            *(parts[p] for p, _, _ in SECTIONS),
        ]
    )
    with atomic_path(args.docs) as tmp, open(tmp, "w", encoding="utf-8") as handle:
        handle.write(text.rstrip("\n") + "\n")
    print(f"wrote {args.docs}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
