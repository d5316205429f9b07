"""Where whole games are won: the race between dealers' 12-trick hands.

A game is won by the first seat to take 12 tricks in a hand (docs/rules.md), and nearly every such hand is a
dealer's. This script plays whole games of one agent against two heuristics (the agent in seat ``g % 3`` of
game ``g``, the game dealt by ``Game(seed=SEED + g)``) and counts, per hand dealt, how often the dealer took
at least 12 tricks when the dealer was the agent and when it was a heuristic, and who won the games:

    python -m training.evaluation.game_race --agent trained --games 600 --seed 9000
    python -m training.evaluation.game_race --agent pimc:rollout=policy,game=8,game_only=1 --games 600 --workers 2

A simple race model reads the two rates: with the agent's rate p and each heuristic's q, the agent wins about
p / (p + 2q) of the games, so 2.0 times a fair share (2/3) needs p about 4 times q. ``--out`` writes the
counts as JSON. Figures: docs/results/real-deal-game.md.
"""

from __future__ import annotations

import argparse
import math
from collections import Counter
from concurrent.futures import ProcessPoolExecutor

from agents import agent_seed, make_agent
from agents.players.base import act
from sm_env.core.game import OVER, Game
from sm_env.core.knowledge import player_view
from sm_env.core.rules import RuleSet
from sm_env.files.json_files import write_json
from sm_env.files.paths import check_output_path

MAX_GAMES = 100_000
"""The most games one run plays."""


def play_games(spec: str, first: int, count: int, seed: int, max_hands: int) -> Counter:
    """Games ``first`` .. ``first + count - 1``: hands dealt and 12-trick dealer hands by who dealt (``agent``
    or ``heuristic``), games won by each, games cut off at ``max_hands``."""
    agent, heuristic = make_agent(spec, seed=seed), make_agent("heuristic", seed=seed)
    counts: Counter = Counter()
    for g in range(first, first + count):
        seat = g % 3
        game = Game(rules="standard", seed=seed + g)
        agent.reset(agent_seed(seed + g, seat))  # never the deal's own stream (Game(seed=seed + g))
        while game.phase != OVER and game.hand_number <= max_hands:
            to_act = game.current
            game.apply(act(agent if to_act == seat else heuristic, player_view(game, to_act)))
        for log in game.history:
            if log.tricks_won is None:  # a hand cut off unplayed
                continue
            who = "agent" if log.dealer == seat else "heuristic"
            counts[f"{who}_dealt"] += 1
            counts[f"{who}_dealer_12"] += log.tricks_won[log.dealer] >= game.rules.win_tricks
        if game.winners:
            counts["agent_won" if seat in game.winners else "heuristic_won"] += 1
        else:
            counts["cut_off"] += 1
        counts["games"] += 1
    return counts


def wilson(hits: int, n: int) -> tuple[float, float]:
    """The 95% Wilson interval of a proportion."""
    if n == 0:
        return 0.0, 1.0
    z, p = 1.96, hits / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return centre - half, centre + half


def summary(counts: Counter) -> dict[str, float | int | list[float]]:
    """The rates per hand dealt and per game, with their 95% intervals, and the race model's prediction."""
    out: dict[str, float | int | list[float]] = dict(counts)
    for who in ("agent", "heuristic"):
        hits, n = counts[f"{who}_dealer_12"], counts[f"{who}_dealt"]
        out[f"{who}_dealer_12_rate"] = hits / n if n else 0.0
        out[f"{who}_dealer_12_ci"] = list(wilson(hits, n))
    games = counts["games"]
    out["agent_win_rate"] = counts["agent_won"] / games if games else 0.0
    out["agent_win_ci"] = list(wilson(counts["agent_won"], games))
    p, q = out["agent_dealer_12_rate"], out["heuristic_dealer_12_rate"]
    out["race_ratio"] = p / q if q else None  # JSON has no infinity
    out["race_model_win_rate"] = p / (p + 2 * q) if p + q else 0.0
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--agent", default="trained", help="agent spec (default: trained)")
    parser.add_argument("--games", type=int, default=600, help=f"games, 1 .. {MAX_GAMES} (default 600)")
    parser.add_argument("--seed", type=int, default=9000, help="game g is dealt by Game(seed=SEED + g)")
    parser.add_argument("--max-hands", type=int, default=30, help="hands before a game is cut off (default 30)")
    parser.add_argument("--workers", type=int, default=1, help="processes (default 1)")
    parser.add_argument("--out", default=None, help="write the counts and rates as JSON here")
    args = parser.parse_args(argv)
    if not 1 <= args.games <= MAX_GAMES:
        parser.error(f"--games must be in 1 .. {MAX_GAMES}, got {args.games}")
    if not 1 <= args.max_hands <= 1000:
        parser.error(f"--max-hands must be in 1 .. 1000, got {args.max_hands}")
    if not 1 <= args.workers <= 64:
        parser.error(f"--workers must be in 1 .. 64, got {args.workers}")
    if args.out:
        try:
            check_output_path(args.out, "--out")
        except ValueError as err:
            parser.error(str(err))
    try:
        make_agent(args.agent).check_rules(RuleSet.from_any("standard"))
    except ValueError as err:
        parser.error(str(err))
    chunks = [(args.games * k // args.workers, args.games * (k + 1) // args.workers) for k in range(args.workers)]
    jobs = [(args.agent, a, b - a, args.seed, args.max_hands) for a, b in chunks if b > a]
    counts: Counter = Counter()
    if len(jobs) == 1:
        counts = play_games(*jobs[0])
    else:
        with ProcessPoolExecutor(len(jobs)) as pool:
            for part in pool.map(play_games, *zip(*jobs, strict=True)):
                counts += part
    result = summary(counts)
    p_lo, p_hi = result["agent_dealer_12_ci"]
    q_lo, q_hi = result["heuristic_dealer_12_ci"]
    ratio = "-" if result["race_ratio"] is None else f"{result['race_ratio']:.2f}"
    print(
        f"{args.agent}: {counts['games']} games, won {result['agent_win_rate']:.3f} "
        f"(heuristics {counts['heuristic_won']}, cut off {counts['cut_off']}); dealer's 12-trick hands per hand "
        f"dealt: agent {result['agent_dealer_12_rate']:.3f} [{p_lo:.3f}, {p_hi:.3f}] of {counts['agent_dealt']}, "
        f"heuristic {result['heuristic_dealer_12_rate']:.3f} [{q_lo:.3f}, {q_hi:.3f}] of "
        f"{counts['heuristic_dealt']}; ratio {ratio}, race model {result['race_model_win_rate']:.3f}"
    )
    if args.out:
        write_json(args.out, {"config": vars(args), "result": result}, indent=2)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
