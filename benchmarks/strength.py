"""Playing strength of a policy, per role, against the heuristic and against pimc.

One command reproduces the learning issue's figures at a stated size:

    python benchmarks/strength.py --policy trained --deals 500 --workers 2
    python benchmarks/strength.py --policy ppo:runs/distill/policy_r0.pt --deals 500 --pimc --game-deals 200

It runs the project's duplicate evaluation (:mod:`training.evaluation.evaluate`) with
the same deal seed for every line, so every agent meets the same deals:

- ``POLICY vs heuristic`` (hand mode): the policy in one seat, two
  heuristics in the others, in the 3 rotations; the *advantage* per role is
  the policy's balance in that role minus the heuristic's balance in the same
  role on the same deals;
- with ``--pimc``: the same for ``pimc`` (its default settings), so the two
  advantages can be compared role by role, plus the speed ratio of the two
  (milliseconds per decision, measured in the same run);
- with ``--head-to-head N``: the policy, the search and a heuristic at one
  table, in all 6 seatings of N deals; the paired difference per role is the
  policy's balance minus the search's in the same role on the same deals
  (positive: the policy plays that role better);
- with ``--game-deals N``: whole games against two heuristics, the policy's
  game win rate and its ratio to a fair share (1/3).

Every figure has a 95% bootstrap CI over deals. The table is printed as
Markdown and the raw figures are written as JSON with ``--out``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from training.evaluation.evaluate import ROLES, EvalResult, evaluate  # noqa: E402


def advantages(result: EvalResult, agent: str, baseline: str = "heuristic") -> dict[str, Any]:
    """Per-role balance advantage of ``agent`` over ``baseline`` (with CIs) and its speed."""
    key = (result.agents[0], result.agents[1])
    out = {"all": result.pairwise[key].to_dict()}
    out.update({role: result.pairwise_roles[key][role].to_dict() for role in ROLES})
    out["ms_per_decision"] = result.timing[result.agents[0]]["ms_per_decision"]
    return out


def _cell(e: dict[str, float], signed: bool = True) -> str:
    f = "+.3f" if signed else ".3f"
    return f"{e['mean']:{f}} [{e['lo']:{f}}, {e['hi']:{f}}]"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="benchmarks/strength.py", description=__doc__.split("\n\n")[0])
    parser.add_argument("--policy", default="trained", help="agent spec of the policy (default: trained)")
    parser.add_argument("--deals", type=int, default=500, help="hand-mode deals (each in 3 rotations)")
    parser.add_argument("--pimc", action="store_true", help="also measure pimc against the heuristic")
    parser.add_argument("--pimc-spec", default="pimc", help="the search to compare with (default: pimc)")
    parser.add_argument(
        "--head-to-head", type=int, default=0, help="deals of policy, search and heuristic at one table (0: none)"
    )
    parser.add_argument("--game-deals", type=int, default=0, help="whole games against two heuristics (0: none)")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--out", default=None, help="write the figures as JSON here")
    args = parser.parse_args(argv)

    figures: dict[str, Any] = {"config": vars(args).copy()}
    lines = [
        f"hand mode, {args.deals} deals x 3 rotations, seed {args.seed}; advantage = balance per hand minus the "
        "heuristic's in the same role on the same deals (95% CI)",
        "",
        "| agent | dealer | eldest | middle | all | ms/decision | wall s |",
        "| --- | --- | --- | --- | --- | ---: | ---: |",
    ]
    agents = [args.policy] + ([args.pimc_spec] if args.pimc else [])
    for spec in agents:
        started = time.perf_counter()
        result = evaluate([spec, "heuristic"], args.deals, "hand", args.seed, args.workers, progress=False)
        wall = time.perf_counter() - started
        adv = advantages(result, spec)
        adv["wall_seconds"] = wall
        figures[spec] = adv
        cells = " | ".join(_cell(adv[r]) for r in (*ROLES, "all"))
        lines.append(f"| {spec} | {cells} | {adv['ms_per_decision']:.3f} | {wall:.0f} |")
    if args.pimc:
        ratio = figures[args.pimc_spec]["ms_per_decision"] / max(figures[args.policy]["ms_per_decision"], 1e-9)
        figures["speed_ratio"] = ratio
        lines.append("")
        lines.append(f"{args.policy} picks a move {ratio:.0f} times faster than {args.pimc_spec}.")
    if args.head_to_head:
        started = time.perf_counter()
        specs = [args.policy, args.pimc_spec, "heuristic"]
        result = evaluate(specs, args.head_to_head, "hand", args.seed, args.workers, progress=False)
        wall = time.perf_counter() - started
        key = (result.agents[0], result.agents[1])
        diff = {"all": result.pairwise[key].to_dict()}
        diff.update({role: result.pairwise_roles[key][role].to_dict() for role in ROLES})
        figures["head_to_head"] = {"difference": diff, "deals": args.head_to_head, "wall_seconds": wall}
        cells = " | ".join(_cell(diff[r]) for r in (*ROLES, "all"))
        lines += [
            "",
            f"head to head, {args.head_to_head} deals x 6 seatings ({args.policy}, {args.pimc_spec}, heuristic; "
            f"{wall:.0f} s): {args.policy} minus {args.pimc_spec}, balance per hand in the same role",
            "",
            "| dealer | eldest | middle | all |",
            "| --- | --- | --- | --- |",
            f"| {cells} |",
        ]
    if args.game_deals:
        started = time.perf_counter()
        result = evaluate([args.policy, "heuristic"], args.game_deals, "game", args.seed, args.workers, progress=False)
        wall = time.perf_counter() - started
        win = result.stats[result.agents[0]]["all"]["win_rate"].to_dict()
        figures["game"] = {"win_rate": win, "wall_seconds": wall, "deals": args.game_deals}
        lines.append("")
        lines.append(
            f"game mode, {args.game_deals} deals x 3 rotations: {args.policy} wins {_cell(win, signed=False)} "
            f"of its games against two heuristics ({win['mean'] * 3:.2f} times a fair share of 1/3; {wall:.0f} s)"
        )
    print("\n".join(lines))
    if args.out:
        os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
        with open(args.out, "w", encoding="utf-8") as handle:
            json.dump(figures, handle, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
