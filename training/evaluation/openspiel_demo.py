"""Sergeant Major through OpenSpiel's own algorithms (needs the openspiel extra; the figures of docs/openspiel.md).

Three parts, each printing its figures:

``speed``
    random legal play, one hand per episode, decisions per second: the OpenSpiel state (legal actions and the
    acting player's observation tensor every decision, the deal's chance nodes sampled) against ``raw_env``
    (observation and mask every decision; compiled, and ``compiled=False``).
``ismcts``
    OpenSpiel's Python ``ISMCTSBot`` (random-rollout evaluator) in one seat against the project's
    ``heuristic`` in the others, duplicate: every deal is played in each rotation of the seats, one hand,
    the deal's seed that of ``sergeant-major eval`` (``training.evaluation.deals.deal_seed``). The bot decides
    the trump, discards and play; it searches worlds sampled from the seat's view
    (``agents.search.world_sampler``), given to it as its resampler. The exchange, which these one-hand
    deals do not have, would be the heuristic's. Figure: the bot's mean balance per hand, which is 0 for
    the heuristic in its place (the balances of a hand sum to 0 and every seat is played).
``dqn``
    OpenSpiel's PyTorch ``DQN`` on ``rl_environment.Environment``: one learner per seat in self-play for
    ``--episodes`` hands, then each seat against two random players (``RandomAgent``) and against two
    heuristic players, before and after training (mean return per hand).

    python -m training.evaluation.openspiel_demo speed [--hands 40]
    python -m training.evaluation.openspiel_demo ismcts [--deals 30] [--simulations 100]
    python -m training.evaluation.openspiel_demo dqn [--episodes 3000]
"""

from __future__ import annotations

import argparse
import math
import random
import time
from typing import Any

import numpy as np

try:
    import pyspiel
except ImportError as err:  # pragma: no cover - the message says what to install
    raise ImportError("training.evaluation.openspiel_demo needs OpenSpiel: pip install -e '.[openspiel]'") from err

from agents.players.base import Agent
from agents.players.heuristic import heuristic_action
from agents.search.world_sampler import sample_world, world_from_view
from sm_env.core.game import DISCARD, OVER, PLAY, TRUMP, Game
from sm_env.core.knowledge import PlayerView, player_view
from sm_env.envs.openspiel_game import GAME_NAME, SergeantMajorGame, SergeantMajorState


def load(rules: str = "standard", **params: Any) -> SergeantMajorGame:
    """The OpenSpiel game of ``rules`` (one hand per episode unless ``episode`` says otherwise)."""
    return pyspiel.load_game(GAME_NAME, {"rules": rules, **params})


# ----------------------------------------------------------------------------- speed


def speed_openspiel(game: SergeantMajorGame, hands: int, seed: int) -> tuple[int, float]:
    """Random play of ``hands`` episodes on OpenSpiel states: (decisions, seconds)."""
    rng = random.Random(seed)
    decisions = 0
    start = time.perf_counter()
    for _ in range(hands):
        state = game.new_initial_state()
        while not state.is_terminal():
            if state.is_chance_node():
                outcomes = state.chance_outcomes()
                state.apply_action(outcomes[rng.randrange(len(outcomes))][0])
                continue
            legal = state.legal_actions()
            state.observation_tensor(state.current_player())
            state.apply_action(legal[rng.randrange(len(legal))])
            decisions += 1
    return decisions, time.perf_counter() - start


def speed_raw_env(rules: str, hands: int, seed: int, compiled: bool) -> tuple[int, float]:
    """Random play of ``hands`` one-hand episodes on ``raw_env`` (observe, then step): (decisions, seconds)."""
    from sm_env.envs.aec import raw_env

    rng = random.Random(seed)
    env = raw_env(rules=rules, episode="hand", compiled=compiled)
    decisions = 0
    start = time.perf_counter()
    for h in range(hands):
        env.reset(seed=seed + h)
        while True:
            agent = env.agent_selection
            if env.terminations[agent] or env.truncations[agent]:
                break
            legal = env.observe(agent)["action_mask"].nonzero()[0]
            env.step(int(legal[rng.randrange(len(legal))]))
            decisions += 1
    return decisions, time.perf_counter() - start


def run_speed(args: argparse.Namespace) -> None:
    rules = args.rules
    speed_raw_env(rules, 2, args.seed, True)  # compile (or load) the kernels before timing
    rows = [
        ("OpenSpiel state (Game)", speed_openspiel(load(rules), args.hands, args.seed)),
        ("raw_env, compiled", speed_raw_env(rules, args.hands, args.seed, True)),
        ("raw_env, compiled=False", speed_raw_env(rules, args.hands, args.seed, False)),
    ]
    print(f"random play, {args.hands} one-hand episodes of {rules!r}")
    for name, (decisions, seconds) in rows:
        print(f"  {name:<26} {1e6 * seconds / decisions:8.1f} us/decision  {args.hands / seconds:7.1f} hands/s")


# ----------------------------------------------------------------------------- ISMCTS against the heuristic


class OpenSpielIsmctsAgent(Agent):
    """OpenSpiel's Python ISMCTS bot as a project agent: it searches worlds sampled from the view.

    The root and every resample are ``state_from_engine`` of a ``Game`` built by
    :func:`agents.search.world_sampler.world_from_view` from a sampled deal, so the bot's information-state
    keys (the view's text) agree between worlds. Decisions the world builder does not cover (the exchange,
    bids, quota assignment, the face-up card) are the heuristic's.
    """

    name = "openspiel-ismcts"

    def __init__(self, game: SergeantMajorGame, simulations: int, uct_c: float, seed: int = 0) -> None:
        from open_spiel.python.algorithms import ismcts, mcts

        super().__init__(seed)
        self.game = game
        self.np_rng = np.random.RandomState(seed)
        self.bot = ismcts.ISMCTSBot(
            game=game,
            evaluator=mcts.RandomRolloutEvaluator(n_rollouts=1, random_state=self.np_rng),
            uct_c=uct_c,
            max_simulations=simulations,
            random_state=self.np_rng,
        )

    def reset(self, seed: int | None = None) -> None:
        super().reset(seed)
        self.np_rng.seed(0 if seed is None else seed % 2**32)

    def world(self, view: PlayerView) -> SergeantMajorState:
        """A state of a world consistent with ``view``."""
        return self.game.state_from_engine(world_from_view(view, sample_world(view, self.rng)))

    def act(self, view: PlayerView, observation: dict[str, Any] | None = None) -> int:
        legal = view.legal
        if view.phase not in (TRUMP, DISCARD, PLAY) or view.exchange_pending or legal & (legal - 1) == 0:
            return heuristic_action(view)
        self.bot.set_resampler(lambda state, player: self.world(view))
        return int(self.bot.step(self.world(view)))


def play_hand(rules: str, seed: int, seats: list[Agent | None]) -> list[int]:
    """One hand of ``rules`` dealt by seat 0 from ``seed``; ``None`` seats play the heuristic. The balances."""
    game = Game(rules, seed=seed, first_dealer=0, max_hands=1)
    while game.phase != OVER:
        view = player_view(game, game.current)
        agent = seats[game.current]
        game.apply(heuristic_action(view) if agent is None else agent.act(view))
    return list(game.history[0].balances)


def run_ismcts(args: argparse.Namespace) -> None:
    from training.evaluation.deals import deal_seed

    game = load(args.rules)
    n = game.num_players()
    bot = OpenSpielIsmctsAgent(game, args.simulations, args.uct_c, seed=args.seed)
    per_deal, by_seat = [], np.zeros(n)
    start = time.perf_counter()
    for index in range(args.deals):
        seed = deal_seed(args.seed, index)
        balances = []
        for seat in range(n):
            bot.reset(seed + seat)
            seats: list[Agent | None] = [None] * n
            seats[seat] = bot
            balances.append(play_hand(args.rules, seed, seats)[seat])
        by_seat += balances
        per_deal.append(sum(balances) / n)
    seconds = time.perf_counter() - start
    mean = float(np.mean(per_deal))
    half = 1.96 * float(np.std(per_deal, ddof=1)) / math.sqrt(len(per_deal)) if len(per_deal) > 1 else float("nan")
    print(
        f"ISMCTS ({args.simulations} simulations, uct_c {args.uct_c}) against heuristic, {args.deals} deals x {n} "
        f"seats of {args.rules!r}: {mean:+.3f} +- {half:.3f} (95%) tricks per hand; by seat (dealer first) "
        f"{[round(float(x) / args.deals, 2) for x in by_seat]}; {seconds:.0f} s"
    )


# ----------------------------------------------------------------------------- DQN


def _heuristic_step(state: SergeantMajorState) -> int:
    return heuristic_action(state.view(state.current_player()))


def evaluate_dqn(env: Any, learners: list[Any], opponent: str, episodes: int) -> float:
    """Mean return per hand of each learner seat against two ``opponent`` players ("random" or "heuristic"),
    averaged over the seats."""
    from open_spiel.python.algorithms import random_agent

    n = len(learners)
    total = 0.0
    for seat in range(n):
        for _ in range(episodes):
            step = env.reset()
            while not step.last():
                player = step.observations["current_player"]
                if player == seat:
                    action = learners[seat].step(step, is_evaluation=True).action
                elif opponent == "heuristic":
                    action = _heuristic_step(env.get_state)
                else:
                    action = random_agent.RandomAgent(player, env.action_spec()["num_actions"]).step(step).action
                step = env.step([action])
            total += step.rewards[seat]
    return total / (n * episodes)


def run_dqn(args: argparse.Namespace) -> None:
    import torch
    from open_spiel.python import rl_environment
    from open_spiel.python.pytorch import dqn

    torch.manual_seed(args.seed)
    torch.set_num_threads(1)
    env = rl_environment.Environment(load(args.rules), seed=args.seed)
    size = env.observation_spec()["info_state"][0]
    actions = env.action_spec()["num_actions"]
    learners = [
        dqn.DQN(
            player_id=seat,
            state_representation_size=size,
            num_actions=actions,
            hidden_layers_sizes=[256, 256],
            replay_buffer_capacity=50_000,
            batch_size=128,
            learning_rate=1e-3,
            optimizer_str="adam",
            learn_every=10,
            min_buffer_size_to_learn=1000,
            update_target_network_every=1000,
            epsilon_decay_duration=args.episodes * 20,
            epsilon_end=0.05,
            seed=args.seed + seat,
        )
        for seat in range(env.num_players)
    ]
    before = {opp: evaluate_dqn(env, learners, opp, args.eval_episodes) for opp in ("random", "heuristic")}
    start = time.perf_counter()
    steps = 0
    for _ in range(args.episodes):
        step = env.reset()
        while not step.last():
            player = step.observations["current_player"]
            step = env.step([learners[player].step(step).action])
            steps += 1
        for learner in learners:
            learner.step(step)
    seconds = time.perf_counter() - start
    after = {opp: evaluate_dqn(env, learners, opp, args.eval_episodes) for opp in ("random", "heuristic")}
    print(f"DQN self-play, {args.episodes} hands of {args.rules!r} ({steps} decisions, {seconds:.0f} s)")
    for opp in ("random", "heuristic"):
        print(
            f"  against two {opp} players, mean return per hand over {args.eval_episodes} hands x "
            f"{env.num_players} seats: before {before[opp]:+.3f}, after {after[opp]:+.3f}"
        )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("part", choices=["speed", "ismcts", "dqn"])
    parser.add_argument("--rules", default="standard")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--hands", type=int, default=40, help="speed: hands per engine")
    parser.add_argument("--deals", type=int, default=30, help="ismcts: deals, each in every rotation")
    parser.add_argument("--simulations", type=int, default=100, help="ismcts: simulations per decision")
    parser.add_argument("--uct-c", type=float, default=4.0, help="ismcts: the UCT constant (rewards are tricks)")
    parser.add_argument("--episodes", type=int, default=3000, help="dqn: self-play hands")
    parser.add_argument("--eval-episodes", type=int, default=100, help="dqn: hands per seat and opponent")
    args = parser.parse_args(argv)
    {"speed": run_speed, "ismcts": run_ismcts, "dqn": run_dqn}[args.part](args)


if __name__ == "__main__":
    main()
