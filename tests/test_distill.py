"""Search distillation: the labelled data set (contents, determinism, resume)
and the whole pipeline on a tiny setting."""

from __future__ import annotations

import json
import os
import pickle
import re

import numpy as np
import pytest

from agents.search.pimc import PimcAgent
from sm_env.core.cards import from_mask
from sm_env.core.game import PLAY, Game
from sm_env.core.knowledge import player_view
from sm_env.observation import encode
from training.distill import data as distill_data
from training.distill.data import DataSettings

pytest.importorskip("torch")


from training.common.checkpoint import CheckpointError  # noqa: E402
from training.distill import cli  # noqa: E402
from training.distill import fit as distill  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

TINY = DataSettings(seed=3, samples=2, chunk_hands=1, exchange_start=1.0)


def test_rows_hold_the_observation_the_legal_moves_and_pimc_values():
    rows = distill_data.label_hand(TINY, 0)
    data = distill_data._stack(rows)
    obs = distill_data.unpack_observations(data["bits"], data["scalars"])
    legal = distill_data.unpack_legal(data["legal"])
    assert obs.shape == (len(rows), 789) and legal.shape == (len(rows), 56)
    assert (legal.sum(axis=1) >= 2).all()  # forced moves are skipped
    assert legal[np.arange(len(rows)), data["target"]].all()  # every label is legal
    searched = data["searched"]
    assert searched.any() and (~searched).any()  # play is searched; the exchange is labelled by the heuristic
    values = data["values"].astype(np.float32)
    assert np.array_equal(~np.isnan(values[searched]), legal[searched])
    assert np.isnan(values[~searched]).all()
    best = np.nanmax(values[searched], axis=1)
    assert np.array_equal(values[searched, data["target"][searched]], best)  # the label is pimc's best
    assert set(np.unique(data["role"])) <= {0, 1, 2}


def test_the_first_stored_observation_matches_a_fresh_encoding():
    settings = DataSettings(seed=5, samples=2, chunk_hands=1, exchange_start=0.0, explore=0.0)
    rows = distill_data.label_hand(settings, 0)
    game = Game("standard", seed=distill_data.derive_seed(5, 0), first_dealer=0, max_hands=1)
    while len(from_mask(game.legal_mask())) == 1:  # forced moves are not stored
        game.apply(from_mask(game.legal_mask())[0])
    view = player_view(game, game.current_player)
    data = distill_data._stack(rows[:1])
    obs = distill_data.unpack_observations(data["bits"], data["scalars"])[0]
    assert np.array_equal(obs, encode(view))
    assert data["legal"][0].tobytes() == view.legal.to_bytes(7, "little")


def test_pimc_labels_are_its_evaluate_table():
    settings = DataSettings(seed=9, samples=3, chunk_hands=1, exchange_start=0.0, explore=0.0)
    rows = distill_data.label_hand(settings, 0)
    game = Game("standard", seed=distill_data.derive_seed(9, 0), first_dealer=0, max_hands=1)
    while game.phase != PLAY or len(from_mask(game.legal_mask())) == 1:
        game.apply(from_mask(game.legal_mask())[0] if game.phase == PLAY else _heuristic(game))
    # the first play row was produced by a pimc seeded as label_hand seeds it
    search = PimcAgent(seed=distill_data.derive_seed(9, 0, 1), samples=3)
    first_play = next(r for r in rows if r["searched"])
    view = player_view(game, game.current_player)
    values = search.evaluate(view)
    for action, value in values.items():
        assert first_play["values"][action] == np.float16(value)


def _heuristic(game: Game) -> int:
    from agents.players.heuristic import heuristic_action

    return heuristic_action(player_view(game, game.current_player))


def test_generation_is_resumable_and_deterministic(tmp_path):
    folder = str(tmp_path / "data")
    assert distill_data.generate(folder, 2, TINY, log=lambda *_: None) == 2
    first = {n: open(os.path.join(folder, n), "rb").read() for n in os.listdir(folder) if n.endswith(".npz")}
    os.remove(os.path.join(folder, "shard_00001.npz"))
    stale = os.path.join(folder, ".shard_00001.abc.tmp.npz")  # as an interrupted atomic write leaves it
    open(stale, "wb").close()
    niceness = os.nice(0)
    # the missing shard only; labelled by a worker process at a raised niceness, never this process
    assert distill_data.generate(folder, 2, TINY, nice=3, log=lambda *_: None) == 1
    assert not os.path.exists(stale)
    again = distill_data.load(folder)
    assert distill_data.generate(folder, 2, TINY, nice=3, log=lambda *_: None) == 0
    assert os.nice(0) == niceness  # a fit that follows in this process runs at full priority
    np.testing.assert_array_equal(again["bits"], distill_data.load(folder)["bits"])
    redone = {n: open(os.path.join(folder, n), "rb").read() for n in first}
    assert redone == first  # the shard labelled again is byte for byte the same
    with pytest.raises(ValueError, match="other settings"):
        distill_data.generate(folder, 2, DataSettings(seed=4, samples=2, chunk_hands=1), log=lambda *_: None)


def test_bad_settings_are_refused_with_the_allowed_values():
    with pytest.raises(ValueError, match="samples"):
        DataSettings(samples=0)
    with pytest.raises(ValueError, match=r"--set data.samples=0: data.samples: must be >= 1, got 0"):
        distill.load_config(None, ["data.samples=0"])
    with pytest.raises(ValueError, match=r"data.explore: must be in \[0, 1\], got 1.5"):
        distill.load_config(None, ["data.explore=1.5"])
    with pytest.raises(ValueError, match="unknown key 'fit.epochz' \\(did you mean 'epochs'\\?\\)"):
        distill.load_config(None, ["fit.epochz=3"])
    with pytest.raises(ValueError, match="hands: must be >= 1, got 0"):
        distill.load_config(None, ["hands=0"])
    with pytest.raises(ValueError, match=r"extra_data\[0\].hands: must be >= 1, got 0"):
        distill.load_config(None, ["extra_data=[{name: x, hands: 0}]"])
    with pytest.raises(ValueError, match=r"unknown key 'extra_data\[0\].sample' \(did you mean 'samples'\?\)"):
        distill.load_config(None, ["extra_data=[{name: x, hands: 1, sample: 3}]"])
    for taken in ("data_r1", "r1", ".hidden", "data", "checkpoints", "policies"):
        with pytest.raises(ValueError, match=rf"extra_data\[0\].name: '{taken}' is taken"):
            distill.load_config(None, [f"extra_data=[{{name: '{taken}', hands: 1}}]"])
    with pytest.raises(ValueError, match=r"extra_data\[1\].name: 'x' is taken"):
        distill.load_config(None, ["extra_data=[{name: x, hands: 1}, {name: x, hands: 2}]"])
    with pytest.raises(ValueError, match=r"extra_data\[0\].search: search=False needs a behaviour"):
        distill.load_config(None, ["extra_data=[{name: x, hands: 1, search: false}]"])
    with pytest.raises(ValueError, match=r"fit.validation: must be in \[0, 0.5\), got 0.5"):
        distill.load_config(None, ["fit.validation=0.5"])


def test_the_shipped_configs_give_the_settings_that_made_the_policies():
    """configs/distill_v2.yaml made agents/policies/standard_v2.pt: its data sets (what their meta.json files hold)
    and its fit, as the loader before the typed config read them."""
    cfg = distill.load_config(os.path.join(ROOT, "configs", "distill_v2.yaml"))
    assert (cfg.name, cfg.hands, cfg.dagger_rounds, cfg.workers, cfg.nice, cfg.seed) == (
        "distill_v2",
        30000,
        0,
        2,
        5,
        0,
    )
    base = {"seed": 101, "samples": 20, "chunk_hands": 500, "exchange_start": 0.7, "explore": 0.1}
    meta = {**base, "behaviour": "pimc", "search": True, "rules": "standard"}  # what meta.json holds
    assert cfg.data_settings().record() == meta
    teacher, dagger = cfg.extra_data
    assert (teacher.name, teacher.hands, dagger.name, dagger.hands) == ("teacher", 20000, "dagger_v1", 2000)
    assert cfg.data_settings(teacher).record() == {
        **base,
        "seed": 77,
        "chunk_hands": 1000,
        "behaviour": "ppo:agents/policies/standard_v0.pt",
        "search": False,
        "rules": "standard",
    }
    assert cfg.data_settings(dagger).record() == {
        **base,
        "seed": 202,
        "behaviour": "ppo:agents/policies/standard_v1.pt",
        "search": True,
        "rules": "standard",
    }
    fit = cfg.fit.model_dump()
    assert fit == {
        "method": "imitate",
        "prior_weight": 1.0,
        "net_arch": [512, 256],
        "init": "",
        "play_only": False,
        "anchor_margin": 0.0,
        "epochs": 10,
        "batch_size": 1024,
        "learning_rate": 1e-3,
        "weight_decay": 1e-5,
        "temperature": 0.2,
        "hard_weight": 0.25,
        "value_coef": 0.25,
        "validation": 0.03,
        "train_share": 1.0,
        "threads": 1,
        "device": "auto",  # newer than the policy: where the fit runs, not what it fits
        "suit_augment": True,
        "other_teacher": "agents/policies/standard_v0.pt",
    }
    assert all(type(fit[k]) is float for k in ("anchor_margin", "learning_rate", "weight_decay"))
    for name in ("distill.yaml", "distill_final.yaml"):
        assert distill.load_config(os.path.join(ROOT, "configs", name)).fit.other_teacher in ("", fit["other_teacher"])


def test_the_fit_learns_the_labels(tmp_path):
    folder = str(tmp_path / "data")
    distill_data.generate(folder, 3, TINY, log=lambda *_: None)
    data = distill_data.load(folder)
    settings = distill.FitSettings(
        net_arch=(64,), epochs=60, batch_size=64, learning_rate=3e-3, temperature=0.05, suit_augment=False
    )
    net, report = distill.fit(data, data, settings, seed=0, log=lambda *_: None)
    first, last = report["history"][1], report["history"][-1]  # [0]: before any step
    assert last["policy_loss"] < first["policy_loss"]
    # a small set is learnt by heart: pimc's best moves (ties aside) and the heuristic's other moves
    assert last["valid"]["regret_play"] < 0.02 < report["history"][0]["valid"]["regret_play"]
    assert last["valid"]["agreement_other"] > 0.9
    # the numpy export picks the same moves as the torch network
    import torch

    policy = distill.to_numpy_policy(net)
    obs = distill_data.unpack_observations(data["bits"], data["scalars"])
    with torch.no_grad():
        logits, _ = net(torch.from_numpy(obs))
    np.testing.assert_allclose(policy.logits(obs), logits.numpy(), rtol=1e-4, atol=1e-4)


def test_the_pipeline_runs_end_to_end_and_the_policy_plays(tmp_path):
    from agents import make_agent
    from training.evaluation.evaluate import evaluate

    config = distill.load_config(
        None,
        [
            f"output_dir={tmp_path}",
            "name=tiny",
            "hands=4",
            "dagger_rounds=1",
            "dagger_hands=1",
            "data.samples=2",
            "data.chunk_hands=1",
            "fit.epochs=1",
            "fit.net_arch=[32]",
            "extra_data=[{name: cheap, hands: 2, search: false, behaviour: random, seed: 3, chunk_hands: 2}]",
        ],
    )
    extra = config.data_settings(config.extra_data[0])
    assert extra.samples == 2  # the run's data settings, except those the entry gives
    summary = distill.run(config, log=lambda *_: None)
    path = summary["policy"]
    assert path == os.path.join(config.run_dir, "final_policy.pt") and os.path.isfile(path)
    last = os.path.join(config.run_dir, "policies", "r1.pt")
    assert open(path, "rb").read() == open(last, "rb").read()  # the last round's policy
    assert len(summary["rounds"]) == 2 and os.path.isdir(os.path.join(config.run_dir, "data", "r1"))
    assert os.path.isfile(os.path.join(config.run_dir, "policies", "r0.json"))  # round 0's fit, beside its policy
    cheap = distill_data.load(os.path.join(config.run_dir, "data", "cheap"))
    assert not cheap["searched"].any() and len(cheap["target"]) > 0
    first = summary["rounds"][0]
    fitted = first["train_decisions"] + first["history"][0]["valid"].get("decisions", 0)
    r0 = distill_data.load(os.path.join(config.run_dir, "data", "r0"))
    assert fitted == len(r0["target"]) + len(cheap["target"])  # the extra set is fitted in round 0
    agent = make_agent(f"ppo:{path}")
    assert agent.policy.net_arch == [32] and agent.policy.activation == "relu"
    result = evaluate([f"ppo:{path}", "heuristic"], deals=2, workers=1, progress=False)
    assert result.counts[f"ppo:{path}"]["all"]["hands"] == 6
    # a second run resumes: nothing is labelled or fitted again
    mtime = os.path.getmtime(path)
    distill.run(config, log=lambda *_: None)
    assert os.path.getmtime(path) == mtime


def test_anchored_targets_keep_the_start_policy_except_clear_search_corrections():
    import torch

    class Fixed(torch.nn.Module):
        """A stand-in network that always prefers action 2."""

        def forward(self, x):
            logits = torch.zeros(len(x), 56)
            logits[:, 2] = 1.0
            return logits, torch.zeros(len(x))

    nan = float("nan")
    values = np.full((3, 56), nan, dtype=np.float16)
    values[0, [1, 2]] = (5.0, 4.9)  # the start policy's move is 0.1 trick worse: kept
    values[1, [1, 2]] = (5.0, 4.5)  # 0.5 trick worse: corrected to pimc's move
    legal = np.zeros((3, 56), dtype=bool)
    legal[:, [1, 2]] = True
    data = {"values": values, "target": np.array([1, 1, 1], np.int8), "searched": np.array([True, True, False])}
    targets, share = distill._anchored_targets(Fixed(), np.zeros((3, 789), np.float32), legal, data, margin=0.3)
    assert targets.argmax(axis=1).tolist() == [2, 1, 2]  # the unsearched row keeps the start policy's move too
    assert share == pytest.approx(1 / 3)
    with pytest.raises(ValueError, match="needs fit.init"):
        distill.fit(data, {}, distill.FitSettings(anchor_margin=0.3), seed=0)


def test_config_booleans_and_numbers_are_typed():
    assert distill.load_config(None, ["fit.play_only=true"]).fit.play_only is True
    with pytest.raises(ValueError, match="fit.play_only: expected true or false, got 1 \\(int\\)"):
        distill.load_config(None, ["fit.play_only=1"])
    with pytest.raises(ValueError, match="fit.epochs: expected a whole number, got True"):
        distill.load_config(None, ["fit.epochs=true"])
    assert distill.load_config(None, ["fit.learning_rate=1e-4"]).fit.learning_rate == 1e-4  # text in YAML 1.1
    assert (
        distill.load_config(os.path.join(ROOT, "configs", "distill.yaml")).fit.init == "agents/policies/standard_v0.pt"
    )


def test_teacher_data_stores_only_unsearched_decisions_and_can_be_relabelled():
    from agents.players.ppo_agent import load_numpy_policy

    settings = DataSettings(seed=2, chunk_hands=1, behaviour="trained", search=False, exchange_start=1.0)
    data = distill_data._stack(distill_data.label_hand(settings, 0))
    assert not data["searched"].any() and len(data["target"]) >= 5  # exchange, trump and 4 discards at least
    with pytest.raises(ValueError, match="search=False needs a behaviour"):
        DataSettings(search=False).validate()
    obs = distill_data.unpack_observations(data["bits"], data["scalars"])
    legal = distill_data.unpack_legal(data["legal"])
    hard, _ = distill._targets(data, 0.2, 0.25)
    relabelled = distill._relabel_unsearched(hard, obs, legal, data["searched"], "trained")
    policy, _ = load_numpy_policy(distill._policy_path("trained"))
    logits = policy.logits(obs).astype(np.float64)
    logits[~legal] = -np.inf
    assert relabelled.argmax(axis=1).tolist() == logits.argmax(axis=1).tolist()
    assert np.array_equal(hard.argmax(axis=1), data["target"])  # before: the heuristic's moves


def test_fit_only_on_labelled_folders_writes_the_policy_and_its_report(tmp_path):
    folder = str(tmp_path / "data")
    distill_data.generate(folder, 2, TINY, log=lambda *_: None)
    out = str(tmp_path / "p" / "policy.pt")
    assert cli.main(["--fit-data", folder, "--out", out, "fit.epochs=1", "fit.net_arch=[16]"]) == 0
    assert os.path.isfile(out) and os.path.isfile(str(tmp_path / "p" / "policy_fit.json"))
    assert cli.main(["--fit-data", str(tmp_path / "missing"), "--out", out]) == 2  # a clear error, no traceback
    assert cli.main(["--fit-data", folder]) == 2  # --out is required


def test_train_share_fits_the_first_training_shards_and_keeps_the_held_out_ones(tmp_path, capsys):
    folder = str(tmp_path / "data")
    distill_data.generate(folder, 6, TINY, log=lambda *_: None)
    held = distill.split_shards(6, 0.2, 7).tolist()  # one shard of the six
    rows = [len(distill_data.read_shard(os.path.join(folder, n))["target"]) for n in distill_data.shard_names(folder)]
    fitted = [i for i in range(6) if i not in held]
    for share, kept in ((1.0, 5), (0.5, 3), (0.1, 1)):
        train, valid = distill._load_split([folder], 0.2, 7, train_share=share)
        assert len(valid["target"]) == sum(rows[i] for i in held)
        assert len(train["target"]) == sum(rows[i] for i in fitted[:kept]), share
    assert cli.main(["--fit-data", folder, "--out", str(tmp_path / "p.pt"), "fit.train_share=0"]) == 2
    assert "fit.train_share: must be in (0, 1], got 0" in capsys.readouterr().err


def test_every_shipped_policy_loads_and_trained_is_the_latest():
    from agents import TRAINED_POLICY, make_agent

    assert os.path.basename(TRAINED_POLICY) == "standard_v7.pt"
    folder = os.path.dirname(TRAINED_POLICY)
    v7 = make_agent("trained")
    v6 = make_agent("ppo:" + os.path.join(folder, "standard_v6.pt"))
    v5 = make_agent("ppo:" + os.path.join(folder, "standard_v5.pt"))
    v4 = make_agent("ppo:" + os.path.join(folder, "standard_v4.pt"))
    assert v4.meta["trainer"] == "training.distill" and v4.policy.net_arch == [512, 256]
    for v in (v7, v6, v5):  # standard_v4 side by side with a Q-network: its first 512 units are standard_v4's own
        assert v.meta["trainer"] == "real_deal_playouts combine" and v.policy.net_arch == [1024, 512]
        assert np.array_equal(v.policy.hidden[0][0][:, :512], v4.policy.hidden[0][0])
        assert np.array_equal(v.policy.hidden[1][0][:512, :256], v4.policy.hidden[1][0])
        assert not v.policy.hidden[1][0][512:, :256].any() and not v.policy.hidden[1][0][:512, 256:].any()
    for new, old in ((v7, v6), (v6, v5)):  # a new Q-network each
        assert new.policy.hidden[0][0][:, 512:].tobytes() != old.policy.hidden[0][0][:, 512:].tobytes()
    v3 = make_agent("ppo:" + os.path.join(folder, "standard_v3.pt"))
    v2 = make_agent("ppo:" + os.path.join(folder, "standard_v2.pt"))
    assert v4.policy.hidden[0][0].tobytes() != v3.policy.hidden[0][0].tobytes()  # refitted, not a copy
    assert v3.policy.hidden[0][0].tobytes() != v2.policy.hidden[0][0].tobytes()
    v1 = make_agent("ppo:" + os.path.join(folder, "standard_v1.pt"))
    v0 = make_agent("ppo:" + os.path.join(folder, "standard_v0.pt"))
    for distilled in (v2, v1):
        assert distilled.meta["trainer"] == "training.distill" and distilled.policy.net_arch == [512, 256]
    assert v0.policy.net_arch == [256, 256] and v0.policy.activation == "tanh"
    assert v2.policy.hidden[0][0].tobytes() != v1.policy.hidden[0][0].tobytes()  # a new network, not a copy


def test_an_interrupted_fit_resumes_from_its_checkpoint_to_the_same_network(tmp_path):
    import torch

    folder = str(tmp_path / "data")
    distill_data.generate(folder, 2, TINY, log=lambda *_: None)
    data = distill_data.load(folder)
    settings = distill.FitSettings(net_arch=(16,), epochs=3, batch_size=32)
    whole, _ = distill.fit(data, data, settings, seed=1, log=lambda *_: None)

    class Stop(Exception):
        pass

    def stop_after_epoch_2(line: str) -> None:
        if line.startswith("epoch 2/3"):
            raise Stop

    checkpoint = str(tmp_path / "fit.ckpt")
    with pytest.raises(Stop):
        distill.fit(data, data, settings, seed=1, log=stop_after_epoch_2, checkpoint=checkpoint)
    state = torch.load(checkpoint, weights_only=True)
    assert state.pop("format") == "sergeant-major-checkpoint/1" and state.pop("trainer") == "distill-fit"
    torch.save(state, checkpoint)  # as written before checkpoints carried their format: still resumed
    lines: list[str] = []
    resumed, report = distill.fit(data, data, settings, seed=1, log=lines.append, checkpoint=checkpoint)
    assert lines[0].startswith("resuming the fit after epoch 2") and len(lines) == 2  # resume, epoch 3
    assert [row["epoch"] for row in report["history"]] == [0, 1, 2, 3]
    for a, b in zip(whole.state_dict().values(), resumed.state_dict().values(), strict=True):
        torch.testing.assert_close(a, b, rtol=0, atol=0)
    for key, tamper, words in [
        ("net", lambda s: next(iter(s["net"].values())).view(-1).__setitem__(0, float("nan")), r"net\.\S+ holds NaN"),
        ("epoch", lambda s: s.__setitem__("epoch", -2), "epoch is -2, not a whole number"),
        ("history", lambda s: s.__setitem__("history", "long"), "history is not a list"),
    ]:
        damaged = torch.load(checkpoint, weights_only=True)
        tamper(damaged)
        torch.save(damaged, tmp_path / f"{key}.ckpt")
        with pytest.raises(CheckpointError, match=rf"{key}.ckpt: the checkpoint is damaged \({words}"):
            distill.fit(data, data, settings, seed=1, log=lambda *_: None, checkpoint=str(tmp_path / f"{key}.ckpt"))
    with pytest.raises(ValueError, match="checkpoint of another fit"):
        other = settings.model_copy(update={"batch_size": 16})
        distill.fit(data, data, other, seed=1, log=lambda *_: None, checkpoint=checkpoint)
    torch.save({"format": "something-else/1", "stamp": {}}, checkpoint)
    with pytest.raises(ValueError, match="is not a sergeant-major-checkpoint/1 file"):
        distill.fit(data, data, settings, seed=1, log=lambda *_: None, checkpoint=checkpoint)
    torch.save({"format": "sergeant-major-checkpoint/1", "trainer": "dmc", "stamp": {}}, checkpoint)
    with pytest.raises(ValueError, match="is the 'dmc' trainer's, not the 'distill-fit' trainer's"):
        distill.fit(data, data, settings, seed=1, log=lambda *_: None, checkpoint=checkpoint)
    (tmp_path / "fit.ckpt").write_bytes(pickle.dumps(DataSettings()))  # a pickled class: refused in one line
    with pytest.raises(CheckpointError, match="holds more than tensors and plain values") as info:
        distill.fit(data, data, settings, seed=1, log=lambda *_: None, checkpoint=checkpoint)
    assert "\n" not in str(info.value) and "weights_only" not in str(info.value)


TINY_RUN = "name: tiny\nhands: 2\ndata: {seed: 3, samples: 2, chunk_hands: 1}\nfit: {epochs: 1, net_arch: [16]}\n"


def test_the_distill_command_runs_resumes_and_stops_like_train(tmp_path, capsys, monkeypatch):
    from sm_cli.cli import main as cli_main

    config = tmp_path / "tiny.yaml"
    config.write_text(TINY_RUN + f"output_dir: {tmp_path / 'runs'}\n")
    run = tmp_path / "runs" / "tiny"
    assert cli_main(["distill", "--config", str(config), "--quiet"]) == 0
    out = capsys.readouterr().out
    assert f"new run: {run}\n" in out and "  final_policy.pt " in out and "this call trained 1 rounds" in out
    assert distill.load_config(str(run / "config.yaml")) == distill.load_config(str(config))  # resolved, saved
    assert json.loads((run / "summary.json").read_text())["progress"] == 1
    first = json.loads((run / "times.json").read_text())["train_seconds"]
    assert first > 0
    assert cli_main(["distill", "--resume", str(run)]) == 0
    assert f"{run} is complete (1 rounds" in capsys.readouterr().out
    # a further round, stopped by Ctrl-C while it labels: the command that continues is named
    generate = distill_data.generate

    def interrupted(folder, *args, **kwargs):
        if folder.endswith(os.path.join("data", "r1")):
            raise KeyboardInterrupt
        return generate(folder, *args, **kwargs)

    monkeypatch.setattr(distill_data, "generate", interrupted)
    assert cli_main(["distill", "--resume", str(run), "--set", "dagger_rounds=1", "dagger_hands=1"]) == 130
    err = capsys.readouterr().err
    assert f"continue with: sergeant-major distill --resume {run}" in err and "Traceback" not in err
    stopped = json.loads((run / "times.json").read_text())["train_seconds"]
    assert stopped > first  # the stopped call's time is counted too
    saved = (run / "config.yaml").read_text()
    assert cli_main(["distill", "--resume", str(run), "--set", "data.samples=3"]) == 2  # not the data's settings
    assert "holds data made with other settings" in capsys.readouterr().err
    assert (run / "config.yaml").read_text() == saved  # the run is left as it was
    monkeypatch.setattr(distill_data, "generate", generate)
    assert cli_main(["distill", "--resume", str(run), "--quiet"]) == 0  # round 1 made: the whole run's time sums
    whole = re.search(r"the whole run: 2 rounds in (\d+) s", capsys.readouterr().out)
    assert whole is not None and int(whole.group(1)) >= int(stopped)
    assert cli_main(["distill", "--config", str(tmp_path / "missing.yaml")]) == 2
    assert (
        capsys.readouterr().err
        == f"sergeant-major distill: error: config file not found: {tmp_path / 'missing.yaml'}\n"
    )


def test_a_passed_out_auction_labels_its_bids_with_a_balance_of_zero():
    """Hand 981 of seed 101 under woburn-auction is passed out by the heuristic's bids (docs/rules.md 10.2):
    with max_hands 1 the game ends with no hand played, and its bidding rows score 0 (they once crashed)."""
    settings = distill_data.DataSettings(seed=101, samples=1, exchange_start=0.0, rules="woburn-auction")
    rows = distill_data.label_hand(settings, 981)
    assert rows and not any(row["searched"] for row in rows)
    assert [row["balance"] for row in rows] == [0] * len(rows)
