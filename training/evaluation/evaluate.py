"""Duplicate evaluation: the same deals replayed with the agents in every
seating, so that the luck of the cards cancels out.

Seatings (one *deal* is played once per seating):

- three distinct agents: all 6 permutations over the three seats;
- two agents ``[A, B]``: A against two copies of B, in the 3 rotations
  (A at seat 0, 1 and 2).

With four players (``players: 4``, e.g. ``--rules four-5-3-2-2``): four
distinct agents in all 24 permutations, or A against three copies of B in
the 4 rotations.

So on every deal every agent sits in every seat, and in every role.

Modes:

- ``hand``: one hand per game, dealt by seat ``dealer`` (default 0), from
  the deal's seed; with ``start_balances`` the hand opens with the exchange
  those (imaginary previous-hand) balances call for.
- ``game``: whole games (first to 12 tricks under the standard rules),
  truncated after ``max_hands`` hands (default 30). Each seating of a deal
  gets the same game seed, hence the same first dealer and the same deal
  sequence (the engine draws only the first dealer and the random deals
  from its RNG).

Reported per agent, overall and per role (dealer, eldest, middle; with four
players dealer, eldest, third, fourth):

- ``balance``: mean balance (tricks - quota) per hand played;
- ``tricks``: mean tricks per hand;
- ``win_rate``: overall, the share of games the agent won (a hand-mode game
  is won by taking 12 tricks in its one hand); per role, the share of hands
  played in that role that won the game.

A role is the one a hand gives: under the auction (docs/rules.md 10.2) the
auction's winner deals hand 1, so the agents' own bids decide who plays
which role and a role's figures compare different hands. The pairwise
differences are therefore also given by seat (``by_seat``), which the
seating fixes before any card is played: ``first`` is the seat of the first
dealer (under the auction the first bidder), ``second`` the seat to its
left, and so on. In hand mode without the auction the seats are the roles.

Each with a 95% percentile bootstrap confidence interval over deals (the
seatings of one deal are correlated, so deals are the unit resampled; each
figure is a ratio of sums over the resampled deals). Also: the pairwise
difference of mean balance between agents (with its CI), a Bradley-Terry
rating on the Elo scale with its CI, the leaderboard's
(:mod:`training.evaluation.statistics`: each deal compares every pair of
agents by balance per hand, or in game mode by the share of games won
first), and the time per decision of each agent.

Results are deterministic for a given seed whatever the number of workers,
and the same on Ray (``--ray [ADDRESS]``, :mod:`training.evaluation.ray_tasks`): every
random choice is seeded from the seed and the deal index (timing figures
aside, and agents budgeted by time aside).

Command line::

    sergeant-major eval --agents heuristic pimc random --deals 1000 \\
        --mode hand --workers 2 --seed 0 --out runs/eval/first
    sergeant-major eval --agents pimc ismcts heuristic --deals 10000 --ray HEAD:6379
"""

from __future__ import annotations

import argparse
import contextlib
import copy
import csv
import functools
import itertools
import json
import os
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from multiprocessing.pool import Pool
from typing import TYPE_CHECKING, Any

import numpy as np

from agents import act, make_agent, make_opponent
from agents.players.threads import one_thread
from sm_env.core.game import FOUR_ROLE_NAMES, ROLE_NAMES, Game, role_names
from sm_env.core.knowledge import player_view
from sm_env.core.rules import RuleSet
from sm_env.files.atomic import atomic_path
from training.common.progress import progress_bar
from training.common.ray_cluster import RayOptions, add_ray_arguments
from training.common.run_config import fresh_run_dir
from training.common.runs import format_table
from training.common.workers import spawn_pool

from .deals import DealConfig, deal_seed, derive_seed, init_worker, play_deal, play_deal_of, schedule
from .statistics import (
    DealSums,
    Estimate,
    bootstrap_weights,
    deal_sums,
    difference_estimate,
    pairwise_wins,
    rate,
    ratio_estimate,
)

ROLES = ROLE_NAMES  # role names by role index (sm_env.core.game)
SEATS = ("first", "second", "third", "fourth")
"""Seat names by distance clockwise from the first dealer's seat (under the auction, the first bidder's)."""
SEAT_HELP = "first = the first dealer's (under the auction the first bidder's), then clockwise"

if TYPE_CHECKING:
    from training.evaluation.config import EvalConfig

__all__ = [  # DealConfig .. schedule: the deals of training.evaluation.deals, here too
    "DealConfig",
    "DealSums",
    "EvalResult",
    "Estimate",
    "deal_seed",
    "derive_seed",
    "eval_scalars",
    "evaluate",
    "evaluate_against",
    "check_agent",
    "check_table_setup",
    "deal_sums",
    "format_table",
    "init_worker",
    "main",
    "play_deal",
    "play_table",
    "role_advantage",
    "schedule",
]

METRICS = ("balance", "tricks", "win_rate")


# ---------------------------------------------------------------- aggregation


@dataclass
class EvalResult:
    """The outcome of :func:`evaluate` (see the module docstring for the figures).

    ``agents``: the labels (specs, with ``#2`` etc. where a spec repeats);
    ``stats[agent][role][metric]`` with role ``all`` or a role name (:meth:`roles`);
    ``counts[agent][role]``: hands (and games under ``all``) behind them;
    ``pairwise[(a, b)]``: mean balance of a minus that of b;
    ``pairwise_roles[(a, b)][role]``: the same difference within one role
    (a as dealer against b as dealer on the same deals, and so on);
    ``pairwise_seats[(a, b)][seat]``: the same difference by seat (:data:`SEATS`: ``first`` is the first
    dealer's, under the auction the first bidder's);
    ``ratings[agent]``: Bradley-Terry rating, Elo scale (``mean``, ``lo``, ``hi``: its 95% CI).
    """

    agents: list[str]
    config: dict[str, Any]
    stats: dict[str, dict[str, dict[str, Estimate]]]
    counts: dict[str, dict[str, dict[str, int]]]
    pairwise: dict[tuple[str, str], Estimate]
    ratings: dict[str, dict[str, float]]
    timing: dict[str, dict[str, float]]
    elapsed: float
    deal_balances: list[list[float]] = field(default_factory=list, repr=False)
    pairwise_roles: dict[tuple[str, str], dict[str, Estimate]] = field(default_factory=dict)
    pairwise_seats: dict[tuple[str, str], dict[str, Estimate]] = field(default_factory=dict)

    def roles(self) -> tuple[str, ...]:
        """The role names of the evaluated rule set (dealer, eldest, middle; or the four-player roles)."""
        return tuple(role for role in self.stats[self.agents[0]] if role != "all")

    def to_dict(self) -> dict[str, Any]:
        return {
            "format": "sergeant-major-eval/1",
            "config": copy.deepcopy(self.config),
            "agents": list(self.agents),
            "stats": {
                a: {r: {m: e.to_dict() for m, e in ms.items()} for r, ms in roles.items()}
                for a, roles in self.stats.items()
            },
            "counts": copy.deepcopy(self.counts),
            "pairwise": [
                {
                    "a": a,
                    "b": b,
                    "balance_difference": e.to_dict(),
                    "by_role": {r: x.to_dict() for r, x in self.pairwise_roles.get((a, b), {}).items()},
                    "by_seat": {r: x.to_dict() for r, x in self.pairwise_seats.get((a, b), {}).items()},
                }
                for (a, b), e in self.pairwise.items()
            ],
            "ratings": copy.deepcopy(self.ratings),
            "timing": copy.deepcopy(self.timing),
            "elapsed_seconds": self.elapsed,
        }

    def table(self) -> str:
        """A plain-text report: per agent and role, pairwise differences, ratings, timing."""
        cfg = self.config
        width = max(len(a) for a in self.agents) + 2
        lines = [
            f"duplicate evaluation: {cfg['deals']} deals x {len(cfg['seatings'])} seatings, mode {cfg['mode']}, "
            f"rules {cfg['rules']}, seed {cfg['seed']} ({self.elapsed:.1f} s)",
            "95% bootstrap CIs over deals",
            "",
            f"{'agent':<{width}}{'role':<8}{'balance/hand':<28}{'tricks/hand':<28}{'win rate':<26}{'hands':>7}",
        ]
        for a in self.agents:
            for role in ("all", *self.roles()):
                s = self.stats[a][role]
                lines.append(
                    f"{a if role == 'all' else '':<{width}}{role:<8}{s['balance'].text():<28}"
                    f"{s['tricks'].text(False):<28}{s['win_rate'].text(False):<26}{self.counts[a][role]['hands']:>7}"
                )
        lines.append("")
        lines.append("balance difference per hand (row minus column agent):")
        if self._seats_differ():
            lines.append(f"  (by role, and by seat: {SEAT_HELP})")
        for (a, b), e in self.pairwise.items():
            lines.append(f"  {a} - {b}: {e.text()}")
            for role, x in self.pairwise_roles.get((a, b), {}).items():
                lines.append(f"    as {role:<7} {x.text()}")
            if self._seats_differ():
                for seat, x in self.pairwise_seats.get((a, b), {}).items():
                    lines.append(f"    at {seat:<7} {x.text()}")
        lines.append("")
        lines.append("ratings (Bradley-Terry, Elo scale, mean 0, as the leaderboard's):")
        for a in sorted(self.agents, key=lambda x: -self.ratings[x]["mean"]):
            lines.append(f"  {a:<{width}} {Estimate(**self.ratings[a]).text(digits=0)}")
        lines.append("")
        lines.append("time per decision:")
        for a in self.agents:
            t = self.timing[a]
            lines.append(f"  {a:<{width}} {t['ms_per_decision']:8.3f} ms  ({int(t['decisions'])} decisions)")
        return "\n".join(lines)

    def _seats_differ(self) -> bool:
        """Whether the seats are not simply the roles: whole games (the deal passes) or the auction."""
        return self.config["mode"] == "game" or bool(self.config.get("rule_options", {}).get("auction"))

    def save(self, out_dir: str | os.PathLike[str]) -> dict[str, str]:
        """Write ``result.json``, ``result.csv`` and ``balance_by_role.png`` (each atomically); returns their paths."""
        out = os.fspath(out_dir)
        os.makedirs(out, exist_ok=True)
        paths = {
            "json": os.path.join(out, "result.json"),
            "csv": os.path.join(out, "result.csv"),
            "png": os.path.join(out, "balance_by_role.png"),
        }
        with atomic_path(paths["json"]) as tmp, open(tmp, "w", encoding="utf-8") as handle:
            json.dump(self.to_dict(), handle, indent=2)
            handle.write("\n")
        with atomic_path(paths["csv"]) as tmp, open(tmp, "w", newline="", encoding="utf-8") as handle:
            writer = csv.writer(handle)
            header = ["agent", "role", "hands"]
            for m in METRICS:
                header += [m, f"{m}_lo", f"{m}_hi"]
            writer.writerow(header)
            for a in self.agents:
                for role in ("all", *self.roles()):
                    row: list[Any] = [a, role, self.counts[a][role]["hands"]]
                    for m in METRICS:
                        e = self.stats[a][role][m]
                        row += [f"{e.mean:.6f}", f"{e.lo:.6f}", f"{e.hi:.6f}"]
                    writer.writerow(row)
        with atomic_path(paths["png"]) as tmp:
            self.plot(tmp)
        return paths

    def plot(self, path: str) -> None:
        """Bar chart of mean balance by role per agent, with CI error bars."""
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        groups = ("all", *self.roles())
        n = len(self.agents)
        width = 0.8 / n
        fig, ax = plt.subplots(figsize=(7, 4))
        for i, a in enumerate(self.agents):
            means = [self.stats[a][g]["balance"].mean for g in groups]
            lo = [self.stats[a][g]["balance"].mean - self.stats[a][g]["balance"].lo for g in groups]
            hi = [self.stats[a][g]["balance"].hi - self.stats[a][g]["balance"].mean for g in groups]
            xs = [x + (i - (n - 1) / 2) * width for x in range(len(groups))]
            ax.bar(xs, means, width, yerr=[lo, hi], capsize=3, label=a)
        ax.axhline(0, color="black", linewidth=0.8)
        ax.set_xticks(range(len(groups)))
        ax.set_xticklabels(groups)
        ax.set_ylabel("mean balance per hand (tricks - quota)")
        ax.set_title(f"duplicate evaluation, {self.config['deals']} deals ({self.config['mode']} mode), 95% CI")
        ax.legend()
        fig.tight_layout()
        fig.savefig(path, dpi=100)
        plt.close(fig)


def _labels(specs: Sequence[str]) -> list[str]:
    labels = []
    for i, spec in enumerate(specs):
        repeat = sum(1 for s in specs[:i] if s == spec)
        labels.append(spec if repeat == 0 else f"{spec}#{repeat + 1}")
    return labels


def _ratings(
    deals: list[dict[str, Any]], mode: str, labels: list[str], seed: int, bootstrap: int
) -> dict[str, dict[str, float]]:
    """Each agent's Bradley-Terry rating (Elo scale, mean 0, 95% CI): the leaderboard's, on this one table
    (:func:`training.evaluation.statistics.rate`)."""
    n = len(labels)
    wins = pairwise_wins(deal_sums(deals, n), mode, list(range(n)), n)
    estimates = rate(wins, bootstrap_weights(len(deals), seed, bootstrap))
    return {label: estimates[a].to_dict() for a, label in enumerate(labels)}


def _aggregate(
    deals: list[dict[str, Any]], labels: list[str], mode: str, seed: int, bootstrap: int
) -> tuple[dict, dict, dict, dict, dict, list[list[float]]]:
    n = len(labels)
    d = len(deals)
    players = len(deals[0]["seatings"][0]["seating"])
    roles = ROLES if players == 3 else FOUR_ROLE_NAMES
    every = players  # the role index of "all"
    sums = deal_sums(deals, n)
    bal, tricks, wins, hands, games = sums.balance, sums.tricks, sums.wins, sums.hands, sums.games
    weights = bootstrap_weights(d, seed, bootstrap)
    stats: dict[str, dict[str, dict[str, Estimate]]] = {}
    counts: dict[str, dict[str, dict[str, int]]] = {}
    for a, label in enumerate(labels):
        stats[label] = {}
        counts[label] = {}
        for role_index, role in enumerate((*roles, "all")):
            den = hands[:, a, role_index]
            win_den = games[:, a] if role == "all" else den
            stats[label][role] = {
                "balance": ratio_estimate(bal[:, a, role_index], den, weights),
                "tricks": ratio_estimate(tricks[:, a, role_index], den, weights),
                "win_rate": ratio_estimate(wins[:, a, role_index], win_den, weights),
            }
            counts[label][role] = {"hands": int(den.sum())}
            if role == "all":
                counts[label][role]["games"] = int(games[:, a].sum())
        stats[label] = {"all": stats[label]["all"], **{r: stats[label][r] for r in roles}}
        counts[label] = {"all": counts[label]["all"], **{r: counts[label][r] for r in roles}}
    pairwise = {}
    pairwise_roles = {}
    pairwise_seats = {}
    for a, b in itertools.combinations(range(n), 2):
        pairwise[(labels[a], labels[b])] = difference_estimate(
            bal[:, a, every], hands[:, a, every], bal[:, b, every], hands[:, b, every], weights
        )
        pairwise_roles[(labels[a], labels[b])] = {
            role: difference_estimate(bal[:, a, r], hands[:, a, r], bal[:, b, r], hands[:, b, r], weights)
            for r, role in enumerate(roles)
        }
        sb, sh = sums.seat_balance, sums.seat_hands
        pairwise_seats[(labels[a], labels[b])] = {
            seat: difference_estimate(sb[:, a, k], sh[:, a, k], sb[:, b, k], sh[:, b, k], weights)
            for k, seat in enumerate(SEATS[:players])
        }
    per_deal = (bal[:, :, every] / np.maximum(hands[:, :, every], 1)).tolist()
    return stats, counts, pairwise, pairwise_roles, pairwise_seats, per_deal


# ---------------------------------------------------------------- entry points


def check_agent(spec: str, rules: RuleSet) -> None:
    """Build the agent of ``spec`` once: a bad spec, ``human``, or an agent that cannot play ``rules`` (a
    policy trained on other observations or actions) is a ValueError in one line."""
    agent = make_opponent(spec)
    try:
        agent.check_rules(rules)
    except ValueError as err:
        raise ValueError(f"agent {spec!r}: {err}") from None


def check_table_setup(
    rules: RuleSet, dealer: int, start_balances: Sequence[int] | None, max_hands: int
) -> tuple[int, ...] | None:
    """Check a table's setup under ``rules`` (ValueError in one line); the start balances as a tuple."""
    players = rules.num_players
    if not 0 <= dealer < players:
        raise ValueError(f"dealer must be a seat 0-{players - 1}, got {dealer}")
    if max_hands < 1:
        raise ValueError(f"max_hands must be >= 1, got {max_hands}")
    balances = None if start_balances is None else tuple(int(b) for b in start_balances)
    if balances is not None:
        Game(rules, seed=0, first_dealer=dealer, start_balances=balances)  # validates them
    return balances


def play_table(
    config: DealConfig,
    deals: int,
    workers: int = 1,
    ray: str | RayOptions | None = None,
    *,
    on_deal: Callable[[], None] | None = None,
    pool: Pool | None = None,
) -> list[dict[str, Any]]:
    """Play deals ``0 .. deals-1`` of one table (``config.specs`` in every seating of :func:`schedule`);
    the ``play_deal`` results in deal order. What ``eval`` and ``tournament`` both run.

    Where: on Ray when ``ray`` is not None (``""`` a local instance, else a cluster address, or a
    :class:`~training.common.ray_cluster.RayOptions`: address, code shipping, retries, timeout); else in
    ``pool`` when given (workers that may have played another table); else in this process when
    ``workers`` is 1, or in a fresh pool of ``workers`` processes. The results are the same everywhere.
    ``on_deal`` is called after every deal (a progress bar).
    """
    tick = on_deal or (lambda: None)
    options = RayOptions.of(ray)
    if options is not None:
        from .ray_tasks import play_deals_on_ray

        return play_deals_on_ray(
            config,
            deals,
            options.address or None,
            on_result=lambda _: tick(),
            attempts=options.attempts,
            code=options.code,
            timeout=options.timeout,
            connect_timeout=options.connect_timeout,
        )
    results: list[dict[str, Any]] = []
    if pool is None and workers == 1:
        init_worker(config)
        with one_thread():  # as in a worker process
            for index in range(deals):
                results.append(play_deal(index))
                tick()
        return results
    with contextlib.nullcontext(pool) if pool is not None else spawn_pool(workers) as workers_pool:
        for result in workers_pool.imap(functools.partial(play_deal_of, config), range(deals), chunksize=1):
            results.append(result)
            tick()
    return results


def evaluate(
    agents: Sequence[str],
    deals: int = 1000,
    mode: str = "hand",
    seed: int = 0,
    workers: int | None = None,
    *,
    rules: RuleSet | str | dict[str, Any] | None = None,
    dealer: int = 0,
    start_balances: Sequence[int] | None = None,
    max_hands: int = 30,
    bootstrap: int = 2000,
    progress: bool = True,
    ray: str | RayOptions | None = None,
) -> EvalResult:
    """Duplicate evaluation of 2 or 3 agent specs (2 or 4 with four players) over ``deals`` deals.

    ``mode``: ``"hand"`` (single hands dealt by ``dealer``, optionally opened
    by the exchange of ``start_balances``) or ``"game"`` (whole games,
    truncated after ``max_hands``). ``workers``: processes (default
    min(2, cpu count); 1 plays in this process). ``ray``: play the deals as
    Ray tasks instead (:mod:`training.evaluation.ray_tasks`): ``""`` a local Ray
    instance, else a cluster address, or a :class:`~training.common.ray_cluster.RayOptions`
    (the address, how the code reaches the nodes, retries, a timeout);
    ``workers`` is then ignored. Results
    depend only on the other arguments, not on ``workers`` or ``ray``.
    """
    specs = [str(a) for a in agents]
    rule_set = RuleSet.from_any(rules)
    players = rule_set.num_players
    schedule(len(specs), players)  # validates the number of agents
    for spec in specs:  # fail fast, before any process starts
        check_agent(spec, rule_set)
    if mode not in ("hand", "game"):
        raise ValueError(f"mode must be 'hand' or 'game', got {mode!r}")
    if deals < 1:
        raise ValueError(f"deals must be >= 1, got {deals}")
    balances = check_table_setup(rule_set, dealer, start_balances, max_hands)
    if workers is None:
        workers = min(2, os.cpu_count() or 1)
    workers = max(1, min(int(workers), deals))
    config = DealConfig(tuple(specs), mode, int(seed), rule_set, dealer, balances, max_hands)
    options = RayOptions.of(ray)
    started = time.perf_counter()
    bar = progress_bar(deals, "deals", "deal", enabled=progress)
    try:
        results = play_table(config, deals, workers, options, on_deal=lambda: bar.update(1))
    finally:
        bar.close()
    elapsed = time.perf_counter() - started
    labels = _labels(specs)
    stats, counts, pairwise, pairwise_roles, pairwise_seats, per_deal = _aggregate(
        results, labels, mode, seed, bootstrap
    )
    ratings = _ratings(results, mode, labels, seed, bootstrap)
    seconds = np.sum([r["seconds"] for r in results], axis=0)
    decisions = np.sum([r["decisions"] for r in results], axis=0)
    timing = {
        labels[i]: {
            "decisions": int(decisions[i]),
            "seconds": float(seconds[i]),
            "ms_per_decision": float(1000 * seconds[i] / decisions[i]) if decisions[i] else 0.0,
        }
        for i in range(len(specs))
    }
    config_dict = {
        "agents": specs,
        "deals": deals,
        "mode": mode,
        "seed": seed,
        "workers": workers if options is None else None,
        "ray": None if options is None else options.address or "",
        "rules": rule_set.name,
        "rule_options": rule_set.options(),
        "dealer": dealer if mode == "hand" else None,
        "start_balances": None if balances is None else list(balances),
        "max_hands": max_hands if mode == "game" else 1,
        "bootstrap": bootstrap,
        "seatings": [list(s) for s in schedule(len(specs), players)],
    }
    return EvalResult(
        labels,
        config_dict,
        stats,
        counts,
        pairwise,
        ratings,
        timing,
        elapsed,
        per_deal,
        pairwise_roles=pairwise_roles,
        pairwise_seats=pairwise_seats,
    )


# ---------------------------------------------------------------- an agent against baselines


def evaluate_against(
    spec: str, settings: EvalConfig, rules: Any, deals: int, progress: bool = False
) -> dict[str, dict[str, dict[str, Any]]]:
    """Evaluate the agent ``spec`` (``ppo:PATH``, ``rllib:PATH``, ``trained``, ``heuristic``, ...) against
    every ``settings.opponents`` baseline under ``rules``; what every trainer reports.

    ``settings``: an ``eval`` config section (mode, seed, workers, max_hands, start_balances, opponents).
    Two duplicate measurements per opponent, both per role (``results[opponent][role]``, role a role name
    of the rule set, :func:`sm_env.core.game.role_names`, or ``all``):

    - :func:`evaluate` ``([spec, opponent])`` (the agent against copies of the opponent, in the 3 rotations
      of every deal, 4 with four players): the agent's mean balance per role with its 95% bootstrap CI
      (``balance``, ``balance_ci``), the opponent's in the same evaluation (``opponent_balance``), the
      game win rate, the hands behind them, and under ``all`` the balance difference agent - opponent
      with its CI (``difference``, ``difference_ci``);
    - hand mode only, :func:`role_advantage`: on the same deal, the agent's balance in a role minus the
      opponent's balance in that role when it plays every seat itself (``advantage`` with
      ``advantage_ci``), the direct test of "plays this role better than the opponent would".

    ``progress``: a line per opponent and a bar per measurement (stderr).
    """
    results: dict[str, Any] = {}
    roles = role_names(RuleSet.from_any(rules))
    for opponent in settings.opponents:
        if progress:
            print(f"evaluating against {opponent}: {deals} deals, mode {settings.mode}", file=sys.stderr)
        result = evaluate(
            [spec, opponent],
            deals=deals,
            mode=settings.mode,
            seed=settings.seed,
            workers=settings.workers,
            rules=rules,
            max_hands=settings.max_hands,
            start_balances=settings.start_balances,
            progress=progress,
        )
        me, them = result.agents
        rows: dict[str, Any] = {}
        for role in (*roles, "all"):
            mine, theirs = result.stats[me][role], result.stats[them][role]
            rows[role] = {
                "balance": mine["balance"].mean,
                "balance_ci": [mine["balance"].lo, mine["balance"].hi],
                "opponent_balance": theirs["balance"].mean,
                "win_rate": mine["win_rate"].mean,
                "hands": result.counts[me][role]["hands"],
            }
        diff = result.pairwise[(me, them)]
        rows["all"]["difference"] = diff.mean
        rows["all"]["difference_ci"] = [diff.lo, diff.hi]
        if settings.mode == "hand":
            adv = role_advantage(
                spec,
                opponent,
                deals,
                rules=rules,
                seed=settings.seed,
                start_balances=settings.start_balances,
                progress=progress,
            )
            for role in (*roles, "all"):
                rows[role].update(adv[role])
        results[opponent] = rows
    return results


def eval_scalars(results: dict[str, dict[str, dict[str, Any]]]) -> dict[str, float]:
    """The figures every trainer logs of :func:`evaluate_against`'s results (TensorBoard tags):
    ``eval/<opponent>/<role>_balance`` and ``_advantage`` (role a role name or ``all``),
    ``eval/<opponent>/win_rate`` and ``eval/<opponent>/difference``."""
    out: dict[str, float] = {}
    for opponent, per_role in results.items():
        for role, row in per_role.items():
            out[f"eval/{opponent}/{role}_balance"] = row["balance"]
            if "advantage" in row:
                out[f"eval/{opponent}/{role}_advantage"] = row["advantage"]
        out[f"eval/{opponent}/win_rate"] = per_role["all"]["win_rate"]
        out[f"eval/{opponent}/difference"] = per_role["all"]["difference"]
    return out


def role_advantage(
    policy: str,
    opponent: str,
    deals: int,
    *,
    rules: RuleSet | str | dict[str, Any] | None = None,
    seed: int = 0,
    start_balances: Sequence[int] | None = None,
    bootstrap: int = 2000,
    progress: bool = False,
    others: Sequence[str] | None = None,
) -> dict[str, dict[str, Any]]:
    """Per role, hand mode: the policy's balance minus the opponent's, same deal, same seat.

    For every deal (game seed :func:`deal_seed`; seat 0 deals) the opponent
    first plays every seat (three, or four with four players); then, for each
    role, the policy (an agent spec, e.g. ``ppo:PATH``) takes that seat
    against copies of the opponent, with the same agent seeds. Returns per
    role (:func:`sm_env.core.game.role_names`, and ``all``) the
    mean ``advantage`` with its 95% bootstrap CI over deals
    (``advantage_ci``), resampled as in :func:`evaluate`.

    ``others`` (one spec per other seat: two, or three with four players): the
    seats after the measured one (the next, then the one after, ...) are played
    by these instead of the opponent, in both
    games of a role (the opponent then plays only the measured seat of the
    base game, which is played once per role).
    """
    rule_set = RuleSet.from_any(rules)
    n, roles = rule_set.num_players, role_names(rule_set)
    learner = make_agent(policy)
    players = [make_agent(opponent) for _ in range(n)]
    fixed = None if others is None else [make_agent(spec) for spec in others]
    if fixed is not None and len(fixed) != n - 1:
        raise ValueError(
            f"others: {n - 1} agent specs (the seats after the measured one, in turn), got {list(others or ())}"
        )
    start = None if start_balances is None else list(start_balances)

    def play(index: int, role: int, learner_in: bool) -> list[int]:
        game = Game(rule_set, seed=deal_seed(seed, index), first_dealer=0, max_hands=1, start_balances=start)
        agents = list(players)
        if fixed is not None:
            for k, agent in enumerate(fixed, start=1):
                agents[(role + k) % n] = agent
        if learner_in:
            agents[role] = learner
        for s, agent in enumerate(agents):
            agent.reset(derive_seed(seed, index, s))
        while (s := game.current_player) is not None:
            game.apply(act(agents[s], player_view(game, s)))
        return game.scores

    diffs = np.zeros((deals, n))
    bar = progress_bar(deals, "role advantage", "deal", enabled=progress)
    for i in range(deals):
        base = play(i, 0, False) if fixed is None else None  # the opponent everywhere: one game for every role
        for role in range(n):  # seat 0 deals: seat r has role r
            before = base if base is not None else play(i, role, False)
            diffs[i, role] = play(i, role, True)[role] - before[role]
        bar.update(1)
    bar.close()
    weights = bootstrap_weights(deals, seed, bootstrap)
    ones = np.ones(deals)
    out: dict[str, dict[str, Any]] = {}
    for role, name in enumerate((*roles, "all")):
        estimate = ratio_estimate(diffs.mean(axis=1) if name == "all" else diffs[:, role], ones, weights)
        out[name] = {"advantage": estimate.mean, "advantage_ci": [estimate.lo, estimate.hi]}
    return out


def _balances_arg(text: str) -> tuple[int, ...]:
    try:
        values = tuple(int(v) for v in text.replace(",", " ").split())
    except ValueError:
        raise argparse.ArgumentTypeError(f"start balances are integers like 2,-1,-1, got {text!r}") from None
    if len(values) not in (3, 4) or sum(values) != 0:
        raise argparse.ArgumentTypeError(
            f"start balances are three integers (four with four players) summing to 0, got {text!r}"
        )
    return values


def main(argv: Sequence[str] | None = None) -> int:
    """Command line: run an evaluation, print the table, save JSON, CSV and PNG."""
    parser = argparse.ArgumentParser(prog="sergeant-major eval", description=__doc__.split("\n\n")[0])
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
    parser.add_argument(
        "--mode", choices=("hand", "game"), default="hand", help="single hands or whole games (default hand)"
    )
    parser.add_argument("--workers", type=int, default=None, help="processes (default min(2, cpus))")
    add_ray_arguments(parser, "the deals")
    parser.add_argument("--seed", type=int, default=0, help="seed of the deals (default 0)")
    parser.add_argument(
        "--out",
        default=None,
        help="output folder, refused if it holds an evaluation (default runs/eval/<agents>-<mode>-<seed>, or the "
        "first free <...>-2, <...>-3, ... if that one is used)",
    )
    parser.add_argument("--rules", default="standard", help="rule preset name (default standard)")
    parser.add_argument("--dealer", type=int, default=0, help="hand mode: the dealing seat (default 0)")
    parser.add_argument(
        "--start-balances",
        type=_balances_arg,
        default=None,
        help="hand mode: previous-hand balances by seat, e.g. 2,-1,-1 (opens with an exchange)",
    )
    parser.add_argument(
        "--max-hands", type=int, default=30, help="game mode: truncate after this many hands (default 30)"
    )
    parser.add_argument("--bootstrap", type=int, default=2000, help="bootstrap resamples (default 2000)")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    args = parser.parse_args(argv)
    if args.out is not None and os.path.exists(os.path.join(args.out, "result.json")):
        print(
            f"sergeant-major eval: error: {args.out} already holds an evaluation (result.json): give another --out, "
            "or leave --out out to write to a fresh folder under runs/eval",
            file=sys.stderr,
        )
        return 2
    try:
        result = evaluate(
            args.agents,
            args.deals,
            args.mode,
            args.seed,
            args.workers,
            rules=args.rules,
            dealer=args.dealer,
            start_balances=args.start_balances,
            max_hands=args.max_hands,
            bootstrap=args.bootstrap,
            progress=not args.no_progress,
            ray=RayOptions.from_args(args),
        )
    except ValueError as err:
        print(f"sergeant-major eval: error: {err}", file=sys.stderr)
        return 2
    print(result.table())
    out = args.out
    if out is None:  # a new folder, never an earlier evaluation's (as a new training run's: training/common/runs.py)
        name = "-".join(a.replace(":", "_").replace("/", "_").replace("=", "") for a in args.agents)
        out, _ = fresh_run_dir(os.path.join("runs", "eval"), f"{name}-{args.mode}-{args.seed}")
    paths = result.save(out)
    print(f"\nsaved {paths['json']}, {paths['csv']}, {paths['png']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
