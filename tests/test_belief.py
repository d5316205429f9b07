"""The belief network (agents/search/belief.py), pimc's deals drawn by it (belief=, pool=, alpha=), the policy
prior (prior=), and the fit that makes the network (training/distill/belief.py, `improve belief`)."""

from __future__ import annotations

import os
import random
import re

import numpy as np
import pytest

pytest.importorskip("torch")

from helpers import not_model_files  # noqa: E402

from agents import AgentSpecError, make_agent  # noqa: E402
from agents.players.ppo_agent import NumpyPolicy, PolicyLoadError  # noqa: E402
from agents.search.belief import BeliefNet, load_belief, resample, save_belief  # noqa: E402
from agents.search.world_sampler import World  # noqa: E402
from sm_env.core.game import PLAY, Game  # noqa: E402
from sm_env.core.knowledge import player_view  # noqa: E402
from sm_env.core.rules import RuleSet  # noqa: E402
from sm_env.observation import encode, observation_size  # noqa: E402

STANDARD = RuleSet.from_any("standard")


def _net(bias: np.ndarray, rules: RuleSet = STANDARD) -> BeliefNet:
    """A network without hidden layers whose output is ``bias`` whatever the observation."""
    outputs = 52 * rules.num_players
    head = (np.zeros((outputs, observation_size(rules)), dtype=np.float32), bias.astype(np.float32))
    return BeliefNet(NumpyPolicy([], head, "relu"), rules)


def _on_left(card: int) -> np.ndarray:
    """Logits that put ``card`` in the left hand (and every other card anywhere alike)."""
    bias = np.zeros(52 * 3)
    bias[card * 3 + 0] = 10.0
    return bias


def test_log_probs_are_a_distribution_per_card() -> None:
    net = _net(_on_left(5))
    log_probs = net.log_probs(np.zeros(observation_size(STANDARD), dtype=np.float32))
    assert log_probs.shape == (52, 3)
    assert np.allclose(np.exp(log_probs).sum(axis=1), 1.0)
    assert log_probs[5].argmax() == 0 and np.allclose(log_probs[6], np.log(1 / 3))


def test_scores_favour_the_deal_the_network_believes() -> None:
    net = _net(_on_left(5))
    log_probs = net.log_probs(np.zeros(observation_size(STANDARD), dtype=np.float32))
    seat = 0  # left is seat 1, right seat 2
    believed = World(hands=(0, 1 << 5, 1 << 6), kitty=0, out=0)
    other = World(hands=(0, 1 << 6, 1 << 5), kitty=0, out=0)
    unknown = (1 << 5) | (1 << 6)
    scores = net.scores(log_probs, seat, unknown, [believed, other])
    assert scores[0] > scores[1] + 9.0
    # a card the seat can place (not in unknown) does not count
    assert net.scores(log_probs, seat, 1 << 6, [believed, other]).tolist() == pytest.approx([np.log(1 / 3)] * 2)


def test_resample_keeps_the_weighted_deals_and_is_seeded() -> None:
    scores = np.array([0.0, -60.0, 0.0, -60.0])
    kept = resample(scores, 1.0, 8, random.Random(3).randrange)
    assert set(kept) <= {0, 2} and len(kept) == 8
    assert kept == resample(scores, 1.0, 8, random.Random(3).randrange)
    # alpha 0: every deal alike, systematic resampling keeps each once
    assert sorted(resample(scores, 0.0, 4, random.Random(1).randrange)) == [0, 1, 2, 3]


def test_file_round_trip_and_refusals(tmp_path) -> None:
    rng = np.random.default_rng(0)
    size = observation_size(STANDARD)
    hidden = [(rng.normal(size=(8, size)).astype(np.float32), rng.normal(size=8).astype(np.float32))]
    head = (rng.normal(size=(156, 8)).astype(np.float32), rng.normal(size=156).astype(np.float32))
    path = str(tmp_path / "belief.pt")
    save_belief(path, hidden, head, STANDARD, policy="trained")
    net = load_belief(path)
    obs = encode(player_view(Game(STANDARD, seed=4), 1))
    expected = np.maximum(obs @ hidden[0][0].T + hidden[0][1], 0) @ head[0].T + head[1]
    assert np.allclose(net.network.logits(obs), expected, atol=1e-4)
    assert net.meta["policy"] == "trained" and net.rules.name == "standard"
    with pytest.raises(PolicyLoadError, match="not found"):
        load_belief(str(tmp_path / "missing.pt"))
    import torch

    torch.save({"format": "something-else"}, str(tmp_path / "other.pt"))
    with pytest.raises(PolicyLoadError, match="sergeant-major-belief/1"):
        load_belief(str(tmp_path / "other.pt"))
    bad = (head[0].copy(), head[1].copy())
    bad[1][0] = np.nan
    save_belief(str(tmp_path / "nan.pt"), hidden, bad, STANDARD)
    with pytest.raises(PolicyLoadError, match="non-finite"):
        load_belief(str(tmp_path / "nan.pt"))
    with pytest.raises(ValueError, match="cannot read the rules 'four-5-3-2-2'"):
        net.check_rules(RuleSet.from_any("four-5-3-2-2"))


@pytest.fixture(scope="module")
def belief_file(tmp_path_factory) -> str:
    path = str(tmp_path_factory.mktemp("belief") / "b.pt")
    rng = np.random.default_rng(1)
    head = (
        rng.normal(scale=0.01, size=(156, observation_size(STANDARD))).astype(np.float32),
        np.zeros(156, np.float32),
    )
    save_belief(path, [], head, STANDARD)
    return path


def _play(spec: str, seed: int, decisions: int = 6) -> list[int]:
    """The moves of ``spec`` in seat 0 of a game where the heuristic plays the others (first ``decisions`` of its
    searched card plays)."""
    from agents.players.heuristic import heuristic_action

    agent = make_agent(spec, seed=seed)
    game = Game(STANDARD, seed=11, max_hands=1)
    agent.check_rules(STANDARD)
    moves: list[int] = []
    while game.current_player is not None and len(moves) < decisions:
        view = player_view(game, game.current_player)
        if game.current_player == 0 and view.phase == PLAY and bin(view.legal).count("1") > 1:
            action = agent.act(view)
            assert view.legal >> action & 1
            moves.append(action)
        else:
            action = heuristic_action(view)
        game.apply(action)
    return moves


def test_pimc_with_a_belief_plays_legal_seeded_moves(belief_file) -> None:
    spec = f"pimc:rollout=policy,samples=4,belief={belief_file},pool=4"
    first = _play(spec, seed=5)
    assert len(first) == 6 and first == _play(spec, seed=5)
    agent = make_agent(spec, seed=0)
    assert f"belief={belief_file}" in agent.name and "pool=4,alpha=0.5" in agent.name
    assert "prior=0.1" in make_agent("pimc:rollout=policy,prior=0.1").name


@pytest.mark.parametrize("case", ["a character device", "a directory", "text", "an empty file", "a cut policy"])
def test_a_path_that_is_no_belief_file_says_what_it_found(case, tmp_path, belief_file, capsys) -> None:
    from sm_cli import main as cli_main

    cases = not_model_files(tmp_path, belief_file)  # "a cut policy": the belief file cut in half
    if case not in cases:
        pytest.skip(f"no {case} on this system")
    path, found = cases[case]
    with pytest.raises(PolicyLoadError) as info:
        load_belief(path)
    message = str(info.value)
    assert path in message and found in message and "\n" not in message, message
    assert "not found" not in message and "Error" not in message  # neither "file not found" nor an IndexError
    with pytest.raises(AgentSpecError, match=re.escape(message)):
        make_agent(f"pimc:belief={path}")
    argv = ["eval", "--agents", f"pimc:belief={path}", "random", "random", "--deals", "1", "--workers", "1"]
    assert cli_main(argv + ["--no-progress", "--out", str(tmp_path / "ev")]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1 and message in err, err


def test_pimc_belief_and_prior_refusals(belief_file) -> None:
    with pytest.raises(AgentSpecError, match="prior needs rollout=policy"):
        make_agent("pimc:prior=0.1")
    with pytest.raises(AgentSpecError, match="pool"):
        make_agent(f"pimc:belief={belief_file},pool=0")
    with pytest.raises(AgentSpecError, match=r"samples x pool \(deals drawn per decision\) must be at most 20000"):
        make_agent(f"pimc:belief={belief_file},samples=10000,pool=3")
    with pytest.raises(AgentSpecError, match="belief file not found"):
        make_agent("pimc:belief=/nonexistent/belief.pt")
    agent = make_agent(f"pimc:rollout=policy,belief={belief_file}")
    with pytest.raises(ValueError, match="cannot read the rules"):
        agent.check_rules(RuleSet.from_any("four-5-3-2-2"))


def test_search_is_the_shipped_belief_search_with_overrides() -> None:
    """``search`` is pimc with the shipped belief, policy rollouts, prior 1 and 24 deals; given parameters
    replace those, and the agent is named by the spec, not by the machine's path to the belief file."""
    from agents import SEARCH_BELIEF

    agent = make_agent("search", seed=0)
    assert (agent.rollout, agent.belief_file, agent.prior, agent.samples) == ("policy", SEARCH_BELIEF, 1.0, 24)
    assert agent.name == "search" and os.path.exists(SEARCH_BELIEF)
    agent.check_rules(RuleSet.from_any("3-5-9"))  # every rule set of the standard observation
    tuned = make_agent("search:game=8,samples=16", seed=0)
    assert (tuned.game, tuned.samples, tuned.prior) == (8.0, 16, 1.0) and tuned.name == "search:game=8,samples=16"
    spelt_out = f"pimc:rollout=policy,belief={SEARCH_BELIEF},prior=1,samples=2"
    assert _play("search:samples=2", seed=3) == _play(spelt_out, seed=3)
    with pytest.raises(AgentSpecError, match=r"search: unknown parameter\(s\) \['depth'\]"):
        make_agent("search:depth=2")
    with pytest.raises(AgentSpecError, match="search: parameter 'prior' must be"):
        make_agent("search:prior=11")
    with pytest.raises(ValueError, match="cannot read the rules"):
        agent.check_rules(RuleSet.from_any("four-5-3-2-2"))


def test_the_shipped_four_player_belief_reads_four_players_only() -> None:
    from agents import POLICY_DIR

    belief = load_belief(os.path.join(POLICY_DIR, "four-5-3-2-2_belief_v1.pt"))
    belief.check_rules(RuleSet.from_any("four-5-3-2-2"))
    assert belief.players == 4 and belief.network.num_actions == 208
    with pytest.raises(PolicyLoadError, match="cannot read the rules 'standard'"):
        belief.check_rules(STANDARD)


def test_the_prior_adds_the_policys_log_probabilities() -> None:
    """Equal search values: the prior alone decides, for the policy's own move, by ``prior`` x the log-odds."""
    from agents.players.trained import TrainedAgent

    policy = TrainedAgent(0)
    agent = make_agent("pimc:rollout=policy,prior=0.5", seed=0)
    game = Game(STANDARD, seed=12, max_hands=1)
    agent.check_rules(STANDARD)
    checked = 0
    while game.current_player is not None and checked < 8:
        view = player_view(game, game.current_player)
        legal = [a for a in range(56) if view.legal >> a & 1]
        if view.phase == PLAY and len(legal) > 1:
            values = agent._with_prior({a: 1.0 for a in legal}, view, None)
            assert max(legal, key=lambda a: values[a]) == policy.act(view)
            probs = policy.policy.probabilities(encode(view), view.legal)
            a, b = legal[:2]
            assert values[a] - values[b] == pytest.approx(0.5 * np.log(probs[a] / probs[b]), abs=1e-6)
            checked += 1
        game.apply(policy.act(view))
    assert checked == 8


def test_fit_writes_a_belief_and_resumes_to_the_same_file(tmp_path) -> None:
    from training.distill.belief import fit_belief

    lines: list[str] = []
    out = str(tmp_path / "b.pt")
    args = dict(policy="trained", out=out, decisions=20480, hidden=(16,), log=lines.append, chunk_size=10240)
    fit_belief(**args)
    first = load_belief(out)
    assert first.meta["decisions"] == 20480 and any("held-out" in line for line in lines)
    # the checkpoint after the second chunk: the same command goes on from it and writes the same network
    os.remove(out)
    fit_belief(**args)
    assert any("going on after chunk 2 of 2" in line for line in lines)
    again = load_belief(out)
    layers = zip([*first.network.hidden, first.network.head], [*again.network.hidden, again.network.head], strict=True)
    for (w1, b1), (w2, b2) in layers:
        assert np.array_equal(w1, w2) and np.array_equal(b1, b2)
    from training.common.checkpoint import CheckpointError

    with pytest.raises(CheckpointError, match="another fit"):
        fit_belief(**{**args, "seed": 1})


def test_improve_belief_refuses_bad_input(capsys) -> None:
    from training.distill.cli import main

    assert main(["belief", "--decisions", "5", "--out", "x.pt"]) == 2
    assert "decisions must be in" in capsys.readouterr().err


def test_distillation_labels_with_the_belief_and_the_prior(belief_file) -> None:
    """``data.belief`` and ``data.prior`` make the labelling search the agent that plays them; its labels are the
    values that agent maximises (the prior included); both are checked with the settings."""
    from training.distill import data as distill_data
    from training.distill.data import DataSettings, SettingsError

    settings = DataSettings(samples=2, rollout="policy", belief=belief_file, prior=0.3, exchange_start=0.0)
    settings.validate()
    search = distill_data.search_agent(settings, seed=0)
    assert search.belief_file == belief_file and search.prior == 0.3
    assert {"belief", "prior"} <= set(settings.record()) and "prior" not in DataSettings().record()
    rows = distill_data.label_hand(settings, 0)
    plays = [row for row in rows if row["searched"]]
    assert plays and all(np.nanmax(row["values"].astype(np.float64)) < 17 for row in plays)
    without = distill_data.label_hand(settings.model_copy(update={"prior": 0.0}), 0)
    first = [row for row in without if row["searched"]][0]["values"].astype(np.float64)
    gap = plays[0]["values"].astype(np.float64) - first  # the same deals: the prior term alone (in float16)
    legal = ~np.isnan(gap)
    assert legal.sum() > 1 and np.all(gap[legal] <= 0.01) and gap[legal].min() < -0.05
    with pytest.raises(SettingsError, match=r"needs rollout: policy \(it adds"):
        DataSettings(prior=0.3).validate()
    with pytest.raises(SettingsError, match="belief file not found"):
        DataSettings(belief="/nonexistent/b.pt").validate()


def test_a_tournament_fingerprints_the_files_pimc_loads(tmp_path) -> None:
    """A stored table is replayed when the rollout policy or the belief file of a pimc spec changes."""
    from training.evaluation.tournament import fingerprint

    assert fingerprint("pimc") is None and fingerprint("pimc:samples=4") is None
    shipped = fingerprint("pimc:rollout=policy")
    assert shipped is not None and shipped != fingerprint("pimc:rollout=policy,policy=agents/policies/standard_v1.pt")
    rng = np.random.default_rng(2)
    head = (rng.normal(size=(156, observation_size(STANDARD))).astype(np.float32), np.zeros(156, np.float32))
    path = str(tmp_path / "b.pt")
    save_belief(path, [], head, STANDARD)
    first = fingerprint(f"pimc:rollout=policy,belief={path}")
    save_belief(path, [], (head[0] * 2, head[1]), STANDARD)
    assert first not in (shipped, fingerprint(f"pimc:rollout=policy,belief={path}"))
