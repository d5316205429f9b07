"""Training and policies on every rule set's shape: 74 actions (docs/rules.md 10.8), other observation sizes
(791, 900), the number of seats, all taken from the rule set; policy files that record their rules; the spec
``trained`` picking the shipped policy of the rules played."""

from __future__ import annotations

import json
import os
import shutil
import zipfile

import numpy as np
import pytest

from agents import TRAINED_POLICY, make_agent
from agents.players.ppo_agent import (
    STANDARD_SHAPE,
    NumpyPolicy,
    PolicyLoadError,
    PolicyShape,
    PPOAgent,
    export_policy,
    load_numpy_policy,
)
from agents.players.trained import TRAINED_POLICIES, TrainedAgent, trained_policy
from sm_cli import main as cli_main
from sm_env.core.cards import from_mask
from sm_env.core.game import Game
from sm_env.core.knowledge import player_view
from sm_env.core.rules import PRESETS, RuleSet
from sm_env.observation import observation_size
from training.cli import main as train_main

DEALER_ASSIGNS, ONE_CARD = PRESETS["dealer-assigns"], PRESETS["9-5-3-one-card"]


def _random_policy(rules: RuleSet, seed: int = 0, hidden: int = 8) -> NumpyPolicy:
    rng = np.random.default_rng(seed)
    shape = PolicyShape.of(rules)
    layer = (rng.normal(size=(hidden, shape.observation_size)), rng.normal(size=hidden))
    head = (rng.normal(size=(shape.action_count, hidden)), rng.normal(size=shape.action_count))
    return NumpyPolicy([layer], head, "relu")


def _plays_hands(spec: str, rules: RuleSet, hands: int = 2) -> int:
    """Plays ``hands`` hands of ``rules`` with the agent of ``spec`` in seat 0 (random elsewhere), checking every
    action is legal; returns the decisions it made."""
    agent = make_agent(spec, seed=0)
    agent.check_rules(rules)
    others = [make_agent("random", seed=s) for s in range(1, rules.num_players)]
    made = 0
    for seed in range(hands):
        game = Game(rules, seed=seed, max_hands=1)
        while (seat := game.current_player) is not None:
            view = player_view(game, seat)
            if seat == 0:
                obs = {"observation": None}
                action = agent.act(view, obs)
                made += 1
            else:
                action = others[seat - 1].act(view)
            assert action in from_mask(view.legal)
            game.apply(action)
    return made


# ---------------------------------------------------------------------------- shapes and policy files


def test_the_shape_of_a_rule_set_is_its_observation_actions_and_seats():
    assert PolicyShape.of(PRESETS["standard"]) == STANDARD_SHAPE == (789, 56, 3)
    assert PolicyShape.of(DEALER_ASSIGNS) == (791, 74, 3)
    assert PolicyShape.of(ONE_CARD) == (900, 74, 3)
    assert PolicyShape.of(PRESETS["four-5-3-2-2"]) == (1016, 56, 4)
    assert PolicyShape(791, 74, None).fits(DEALER_ASSIGNS) and not PolicyShape(791, 74, 4).fits(DEALER_ASSIGNS)


def test_a_policy_file_records_its_rules_and_plays_only_rules_of_its_shape(tmp_path):
    path = str(tmp_path / "da.pt")
    export_policy(_random_policy(DEALER_ASSIGNS), path, rules="dealer-assigns", trainer="test")
    policy, meta = load_numpy_policy(path)
    assert (meta["observation_size"], meta["action_count"], meta["players"]) == (791, 74, 3)
    assert meta["rules_name"] == "dealer-assigns" and RuleSet.from_any(meta["rules"]) == DEALER_ASSIGNS
    assert (policy.observation_size, policy.num_actions) == (791, 74)
    assert _plays_hands(f"ppo:{path}", DEALER_ASSIGNS) > 10  # the quota assignments (68-73) included
    agent = PPOAgent(path)
    with pytest.raises(PolicyLoadError) as err:
        agent.check_rules(PRESETS["standard"])
    message = str(err.value)
    assert (
        "\n" not in message
        and "trained on 'dealer-assigns'" in message
        and message.endswith("it plays: dealer-assigns")
    )
    with pytest.raises(PolicyLoadError, match="is not one for 'standard'"):  # a network of another shape
        export_policy(_random_policy(DEALER_ASSIGNS), str(tmp_path / "x.pt"), rules="standard")
    assert not (tmp_path / "x.pt").exists()


def test_a_file_whose_network_disagrees_with_its_recorded_shape_is_refused(tmp_path):
    import torch

    path = str(tmp_path / "bad.pt")
    export_policy(_random_policy(DEALER_ASSIGNS), path, rules="dealer-assigns")
    blob = torch.load(path, weights_only=True)
    blob["observation_size"] = 789  # the layers take 791
    torch.save(blob, path)
    with pytest.raises(PolicyLoadError, match="layer 0 takes 791 inputs but the observation size the policy records"):
        load_numpy_policy(path)
    blob["observation_size"], blob["action_count"] = 791, 56
    torch.save(blob, path)
    with pytest.raises(PolicyLoadError, match="the policy has 74 actions; its file records 56"):
        load_numpy_policy(path)


@pytest.mark.parametrize("name", ["standard_v0.pt", "standard_v1.pt", "standard_v2.pt"])
def test_the_shipped_policies_load_as_standard_policies_with_the_same_logits(name):
    """Files written before shapes and rules were recorded: the standard shape, and the logits of their own
    layers (a torch forward pass of the raw weights, independently of the numpy policy)."""
    import torch

    path = os.path.join(os.path.dirname(TRAINED_POLICY), name)
    policy, meta = load_numpy_policy(path)
    assert PPOAgent(path).shape[:2] == (789, 56) and "players" not in meta
    state = torch.load(path, weights_only=True)["state_dict"]
    x = torch.from_numpy(np.random.default_rng(1).uniform(-1, 1, size=(16, 789)).astype(np.float32))
    act = torch.tanh if meta["activation"] == "tanh" else torch.relu
    i = 0
    while f"mlp_extractor.policy_net.{i}.weight" in state:
        x = act(x @ state[f"mlp_extractor.policy_net.{i}.weight"].T + state[f"mlp_extractor.policy_net.{i}.bias"])
        i += 2
    want = (x @ state["action_net.weight"].T + state["action_net.bias"]).numpy()
    got = policy.logits(np.random.default_rng(1).uniform(-1, 1, size=(16, 789)).astype(np.float32))
    assert np.allclose(got, want, atol=1e-4) and (got.argmax(1) == want.argmax(1)).all()


# ---------------------------------------------------------------------------- the spec "trained"


def test_trained_plays_the_shipped_policy_of_every_rule_set_of_its_shape(no_shipped_policy):
    for trained, file in TRAINED_POLICIES.items():  # the table agrees with the files' own records
        meta = load_numpy_policy(os.path.join(os.path.dirname(TRAINED_POLICY), file))[1]
        assert PolicyShape(meta["observation_size"], meta["action_count"], None).fits(PRESETS[trained])
    assert trained_policy() == trained_policy("standard") == TRAINED_POLICY
    standard_shaped = [n for n, r in PRESETS.items() if PolicyShape.of(r) == STANDARD_SHAPE]
    assert {"woburn", "9-2-5", "chips-12", "3-5-9"} <= set(standard_shaped)  # section 9 and more, as before
    for name in standard_shaped:
        assert trained_policy(name) == TRAINED_POLICY
    for trained, file in TRAINED_POLICIES.items():  # each policy plays the preset it was trained on
        agent = make_agent("trained")
        agent.check_rules(PRESETS[trained])
        assert os.path.basename(agent.path) == file and agent.meta.get("rules_name", "standard") == trained
    assert set(TRAINED_POLICIES) >= {"dealer-assigns", "9-5-3-one-card"}  # every preset has one
    no_shipped_policy("dealer-assigns", "9-5-3-one-card")  # a rule set no shipped policy plays is refused
    for name in ("dealer-assigns", "9-5-3-one-card"):
        with pytest.raises(PolicyLoadError) as err:
            make_agent("trained").check_rules(PRESETS[name])
        message = str(err.value)
        assert "\n" not in message and f"no shipped policy plays the rule set {name!r}" in message
        assert "the rule sets with one are standard_v7.pt: standard, " in message


def test_trained_changes_to_the_shipped_policy_of_the_rules_played(tmp_path, monkeypatch, no_shipped_policy):
    import agents.players.trained as trained_module

    no_shipped_policy("9-5-3-one-card")
    folder = tmp_path / "policies"
    folder.mkdir()
    shutil.copy(TRAINED_POLICY, folder / "standard_v7.pt")
    export_policy(_random_policy(DEALER_ASSIGNS), str(folder / "assigns.pt"), rules="dealer-assigns")
    monkeypatch.setattr(trained_module, "POLICY_DIR", str(folder))
    monkeypatch.setitem(trained_module.TRAINED_POLICIES, "dealer-assigns", "assigns.pt")
    agent = make_agent("trained", seed=0)
    assert isinstance(agent, TrainedAgent) and agent.path.endswith("standard_v7.pt")
    assert _plays_hands("trained", DEALER_ASSIGNS) > 10
    agent.check_rules(DEALER_ASSIGNS)
    assert agent.path.endswith("assigns.pt") and agent.policy.num_actions == 74
    agent.check_rules(PRESETS["woburn"])
    assert agent.path.endswith("standard_v7.pt") and agent.policy.num_actions == 56
    with pytest.raises(PolicyLoadError, match="standard_v7.pt: standard, .*; assigns.pt: dealer-assigns"):
        agent.check_rules(ONE_CARD)


# ---------------------------------------------------------------------------- the batched trainer and its env


def test_the_learner_env_takes_its_sizes_from_the_rules():
    from sm_env.envs.vector_env import LearnerVectorEnv

    for rules in (DEALER_ASSIGNS, ONE_CARD):
        env = LearnerVectorEnv(4, rules=rules)
        obs, info = env.reset(seed=3)
        assert obs.shape == (4, observation_size(rules)) and env.single_action_space.n == 74
        rng = np.random.default_rng(0)
        for _ in range(60):
            actions = np.array([rng.choice(np.flatnonzero(m)) for m in info["action_mask"]])
            obs, _, _, _, info = env.step(actions)
            assert info["action_mask"].shape == (4, 74) and info["action_mask"].any(axis=1).all()
    four = LearnerVectorEnv(4, rules="four-5-3-2-2")  # four players: four seats, 1016 entries
    obs, info = four.reset(seed=3)
    assert four.num_players == 4 and obs.shape == (4, 1016) and four.single_action_space.n == 56
    assert set(four.seats.tolist()) <= {0, 1, 2, 3}
    with pytest.raises(ValueError, match="uses target_score: 1099511627776, which the compiled engine does not run"):
        LearnerVectorEnv(2, rules={"target_score": 2**40})


TINY = [
    "env.num_games=8",
    "ppo.n_steps=16",
    "ppo.batch_size=32",
    "ppo.n_epochs=1",
    "ppo.net_arch=[16]",
    "train.torch_threads=1",
    "train.progress=false",
    "eval.final_deals=0",
]


def test_the_batched_trainer_trains_a_74_action_rule_set_end_to_end(tmp_path, capsys, no_shipped_policy):
    from training.vector.config import load_selfplay_config
    from training.vector.ppo import VectorPPO

    run, config = tmp_path / "run", tmp_path / "c.yaml"
    config.write_text("env: {rules: dealer-assigns}\nopponents: {mix: {self: 0.6, random: 0.2, snapshots: 0.2}}\n")
    sets = [*TINY, "train.total_timesteps=150", "ppo.critic=full", "opponents.snapshot_every=64"]
    argv = ["--backend", "vector", "--config", str(config), "--run-dir", str(run)]
    assert train_main([*argv, *sum((["--set", s] for s in sets), [])]) == 0
    rows = [json.loads(line) for line in (run / "metrics.jsonl").read_text().splitlines()]
    assert len(rows) >= 2 and rows[-1]["global_step"] >= 150 and np.isfinite(rows[-1]["policy_loss"])
    final = str(run / "final_policy.pt")
    policy, meta = load_numpy_policy(final)
    assert meta["rules_name"] == "dealer-assigns" and (policy.observation_size, policy.num_actions) == (791, 74)
    assert _plays_hands(f"ppo:{final}", DEALER_ASSIGNS) > 10
    capsys.readouterr()
    argv = ["eval", "--agents", f"ppo:{final}", "heuristic", "--rules", "standard", "--deals", "1", "--workers", "1"]
    assert cli_main(argv + ["--no-progress", "--out", str(tmp_path / "ev")]) == 2  # refused up front
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "cannot play the rule set 'standard'" in err and "it plays: dealer-assigns" in err
    # a frozen opponent or a start of another rule set's shape is a config error naming what it plays
    with pytest.raises(ValueError, match=r"opponents.mix: .*cannot play the rule set 'standard'"):
        load_selfplay_config(None, [*TINY, f"opponents.mix={{self: 0.5, ppo:{final}: 0.5}}"])
    no_shipped_policy("dealer-assigns")
    with pytest.raises(ValueError, match="ppo.init: no shipped policy plays the rule set 'dealer"):
        load_selfplay_config(None, [*TINY, "env.rules=dealer-assigns", "ppo.init=trained"])
    # and the learner's own policy restarts a run of its rules
    trainer = VectorPPO(
        load_selfplay_config(None, [*TINY, "env.rules=dealer-assigns", f"ppo.init={final}"]), str(tmp_path / "b")
    )
    assert np.allclose(
        trainer.numpy_policy().logits(trainer.games.observe()), policy.logits(trainer.games.observe()), atol=1e-5
    )


def test_rule_sets_not_compiled_are_refused_by_the_compiled_boundary_in_one_line():
    from sm_env.compiled.support import unsupported
    from training.vector.config import load_selfplay_config

    with pytest.raises(ValueError) as err:
        load_selfplay_config(None, ["env.rules={target_score: 1099511627776}"])  # beyond the kernels' int32 scores
    message = str(err.value)
    assert "\n" not in message and f"they use {unsupported(RuleSet(target_score=2**40))}" in message


def test_the_batched_trainer_trains_four_players(tmp_path):
    run, config = tmp_path / "run", tmp_path / "c.yaml"
    config.write_text("env: {rules: four-5-3-2-2}\nopponents: {mix: {self: 0.6, random: 0.2, snapshots: 0.2}}\n")
    sets = [*TINY, "train.total_timesteps=150", "ppo.critic=full", "opponents.snapshot_every=64"]
    argv = ["--backend", "vector", "--config", str(config), "--run-dir", str(run)]
    assert train_main([*argv, *sum((["--set", s] for s in sets), [])]) == 0
    rows = [json.loads(line) for line in (run / "metrics.jsonl").read_text().splitlines()]
    assert len(rows) >= 2 and rows[-1]["global_step"] >= 150 and np.isfinite(rows[-1]["policy_loss"])
    policy, meta = load_numpy_policy(str(run / "final_policy.pt"))
    assert meta["rules_name"] == "four-5-3-2-2" and (policy.observation_size, policy.num_actions) == (1016, 56)
    assert _plays_hands(f"ppo:{run / 'final_policy.pt'}", PRESETS["four-5-3-2-2"]) > 10


# ---------------------------------------------------------------------------- distillation


def _distill_config(tmp_path, rules: str, *extra: str):
    from training.distill.config import load_distill_config

    sets = ["hands=2", "name=d", f"output_dir={tmp_path}", f"env.rules={rules}", "data.samples=2"]
    sets += ["data.chunk_hands=1", "fit.epochs=1", "fit.net_arch=[16]", "fit.validation=0", *extra]
    return load_distill_config(None, sets)


def test_distillation_labels_and_fits_a_74_action_rule_set_and_refuses_other_data(tmp_path):
    from training.distill import data as distill_data
    from training.distill import fit

    summary = fit.run(_distill_config(tmp_path, "dealer-assigns"), log=lambda text: None)
    shard = tmp_path / "d" / "data" / "r0" / "shard_00000.npz"
    with zipfile.ZipFile(shard) as archive:
        assert "shape.npy" in archive.namelist()
    data = distill_data.read_shard(str(shard))
    assert data["values"].shape[1] == 74 and data["scalars"].shape[1] == 791 - 728
    assert distill_data.unpack_observations(data["bits"], data["scalars"]).shape[1] == 791
    assert (data["target"] >= 68).any()  # the dealer's quota assignments are labelled
    policy, meta = load_numpy_policy(summary["policy"])
    assert meta["rules_name"] == "dealer-assigns" and policy.num_actions == 74
    assert _plays_hands(f"ppo:{summary['policy']}", DEALER_ASSIGNS) > 10
    with pytest.raises(PolicyLoadError, match="cannot play the rule set 'standard'"):
        PPOAgent(summary["policy"]).check_rules(PRESETS["standard"])
    # a fit of another rule set refuses this data: by its folder's rules, and by each shard's recorded shape
    folder = str(tmp_path / "d" / "data" / "r0")
    standard = _distill_config(tmp_path, "standard")
    with pytest.raises(ValueError, match="holds data of the rules 'dealer-assigns'; this fit is for 'standard'"):
        fit.fit_folders(standard, [folder], str(tmp_path / "p.pt"))
    os.remove(os.path.join(folder, "meta.json"))
    with pytest.raises(distill_data.ShardError, match="holds positions of 791 observation entries, 74 actions"):
        fit.fit_folders(standard, [folder], str(tmp_path / "p.pt"))
    assert not (tmp_path / "p.pt").exists()


def test_a_shard_without_a_recorded_shape_is_standard_data(tmp_path):
    from training.distill import data as distill_data

    settings = distill_data.DataSettings(seed=1, samples=2, chunk_hands=1, exchange_start=0.0)
    arrays = distill_data._stack(distill_data.label_hand(settings, 0))
    assert arrays.pop("shape").tolist() == [789, 56, 3]
    path = str(tmp_path / "old.npz")
    np.savez_compressed(path, **arrays)  # the format before shapes were recorded
    data = distill_data.read_shard(path, STANDARD_SHAPE)
    for field in distill_data.FIELDS:
        np.testing.assert_array_equal(data[field], arrays[field])  # (NaN values equal NaN)
    with pytest.raises(distill_data.ShardError, match="holds positions of 789 observation entries, 56 actions, 3"):
        distill_data.read_shard(path, PolicyShape.of(DEALER_ASSIGNS))
    np.savez_compressed(path, shape=np.array([5, 56, 3]), **arrays)  # a shape no rule set has
    with pytest.raises(distill_data.ShardError, match=r"shape: \[5, 56, 3\] is not a data shape"):
        distill_data.read_shard(path)


def test_data_settings_refuse_what_the_rules_cannot_play(no_shipped_policy):
    from training.distill.data import DataSettings

    no_shipped_policy("dealer-assigns")
    with pytest.raises(ValueError, match="exchange_start must be 0 with the rules 'calls'"):
        DataSettings(rules="calls", exchange_start=0.5).validate()
    with pytest.raises(ValueError, match="no shipped policy plays the rule set 'dealer-assigns'"):
        DataSettings(rules="dealer-assigns", behaviour="trained", search=False).validate()
    DataSettings(rules="calls", exchange_start=0.0).validate()


# ---------------------------------------------------------------------------- SB3's single-seat env


@pytest.mark.parametrize("preset", ["dealer-assigns", "calls"])
def test_the_single_seat_env_takes_its_sizes_from_the_rules(preset):
    from training.sb3.single_agent import SingleSeatEnv

    rules = PRESETS[preset]
    env = SingleSeatEnv(rules=preset, opponents={"heuristic": 1.0})
    assert env.observation_space.shape == (observation_size(rules),) and env.action_space.n == 74
    obs, _ = env.reset(seed=2)
    rng = np.random.default_rng(0)
    for _ in range(40):
        obs, _, terminated, truncated, info = env.step(int(rng.choice(np.flatnonzero(env.action_masks()))))
        assert obs.shape == (observation_size(rules),) and "illegal_action" not in info
        if terminated or truncated:
            obs, _ = env.reset()
    four = SingleSeatEnv(rules="four-5-3-2-2")  # four players: 1016 entries, 56 actions (tests/test_sb3_four.py)
    assert four.observation_space.shape == (1016,) and four.action_space.n == 56
