"""The figures of one duplicate evaluation and their tables (:class:`EvalResult`): per agent and role the
balance, tricks and win rate, the pairwise differences by role and by seat, the ratings, the timing; as text,
JSON, CSV and a PNG plot. :func:`figures` computes them from the deals' results
(:mod:`training.evaluation.statistics`: ratios of sums over the deals with bootstrap CIs, Bradley-Terry
ratings)."""

from __future__ import annotations

import copy
import csv
import itertools
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from sm_env.core.game import FOUR_ROLE_NAMES, ROLE_NAMES
from sm_env.files.atomic import atomic_path
from sm_env.files.json_files import write_json

from .statistics import (
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

METRICS = ("balance", "tricks", "win_rate")


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
        write_json(paths["json"], self.to_dict(), indent=2)
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


def labels_of(specs: Sequence[str]) -> list[str]:
    labels = []
    for i, spec in enumerate(specs):
        repeat = sum(1 for s in specs[:i] if s == spec)
        labels.append(spec if repeat == 0 else f"{spec}#{repeat + 1}")
    return labels


def ratings_of(
    deals: list[dict[str, Any]], mode: str, labels: list[str], seed: int, bootstrap: int
) -> dict[str, dict[str, float]]:
    """Each agent's Bradley-Terry rating (Elo scale, mean 0, 95% CI): the leaderboard's, on this one table
    (:func:`training.evaluation.statistics.rate`)."""
    n = len(labels)
    wins = pairwise_wins(deal_sums(deals, n), mode, list(range(n)), n)
    estimates = rate(wins, bootstrap_weights(len(deals), seed, bootstrap))
    return {label: estimates[a].to_dict() for a, label in enumerate(labels)}


def figures(
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
