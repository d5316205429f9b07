"""Duplicate A/Bs of the heuristic's section 10 decisions, and the fit of the estimates they use.

Each A/B plays one candidate rule for one decision against two copies of another (the rule as it was before
this work, ``before``, or ``leader`` for the quota assignment, unless ``--baseline`` says otherwise), every
other decision by the heuristic, on the preset where the decision occurs, with the project's duplicate evaluation
(:func:`training.evaluation.evaluate.evaluate`: the same deals in the 3 rotations). The figure is the
candidate's balance per hand minus the baseline's, with its 95% bootstrap CI over deals::

    python -m training.evaluation.heuristic_ab ab calls --mode game --deals 1000 --seed 1  # calls, whole 18-hand games
    python -m training.evaluation.heuristic_ab ab calls --deals 2000 --seed 1              # calls, hand mode (all open)
    python -m training.evaluation.heuristic_ab ab assign --deals 2000 --seed 1             # dealer-assigns, whole games
    python -m training.evaluation.heuristic_ab ab auction --candidate m+0.0 --deals 2000   # woburn-auction, hand mode
    python -m training.evaluation.heuristic_ab ab take --candidate discard --deals 5000    # 9-5-3-one-card, hand mode
    python -m training.evaluation.heuristic_ab all --deals 1000                            # every candidate, seed 0

``--candidate kept`` (the default) is the heuristic as it is (``agents.players.heuristic``); the other candidates
are listed by ``python -m training.evaluation.heuristic_ab list`` (for the auction and the face-up card the kept
rule is the old one: no candidate beat it, docs/results/heuristic-ab.md). The candidate agents are registered as the
agent kind ``ab`` for the run only, so the evaluation runs in this process (one worker).

``fit`` measures the estimates (``SUIT_WEIGHTS``, ``NT_WEIGHTS``, ``MIZ_WEIGHTS`` of agents/players/heuristic.py):
on ``--deals`` deals of the ``calls`` preset (seat 0 deals, no exchange) it plays the hand out once per call
with the heuristic in every seat and fits the dealer's tricks by least squares on the features of its 16
dealt cards (a quarter of the deals held out for the R^2); it also prints each call's mean balance.
``speed`` times the heuristic's decision rules (before and now) on positions of each decision.
"""

from __future__ import annotations

import argparse
import contextlib
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np

import agents
from agents.players import heuristic as h
from agents.players.base import Agent
from agents.players.unseen import outstanding_of
from sm_env.core.cards import SUIT_MASK, from_mask
from sm_env.core.game import (
    ASSIGN,
    BID,
    NT,
    TAKE,
    TRUMP,
    TRUMP_ACTION_BASE,
    Game,
)
from sm_env.core.knowledge import PlayerView, player_view
from sm_env.core.rules import RuleSet

# ---------------------------------------------------------------- the rules before the measured estimates

_DANGER = {12: 1.0, 11: 0.7, 10: 0.4, 9: 0.2}


def before_estimate(hand: int, trump: int) -> float:
    """The old suit estimate of the calls (the auction's, :func:`agents.players.heuristic.auction_estimate`, for
    ``trump``)."""
    estimate = 2.0 + (hand & SUIT_MASK[trump]).bit_count()
    for s in range(4):
        cards = hand & SUIT_MASK[s]
        if s != trump and cards:
            estimate += (cards >> (13 * s + 12)) & 1
            if (cards >> (13 * s + 11)) & 1 and cards.bit_count() >= 2:
                estimate += 0.5
    return estimate


def before_call(view: PlayerView) -> int:
    """The old call rule: suits by the old estimate, NT by tops, Miz by the danger of its high cards."""
    hand, left = view.hand, view.calls_left[view.seat]
    values = {}
    for call in range(6):
        if not left >> call & 1:
            continue
        if call < NT:
            values[call] = before_estimate(hand, call) - 8
        elif call == NT:
            tops = 1.0
            for s in range(4):
                cards = hand & SUIT_MASK[s]
                tops += (cards >> (13 * s + 12)) & 1
                if (cards >> (13 * s + 11)) & 1 and cards.bit_count() >= 2:
                    tops += 0.5
            values[call] = tops - 8
        else:
            dangers = sorted((_DANGER.get(c % 13, 0.0) for c in from_mask(hand)), reverse=True)
            values[call] = 3 - sum(dangers[4:])
    return TRUMP_ACTION_BASE + max(values, key=lambda c: (values[c], -c))


# ---------------------------------------------------------------- candidates


def _bid(margin: float, estimate: Callable[[int], float] = h.estimate_tricks) -> Callable[[PlayerView], int]:
    return lambda view: h.choose_bid(view.hand, view.legal, margin, estimate)


def _call(reserve: tuple[float, ...]) -> Callable[[PlayerView], int]:
    return lambda view: TRUMP_ACTION_BASE + h.choose_call(view.hand, view.calls_left[view.seat], reserve)


def _assign(high_to: str) -> Callable[[PlayerView], int]:
    return lambda view: h.choose_assignment(view, high_to)


def _take(rule: str) -> Callable[[PlayerView], int]:
    return lambda view: h.choose_take(view.hand, view.face_up, view.trump, outstanding_of(view), rule)


def _bid_last(margin: float, estimate: Callable[[int], float]) -> Callable[[PlayerView], int]:
    """The kept rule, but ``estimate`` and ``margin`` when both others have passed without a bid (the
    alternative is a new deal)."""

    def rule(view: PlayerView) -> int:
        last = view.auction_high is None and all(view.auction_passed[s] for s in range(3) if s != view.seat)
        if last:
            return h.choose_bid(view.hand, view.legal, margin, estimate)
        return h.choose_bid(view.hand, view.legal)

    return rule


def _take_always(view: PlayerView) -> int:
    """Always take the face-up card, putting out the card the discard rules would discard first."""
    return h.choose_discard(view.hand, view.trump, outstanding_of(view), 1)


MEAN_CALL = h.CALL_MEANS


@dataclass(frozen=True)
class Decision:
    """One decision: its phase, the preset and mode of its A/B, and the candidate rules by name."""

    phase: int
    preset: str
    mode: str
    candidates: dict[str, Callable[[PlayerView], int]] = field(default_factory=dict)


DECISIONS: dict[str, Decision] = {
    "auction": Decision(
        BID,
        "woburn-auction",
        "hand",
        {
            "before": _bid(0.0, h.auction_estimate),
            **{f"before{m:+.1f}": _bid(m, h.auction_estimate) for m in (-0.5, 0.5)},
            **{f"m{m:+.1f}": _bid(m) for m in (-1.0, -0.5, 0.0, 0.5, 1.0)},
            "last-fitted": _bid_last(0.0, h.estimate_tricks),
            "last-0.5": _bid_last(-0.5, h.auction_estimate),
            "last+0.5": _bid_last(0.5, h.auction_estimate),
        },
    ),
    "calls": Decision(
        TRUMP,
        "calls",
        "hand",
        {
            "before": before_call,
            "fitted": _call((0.0,) * 6),
            "reserve0.5": _call(tuple(0.5 * m for m in MEAN_CALL)),
            "reserve1": _call(MEAN_CALL),
            "reserve1.5": _call(tuple(1.5 * m for m in MEAN_CALL)),
            "reserve2": _call(tuple(2 * m for m in MEAN_CALL)),
        },
    ),
    "assign": Decision(
        ASSIGN, "dealer-assigns", "game", {k: _assign(k) for k in ("leader", "trailer", "eldest", "middle")}
    ),
    "take": Decision(
        TAKE,
        "9-5-3-one-card",
        "hand",
        {"before": _take("worth"), "discard": _take("discard"), "always": _take_always},
    ),
}
BASELINE = {"auction": "before", "calls": "before", "assign": "leader", "take": "before"}


class VariantAgent(Agent):
    """The heuristic with one decision made by another rule."""

    name = "ab"

    def __init__(self, phase: int, rule: Callable[[PlayerView], int]) -> None:
        super().__init__()
        self.phase, self.rule = phase, rule

    def act(self, view: PlayerView, observation: dict[str, Any] | None = None) -> int:
        return self.rule(view) if view.phase == self.phase else h.heuristic_action(view)


def _factory(rest: str, params: dict[str, str], seed: int | None) -> Agent:
    decision = DECISIONS[params["decision"]]
    return VariantAgent(decision.phase, decision.candidates[params["rule"]])


@contextlib.contextmanager
def registered() -> Iterator[None]:
    """The agent kind ``ab`` (``ab:decision=NAME,rule=NAME``) in the registry while the block runs."""
    agents._FACTORIES["ab"] = _factory
    try:
        yield
    finally:
        agents._FACTORIES.pop("ab", None)


def spec(decision: str, rule: str) -> str:
    """The agent spec of a candidate (``kept``: the heuristic itself)."""
    if rule == "kept":
        return "heuristic"
    if rule not in DECISIONS[decision].candidates:
        raise ValueError(f"no candidate {rule!r} for {decision}; see the list command")
    return f"ab:decision={decision},rule={rule}"


def run_ab(decision: str, candidate: str, baseline: str, deals: int, seed: int, mode: str | None) -> dict[str, Any]:
    """One duplicate A/B; the figures of one line of the table."""
    from training.evaluation.evaluate import evaluate

    d = DECISIONS[decision]
    mode = mode or d.mode
    a, b = spec(decision, candidate), spec(decision, baseline)
    started = time.perf_counter()
    with registered():
        result = evaluate([a, b], deals=deals, mode=mode, seed=seed, workers=1, rules=d.preset, progress=False)
    wall = time.perf_counter() - started
    key = (result.agents[0], result.agents[1])
    diff = result.pairwise[key]
    dealer = result.pairwise_roles[key]["dealer"]
    return {
        "decision": decision,
        "preset": d.preset,
        "mode": mode,
        "candidate": candidate,
        "baseline": baseline,
        "deals": deals,
        "seed": seed,
        "diff": diff.text(),
        "dealer": dealer.text(),
        "above_zero": diff.lo > 0,
        "wall_s": round(wall, 1),
    }


def _row(r: dict[str, Any]) -> str:
    return (
        f"| {r['decision']} | `{r['preset']}` {r['mode']} | {r['candidate']} | {r['baseline']} | {r['deals']} "
        f"| {r['seed']} | {r['diff']} | {r['dealer']} | {r['wall_s']} |"
    )


HEADER = (
    "| decision | preset, mode | candidate | baseline | deals | seed | candidate - baseline per hand | as dealer "
    "| wall s |\n| --- | --- | --- | --- | --- | --- | --- | --- | --- |"
)


# ---------------------------------------------------------------- fit


def fit(deals: int, seed: int) -> None:
    """Fit and print the estimates (see the module docstring)."""
    rules = RuleSet.from_any("calls")
    hands, tricks = [], np.zeros((deals, 6))
    started = time.perf_counter()
    for i in range(deals):
        for call in range(6):
            game = Game(rules, seed=seed + i, first_dealer=0, max_hands=1)
            if call == 0:
                hands.append(player_view(game, 0).hand)
            game.apply(TRUMP_ACTION_BASE + call)
            while game.current_player is not None:
                game.apply(h.heuristic_action(player_view(game, game.current_player)))
            tricks[i, call] = game.history[-1].tricks_won[0]
    print(f"{deals} deals x 6 calls played in {time.perf_counter() - started:.1f} s")
    train = np.arange(deals) < deals * 3 // 4
    print(
        "mean balance by call:", [round(float(v), 2) for v in (*(tricks[:, :5].mean(0) - 8), 3 - tricks[:, 5].mean())]
    )
    sets = {
        "SUIT_WEIGHTS": ([h.suit_features(x, s) for s in range(4) for x in hands], tricks[:, :4].T.reshape(-1)),
        "NT_WEIGHTS": ([h.nt_features(x) for x in hands], tricks[:, 4]),
        "MIZ_WEIGHTS": ([h.miz_features(x) for x in hands], tricks[:, 5]),
    }
    for name, (rows, y) in sets.items():
        x = np.array(rows, dtype=float)
        mask = np.tile(train, len(y) // deals)
        w, *_ = np.linalg.lstsq(x[mask], y[mask], rcond=None)
        pred = x[~mask] @ w
        r2 = 1 - ((y[~mask] - pred) ** 2).mean() / y[~mask].var()
        print(f"{name} = {tuple(round(float(v), 2) for v in w)}  held-out R^2 {r2:.3f}")
    old = np.array([before_estimate(x, s) for s in range(4) for x in hands])
    y = tricks[:, :4].T.reshape(-1)
    print(
        f"before: suit estimate bias {float((old - y).mean()):+.2f}, rmse {float(np.sqrt(((old - y) ** 2).mean())):.2f}"
    )


# ---------------------------------------------------------------- speed


def speed(positions: int, seed: int) -> None:
    """Microseconds per decision (the agent's ``act``) of the baseline rule and of the heuristic, on positions of
    each decision reached in heuristic self-play (games of 4 hands)."""
    for name, d in DECISIONS.items():
        views: list[PlayerView] = []
        i = 0
        while len(views) < positions:
            game = Game(d.preset, seed=seed + i, max_hands=4)
            i += 1
            while game.current_player is not None:
                view = player_view(game, game.current_player)
                if view.phase == d.phase:
                    views.append(view)
                game.apply(h.heuristic_action(view))
        base = VariantAgent(d.phase, d.candidates[BASELINE[name]])
        rules = {BASELINE[name]: base.act, "kept": h.HeuristicAgent().act}
        cells = []
        for label, rule in rules.items():
            started = time.perf_counter()
            for view in views:
                rule(view)
            cells.append(f"{label} {1e6 * (time.perf_counter() - started) / len(views):.1f} us")
        print(f"{name}: {len(views)} positions: " + ", ".join(cells))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="training/evaluation/heuristic_ab.py", description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    ab = sub.add_parser("ab", help="one A/B")
    ab.add_argument("decision", choices=sorted(DECISIONS))
    ab.add_argument("--candidate", default="kept")
    ab.add_argument("--baseline", default=None, help="default: the rule before this work")
    ab.add_argument("--mode", choices=("hand", "game"), default=None, help="default: the decision's")
    for p in (ab, sub.add_parser("all", help="every candidate of every decision against its baseline")):
        p.add_argument("--deals", type=int, default=1000)
        p.add_argument("--seed", type=int, default=0)
    f = sub.add_parser("fit", help="fit the estimates")
    f.add_argument("--deals", type=int, default=20000)
    f.add_argument("--seed", type=int, default=1000)
    s = sub.add_parser("speed", help="time per decision")
    s.add_argument("--positions", type=int, default=2000)
    s.add_argument("--seed", type=int, default=0)
    sub.add_parser("list", help="the candidates")
    args = parser.parse_args(argv)
    if args.command in ("ab", "all") and args.deals < 1:
        parser.error("--deals must be at least 1")
    if args.command == "list":
        for name, d in DECISIONS.items():
            print(f"{name} ({d.preset}, {d.mode}): kept, {', '.join(d.candidates)}; baseline {BASELINE[name]}")
    elif args.command == "fit":
        fit(args.deals, args.seed)
    elif args.command == "speed":
        speed(args.positions, args.seed)
    elif args.command == "ab":
        baseline = args.baseline or BASELINE[args.decision]
        for rule in (args.candidate, baseline):
            if rule != "kept" and rule not in DECISIONS[args.decision].candidates:
                parser.error(f"no candidate {rule!r} for {args.decision}; see the list command")
        print(HEADER)
        row = run_ab(args.decision, args.candidate, baseline, args.deals, args.seed, args.mode)
        print(_row(row))
    else:
        print(HEADER)
        for name, d in DECISIONS.items():
            modes = ("hand", "game") if name == "calls" else (d.mode,)
            for mode in modes:
                for rule in d.candidates:
                    if rule != BASELINE[name]:
                        print(_row(run_ab(name, rule, BASELINE[name], args.deals, args.seed, mode)), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
