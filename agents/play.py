"""Play a game at the terminal: one person against two agents.

    sergeant-major play --seat 0 --opponents heuristic pimc --seed 7

The engine runs the game; the person answers at each of its turns (see
:mod:`agents.human`). After every hand the result is shown. At the end (or
when the person quits) the game record is saved as JSON
(``sergeant-major-record/1``, see docs/interface.md) with ``sm_env.records``.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Sequence
from typing import TextIO

from sm_env.core.game import Game, result_text
from sm_env.core.knowledge import player_view
from sm_env.records import save_record

from . import AgentSpecError, act, fresh_seed, make_opponent
from .human import HumanAgent, HumanQuit

PROG = "sergeant-major play"


def _save(game: Game, path: str, out: TextIO) -> bool:
    directory = os.path.dirname(os.path.abspath(path))
    os.makedirs(directory, exist_ok=True)
    save_record(game, path)
    print(f"Game record saved to {path}", file=out)
    return True


def _hand_summary(game: Game, number: int) -> str:
    log = game.history[number - 1]
    seats = range(len(log.quotas))
    parts = [f"player_{s}: {log.tricks_won[s]} tricks (quota {log.quotas[s]}, {log.balances[s]:+d})" for s in seats]
    scores = ", ".join(f"player_{s} {log.scores[s]:+d}" for s in seats)
    chips = "" if log.chips is None else " chips: " + ", ".join(f"player_{s} {log.chips[s]:+d}" for s in seats) + ";"
    return f"\n=== Hand {number} over: " + "; ".join(parts) + f"\n==={chips} Scores: {scores}"


def main(
    argv: Sequence[str] | None = None, input_stream: TextIO | None = None, output_stream: TextIO | None = None
) -> int:
    """Run one game with a person at ``--seat``; returns the exit status."""
    parser = argparse.ArgumentParser(prog=PROG, description="Play Sergeant Major against agents.")
    parser.add_argument("--seat", type=int, choices=(0, 1, 2, 3), default=0, help="your seat (default 0)")
    parser.add_argument(
        "--opponents",
        nargs="+",
        default=None,
        metavar="SPEC",
        help="the other players, in seat order: two, or three with four players (default: heuristic for each)",
    )
    parser.add_argument("--seed", type=int, default=None, help="seed of the deal and the agents (default: random)")
    parser.add_argument("--rules", default="standard", help="rule preset (default standard)")
    parser.add_argument("--max-hands", type=int, default=100, help="stop after this many hands (default 100)")
    parser.add_argument("--record", default=None, help="where to save the game record (default runs/games/...)")
    parser.add_argument("--unicode", action="store_true", help="show suits as symbols")
    args = parser.parse_args(argv)
    out = output_stream if output_stream is not None else sys.stdout
    seed = args.seed if args.seed is not None else fresh_seed()
    try:
        game = Game(args.rules, seed=seed, max_hands=args.max_hands)
        n = game.rules.num_players
        if args.seat >= n:
            raise ValueError(f"--seat {args.seat}: the seats are 0-{n - 1} with {n} players")
        specs = args.opponents if args.opponents is not None else ["heuristic"] * (n - 1)
        if len(specs) != n - 1:
            raise ValueError(f"--opponents: {n} players need {n - 1} opponents, got {len(specs)}")
        opponents = [make_opponent(spec, seed=seed + 1 + i) for i, spec in enumerate(specs)]
    except (AgentSpecError, ValueError) as err:
        print(f"{PROG}: error: {err}", file=sys.stderr)
        return 2
    human = HumanAgent(seed=seed, input_stream=input_stream, output_stream=out, unicode_suits=args.unicode)
    agents = list(opponents)
    agents.insert(args.seat, human)
    for i, agent in enumerate(agents):
        agent.reset(seed + i)
    path = args.record or os.path.join("runs", "games", f"game-{time.strftime('%Y%m%d-%H%M%S')}-{seed}.json")
    names = ", ".join(f"player_{s}: {'you' if s == args.seat else agents[s].name}" for s in range(n))
    print(f"Sergeant Major, seed {seed}. {names}. Type 'help' for help.", file=out)
    hand = game.hand_number
    status = 0
    try:
        while game.current_player is not None:
            seat = game.current_player
            view = player_view(game, seat)
            action = human.act(view) if seat == args.seat else act(agents[seat], view)
            game.apply(action)
            if game.hand_number != hand or game.is_over:
                print(_hand_summary(game, hand), file=out)
                hand = game.hand_number
    except HumanQuit as why:
        print(f"Game stopped ({why}).", file=out)
    except KeyboardInterrupt:
        print("\nGame stopped (interrupted).", file=out)
        status = 130
    if game.is_over:

        def name(seat: int) -> str:
            return "you" if seat == args.seat else f"player_{seat}"

        print(f"Game over: {result_text(game.winner, game.truncated, game.hand_number, name)}.", file=out)
    _save(game, path, out)
    return status


if __name__ == "__main__":
    sys.exit(main())
