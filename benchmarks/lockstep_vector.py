"""Lockstep check of the batched engine against the reference Game on many games.

Every decision of ``--games`` random games (spread over every preset, whole
games plus one-hand episodes) is compared: player to act, legal set,
observation vector (bit for bit), rewards and the end; every finished game's
record must equal the reference record, and every tenth is replayed with
``sm_env.replay``. Exits with status 1 at the first difference.

    python benchmarks/lockstep_vector.py [--games 10000] [--max-hands 12] [--all-seats] [--rules PRESET ...]
        [--pass-rate P]

``--rules`` (repeatable) checks only the named presets (whole games), ``--games`` spread over them.
A preset that ends after a fixed number of hands (``fixed_hands``, or 18 with ``calls``) gets at least
one hand more than that. ``--pass-rate P`` plays action 58 (pass, decline) with chance P wherever it is
legal; without ``--rules`` the auction preset is also run with P = 0.5, so that many deals are passed out.
"""

from __future__ import annotations

import argparse
import sys
import time

from sm_env.compiled.batch import supported_presets
from sm_env.compiled.lockstep import LockstepError, lockstep
from sm_env.core.rules import PRESETS


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--games", type=int, default=10_000, help="games in all (default 10000)")
    parser.add_argument("--max-hands", type=int, default=12, help="hand limit of a game (default 12)")
    parser.add_argument("--slots", type=int, default=64, help="VectorGame slots (default 64)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--all-seats", action="store_true", help="compare every seat's observation")
    parser.add_argument(
        "--rules", action="append", metavar="PRESET", help="check only this preset (repeatable; default: every one)"
    )
    parser.add_argument("--pass-rate", type=float, default=0.0, help="chance of passing where 58 is legal (default 0)")
    args = parser.parse_args(argv)
    supported = supported_presets()
    for name in args.rules or ():
        if name not in supported:
            known = "a preset the compiled engine runs" if name in PRESETS else "a preset name"
            parser.error(f"--rules {name!r} is not {known}; these are: {', '.join(supported)}")
    rate = args.pass_rate
    if not 0.0 <= rate <= 1.0:
        parser.error(f"--pass-rate must be a chance 0..1, got {rate}")
    if args.rules:
        runs = [(name, "game", rate) for name in args.rules]
    else:
        runs = [(name, "game", rate) for name in supported] + [("standard", "hand", rate), ("6-3-8", "hand", rate)]
        if "woburn-auction" in supported:
            runs.append(("woburn-auction", "game", 0.5))
    per_run = -(-args.games // len(runs))
    total_games = total_decisions = 0
    start = time.perf_counter()
    for name, episode, pass_rate in runs:
        rules = PRESETS[name]
        fixed = rules.fixed_hands or (18 if rules.calls else None)
        max_hands = max(args.max_hands, fixed + 1) if fixed else args.max_hands
        try:
            result = lockstep(
                name,
                num_games=per_run,
                num_slots=args.slots,
                seed=args.seed,
                episode=episode,
                max_hands=max_hands,
                all_seats=args.all_seats,
                pass_rate=pass_rate,
            )
        except LockstepError as err:
            print(f"MISMATCH {name} ({episode} episodes): {err}")
            return 1
        total_games += result.games
        total_decisions += result.decisions
        passing = f" pass {pass_rate:g}" if pass_rate else ""
        passed = f" ({result.passed_out} deals passed out)" if result.passed_out else ""
        print(
            f"{name:<20} {episode:<5}{passing} {result.games:6d} games {result.hands:7d} hands "
            f"{result.decisions:9d} decisions: identical{passed}",
            flush=True,
        )
    print(f"all identical: {total_games} games, {total_decisions} decisions in {time.perf_counter() - start:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
