"""Belief inference in the search (agents/search/inference.py; ``pimc:...,infer=K``)."""

from __future__ import annotations

import random

import numpy as np
import pytest

from agents import AgentSpecError, make_agent
from agents.search.inference import deal_log_likelihoods, opponent_plays, resample, start_of_play
from agents.search.world_sampler import World, constraints_of, sample_world
from agents.trained import TrainedAgent
from sm_env.core.game import PLAY, Game
from sm_env.core.knowledge import player_view
from sm_env.observation import encode


def _policy_game(seed: int, tricks: int, seat: int = 0) -> tuple[Game, TrainedAgent]:
    """A game of the shipped policy in every seat, stopped when ``seat`` is to play after ``tricks`` tricks."""
    agent = TrainedAgent(0)
    game = Game(rules="standard", seed=seed)
    while not (game.phase == PLAY and game.tricks_played >= tricks and game.current == seat):
        view = player_view(game, game.current)
        game.apply(agent.choose(encode(view), view.legal))
    return game, agent


def _true_world(game: Game, sampled: World) -> World:
    return World(tuple(game.hands), sampled.kitty, sampled.out)


def test_replay_reaches_the_position_and_lists_only_opponent_choices() -> None:
    game, _ = _policy_game(seed=3, tricks=6)
    view = player_view(game, 0)
    world = sample_world(view, random.Random(1), constraints_of(view))
    start = start_of_play(view, world)
    assert start.tricks_played == 0
    assert [start.hands[s] for s in range(3)] == [world.hands[s] | view.played[s] for s in range(3)]
    plays = opponent_plays(view, world)
    opponent_cards = sum(len([c for c in t.cards]) for t in view.tricks()) - bin(view.played[0]).count("1")
    assert 0 < len(plays) <= opponent_cards
    for obs, card, legal in plays:
        assert legal >> card & 1 and legal & (legal - 1)  # a card it could play, among at least two
        assert obs.shape == encode(view).shape


def test_the_true_deal_explains_the_policys_play_better_than_sampled_deals() -> None:
    agent = TrainedAgent(0)
    better = 0
    for seed in range(6):
        game, agent = _policy_game(seed=seed, tricks=8)
        view = player_view(game, 0)
        worlds = [sample_world(view, random.Random(seed), constraints_of(view)) for _ in range(32)]
        sampled = deal_log_likelihoods(view, worlds, agent.policy.logits)
        true = deal_log_likelihoods(view, [_true_world(game, worlds[0])], agent.policy.logits)[0]
        assert np.all(sampled < 0) and true < 0
        better += true > sampled.mean()
    assert better >= 5


def test_resample_follows_the_weights() -> None:
    worlds = [World((i, 0, 0), 0, 0) for i in range(4)]
    only_second = resample(worlds, np.array([-50.0, 0.0, -50.0, -50.0]), 8, 1.0, 0.3)
    assert [w.hands[0] for w in only_second] == [1] * 8
    assert [w.hands[0] for w in resample(worlds, np.array([-50.0, 0.0, -50.0, -50.0]), 4, 0.0, 0.5)] == [0, 1, 2, 3]
    halves = resample(worlds, np.log(np.array([0.5, 0.5, 1e-30, 1e-30])), 4, 1.0, 0.1)
    assert sorted(w.hands[0] for w in halves) == [0, 0, 1, 1]


def test_pimc_with_inference_is_deterministic_and_named() -> None:
    game, _ = _policy_game(seed=4, tricks=5)
    view = player_view(game, 0)
    spec = "pimc:rollout=policy,infer=4"
    first = make_agent(spec, seed=2)
    assert first.name == "pimc:rollout=policy,samples=16,infer=4"
    values = first.evaluate(view)
    again = make_agent(spec, seed=2).evaluate(view)
    assert values == again
    assert values != make_agent("pimc:rollout=policy", seed=2).evaluate(view)  # other deals searched


@pytest.mark.parametrize(
    ("spec", "words"),
    [
        ("pimc:infer=4", "needs rollout=policy"),
        ("pimc:rollout=policy,infer=65", "infer"),
        ("pimc:rollout=policy,infer=4,infer_temp=-1", "infer_temp"),
        ("pimc:rollout=policy,infer_temp=0.5", "needs infer"),
    ],
)
def test_bad_inference_specs_are_refused(spec: str, words: str) -> None:
    with pytest.raises((AgentSpecError, ValueError), match=words):
        make_agent(spec)
