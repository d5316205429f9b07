"""Sergeant Major through OpenSpiel's own algorithms (needs the openspiel extra; the figures of docs/openspiel.md).

Five parts, each printing its figures (one-hand episodes of ``--rules``, standard by default):

``speed``
    random legal play, one hand per episode, decisions per second: the OpenSpiel state (legal actions and the
    acting player's observation tensor every decision, the deal's chance nodes sampled) against ``raw_env``
    (observation and mask every decision; compiled, and ``compiled=False``).
``ismcts``
    OpenSpiel's Python ``ISMCTSBot`` (random-rollout evaluator) in one seat against the project's
    ``heuristic`` in the others, duplicate: every deal is played in each rotation of the seats, one hand,
    the deal's seed that of ``sergeant-major eval`` (``training.evaluation.deals.deal_seed``). The bot searches
    the real OpenSpiel state with no resampler of its own: its worlds come from the game's
    ``resample_from_infostate``. Figure: the bot's mean balance per hand, which is 0 for the heuristic in its
    place (the balances of a hand sum to 0 and every seat is played).
``dqn``
    OpenSpiel's PyTorch ``DQN`` on ``rl_environment.Environment`` (the observation tensor): one learner per seat
    in self-play for ``--episodes`` hands, then each seat against two random players (``RandomAgent``) and
    against two heuristic players, before and after training (mean return per hand).
``nfsp``
    OpenSpiel's PyTorch ``NFSP`` on ``rl_environment.Environment`` with the perfect-recall information state
    tensor: one agent per seat in self-play for ``--episodes`` hands, its average policy evaluated as ``dqn``.
``mccfr``
    OpenSpiel's outcome-sampling MCCFR (``open_spiel.python.algorithms.outcome_sampling_mccfr``) for
    ``--iterations`` iterations (one episode per seat each), keyed by the information state string: the
    information states it filled, how often an episode met one it had met before, and its average policy in
    one seat against two random players (mean return per hand; a state it never met is played uniformly).

    python -m training.evaluation.openspiel_demo speed [--hands 40]
    python -m training.evaluation.openspiel_demo ismcts [--deals 20] [--simulations 100]
    python -m training.evaluation.openspiel_demo dqn [--episodes 3000]
    python -m training.evaluation.openspiel_demo nfsp [--episodes 2000]
    python -m training.evaluation.openspiel_demo mccfr [--iterations 2000]
"""

from __future__ import annotations

import argparse
import math
import random
import time
from collections.abc import Callable
from typing import Any

import numpy as np

try:
    import pyspiel
except ImportError as err:  # pragma: no cover - the message says what to install
    raise ImportError("training.evaluation.openspiel_demo needs OpenSpiel: pip install -e '.[openspiel]'") from err

from agents import agent_seed
from agents.players.heuristic import heuristic_action
from sm_env.core.game import Game
from sm_env.envs.openspiel_game import GAME_NAME, SergeantMajorGame, deal_chance_actions


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


def ismcts_bot(game: SergeantMajorGame, simulations: int, uct_c: float, seed: int) -> Any:
    """OpenSpiel's Python ISMCTS bot with random rollouts and no resampler: it draws its worlds with the state's
    own ``resample_from_infostate``."""
    from open_spiel.python.algorithms import ismcts, mcts

    random_state = np.random.RandomState(seed % 2**32)
    return ismcts.ISMCTSBot(
        game=game,
        evaluator=mcts.RandomRolloutEvaluator(n_rollouts=1, random_state=random_state),
        uct_c=uct_c,
        max_simulations=simulations,
        random_state=random_state,
    )


def play_hand(game: SergeantMajorGame, seed: int, bots: dict[int, Any]) -> list[float]:
    """One hand dealt by seat 0 from ``seed`` (the deal ``Game(rules, seed=seed)`` deals), on OpenSpiel states:
    the seats of ``bots`` play their bot's step, the others the heuristic. The balances (the returns)."""
    log = Game(game.rules, seed=seed, first_dealer=0, max_hands=1).history[0]
    state = game.new_initial_state()
    for action in [0, *deal_chance_actions({"hands": log.deal_hands, "kitty": log.kitty}, game.rules)]:
        state.apply_action(action)
    while not state.is_terminal():
        seat = state.current_player()
        bot = bots.get(seat)
        state.apply_action(int(bot.step(state)) if bot is not None else heuristic_action(state.view(seat)))
    return state.returns()


def run_ismcts(args: argparse.Namespace) -> None:
    from training.evaluation.deals import deal_seed

    game = load(args.rules)
    n = game.num_players()
    per_deal, by_seat = [], np.zeros(n)
    start = time.perf_counter()
    for index in range(args.deals):
        seed = deal_seed(args.seed, index)
        balances = []
        for seat in range(n):
            # never the deal's own stream (play_hand deals from seed)
            bot = ismcts_bot(game, args.simulations, args.uct_c, agent_seed(seed, seat))
            balances.append(play_hand(game, seed, {seat: bot})[seat])
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


# ----------------------------------------------------------------------------- DQN and NFSP


def evaluate_agents(env: Any, act: Callable[[int, Any], int], opponent: str, episodes: int) -> float:
    """Mean return per hand of each learner seat (``act(seat, time_step)``) against two ``opponent`` players
    ("random" or "heuristic"), averaged over the seats."""
    from open_spiel.python.algorithms import random_agent

    n = env.num_players
    total = 0.0
    for seat in range(n):
        for _ in range(episodes):
            step = env.reset()
            while not step.last():
                player = step.observations["current_player"]
                if player == seat:
                    action = act(seat, step)
                elif opponent == "heuristic":
                    action = heuristic_action(env.get_state.view(player))
                else:
                    action = random_agent.RandomAgent(player, env.action_spec()["num_actions"]).step(step).action
                step = env.step([action])
            total += step.rewards[seat]
    return total / (n * episodes)


def _environment(args: argparse.Namespace, observation: bool) -> tuple[Any, dict[str, Any]]:
    """The RL environment of ``args.rules`` (its learners' tensor the observation, else the environment's default,
    the information state tensor), with torch seeded and on one thread; and the settings its DQN and NFSP
    learners share: the tensor's size, the actions, the network, the replay, the minibatches, the decay of the
    exploration."""
    import torch
    from open_spiel.python import rl_environment

    torch.manual_seed(args.seed)
    torch.set_num_threads(1)
    kind = rl_environment.ObservationType.OBSERVATION if observation else None
    env = rl_environment.Environment(load(args.rules), seed=args.seed, observation_type=kind)
    shared = {
        "state_representation_size": env.observation_spec()["info_state"][0],
        "num_actions": env.action_spec()["num_actions"],
        "hidden_layers_sizes": [256, 256],
        "replay_buffer_capacity": 50_000,
        "batch_size": 128,
        "min_buffer_size_to_learn": 1000,
        "optimizer_str": "adam",
        "epsilon_decay_duration": args.episodes * 20,
    }
    return env, shared


def _self_play(
    env: Any,
    learners: list[Any],
    act: Callable[[int, Any], int],
    args: argparse.Namespace,
    name: str,
    player: str,
    note: str = "",
) -> None:
    """``args.episodes`` hands of self-play, every learner stepped, and the learners (``act(seat, time_step)``)
    against each opponent before and after it (:func:`evaluate_agents`), printed (``name``: the algorithm's,
    ``player``: what plays the evaluations; ``note``: what the first line adds)."""
    opponents = ("random", "heuristic")
    before = {opp: evaluate_agents(env, act, opp, args.eval_episodes) for opp in opponents}
    start = time.perf_counter()
    steps = 0
    for _ in range(args.episodes):
        step = env.reset()
        while not step.last():
            seat = step.observations["current_player"]
            step = env.step([learners[seat].step(step).action])
            steps += 1
        for learner in learners:
            learner.step(step)
    seconds = time.perf_counter() - start
    after = {opp: evaluate_agents(env, act, opp, args.eval_episodes) for opp in opponents}
    print(f"{name} self-play, {args.episodes} hands of {args.rules!r} ({steps} decisions, {seconds:.0f} s{note})")
    for opp in opponents:
        print(
            f"  {player} against two {opp} players, mean return per hand over {args.eval_episodes} hands x "
            f"{env.num_players} seats: before {before[opp]:+.3f}, after {after[opp]:+.3f}"
        )


def run_dqn(args: argparse.Namespace) -> None:
    from open_spiel.python.pytorch import dqn

    env, shared = _environment(args, observation=True)  # the env's observation, as before
    own = {"learning_rate": 1e-3, "learn_every": 10, "update_target_network_every": 1000, "epsilon_end": 0.05}
    learners = [dqn.DQN(player_id=seat, seed=args.seed + seat, **own, **shared) for seat in range(env.num_players)]

    def act(seat: int, step: Any) -> int:
        return learners[seat].step(step, is_evaluation=True).action

    _self_play(env, learners, act, args, "DQN", "DQN")


def run_nfsp(args: argparse.Namespace) -> None:
    from open_spiel.python.pytorch import nfsp

    env, shared = _environment(args, observation=False)  # the information state tensor
    own = {"reservoir_buffer_capacity": 100_000, "anticipatory_param": 0.1, "learn_every": 64}
    own |= {"rl_learning_rate": 1e-3, "sl_learning_rate": 1e-3, "epsilon_start": 0.06, "epsilon_end": 0.001}
    learners = [nfsp.NFSP(player_id=seat, seed=args.seed + seat, **own, **shared) for seat in range(env.num_players)]

    def act(seat: int, step: Any) -> int:
        with learners[seat].temp_mode_as(nfsp.MODE.AVERAGE_POLICY):
            return learners[seat].step(step, is_evaluation=True).action

    size = shared["state_representation_size"]
    note = f"; information state tensor of {size} entries"
    _self_play(env, learners, act, args, "NFSP", "NFSP average policy", note)


# ----------------------------------------------------------------------------- outcome-sampling MCCFR


class _CountingSolver:
    """OpenSpiel's outcome-sampling solver, counting how many information-state lookups found an entry."""

    def __init__(self, game: SergeantMajorGame) -> None:
        from open_spiel.python.algorithms import outcome_sampling_mccfr

        solver = outcome_sampling_mccfr.OutcomeSamplingSolver(game)
        lookup = solver._lookup_infostate_info
        self.solver = solver
        self.lookups = 0
        self.found = 0

        def counted(key: str, num_actions: int) -> Any:
            self.lookups += 1
            self.found += key in solver._infostates
            return lookup(key, num_actions)

        solver._lookup_infostate_info = counted


def evaluate_policy(game: SergeantMajorGame, policy: Any, episodes: int, seed: int) -> float:
    """Mean return per hand of ``policy`` (an OpenSpiel ``Policy``) in each seat against two random players."""
    rng = random.Random(seed)
    n = game.num_players()
    total = 0.0
    for seat in range(n):
        for _ in range(episodes):
            state = game.new_initial_state()
            while not state.is_terminal():
                if state.is_chance_node():
                    outcomes = state.chance_outcomes()
                    state.apply_action(outcomes[rng.randrange(len(outcomes))][0])
                elif state.current_player() == seat:
                    probs = policy.action_probabilities(state)
                    actions = list(probs)
                    state.apply_action(rng.choices(actions, weights=[probs[a] for a in actions])[0])
                else:
                    state.apply_action(rng.choice(state.legal_actions()))
            total += state.returns()[seat]
    return total / (n * episodes)


def run_mccfr(args: argparse.Namespace) -> None:
    np.random.seed(args.seed % 2**32)  # the solver samples with numpy's global generator
    game = load(args.rules)
    counting = _CountingSolver(game)
    start = time.perf_counter()
    for _ in range(args.iterations):
        counting.solver.iteration()
    seconds = time.perf_counter() - start
    states = len(counting.solver._infostates)
    share = 100 * counting.found / max(counting.lookups, 1)
    result = evaluate_policy(game, counting.solver.average_policy(), args.eval_episodes, args.seed)
    print(
        f"outcome-sampling MCCFR, {args.iterations} iterations of {args.rules!r} one-hand episodes ({seconds:.0f} s, "
        f"{1000 * seconds / max(args.iterations, 1):.1f} ms an iteration): {states} information states, "
        f"{counting.lookups} lookups of which {counting.found} ({share:.2f}%) "
        f"met a state seen before; average policy against two random players, {args.eval_episodes} hands x "
        f"{game.num_players()} seats: {result:+.3f} a hand"
    )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("part", choices=["speed", "ismcts", "dqn", "nfsp", "mccfr"])
    parser.add_argument("--rules", default="standard")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--hands", type=int, default=40, help="speed: hands per engine")
    parser.add_argument("--deals", type=int, default=20, help="ismcts: deals, each in every rotation")
    parser.add_argument("--simulations", type=int, default=100, help="ismcts: simulations per decision")
    parser.add_argument("--uct-c", type=float, default=4.0, help="ismcts: the UCT constant (rewards are tricks)")
    parser.add_argument("--episodes", type=int, default=None, help="dqn (3000), nfsp (2000): self-play hands")
    parser.add_argument("--iterations", type=int, default=2000, help="mccfr: iterations")
    parser.add_argument(
        "--eval-episodes", type=int, default=100, help="dqn, nfsp, mccfr: evaluation hands per seat and opponent"
    )
    args = parser.parse_args(argv)
    if args.episodes is None:
        args.episodes = 2000 if args.part == "nfsp" else 3000
    parts = {"speed": run_speed, "ismcts": run_ismcts, "dqn": run_dqn, "nfsp": run_nfsp, "mccfr": run_mccfr}
    parts[args.part](args)


if __name__ == "__main__":
    main()
