"""Play a game at the terminal: one person against two agents.

    sergeant-major play --seat 0 --opponents heuristic pimc --seed 7

The engine runs the game; the person answers at each of its turns (see
:mod:`agents.players.human`; a forced choice, one legal action, is played for it and
said). Between turns the person is told what the rules did without asking:
an exchange it took part in once the cards are back (a receiver returns its
highest cards of each suit sent, with no choice: docs/rules.md section 4),
and the last trick of each hand, before the hand's result. At the end (or
when the person quits) the game record is saved as JSON
(``sergeant-major-record/1``, see docs/interface.md) with ``sm_env.records``.
``--seed`` deals the game; each seat's agent is seeded from it by :func:`agents.agent_seed` (one way, never
the deal's own stream: :func:`seat_agents`), so the same seed plays the same game.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Sequence
from typing import TextIO

from sm_env.core.cards import CARD_TEXT
from sm_env.core.game import Game, result_text
from sm_env.core.knowledge import PlayerView, player_view
from sm_env.files.paths import check_output_path
from sm_env.records import save_record

from . import AgentSpecError, act, agent_seed, fresh_seed, make_opponent
from .players.base import Agent
from .players.human import HumanAgent, HumanQuit

PROG = "sergeant-major play"


def _save(game: Game, path: str, out: TextIO) -> bool:
    directory = os.path.dirname(os.path.abspath(path))
    os.makedirs(directory, exist_ok=True)
    save_record(game, path)
    print(f"Game record saved to {path}", file=out)
    return True


def _cards(cards: tuple[int, ...]) -> str:
    return " ".join(CARD_TEXT[c] for c in cards)


def _exchange_news(view: PlayerView, told: set[tuple[int, int]]) -> list[str]:
    """A line for each exchange of the view's seat whose cards are back and that is not in ``told`` yet
    ((hand number, index) pairs, updated)."""
    lines = []
    for index, ex in enumerate(view.exchanges):
        key = (view.hand_number, index)
        if ex.returned is None or key in told:  # not back yet, or not the seat's to see
            continue
        told.add(key)
        if ex.receiver == view.seat:
            lines.append(
                f"Exchange: player_{ex.sender} sent you {_cards(ex.sent)}; you gave back {_cards(ex.returned)} "
                f"(not your choice: a receiver returns its highest card(s) of each suit sent: docs/rules.md section 4)"
            )
        else:
            lines.append(
                f"Exchange: you sent {_cards(ex.sent)} to player_{ex.receiver}, who gave back {_cards(ex.returned)} "
                f"(its highest card(s) of each suit you sent)"
            )
    return lines


def _untold(game: Game, seat: int, told: set[tuple[int, int]]) -> bool:
    """Whether the current hand has an exchange of ``seat`` not told yet (who exchanges with whom is public)."""
    return any(
        seat in (ex.sender, ex.receiver) and (game.hand_number, i) not in told
        for i, ex in enumerate(game.log.exchanges)
    )


def _last_trick(game: Game, number: int) -> str | None:
    """The last trick of hand ``number``, which no turn of the person shows (the hand ends with it)."""
    tricks = game.history[number - 1].tricks
    if not tricks or tricks[-1].winner is None:
        return None
    last = tricks[-1]
    n = game.rules.num_players
    plays = ", ".join(f"player_{(last.leader + i) % n} {CARD_TEXT[c]}" for i, c in enumerate(last.cards))
    return f"Trick {len(tricks)} (the last of hand {number}): {plays} -> player_{last.winner}"


def _hand_summary(game: Game, number: int) -> str:
    log = game.history[number - 1]
    seats = range(len(log.quotas))
    parts = [f"player_{s}: {log.tricks_won[s]} tricks (quota {log.quotas[s]}, {log.balances[s]:+d})" for s in seats]
    scores = ", ".join(f"player_{s} {log.scores[s]:+d}" for s in seats)
    chips = "" if log.chips is None else " chips: " + ", ".join(f"player_{s} {log.chips[s]:+d}" for s in seats) + ";"
    return f"\n=== Hand {number} over: " + "; ".join(parts) + f"\n==={chips} Scores: {scores}"


def seat_agents(specs: Sequence[str], seat: int, seed: int, human: Agent) -> list[Agent]:
    """The players in seat order: ``human`` at ``seat``, an agent of ``specs`` (in order) at each other seat.
    Every one is built and reset with :func:`agents.agent_seed` of the game's ``seed`` and its seat, never the
    game's seed itself (that is the deal's stream); AgentSpecError for a bad or ``human`` spec."""
    others = [s for s in range(len(specs) + 1) if s != seat]
    players: list[Agent] = [human] * (len(specs) + 1)
    for s, spec in zip(others, specs, strict=True):
        players[s] = make_opponent(spec, seed=agent_seed(seed, s))
    for s, player in enumerate(players):
        player.reset(agent_seed(seed, s))
    return players


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
        if args.record is not None:  # before the game: a path that cannot be written is said now, not at the end
            check_output_path(args.record, "--record")
        specs = args.opponents if args.opponents is not None else ["heuristic"] * (n - 1)
        if len(specs) != n - 1:
            raise ValueError(f"--opponents: {n} players need {n - 1} opponents, got {len(specs)}")
        human = HumanAgent(
            seed=agent_seed(seed, args.seat), input_stream=input_stream, output_stream=out, unicode_suits=args.unicode
        )
        agents = seat_agents(specs, args.seat, seed, human)
    except (AgentSpecError, ValueError) as err:
        print(f"{PROG}: error: {err}", file=sys.stderr)
        return 2
    # An unseeded game's seed is not shown (it tells the deal): the record holds it, and the file name has none.
    tag = f"-{seed}" if args.seed is not None else ""
    path = args.record or os.path.join("runs", "games", f"game-{time.strftime('%Y%m%d-%H%M%S')}{tag}.json")
    names = ", ".join(f"player_{s}: {'you' if s == args.seat else agents[s].name}" for s in range(n))
    dealt = f"seed {seed}" if args.seed is not None else "a random deal (its seed is in the record)"
    print(f"Sergeant Major, {dealt}. {names}. Type '?' or 'help' for help.", file=out)
    hand = game.hand_number
    told: set[tuple[int, int]] = set()
    status = 0
    try:
        while game.current_player is not None:
            seat = game.current_player
            view = player_view(game, seat)
            action = human.act(view) if seat == args.seat else act(agents[seat], view)
            game.apply(action)
            if _untold(game, args.seat, told):
                for line in _exchange_news(player_view(game, args.seat), told):
                    print(line, file=out)
            if game.hand_number != hand or game.is_over:
                last = _last_trick(game, hand)
                if last is not None:
                    print(last, file=out)
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
