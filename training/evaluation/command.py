"""``sergeant-major eval``: the command line of :func:`training.evaluation.evaluate.evaluate`.

    sergeant-major eval --agents heuristic pimc random --deals 1000 --mode hand --workers 2 --seed 0
    sergeant-major eval --agents pimc ismcts heuristic --deals 10000 --ray HEAD:6379

Prints the table, and saves ``result.json``, ``result.csv`` and a PNG plot in ``--out`` (default a fresh
``runs/eval/<agents>-<mode>-<seed>``, ``-2``, ... as a new training run's folder).
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from typing import Any

from sm_env.files.paths import check_output_path
from training.common.folders import fresh_run_dir
from training.common.ray_cluster import RayOptions, add_ray_arguments

from .evaluate import evaluate


def balances_arg(text: str) -> tuple[int, ...]:
    try:
        values = tuple(int(v) for v in text.replace(",", " ").split())
    except ValueError:
        raise argparse.ArgumentTypeError(f"start balances are integers like 2,-1,-1, got {text!r}") from None
    if len(values) not in (3, 4) or sum(values) != 0:
        raise argparse.ArgumentTypeError(
            f"start balances are three integers (four with four players) summing to 0, got {text!r}"
        )
    return values


def add_deal_arguments(parser: argparse.ArgumentParser, max_hands: str = "", bootstrap: str = "") -> None:
    """The options of how the deals are played and measured, shared with ``sergeant-major tournament``
    (:func:`deal_settings` reads them); ``max_hands``, ``bootstrap``: their ranges for the help ("1-1000, ")."""
    parser.add_argument(
        "--mode", choices=("hand", "game"), default="hand", help="single hands or whole games (default hand)"
    )
    parser.add_argument("--rules", default="standard", help="rule preset name (default standard)")
    parser.add_argument("--workers", type=int, default=None, help="processes (default min(2, cpus))")
    add_ray_arguments(parser, "the deals")
    parser.add_argument("--seed", type=int, default=0, help="seed of the deals (default 0)")
    parser.add_argument("--dealer", type=int, default=0, help="hand mode: the dealing seat (default 0)")
    parser.add_argument(
        "--start-balances",
        type=balances_arg,
        default=None,
        help="hand mode: previous-hand balances by seat, e.g. 2,-1,-1 (opens with an exchange)",
    )
    parser.add_argument(
        "--max-hands",
        type=int,
        default=30,
        help=f"game mode: truncate after this many hands ({max_hands}default 30)",
    )
    parser.add_argument("--bootstrap", type=int, default=2000, help=f"bootstrap resamplings ({bootstrap}default 2000)")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")


def deal_settings(args: argparse.Namespace) -> dict[str, Any]:
    """The keywords of :func:`evaluate` and :func:`training.evaluation.tournament.tournament` that the options of
    :func:`add_deal_arguments` give (the mode, the seed and the workers are their positional arguments)."""
    return {
        "rules": args.rules,
        "dealer": args.dealer,
        "start_balances": args.start_balances,
        "max_hands": args.max_hands,
        "bootstrap": args.bootstrap,
        "progress": not args.no_progress,
        "ray": RayOptions.from_args(args),
    }


def main(argv: Sequence[str] | None = None) -> int:
    """Command line: run an evaluation, print the table, save JSON, CSV and PNG."""
    parser = argparse.ArgumentParser(
        prog="sergeant-major eval", description="Duplicate evaluation of agents: the same deals in every seating."
    )
    parser.add_argument(
        "--agents",
        nargs="+",
        required=True,
        help="2 or 3 agent specs (2 or 4 with four players): random, heuristic, pimc:samples=20, ppo:PATH... "
        "(rllib:PATH loads a pickle: only load policies you trust)",
    )
    parser.add_argument(
        "--deals",
        type=int,
        default=1000,
        help="deals to play, each in every seating (default 1000); 1000 take about 15 s for heuristic against "
        "random, about 3 minutes with pimc",
    )
    add_deal_arguments(parser)
    parser.add_argument(
        "--out",
        default=None,
        help="output folder, refused if it holds an evaluation (default runs/eval/<agents>-<mode>-<seed>, or the "
        "first free <...>-2, <...>-3, ... if that one is used)",
    )
    args = parser.parse_args(argv)
    if args.out is not None and os.path.exists(os.path.join(args.out, "result.json")):
        print(
            f"sergeant-major eval: error: {args.out} already holds an evaluation (result.json): give another --out, "
            "or leave --out out to write to a fresh folder under runs/eval",
            file=sys.stderr,
        )
        return 2
    try:
        if args.out is not None:
            check_output_path(args.out, "--out", folder=True)
        if not args.no_progress:  # a trained policy loads torch first: seconds with nothing else to show
            print(f"loading the agents: {', '.join(args.agents)}", file=sys.stderr, flush=True)
        result = evaluate(args.agents, args.deals, args.mode, args.seed, args.workers, **deal_settings(args))
    except ValueError as err:
        print(f"sergeant-major eval: error: {err}", file=sys.stderr)
        return 2
    print(result.table())
    out = args.out
    if out is None:  # a new folder, never an earlier evaluation's (as a new training run's: training/common/runs.py)
        name = "-".join(a.replace(":", "_").replace("/", "_").replace("=", "") for a in args.agents)
        out, _ = fresh_run_dir(os.path.join("runs", "eval"), f"{name}-{args.mode}-{args.seed}")
    if not args.no_progress:
        print(f"\nwriting the results and the plot to {out}", file=sys.stderr, flush=True)
    paths = result.save(out)
    print(f"\nsaved {paths['json']}, {paths['csv']}, {paths['png']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
