"""Expert iteration in the distillation pipeline (configs/exit_v3.yaml): labels by pimc with policy rollouts
(``data.rollout: policy``) on every decision type (``data.search_decisions: all``), round k's rollouts played by
round k-1's fit (``dagger_rollout: previous``, checked by the policy fingerprints in ``meta.json``), the new keys'
validation, and a killed run resumed."""

from __future__ import annotations

import json
import os
import random
import shutil
import signal
import subprocess
import sys
import time

import numpy as np
import pytest

from agents.players.trained import POLICY_DIR, trained_policy
from sm_env.core.game import DISCARD, EXCHANGE, PLAY, TRUMP, Game
from sm_env.core.knowledge import player_view
from sm_env.core.rules import STANDARD
from training.distill import data as distill_data
from training.distill.data import DataSettings

pytest.importorskip("torch")

from sm_env.observation import observed_phases  # noqa: E402
from training.distill import cli  # noqa: E402
from training.distill import fit as distill  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EVERY = DataSettings(seed=3, samples=2, chunk_hands=1, exchange_start=1.0, rollout="policy", search_decisions="all")


def _quiet(*_args: object) -> None:
    pass


# ---------------------------------------------------------------------------- settings


@pytest.mark.parametrize(
    "sets, message",
    [
        (["data.rollout=net"], r"data.rollout: must be one of heuristic, policy, got 'net'"),
        (["data.rollout_policy=x.pt"], r"data.rollout_policy: 'x.pt' needs rollout: policy"),
        (["data.search_decisions=all"], r"data.search_decisions: 'all' needs rollout: policy"),
        (["data.rollout=policy", "data.search_decisions=most"], r"must be one of play, trump, all, got 'most'"),
        (["data.rollout=policy", "data.rollout_policy=missing.pt"], r"data.rollout_policy: policy file not found"),
        (
            ["data.rollout=policy", "env.rules=dealer-assigns"],
            r"data.rollout_policy: no shipped policy plays the rule set 'dealer-assigns'",
        ),
        (
            ["data.rollout=policy", "data.search_decisions=all", "data.search=false", "data.behaviour=trained"],
            r"data.search_decisions: 'all' needs search: true",
        ),
        (["dagger_rollout=last"], r"dagger_rollout: must be one of data, previous, got 'last'"),
        (["dagger_rollout=previous"], r"dagger_rollout: 'previous' needs data.rollout: policy"),
        (
            ["extra_data=[{name: x, hands: 1, search_decisions: all}]"],
            r"extra_data\[0\].search_decisions: 'all' needs rollout: policy",
        ),
    ],
)
def test_the_new_keys_are_checked_with_the_values_allowed(sets, message, no_shipped_policy):
    no_shipped_policy("dealer-assigns")
    with pytest.raises(ValueError, match=message) as info:
        distill.load_config(None, sets)
    assert "\n" not in str(info.value)


@pytest.mark.parametrize("name, start, rounds", [("exit_v3", "standard_v2", 2), ("exit_v4", "standard_v3", 1)])
def test_the_exit_configs_run_the_loop_from_a_pinned_policy_with_the_play_searched(name, start, rounds):
    cfg = distill.load_config(os.path.join(ROOT, "configs", f"{name}.yaml"))
    assert (cfg.name, cfg.dagger_rounds, cfg.dagger_rollout, cfg.workers) == (name, rounds, "previous", 2)
    assert (cfg.data.rollout, cfg.data.search_decisions) == ("policy", "play")
    pinned = f"agents/policies/{start}.pt"  # the loop starts from this file whatever `trained` is now
    assert cfg.data.behaviour == "ppo:" + pinned and cfg.data.samples == 16 and not cfg.extra_data
    assert (cfg.fit.init, cfg.fit.other_teacher, cfg.fit.anchor_margin) == (pinned, "", 0.0)
    assert distill_data.rollout_policy_file(cfg.data_settings()) == pinned
    assert os.path.isfile(os.path.join(ROOT, pinned))
    run = f"runs/{name}"
    r1 = distill.round_settings(cfg, run, 1)
    assert r1.rollout_policy == r1.behaviour.removeprefix("ppo:") == os.path.join(run, "policies", "r0.pt")
    assert distill.round_settings(cfg, run, 2).rollout_policy.endswith(os.path.join("policies", "r1.pt"))


def test_the_earlier_configs_keep_their_records():
    # the earlier configs keep what their meta.json files hold: the new keys at their defaults are left out
    assert set(distill.load_config(os.path.join(ROOT, "configs", "distill_v2.yaml")).data_settings().record()) == {
        "seed",
        "samples",
        "chunk_hands",
        "exchange_start",
        "explore",
        "behaviour",
        "search",
        "rules",
    }


# ---------------------------------------------------------------------------- the labels


def test_a_shard_labelled_by_the_policy_search_searches_every_decision_type():
    arrays, _ = distill_data.label_shard(EVERY.model_copy(update={"chunk_hands": 2}), 0)
    legal = distill_data.unpack_legal(arrays["legal"])
    values = arrays["values"].astype(np.float32)
    kinds = observed_phases(distill_data.unpack_observations(arrays["bits"], arrays["scalars"]))
    assert arrays["searched"].all()  # the standard rules: every decision with a choice is searched
    assert {EXCHANGE, TRUMP, DISCARD, PLAY} <= set(kinds.tolist())
    assert np.array_equal(~np.isnan(values), legal)  # values for the legal actions only
    target = arrays["target"].astype(np.int64)
    rows = np.arange(len(target))
    assert legal[rows, target].all() and np.array_equal(values[rows, target], np.nanmax(values, axis=1))
    # with the play searched alone (the earlier labels), the exchange, trump and discard rows have no values
    play_only = EVERY.model_copy(update={"search_decisions": "play"})
    old = distill_data._stack(distill_data.label_hand(play_only, 0))
    old_kinds = observed_phases(distill_data.unpack_observations(old["bits"], old["scalars"]))
    assert not old["searched"][old_kinds != PLAY].any() and old["searched"][old_kinds == PLAY].all()


@pytest.mark.parametrize("rollout", ["heuristic", "policy"])
def test_search_decisions_trump_searches_the_call_and_the_play_only(rollout):
    """``search_decisions: trump`` under ``calls``: the dealer's call is searched (a value for each legal call,
    the target the best), the discards are not, the play is; with ``play`` the call is not searched."""
    settings = DataSettings(
        seed=5, samples=2, chunk_hands=1, exchange_start=0.0, rules="calls", rollout=rollout, search_decisions="trump"
    )
    settings.validate()
    for index in range(2):
        rows = distill_data._stack(distill_data.label_hand(settings, index), settings.shape)
        kinds = observed_phases(distill_data.unpack_observations(rows["bits"], rows["scalars"]))
        legal = distill_data.unpack_legal(rows["legal"], settings.shape.action_count)
        values = rows["values"].astype(np.float32)
        call = np.flatnonzero(kinds == TRUMP)
        assert len(call) == 1 and rows["searched"][call].all()
        assert np.array_equal(~np.isnan(values[call[0]]), legal[call[0]])
        assert values[call[0], rows["target"][call[0]]] == np.nanmax(values[call[0]])
        assert not rows["searched"][kinds == DISCARD].any() and rows["searched"][kinds == PLAY].all()
        play_only = settings.model_copy(update={"search_decisions": "play"})
        old = distill_data._stack(distill_data.label_hand(play_only, index), settings.shape)
        old_kinds = observed_phases(distill_data.unpack_observations(old["bits"], old["scalars"]))
        assert not old["searched"][old_kinds == TRUMP].any()


def test_the_exchange_labels_are_the_policy_searchs_values():
    rows = distill_data.label_hand(EVERY, 0)
    rng = random.Random(distill_data.derive_seed(EVERY.seed, 0, 0xB1A5))
    assert rng.random() < EVERY.exchange_start
    balances = distill_data._start_balances(rng, STANDARD)
    game = Game(
        "standard", seed=distill_data.derive_seed(EVERY.seed, 0), first_dealer=0, max_hands=1, start_balances=balances
    )
    view = player_view(game, game.current_player)
    assert view.phase == EXCHANGE and view.legal.bit_count() > 1  # the hand's first row: an exchange decision
    search = distill_data.search_agent(EVERY, seed=distill_data.derive_seed(EVERY.seed, 0, 1))
    values = search.evaluate(view)
    assert rows[0]["searched"] and sorted(values) == [a for a in range(56) if not np.isnan(rows[0]["values"][a])]
    for action, value in values.items():
        assert rows[0]["values"][action] == np.float16(value)


def test_the_rollout_policy_file_is_the_one_that_labels():
    v1 = os.path.join(POLICY_DIR, "standard_v1.pt")
    shipped = distill_data._stack(distill_data.label_hand(EVERY, 1))
    named = distill_data._stack(
        distill_data.label_hand(EVERY.model_copy(update={"rollout_policy": trained_policy()}), 1)
    )
    older = distill_data._stack(distill_data.label_hand(EVERY.model_copy(update={"rollout_policy": v1}), 1))
    np.testing.assert_array_equal(named["values"], shipped["values"])  # '' is the shipped file
    assert not np.array_equal(older["values"], shipped["values"], equal_nan=True)  # another file, other values


# ---------------------------------------------------------------------------- the loop


def _tiny_loop(tmp_path, name="tiny"):
    return distill.load_config(
        None,
        [
            f"output_dir={tmp_path}",
            f"name={name}",
            "hands=1",
            "dagger_rounds=1",
            "dagger_hands=1",
            "dagger_rollout=previous",
            "data.samples=1",
            "data.chunk_hands=1",
            "data.exchange_start=1.0",
            "data.behaviour=trained",
            "data.rollout=policy",
            "data.search_decisions=all",
            "fit.epochs=1",
            "fit.net_arch=[16]",
            "fit.validation=0",
        ],
    )


def test_round_1_is_labelled_by_the_search_over_the_round_0_fit(tmp_path):
    config = _tiny_loop(tmp_path)
    distill.run(config, log=_quiet)
    run_dir = config.run_dir
    r0_policy = os.path.join(run_dir, "policies", "r0.pt")
    with open(os.path.join(run_dir, "data", "r0", "meta.json"), encoding="utf-8") as handle:
        meta0 = json.load(handle)
    with open(os.path.join(run_dir, "data", "r1", "meta.json"), encoding="utf-8") as handle:
        meta1 = json.load(handle)
    fit0, shipped = distill_data.policy_fingerprint(r0_policy), distill_data.policy_fingerprint(trained_policy())
    assert fit0 != shipped
    assert meta0["fingerprints"] == {"rollout_policy": shipped}
    assert meta1["fingerprints"] == {"rollout_policy": fit0, "behaviour": fit0}
    assert meta1["settings"]["rollout_policy"] == r0_policy
    # the stored labels are those of the search over policy_r0, not over the shipped policy
    r1 = distill.round_settings(config, run_dir, 1)
    stored = distill_data.load(os.path.join(run_dir, "data", "r1"))
    again = distill_data._stack(distill_data.label_hand(r1, 0))
    np.testing.assert_array_equal(again["values"], stored["values"])
    shipped_rollouts = distill_data._stack(distill_data.label_hand(r1.model_copy(update={"rollout_policy": ""}), 0))
    assert not np.array_equal(shipped_rollouts["values"], stored["values"], equal_nan=True)
    # planted: round 0's policy replaced after round 1 was labelled; the resumed run refuses to mix the two
    shutil.copy(os.path.join(POLICY_DIR, "standard_v1.pt"), r0_policy)
    with pytest.raises(ValueError, match=r"r1 was labelled with another rollout_policy file \(fingerprint"):
        distill.run(config, log=_quiet)


def test_a_run_folder_of_the_old_layout_is_moved_into_the_new_one_on_resume(tmp_path, capsys):
    from sm_cli.cli import main as cli_main

    config = _tiny_loop(tmp_path, "aged")
    distill.run(config, log=_quiet)
    run = tmp_path / "aged"
    r0 = str(run / "policies" / "r0.pt")
    # the folder as the release before the one layout wrote it: every file at the top, round 1's data pointing
    # at policy_r0.pt
    old_r0 = str(run / "policy_r0.pt")
    for new, old in [("data/r0", "data_r0"), ("data/r1", "data_r1"), ("policies/r0.pt", "policy_r0.pt"),
                     ("policies/r0.json", "train_r0.json"), ("policies/r1.pt", "policy_r1.pt")]:  # fmt: skip
        os.replace(run / new, run / old)
    meta = json.loads((run / "data_r1" / "meta.json").read_text())
    assert meta["settings"]["rollout_policy"] == r0 and meta["settings"]["behaviour"] == f"ppo:{r0}"
    meta["settings"]["rollout_policy"], meta["settings"]["behaviour"] = old_r0, f"ppo:{old_r0}"
    (run / "data_r1" / "meta.json").write_text(json.dumps(meta))
    for name in ("summary.json", "final_policy.pt", "policy_r1.pt"):  # round 1's fit to make again
        os.remove(run / name)
    labelled = sorted(p.read_bytes() for p in (run / "data_r1").glob("shard_*.npz"))
    assert cli_main(["distill", "--resume", str(run), "--quiet"]) == 0
    err = capsys.readouterr().err
    assert "moved into this release's run-folder layout: data_r0 -> data/r0" in err
    assert not list(run.glob("data_r*")) and not list(run.glob("policy_r*")) and not list(run.glob("train_r*"))
    assert (run / "policies" / "r1.pt").is_file() and (run / "final_policy.pt").is_file()
    assert sorted(p.read_bytes() for p in (run / "data" / "r1").glob("shard_*.npz")) == labelled  # not relabelled
    meta = json.loads((run / "data" / "r1" / "meta.json").read_text())
    assert meta["settings"]["rollout_policy"] == r0


def test_a_killed_run_resumes_to_the_same_labels_and_policy(tmp_path):
    yaml = (
        "name: killed\nhands: 4\ndata: {seed: 5, samples: 1, chunk_hands: 1, exchange_start: 1.0, behaviour: trained, "
        "rollout: policy, search_decisions: all}\nfit: {epochs: 1, net_arch: [16], validation: 0}\n"
        f"output_dir: {tmp_path / 'runs'}\n"
    )
    config_path = tmp_path / "killed.yaml"
    config_path.write_text(yaml)
    run = tmp_path / "runs" / "killed"
    env = {**os.environ, "PYTHONPATH": ROOT}
    process = subprocess.Popen(
        [sys.executable, "-m", "sm_cli", "distill", "--config", str(config_path), "--quiet"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    first = run / "data" / "r0" / "shard_00000.npz"
    deadline = time.monotonic() + 300
    while not first.exists() and process.poll() is None and time.monotonic() < deadline:
        time.sleep(0.02)
    os.kill(process.pid, signal.SIGKILL)  # no clean-up: as a machine that goes away
    process.wait()
    assert first.exists(), "the run was not labelling when it was killed"
    present = sorted(p.name for p in (run / "data" / "r0").glob("shard_*.npz"))
    assert len(present) < 4 and not (run / "final_policy.pt").exists(), "killed too late: nothing left to resume"
    from sm_cli.cli import main as cli_main

    assert cli_main(["distill", "--resume", str(run), "--quiet"]) == 0
    assert (run / "policies" / "r0.pt").exists() and (run / "final_policy.pt").exists()
    clean = tmp_path / "clean"
    distill_data.generate(str(clean), 4, distill.load_config(str(config_path)).data_settings(), log=_quiet)
    for name in sorted(p.name for p in clean.glob("shard_*.npz")):
        assert (run / "data" / "r0" / name).read_bytes() == (clean / name).read_bytes(), name
    assert not list((run / "data" / "r0").glob(".shard_*"))  # no temporary file left behind


# ---------------------------------------------------------------------------- fit.method: q


def test_method_q_fits_the_search_values_less_the_prior_and_adds_them_to_init(tmp_path, monkeypatch):
    """``fit.method: q``: the Q-network's targets are the search's labelled values less ``prior`` times the
    rollout policy's log-probabilities (its play-out means), and the written policy is exactly
    ``prior_weight`` x init's logits + the Q-network's values in tricks."""
    from agents.players.ppo_agent import PPOAgent
    from training.distill import fit_q as playouts_fit

    folder = str(tmp_path / "data")
    small = os.path.join(POLICY_DIR, "standard_v4.pt")  # [512, 256]: the rollout policy and init, cheaper than v7
    settings = DataSettings(
        seed=5, samples=2, chunk_hands=1, exchange_start=0.0, rollout="policy", rollout_policy=small, prior=0.5
    )
    distill_data.generate(folder, 2, settings, log=_quiet)
    data = distill_data.load(folder)
    rows, train, held = distill.search_value_rows(data, {}, [folder], small, STANDARD)
    assert len(held) == 0 and len(train) == int(data["searched"].sum()) > 0
    start = PPOAgent(small).policy
    obs, legal = rows["obs"].astype(np.float32), rows["mask"].astype(bool)
    logp = distill._log_probs(start, obs, legal)
    labelled = data["values"][data["searched"]].astype(np.float64)
    assert np.allclose((rows["values"] + 0.5 * logp)[legal], labelled[legal], atol=0.02)  # float16 labels
    assert np.isnan(rows["values"][~legal]).all()
    assert np.array_equal(rows["policy_move"], logp.argmax(axis=1))

    monkeypatch.setattr(playouts_fit, "FIT_BATCH", 8)  # a batch the few decisions fill
    out = str(tmp_path / "p" / "policy.pt")
    sets = ["fit.method=q", f"fit.init={small}", "fit.epochs=1", "fit.prior_weight=2", "fit.validation=0.4"]
    assert cli.main(["--fit-data", folder, "--out", out, *sets]) == 0
    combined, q = PPOAgent(out).policy, PPOAgent(str(tmp_path / "p" / "policy_q.pt")).policy
    expected = 2 * start.logits(obs) + playouts_fit.Q_SCALE * q.logits(obs)
    assert np.allclose(combined.logits(obs), expected, atol=1e-3)
    report = json.loads((tmp_path / "p" / "policy_fit.json").read_text())
    assert report["method"] == "q" and 0 <= report["combined"]["agreement"] <= 1
    assert cli.main(["--fit-data", folder, "--out", out, "fit.method=q"]) == 2  # no init: a clear error
