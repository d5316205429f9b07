"""Playing strength of a policy, per role, against the heuristic and against pimc, and what each decision type
gains from another agent (``python -m training.evaluation.strength``).

One command gives the figures at a stated size:

    python -m training.evaluation.strength --policy trained --deals 500 --workers 2
    python -m training.evaluation.strength --policy ppo:runs/distill/policy_r0.pt --deals 500 --pimc --game-deals 200

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
  game win rate and its ratio to a fair share (1/3);
- with ``--swap CANDIDATE``: the strength each decision type gains (below).

Every figure has a 95% bootstrap CI over deals. The table is printed as
Markdown and the raw figures are written as JSON with ``--out``. ``--rules``
(default ``standard``) plays every line under another rule set; ``--deals 0``
leaves out the lines against the heuristic (e.g. to run only ``--swap``).

The swap (``--swap CANDIDATE``, :func:`swap`), one decision type at a time::

    python -m training.evaluation.strength --policy trained --deals 0 \
        --swap 'pimc:rollout=policy,exchange=1,bid=1' --swap-deals 200 --out runs/strength/swap.json

For each decision type of the rule set (:func:`agents.mix.decision_types`: exchange, trump, discard and play
under the standard rules; the bids, the call, the quota assignment or the face-up card under section 10's)
the agent ``mix:base=POLICY;TYPE=CANDIDATE`` (:mod:`agents.mix`: the policy, except that decision type,
taken from the candidate) sits at one table with the policy itself and a heuristic (two heuristics with
four players), every deal in all the seatings (6; 24 with four players). The figure is the mix's balance per
hand minus the policy's in the same role on the same deals, per role and in all, with its 95% bootstrap CI:
what taking that one decision type from the candidate gains (negative: loses). The last row is the whole
candidate against the policy at the same table: the total. The table is ``--head-to-head``'s design: the
mix and the policy meet directly, each in every seat of every deal, beside a fixed third player. Hands
(``--swap-mode hand``, the default) are dealt by seat 0 and, where the rule set has an exchange, open
with the exchange of the previous-hand balances ``--start-balances`` (default ``-1,-1,2``, the example of
docs/rules.md 4: the middle up 2 sends one card to each of the others; ``-1,-1,0,2`` with four players), so
that the exchange is played and every row plays the same hands; ``--start-balances none`` plays first hands
(no exchange: its row is left out, as under the auction, whose first hand takes no start balances).
``--swap-mode game`` plays whole games, every decision type at its own frequency, with no start balances.
Cost: one table per decision type plus one, each ``--swap-deals`` deals x 6 seatings.
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import time
from typing import Any

from agents import parse_spec
from agents.mix import decision_types
from sm_env.core.game import role_names
from sm_env.core.rules import RuleSet
from sm_env.files.json_files import write_json
from sm_env.files.paths import check_output_path
from training.evaluation.evaluate import check_agent, check_table_setup, evaluate
from training.evaluation.result import EvalResult
from training.evaluation.statistics import Estimate

DEFAULT_SWAP_BALANCES = {3: (-1, -1, 2), 4: (-1, -1, 0, 2)}
"""The swap's previous-hand balances by seat (seat 0 deals) where the rule set has an exchange: the middle
(the last seat) up 2, one card to each of two down players (docs/rules.md 4's example)."""


def advantages(result: EvalResult, agent: str, baseline: str = "heuristic") -> dict[str, Any]:
    """Per-role balance advantage of ``agent`` over ``baseline`` (with CIs) and its speed."""
    key = (result.agents[0], result.agents[1])
    out = {"all": result.pairwise[key].to_dict()}
    out.update({role: estimate.to_dict() for role, estimate in result.pairwise_roles[key].items()})
    out["ms_per_decision"] = result.timing[result.agents[0]]["ms_per_decision"]
    return out


def at_table(first: str, second: str, rules: RuleSet) -> list[str]:
    """``first`` and ``second`` at one table, every other seat a heuristic."""
    return [first, second] + ["heuristic"] * (rules.num_players - 2)


def swap_balances(text: str | None, rules: RuleSet, mode: str) -> tuple[tuple[int, ...] | None, str]:
    """The swap's start balances (``--start-balances``: None for the default, ``none``, or integers by seat)
    and a note on the hands played; ValueError in one line for balances the rule set cannot have."""
    if mode == "game":
        if text is not None:
            raise ValueError("--start-balances is for --swap-mode hand (whole games open with no exchange)")
        return None, "whole games"
    if text is not None and text.strip().lower() == "none":
        return None, "first hands (no exchange)"
    if text is None:
        if "exchange" not in decision_types(rules) or rules.auction:
            return None, "first hands"
        balances = DEFAULT_SWAP_BALANCES[rules.num_players]
    else:
        try:
            balances = tuple(int(v) for v in text.replace(",", " ").split())
        except ValueError:
            raise ValueError(f"--start-balances: integers by seat like -1,-1,2, or none; got {text!r}") from None
    try:
        check_table_setup(rules, 0, balances, 1)
    except ValueError as err:
        raise ValueError(f"--start-balances {text or balances}: {err}") from None
    return balances, "hands opened by the exchange of the previous-hand balances " + ",".join(map(str, balances))


def swap(
    base: str,
    candidate: str,
    rules: RuleSet,
    deals: int,
    mode: str = "hand",
    seed: int = 7,
    workers: int = 1,
    balances_text: str | None = None,
) -> dict[str, Any]:
    """The swap A/B (module docstring): per decision type of ``rules``, the mix spec, its difference to
    ``base`` per role and in all (each a dict of mean, lo, hi), its ms per decision and wall seconds; the
    same for the whole ``candidate`` as ``total``; the types left out, with why, in ``skipped``."""
    for flag, spec in (("--policy", base), ("--swap", candidate)):
        if parse_spec(spec)[0] == "mix":
            raise ValueError(f"{flag} {spec!r}: a mix cannot be swapped into a mix (give its parts' agents)")
        try:
            check_agent(spec, rules)
        except ValueError as err:
            raise ValueError(f"{flag}: {err}") from None
    balances, hands = swap_balances(balances_text, rules, mode)
    table = at_table("mix", base, rules)
    out: dict[str, Any] = {
        "base": base,
        "candidate": candidate,
        "rules": rules.name,
        "mode": mode,
        "deals": deals,
        "seed": seed,
        "start_balances": None if balances is None else list(balances),
        "hands": hands,
        "table": table,
        "roles": list(role_names(rules)),
        "order": list(decision_types(rules)),
        "types": {},
        "skipped": {},
    }
    rows = [(name, f"mix:base={base};{name}={candidate}") for name in out["order"]]
    for name, spec in [*rows, ("total", candidate)]:
        if name == "exchange" and mode == "hand" and balances is None:
            out["skipped"][name] = "no exchange in a first hand (give --start-balances, or --swap-mode game)"
            continue
        started = time.perf_counter()
        result = evaluate(
            at_table(spec, base, rules),
            deals,
            mode,
            seed,
            workers,
            rules=rules,
            start_balances=balances,
            progress=False,
        )
        row = advantages(result, spec, base)
        row["spec"] = spec
        row["wall_seconds"] = time.perf_counter() - started
        if name == "total":
            out["total"] = row
        else:
            out["types"][name] = row
    return out


def swap_lines(figures: dict[str, Any]) -> list[str]:
    """The Markdown of :func:`swap`'s figures: a header, then one row per decision type and the total."""
    roles = figures["roles"]
    base, candidate = figures["base"], figures["candidate"]
    seats = len(figures["table"])
    others = f"{base} and " + ("a heuristic" if seats == 3 else f"{seats - 2} heuristics")
    lines = [
        f"swap: {base} with one decision type taken from {candidate} (the agent mix:base={base};TYPE={candidate}), "
        f"at one table with {others}; {figures['mode']} mode, {figures['deals']} deals x "
        f"{math.factorial(seats)} seatings, rules {figures['rules']}, seed {figures['seed']}, {figures['hands']}. "
        f"Figure: the mix's balance per hand minus {base}'s in the same role on the same deals (95% CI); "
        f"total: {candidate} itself minus {base}",
        "",
        f"| decision type from {candidate} | {' | '.join(roles)} | all | ms/decision | wall s |",
        f"| --- | {' | '.join('---' for _ in roles)} | --- | ---: | ---: |",
    ]
    rows = [(name, figures["types"].get(name, figures["skipped"].get(name))) for name in figures["order"]]
    if "total" in figures:
        rows.append(("total", figures["total"]))
    for name, row in rows:
        if isinstance(row, str):
            lines.append(f"| {name} | {' | '.join('-' for _ in roles)} | not played: {row} | | |")
            continue
        cells = " | ".join(_cell(row[r]) for r in (*roles, "all"))
        label = f"all ({candidate} itself)" if name == "total" else name
        lines.append(f"| {label} | {cells} | {row['ms_per_decision']:.3f} | {row['wall_seconds']:.0f} |")
    return lines


def _cell(e: dict[str, float | None], signed: bool = True) -> str:
    return Estimate.from_dict(e).text(signed)


PROG = "python -m training.evaluation.strength"


def main(argv: list[str] | None = None, prog: str = PROG) -> int:
    """Command line (module docstring); the exit status (2: bad input)."""
    parser = argparse.ArgumentParser(prog=prog, description=__doc__.split("\n\n")[0])
    parser.add_argument("--policy", default="trained", help="agent spec of the policy (default: trained)")
    parser.add_argument(
        "--deals", type=int, default=500, help="hand-mode deals (each in 3 rotations); 0: no line against the heuristic"
    )
    parser.add_argument("--pimc", action="store_true", help="also measure pimc against the heuristic")
    parser.add_argument("--pimc-spec", default="pimc", help="the search to compare with (default: pimc)")
    parser.add_argument(
        "--head-to-head", type=int, default=0, help="deals of policy, search and heuristic at one table (0: none)"
    )
    parser.add_argument("--game-deals", type=int, default=0, help="whole games against two heuristics (0: none)")
    parser.add_argument(
        "--swap",
        default=None,
        metavar="CANDIDATE",
        help="agent spec: the policy with one decision type at a time taken from it, against the policy",
    )
    parser.add_argument("--swap-deals", type=int, default=200, help="deals of each swap table (default 200)")
    parser.add_argument(
        "--swap-mode", choices=("hand", "game"), default="hand", help="swap: single hands or whole games (hand)"
    )
    parser.add_argument(
        "--start-balances",
        default=None,
        help="swap, hand mode: previous-hand balances by seat (seat 0 deals), e.g. -1,-1,2 (the default where "
        "the rules have an exchange), or none (first hands, no exchange)",
    )
    parser.add_argument("--rules", default="standard", help="rule preset of every line (default: standard)")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--out", default=None, help="write the figures as JSON here")
    args = parser.parse_args(argv)
    try:
        if args.out:
            check_output_path(args.out, "--out")
        figures, lines = run(args)
    except ValueError as err:
        print(f"{parser.prog}: error: {err}", file=sys.stderr)
        return 2
    print("\n".join(lines))
    if args.out:
        os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
        write_json(args.out, figures)
    return 0


def run(args: argparse.Namespace) -> tuple[dict[str, Any], list[str]]:
    """Every line asked for by ``args``: the figures (for JSON) and the Markdown lines."""
    rules = RuleSet.from_any(args.rules)
    roles = role_names(rules)
    if args.deals < 0 or args.swap_deals < 1:
        raise ValueError(f"--deals must be >= 0 and --swap-deals >= 1, got {args.deals} and {args.swap_deals}")
    figures: dict[str, Any] = {"config": vars(args).copy()}
    lines: list[str] = []
    agents = ([args.policy] + ([args.pimc_spec] if args.pimc else [])) if args.deals else []
    if agents:
        lines += [
            f"hand mode, {args.deals} deals x {rules.num_players} rotations, rules {rules.name}, seed {args.seed}; "
            "advantage = balance per hand minus the heuristic's in the same role on the same deals (95% CI)",
            "",
            f"| agent | {' | '.join(roles)} | all | ms/decision | wall s |",
            f"| --- | {' | '.join('---' for _ in roles)} | --- | ---: | ---: |",
        ]
    for spec in agents:
        started = time.perf_counter()
        result = evaluate([spec, "heuristic"], args.deals, "hand", args.seed, args.workers, rules=rules, progress=False)
        wall = time.perf_counter() - started
        adv = advantages(result, spec)
        adv["wall_seconds"] = wall
        figures[spec] = adv
        cells = " | ".join(_cell(adv[r]) for r in (*roles, "all"))
        lines.append(f"| {spec} | {cells} | {adv['ms_per_decision']:.3f} | {wall:.0f} |")
    if args.pimc and agents:
        ratio = figures[args.pimc_spec]["ms_per_decision"] / max(figures[args.policy]["ms_per_decision"], 1e-9)
        figures["speed_ratio"] = ratio
        lines.append("")
        lines.append(f"{args.policy} picks a move {ratio:.0f} times faster than {args.pimc_spec}.")
    if args.head_to_head:
        started = time.perf_counter()
        specs = at_table(args.policy, args.pimc_spec, rules)
        result = evaluate(specs, args.head_to_head, "hand", args.seed, args.workers, rules=rules, progress=False)
        wall = time.perf_counter() - started
        key = (result.agents[0], result.agents[1])
        diff = {"all": result.pairwise[key].to_dict()}
        diff.update({role: estimate.to_dict() for role, estimate in result.pairwise_roles[key].items()})
        figures["head_to_head"] = {"difference": diff, "deals": args.head_to_head, "wall_seconds": wall}
        cells = " | ".join(_cell(diff[r]) for r in (*roles, "all"))
        lines += [
            "",
            f"head to head, {args.head_to_head} deals x {math.factorial(len(specs))} seatings "
            f"({', '.join(specs)}; {wall:.0f} s): {args.policy} minus {args.pimc_spec}, balance per hand in the "
            "same role",
            "",
            f"| {' | '.join(roles)} | all |",
            f"| {' | '.join('---' for _ in roles)} | --- |",
            f"| {cells} |",
        ]
    if args.game_deals:
        started = time.perf_counter()
        result = evaluate(
            [args.policy, "heuristic"], args.game_deals, "game", args.seed, args.workers, rules=rules, progress=False
        )
        wall = time.perf_counter() - started
        win = result.stats[result.agents[0]]["all"]["win_rate"].to_dict()
        fair = 1 / rules.num_players
        figures["game"] = {"win_rate": win, "wall_seconds": wall, "deals": args.game_deals}
        lines.append("")
        lines.append(
            f"game mode, {args.game_deals} deals x {rules.num_players} rotations: {args.policy} wins "
            f"{_cell(win, signed=False)} of its games against {rules.num_players - 1} heuristics "
            f"({win['mean'] / fair:.2f} times a fair share of 1/{rules.num_players}; {wall:.0f} s)"
        )
    if args.swap:
        figures["swap"] = swap(
            args.policy,
            args.swap,
            rules,
            args.swap_deals,
            args.swap_mode,
            args.seed,
            args.workers,
            args.start_balances,
        )
        lines += ([""] if lines else []) + swap_lines(figures["swap"])
    return figures, lines


if __name__ == "__main__":
    sys.exit(main())
