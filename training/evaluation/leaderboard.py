"""The leaderboard of a tournament: ratings, balances and pairwise figures from its tables' duplicate deals.

Input: the agents, and the tables played (:class:`Table`: the specs at the table and every deal's
``play_deal`` result). Every table of a tournament plays the same deals (deal ``i`` has the same seed at
every table), so the deal is the unit of resampling across all tables together: each 95% confidence
interval is a percentile bootstrap over the deal indices (one resampling of the deals applies to every
table), as in :mod:`training.evaluation.evaluate`.

Figures (:func:`leaderboard`):

- ``rating``: a Bradley-Terry rating on the Elo scale. Each deal of each table is one comparison of every
  pair of agents at that table: the one with the higher mean balance per hand over the deal's seatings
  beats the other (game mode: the higher share of games won, then the higher balance per hand); a tie
  counts half to each. The ratings ``R`` maximise the likelihood of those outcomes under
  ``P(a beats b) = 1 / (1 + 10 ** ((R_b - R_a) / 400))`` (fitted by the MM algorithm, with one tie added
  to every pair compared, so that an agent that wins every comparison still gets a finite rating), and
  are centred on a mean of 0: a rating says how an agent compares with the field of this tournament. The
  CI refits the ratings on every bootstrap resampling of the deals.
- ``balance``, ``tricks`` (per hand) and ``win_rate`` (games won per game) over all the agent's tables,
  and ``balance`` per role: an average over whichever tables the agent sat at, so it depends on its tablemates
  (the rank is the rating's; :func:`rank_note` says so on the page when the highest balance does not rank first);
- per pair of agents, over the tables where both sit: the difference of their balance per hand (overall
  and per role, row minus column) and the share of deals the first beats the second (``score``).
- ``timing``: milliseconds per decision and the tables' wall time; the only figures that change from run
  to run (everything else depends only on the settings and the seed).

:func:`markdown` renders the JSON payload as the leaderboard's Markdown; :func:`plot` draws the ratings and
the balance per role.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from sm_env.core.game import FOUR_ROLE_NAMES, ROLE_NAMES

from .statistics import (
    Estimate,
    bootstrap_weights,
    deal_sums,
    difference_estimate,
    pairwise_wins,
    rate,
    ratio_estimate,
)

FORMAT = "sergeant-major-leaderboard/1"
TIMING_HEADING = "### Time per decision"


@dataclass
class Table:
    """One table of a tournament: ``specs`` (agent index by :func:`~training.evaluation.deals.schedule`),
    ``deals`` (the ``play_deal`` results, in deal order) and the ``elapsed`` seconds it took to play."""

    specs: tuple[str, ...]
    deals: list[dict[str, Any]]
    elapsed: float


def _pair(
    a: int,
    b: int,
    labels: list[str],
    local: list[tuple[list[int], Any]],
    beats: np.ndarray,
    weights: np.ndarray,
    roles: Sequence[str],
) -> dict[str, Any]:
    """The figures of the pair (a, b) over the tables where both sit: the difference of their balance per hand
    (overall and per role) and the share of deals a beats b."""
    d, every = beats.shape[0], len(roles)
    na, da, nb, db = (np.zeros((d, every + 1)) for _ in range(4))
    for who, sums in local:
        if a in who and b in who:
            na += sums.balance[:, who.index(a)]
            da += sums.hands[:, who.index(a)]
            nb += sums.balance[:, who.index(b)]
            db += sums.hands[:, who.index(b)]
    return {
        "a": labels[a],
        "b": labels[b],
        "balance_difference": difference_estimate(
            na[:, every], da[:, every], nb[:, every], db[:, every], weights
        ).to_dict(),
        "by_role": {
            role: difference_estimate(na[:, r], da[:, r], nb[:, r], db[:, r], weights).to_dict()
            for r, role in enumerate(roles)
        },
        "score": ratio_estimate(beats[:, a, b], beats[:, a, b] + beats[:, b, a], weights).to_dict(),
        "comparisons": int((beats[:, a, b] + beats[:, b, a]).sum()),
    }


def leaderboard(
    agents: Sequence[str], tables: Sequence[Table], settings: dict[str, Any], bootstrap: int = 2000
) -> dict[str, Any]:
    """The leaderboard (a JSON-ready dict) of ``agents`` from ``tables`` (see the module docstring).

    ``settings``: the tournament's settings (``mode``, ``seed``, ``deals``, ``rules``...), copied into the
    result; ``seed`` also seeds the bootstrap. Every table holds ``settings["deals"]`` deals.
    """
    labels = list(agents)
    index = {a: i for i, a in enumerate(labels)}
    n, d, mode = len(labels), int(settings["deals"]), settings["mode"]
    players = len(tables[0].deals[0]["seatings"][0]["seating"])
    roles = ROLE_NAMES if players == 3 else FOUR_ROLE_NAMES
    every = players
    shape = (d, n, players + 1)
    bal, tricks, wins, hands = (np.zeros(shape) for _ in range(4))
    games = np.zeros((d, n))
    beats = np.zeros((d, n, n))  # beats[i, a, b]: a's wins over b on deal i (ties half)
    seconds, decisions, elapsed = np.zeros(n), np.zeros(n), 0.0
    local: list[tuple[list[int], Any]] = []  # per table: global index of each local agent, and its sums
    for table in tables:
        who = [index[s] for s in table.specs]
        sums = deal_sums(table.deals, len(who))
        local.append((who, sums))
        for k, a in enumerate(who):
            bal[:, a] += sums.balance[:, k]
            tricks[:, a] += sums.tricks[:, k]
            wins[:, a] += sums.wins[:, k]
            hands[:, a] += sums.hands[:, k]
            games[:, a] += sums.games[:, k]
            seconds[a] += sum(r["seconds"][k] for r in table.deals)
            decisions[a] += sum(r["decisions"][k] for r in table.deals)
        beats += pairwise_wins(sums, mode, who, n)
        elapsed += table.elapsed
    weights = bootstrap_weights(d, int(settings["seed"]), bootstrap)
    ratings = rate(beats, weights)
    order = sorted(range(n), key=lambda a: (-ratings[a].mean, labels[a]))
    ranking = []
    for rank, a in enumerate(order, 1):
        ranking.append(
            {
                "rank": rank,
                "agent": labels[a],
                "rating": ratings[a].to_dict(),
                "balance": ratio_estimate(bal[:, a, every], hands[:, a, every], weights).to_dict(),
                "tricks": ratio_estimate(tricks[:, a, every], hands[:, a, every], weights).to_dict(),
                "win_rate": ratio_estimate(wins[:, a, every], games[:, a], weights).to_dict(),
                "hands": int(hands[:, a, every].sum()),
                "games": int(games[:, a].sum()),
                "by_role": {
                    role: {
                        "balance": ratio_estimate(bal[:, a, r], hands[:, a, r], weights).to_dict(),
                        "hands": int(hands[:, a, r].sum()),
                    }
                    for r, role in enumerate(roles)
                },
            }
        )
    pairwise = [_pair(a, b, labels, local, beats, weights, roles) for a, b in itertools.combinations(order, 2)]
    return {
        "format": FORMAT,
        "settings": dict(settings, bootstrap=bootstrap),
        "agents": labels,
        "roles": list(roles),
        "tables": [{"agents": list(t.specs), "deals": len(t.deals)} for t in tables],
        "ranking": ranking,
        "pairwise": pairwise,
        "timing": {
            "agents": {
                labels[a]: {
                    "decisions": int(decisions[a]),
                    "ms_per_decision": float(1000 * seconds[a] / decisions[a]) if decisions[a] else 0.0,
                }
                for a in range(n)
            },
            "table_seconds": elapsed,
        },
    }


def _est(e: dict[str, float | None], signed: bool = True, digits: int = 3) -> str:
    return Estimate.from_dict(e).text(signed, digits)


def _ordinal(n: int) -> str:
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def rank_note(board: dict[str, Any]) -> str | None:
    """Why the agent with the highest balance per hand does not rank first, when it does not (else None): the rank
    is the rating's, from head-to-head comparisons at shared tables, while the balance per hand averages the
    tables an agent sat at, so weak tablemates raise it; with the share of its tables where the last-ranked agent
    sat, and the first-ranked agent's, from the board's ``tables`` (the agents at each)."""
    rows = board["ranking"]
    top = max(rows, key=lambda row: Estimate.from_dict(row["balance"]).mean)
    weakest, first = rows[-1]["agent"], rows[0]["agent"]
    if top["rank"] == 1 or top["agent"] == weakest:
        return None
    tables = [set(t["agents"]) for t in board["tables"]]

    def share(agent: str) -> str:
        mine = [t for t in tables if agent in t]
        return f"{sum(weakest in t for t in mine)} of its {len(mine)} table{'s' if len(mine) != 1 else ''}"

    return (
        f"`{top['agent']}` has the highest balance per hand ({Estimate.from_dict(top['balance']).mean:+.3f}) and "
        f"ranks {_ordinal(top['rank'])}: the rank is the rating's, which counts only who did better than whom at "
        "the same table on the same deal, while the balance per hand averages the hands of every table an agent "
        f"sat at, so weak tablemates raise it. `{top['agent']}` sat with `{weakest}` at {share(top['agent'])}, "
        f"`{first}` (rank 1) at {share(first)}."
    )


def markdown(board: dict[str, Any], title: str | None = None, command: str | None = None) -> str:
    """The leaderboard ``board`` (:func:`leaderboard`) as Markdown; ``title`` heads it (level 2), ``command``
    (the command that made it) is quoted under the settings. Everything above the section
    :data:`TIMING_HEADING` depends only on the settings and the seed."""
    s = board["settings"]
    roles = board["roles"]
    note = rank_note(board)
    lines = [f"## {title or 'Leaderboard: ' + s['rules'] + ', ' + s['mode'] + ' mode'}", ""]
    setup = f"rules `{s['rules']}`, {s['mode']} mode"
    if s["mode"] == "hand" and s.get("start_balances"):
        setup += f" opened by the exchange of balances {s['start_balances']}"
    if s["mode"] == "game":
        setup += f" (games truncated after {s['max_hands']} hands)"
    lines.append(
        f"{len(board['agents'])} agents, {len(board['tables'])} table{'s' if len(board['tables']) != 1 else ''} "
        f"({s['design']} design), {s['deals']} deals "
        f"per table in every seating, seed {s['seed']}; {setup}. 95% CIs: {s['bootstrap']} bootstrap "
        f"resamplings of the deals."
    )
    if command:
        lines += ["", "```", command, "```"]
    lines += [
        "",
        "| rank | agent | rating (Elo scale) | balance / hand | tricks / hand | win rate | hands |",
        "| ---: | --- | ---: | ---: | ---: | ---: | ---: |",
    ]
    for row in board["ranking"]:
        lines.append(
            f"| {row['rank']} | `{row['agent']}` | {_est(row['rating'], True, 0)} | {_est(row['balance'])} | "
            f"{_est(row['tricks'], False)} | {_est(row['win_rate'], False)} | {row['hands']} |"
        )
    lines += [
        "",
        "Rating: Bradley-Terry over every pair at every table on every deal (who has the higher "
        + ("balance per hand" if s["mode"] == "hand" else "share of games won")
        + "), mean 0; 400 points = 10 to 1 odds.",
        *([] if note is None else ["", note]),
        "",
        "### Balance per hand by role",
        "",
        "| agent | " + " | ".join(roles) + " |",
        "| --- | " + " | ".join("---:" for _ in roles) + " |",
    ]
    for row in board["ranking"]:
        lines.append(f"| `{row['agent']}` | " + " | ".join(_est(row["by_role"][r]["balance"]) for r in roles) + " |")
    lines += [
        "",
        "### Pairwise, where both sit at a table",
        "",
        "| agent | against | balance difference / hand | " + " | ".join(f"as {r}" for r in roles) + " | deals won |",
        "| --- | --- | ---: | " + " | ".join("---:" for _ in roles) + " | ---: |",
    ]
    for p in board["pairwise"]:
        lines.append(
            f"| `{p['a']}` | `{p['b']}` | {_est(p['balance_difference'])} | "
            + " | ".join(f"{Estimate.from_dict(p['by_role'][r]).mean:+.3f}" for r in roles)
            + f" | {_est(p['score'], False)} |"
        )
    timing = board["timing"]
    lines += [
        "",
        f"{TIMING_HEADING} (wall clock: varies from run to run)",
        "",
        "| agent | ms / decision | decisions |",
        "| --- | ---: | ---: |",
    ]
    for row in board["ranking"]:
        t = timing["agents"][row["agent"]]
        lines.append(f"| `{row['agent']}` | {t['ms_per_decision']:.3f} | {t['decisions']} |")
    lines += ["", f"The tables took {timing['table_seconds']:.1f} s to play in all.", ""]
    return "\n".join(lines)


def plot(board: dict[str, Any], path: str) -> None:
    """Two panels: the ratings with their CIs, and each agent's balance per hand by role with its CI."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = board["ranking"]
    names = [r["agent"] for r in rows]
    fig, (left, right) = plt.subplots(1, 2, figsize=(12, 0.5 * len(rows) + 2.5))
    ys = np.arange(len(rows))[::-1]
    means = np.array([r["rating"]["mean"] for r in rows])
    lows, highs = np.array([r["rating"]["lo"] for r in rows]), np.array([r["rating"]["hi"] for r in rows])
    err = np.clip([means - lows, highs - means], 0, None)  # a percentile CI need not hold the estimate
    left.errorbar(means, ys, xerr=err, fmt="o", capsize=3)
    left.set_yticks(ys)
    left.set_yticklabels(names)
    left.axvline(0, color="black", linewidth=0.8)
    left.set_xlabel("Bradley-Terry rating (Elo scale), 95% CI")
    groups = ["all", *board["roles"]]
    width = 0.8 / len(rows)
    for i, r in enumerate(rows):
        cells = [Estimate.from_dict(c) for c in (r["balance"], *(r["by_role"][g]["balance"] for g in board["roles"]))]
        m = [c.mean for c in cells]
        xs = [x + (i - (len(rows) - 1) / 2) * width for x in range(len(groups))]
        right.bar(
            xs,
            m,
            width,
            yerr=np.clip([[c.mean - c.lo for c in cells], [c.hi - c.mean for c in cells]], 0, None),
            capsize=2,
            label=r["agent"],
        )
    right.axhline(0, color="black", linewidth=0.8)
    right.set_xticks(range(len(groups)))
    right.set_xticklabels(groups)
    right.set_ylabel("balance per hand (tricks - quota)")
    right.legend(fontsize="small")
    s = board["settings"]
    fig.suptitle(f"tournament: rules {s['rules']}, {s['mode']} mode, {s['deals']} deals per table")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
