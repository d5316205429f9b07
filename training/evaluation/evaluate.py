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

import contextlib
import functools
import os
import sys
import time
from collections.abc import Callable, Sequence
from multiprocessing.pool import Pool
from typing import TYPE_CHECKING, Any

import numpy as np

from agents import act, make_agent, make_opponent
from agents.players.threads import one_thread
from sm_env.core.game import Game, role_names
from sm_env.core.knowledge import player_view
from sm_env.core.rules import RuleSet
from training.common.progress import progress_bar, write_line
from training.common.ray_cluster import RayOptions
from training.common.tables import format_table
from training.common.workers import spawn_pool

from .deals import DealConfig, deal_seed, derive_seed, init_worker, play_deal, play_deal_of, schedule
from .result import EvalResult, figures, labels_of, ratings_of
from .statistics import (
    DealSums,
    Estimate,
    bootstrap_weights,
    deal_sums,
    ratio_estimate,
)

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
    "play_deal",
    "play_table",
    "role_advantage",
    "role_figures",
    "schedule",
]

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
    if progress and options is None and workers > 1:  # each worker imports and loads the agents: seconds, silent
        write_line(f"starting {workers} worker processes (each loads the agents: a few seconds)")
    started = time.perf_counter()
    bar = progress_bar(deals, "deals", "deal", enabled=progress)
    try:
        results = play_table(config, deals, workers, options, on_deal=lambda: bar.update(1))
    finally:
        bar.close()
    elapsed = time.perf_counter() - started
    labels = labels_of(specs)
    if progress:
        write_line(f"95% CIs: {bootstrap} bootstrap resamplings of the {deals} deals")
    stats, counts, pairwise, pairwise_roles, pairwise_seats, per_deal = figures(results, labels, mode, seed, bootstrap)
    ratings = ratings_of(results, mode, labels, seed, bootstrap)
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


def role_figures(results: dict[str, dict[str, dict[str, Any]]]) -> dict[str, Any]:
    """What an ``eval.jsonl`` line shows of :func:`evaluate_against`'s results beside them, per opponent: the
    advantage over all roles (``advantage``) and per role (``role_advantage``; None in game mode), and the balance
    difference (``difference``)."""
    return {
        "advantage": {name: rows["all"].get("advantage") for name, rows in results.items()},
        "role_advantage": {
            name: {role: row.get("advantage") for role, row in rows.items() if role != "all"}
            for name, rows in results.items()
        },
        "difference": {name: rows["all"]["difference"] for name, rows in results.items()},
    }


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
