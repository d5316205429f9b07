"""The play-out part of training/distill (``sergeant-major distill``, ``improve``): every legal move of a decision
played out to the end of the hand in the real deal, by the policy for every seat, gives the balance the pure-Python
Game gives for the same moves; the same seeds label the same values as the pipeline always did; a run makes every
stage and resumes."""

from __future__ import annotations

import hashlib
import json
import os
import re
import zipfile

import numpy as np
import pytest

from agents import act
from agents.players.ppo_agent import PPOAgent
from sm_env.compiled.batch import VectorGame
from sm_env.core.episode import result_rewards
from sm_env.core.game import DISCARD, EXCHANGE, PLAY, TRUMP
from sm_env.core.knowledge import player_view
from sm_env.observation import observed_phases, observed_roles
from training.common.fixed_agents import PolicyOpponent
from training.distill import cli
from training.distill import data_playouts as data
from training.distill import fit_q as fit
from training.distill import label_playouts as label
from training.distill.config_playouts import STANDARD
from training.distill.data import write_labels
from training.distill.data_playouts import PlayoutsError

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
POLICY = os.path.join(ROOT, "agents", "policies", "standard_v4.pt")
FOUR = os.path.join(ROOT, "agents", "policies", "four-5-3-2-2_v0.pt")
WIDE = os.path.join(ROOT, "agents", "policies", "standard_v5.pt")  # [1024, 512]: standard_v4's width twice


def _python_outcome(games: VectorGame, slot: int, move: int, agent: PPOAgent) -> tuple[int, float]:
    """The seat's hand balance after ``move`` with the policy playing on, through the Python Game, and its
    result reward where that hand ends the game (0 otherwise)."""
    game = games.game(slot)
    seat, hand = game.current_player, game.hand_number
    game.apply(move)
    while not game.is_over and game.hand_number == hand:
        game.apply(act(agent, player_view(game, game.current_player)))
    result = result_rewards(game.winners, game.rules.num_players)[seat] if game.is_over else 0.0
    return game.history[hand - 1].balances[seat], result


@pytest.mark.parametrize(("rules", "spec"), [("standard", POLICY), ("four-5-3-2-2", FOUR)])
def test_play_outs_match_the_python_game_for_every_legal_move(rules: str, spec: str) -> None:
    agent = PPOAgent(spec, deterministic=True)
    policy = PolicyOpponent(agent)
    games = VectorGame(6, rules, seed=11, episode="game", max_hands=5)
    games.reset()
    rollouts = VectorGame(64, rules, seed=0, episode="game", max_hands=5)
    rollouts.reset()
    checked = {EXCHANGE: 0, TRUMP: 0, DISCARD: 0, PLAY: 0}
    won = 0  # decisions with a play-out that won or lost the game
    for _ in range(2000):
        observations, masks = games.observe(), games.legal_mask()
        phases = observed_phases(observations, games.rules.num_players)
        candidates = np.flatnonzero(np.isin(phases, list(checked)) & (masks.sum(axis=1) > 1))
        # one decision a step, of the type checked least so far
        for slot in sorted(candidates, key=lambda s: checked[int(phases[s])])[:1]:
            moves = np.flatnonzero(masks[slot])
            seat = games.current_player[slot]
            values, results = label.play_out(
                games, rollouts, policy, [slot] * len(moves), np.full(len(moves), seat), moves
            )
            expected = [_python_outcome(games, int(slot), int(m), agent) for m in moves]
            np.testing.assert_array_equal(values, [balance for balance, _ in expected])
            np.testing.assert_allclose(results, [result for _, result in expected], rtol=1e-6)
            checked[int(phases[slot])] += 1
            won += int(np.any(results != 0))
        if min(checked.values()) >= 1 and sum(checked.values()) >= 6 and won:
            break
        games.step(policy.act(games, np.arange(6), masks, observations))
    assert min(checked.values()) >= 1, checked  # an exchange, a trump, a discard and a play decision at least
    assert won, "no play-out ended the game: the result rewards were not checked"


FIXTURE = os.path.join(ROOT, "tests", "data", "playouts_labels.npz")
# the label files the pipeline wrote before it moved into training/playouts (benchmarks/real_deal_playouts.py label
# --policy standard_v4.pt --seed 5 --hands 3 --types exchange,trump,discard,play; and --policy four-5-3-2-2_v0.pt
# --rules four-5-3-2-2 --seed 7 --hands 2 --types discard,play): every value at a legal move, the result rewards,
# the masks as bits, the phases, the policy's moves and the SHA-256 of the observations
FIXTURE_RUNS = {
    "std": (POLICY, 5, 3, (EXCHANGE, TRUMP, DISCARD, PLAY), "standard"),
    "four": (FOUR, 7, 2, (DISCARD, PLAY), "four-5-3-2-2"),
}


@pytest.mark.parametrize("name", list(FIXTURE_RUNS))
def test_the_same_seeds_label_the_values_the_pipeline_always_labelled(tmp_path, name: str) -> None:
    """Labelling is unchanged: the label files of a few hands equal, value for value, those the pipeline wrote
    before it moved into the package (the fixture); a change of the play, the play-outs or the file fails here."""
    policy, seed, hands, types, rules = FIXTURE_RUNS[name]
    out = str(tmp_path / f"{name}.npz")
    label.label(policy, seed, hands, out, types, rules, log=lambda line: None)
    made, want = _rows(out), np.load(FIXTURE)
    legal = made["mask"].astype(bool)
    bits = (legal.astype(np.uint64) << np.arange(legal.shape[1], dtype=np.uint64)).sum(axis=1)
    np.testing.assert_array_equal(bits, want[f"{name}_mask_bits"])
    np.testing.assert_array_equal(made["values"][legal], want[f"{name}_values"])
    np.testing.assert_array_equal(made["results"][legal], want[f"{name}_results"])
    assert np.isnan(made["values"][~legal]).all() and np.isnan(made["results"][~legal]).all()
    np.testing.assert_array_equal(made["phase"], want[f"{name}_phase"])
    np.testing.assert_array_equal(made["policy_move"], want[f"{name}_policy_move"])
    assert hashlib.sha256(np.ascontiguousarray(made["obs"]).tobytes()).hexdigest() == str(want[f"{name}_obs_sha256"])
    assert str(made["rules"]) == str(want[f"{name}_rules"])
    assert made["obs"].dtype == np.float16 and made["mask"].dtype == np.int8 and len(made["phase"]) > 50


def _rows(path) -> dict[str, np.ndarray]:
    """A label file's rows as the fit reads them, all of them (data_playouts.load_rows), and its ``rules``."""
    rows = data.load_rows([str(path)])[0]
    with np.load(path) as stored:
        rows["rules"] = stored["rules"]
    return rows


def _steps(argv: list[str]) -> int:
    return cli.main(argv, prog="sergeant-major improve")


def test_fit_merge_and_combine_write_policies_that_play(tmp_path, capsys) -> None:
    """The fit, the merge and the combination run end to end on a small data file (real positions, made-up
    values) and write policy files that play; the combination is exact."""
    games = VectorGame(32, "standard", seed=5, episode="game", max_hands=3)
    games.reset()
    policy = PolicyOpponent(PPOAgent(POLICY, deterministic=True))
    rng = np.random.default_rng(0)
    rows: dict[str, list] = {"obs": [], "mask": [], "values": [], "phase": [], "policy_move": []}
    while len(rows["obs"]) < 600:
        observations, masks = games.observe(), games.legal_mask()
        actions = policy.act(games, np.arange(32), masks, observations)
        phases = observed_phases(observations, 3)
        for slot in np.flatnonzero((phases <= DISCARD) & (masks.sum(axis=1) > 1)):
            values = np.where(masks[slot] == 1, rng.normal(size=masks.shape[1]), np.nan).astype(np.float32)
            for name, value in zip(
                rows,
                (observations[slot].astype(np.float16), masks[slot], values, phases[slot], actions[slot]),
                strict=True,
            ):
                rows[name].append(value)
        games.step(actions)
    path = tmp_path / "data.npz"
    write_labels(str(path), data.playout_shard({name: np.array(values) for name, values in rows.items()}, STANDARD))
    q, merged, both = (str(tmp_path / name) for name in ("q.pt", "m.pt", "c.pt"))
    assert _steps(["fit", "--data", str(path), "--init", POLICY, "--out", q, "--epochs", "1"]) == 0
    merge = ["merge", "--data", str(path), "--init", POLICY, "--teacher", q, "--out", merged, "--epochs", "1"]
    assert _steps(merge) == 0
    assert _steps(["combine", "--prior", POLICY, "--teacher", q, "--weight", "1.5", "--out", both]) == 0
    captured = capsys.readouterr()
    assert "margin 0.0  discard" in captured.out and "play      held out" in captured.out
    assert "epoch 1/1" in captured.err  # progress on stderr, figures on stdout
    # the combined network is exactly 1.5 x the prior's logits + the Q-network's values in tricks
    prior, q_policy = PPOAgent(POLICY).policy, PPOAgent(q).policy
    combined = PPOAgent(both).policy
    assert combined.net_arch == [a + b for a, b in zip(prior.net_arch, q_policy.net_arch, strict=True)]
    for obs, legal in zip(rows["obs"][:50], rows["mask"][:50], strict=True):
        bits = sum(1 << int(a) for a in np.flatnonzero(legal))
        x = obs.astype(np.float32)
        want = 1.5 * prior.masked_logits(x, bits) + fit.Q_SCALE * q_policy.masked_logits(x, bits)
        np.testing.assert_allclose(combined.masked_logits(x, bits), want, rtol=1e-4, atol=1e-4)
    for name in (q, merged, both):
        agent = PPOAgent(name)
        assert agent.meta["trainer"].startswith("training.playouts")
        games.reset()
        view_game = games.game(0)
        assert act(agent, player_view(view_game, view_game.current_player)) in view_game.legal_actions()


def _improve(argv: list[str]) -> int:
    from sm_cli.cli import main

    return main(["improve", *argv])


def test_a_run_makes_every_stage_from_a_config_and_resumes(tmp_path, capsys) -> None:
    """``sergeant-major improve --config``: the label files, the Q-network and the combined policy in the run
    folder, config.yaml and summary.json; resumed, every finished stage is kept and a complete run says so; more
    label seeds are labelled and fitted again; bad settings are refused naming the key, before any work."""
    config = tmp_path / "c.yaml"
    config.write_text(
        f"kind: playouts\nname: r\noutput_dir: {tmp_path}\nworkers: 1\npolicy: {POLICY}\nq_init: {WIDE}\n"
        "epochs: 1\nweight: 2.0\nlabels:\n"
        "  - {seeds: [1], hands: 16, types: [play]}\n  - {seeds: [2], hands: 3, types: [trump, discard]}\n"
    )
    assert _improve(["--config", str(config)]) == 0
    folder = tmp_path / "r"
    labels, q_net = folder / "data" / "labels", folder / "policies" / "q.pt"
    for name in ("data/labels/1.npz", "data/labels/2.npz", "policies/q.pt", "policies/q.json", "final_policy.pt",
                 "config.yaml", "summary.json"):  # fmt: skip
        assert (folder / name).exists(), name
    out = capsys.readouterr()
    assert "2 of 2 label files there" not in out.err and "0 of 2 label files there; labelling 2" in out.err
    assert f"go further: sergeant-major improve --resume {folder} --set 'labels=[...]'" in out.out
    summary = json.loads((folder / "summary.json").read_text())
    assert summary["progress"] == 4 and summary["unit"] == "stages" and summary["label_files"] == 2
    held_out = {row["type"] for row in summary["fit"]["gains"]}  # the held-out figures, by decision type
    assert "play" in held_out and held_out <= {"trump", "discard", "play"}
    assert set(np.load(labels / "1.npz")["phase"]) == {PLAY}
    for name in ("1.npz", "2.npz"):  # a result reward for every legal move, NaN for the others
        labelled = _rows(labels / name)
        legal = labelled["mask"].astype(bool)
        assert np.isin(labelled["results"][legal], [0.0, 1.0, -0.5]).all()
        assert np.isnan(labelled["results"][~legal]).all()
    assert set(np.load(labels / "2.npz")["phase"]) == {TRUMP, DISCARD}
    assert PPOAgent(str(q_net)).policy.net_arch == [1024, 512]  # started from q_init (standard_v5)
    final = PPOAgent(str(folder / "final_policy.pt"))
    assert final.policy.net_arch == [1536, 768]  # standard_v4's [512, 256] beside it
    stamp = q_net.stat().st_mtime_ns
    assert _improve(["--resume", str(folder)]) == 0
    assert "is complete (4 stages, the config asks for 4): nothing to do" in capsys.readouterr().out
    # another seed: its file is labelled, the first two kept, the Q-network fitted again on the three
    more = "labels=[{seeds: [1], hands: 16, types: [play]}, {seeds: [2, 3], hands: 3, types: [trump, discard]}]"
    assert _improve(["--resume", str(folder), "--set", more]) == 0
    assert "2 of 3 label files there; labelling 1" in capsys.readouterr().err
    assert (labels / "3.npz").exists() and q_net.stat().st_mtime_ns != stamp
    assert json.loads((folder / "policies" / "q.json").read_text())["stamp"]["files"] == ["1.npz", "2.npz", "3.npz"]
    stamp = q_net.stat().st_mtime_ns
    (folder / "summary.json").unlink()  # as if killed after the fit: the fit is kept
    assert _improve(["--resume", str(folder)]) == 0
    assert "fitted on these files with these settings: kept" in capsys.readouterr().err
    assert q_net.stat().st_mtime_ns == stamp
    for sets, words in [
        (["labels=[{seeds: [3], types: [bid]}]"], "types must be some of exchange, trump, discard, play"),
        (["labels=[{seeds: [3], hands: 10000000}]"], "labels[0].hands"),  # a data file is held in memory
        (["labels=[{seeds: [3]}, {seeds: [3]}]"], "label seed 3 is listed twice"),
        (["kind=distill"], "this is a 'distill' config, not 'playouts': run it with sergeant-major distill"),
        (["q_init=missing.pt", "name=other"], "checkpoint file not found: missing.pt"),  # refused before any labelling
    ]:
        assert _improve(["--config", str(config), *[f"--set={s}" for s in sets]]) == 2
        err = capsys.readouterr().err
        assert err.startswith("sergeant-major improve: error: ") and words in err and err.count("\n") == 1, err
    assert not (tmp_path / "other").exists()  # a failed start leaves no run folder
    assert _steps(["label", "--hands", "10000000", "--out", str(tmp_path / "x.npz")]) == 2
    assert "--hands must be in 1..50000" in capsys.readouterr().err
    for command in (["fit", "--data", "x"], ["distil", "--teacher", "t", "--init", "i"]):  # passes are bounded
        assert _steps([*command, "--out", "y", "--epochs", "101"]) == 2
        assert "--epochs must be in 1..100, got 101" in capsys.readouterr().err


def test_rounds_from_a_fresh_network_play_each_round_with_the_one_before(tmp_path, capsys) -> None:
    """``policy: fresh``, ``weight: 0``, ``rounds: 2``: round 0 plays a network initialised from the seed, round 1
    plays round 0's policy (the Q-network alone, in tricks) on games of other seeds, its fit starts from round 0's
    Q-network; each round is evaluated once (eval.jsonl, not training time); resumed with a third round, the first
    two are kept; rounds above 1 with a prior beside the Q-network are refused."""
    config = tmp_path / "c.yaml"
    config.write_text(
        f"kind: playouts\nname: s\noutput_dir: {tmp_path}\nworkers: 1\npolicy: fresh\narch: [16]\nseed: 3\n"
        "epochs: 1\nweight: 0\nrounds: 2\nwindow: 2\nlabels:\n  - {seeds: [1], hands: 16, types: [play, discard]}\n"
        "eval: {every: 1, deals: 2, opponents: [random]}\n"
    )
    assert _improve(["--config", str(config)]) == 0
    folder = tmp_path / "s"
    for name in ("policies/fresh.pt", "data/labels/1.npz", "data/labels/round1/1.npz", "policies/q.pt",
                 "policies/q_round1.pt", "policies/round0.pt", "policies/round1.pt", "final_policy.pt"):  # fmt: skip
        assert (folder / name).exists(), name
    first, second = (_rows(folder / "data" / "labels" / n) for n in ("1.npz", "round1/1.npz"))
    assert first["obs"].shape[1] == second["obs"].shape[1] and not np.array_equal(
        first["mask"], second["mask"][: len(first["mask"])]
    )
    fresh, round0 = PPOAgent(str(folder / "policies" / "fresh.pt")), PPOAgent(str(folder / "policies" / "round0.pt"))
    q0 = PPOAgent(str(folder / "policies" / "q.pt"))
    assert fresh.policy.net_arch == round0.policy.net_arch == [16]  # the Q-network alone: no prior beside it
    assert np.allclose(round0.policy.head[0], fit.Q_SCALE * q0.policy.head[0])  # its values in tricks
    record = json.loads((folder / "policies" / "q_round1.json").read_text())
    assert record["stamp"]["q_init"] == str(folder / "policies" / "q.pt") and record["stamp"]["round"] == 1
    assert record["stamp"]["files"] == ["1.npz", os.path.join("round1", "1.npz")]  # window 2: both rounds
    assert (folder / "final_policy.pt").read_bytes() == (folder / "policies" / "round1.pt").read_bytes()
    evals = [json.loads(line) for line in (folder / "eval.jsonl").read_text().splitlines()]
    assert [row["round"] for row in evals] == [0, 1] and evals[0]["decisions"] == len(first["phase"])
    assert evals[1]["decisions"] == len(first["phase"]) + len(second["phase"]) and "random" in evals[1]["advantage"]
    summary = json.loads((folder / "summary.json").read_text())
    assert summary["progress"] == 6 and summary["rounds"] == 2 and evals[1]["wall"] <= summary["train_seconds"]
    assert f"go further: sergeant-major improve --resume {folder} --set rounds=N (now 2:" in capsys.readouterr().out
    stamp = (folder / "policies" / "q_round1.pt").stat().st_mtime_ns
    assert _improve(["--resume", str(folder), "--set", "rounds=3"]) == 0
    assert (folder / "policies" / "q_round1.pt").stat().st_mtime_ns == stamp and (
        folder / "policies" / "round2.pt"
    ).exists()
    assert [json.loads(line)["round"] for line in (folder / "eval.jsonl").read_text().splitlines()] == [0, 1, 2]
    capsys.readouterr()
    damaged = (folder / "eval.jsonl").read_text().replace('{"round": 1', '{"round": 1,,', 1)
    (folder / "eval.jsonl").write_text(damaged)  # a hand edit gone wrong: one line, exit status 2, left as it was
    assert _improve(["--resume", str(folder), "--set", "rounds=4"]) == 2
    err = capsys.readouterr().err
    assert "eval.jsonl line 2 (the rounds' evaluations; mend or delete the line): not valid JSON" in err, err
    assert err.count("\n") == 1 and (folder / "eval.jsonl").read_text() == damaged
    assert not (folder / "policies" / "round3.pt").exists()
    for sets, words in [
        (["weight=0.5"], "rounds above 1 need weight: 0"),
        (["arch=[0]"], "arch: every hidden layer has 1..4096 units"),
        (["student={init: x}"], "policy: fresh has nothing to copy"),
    ]:
        assert _improve(["--config", str(config), "--set=name=other", *[f"--set={s}" for s in sets]]) == 2
        err = capsys.readouterr().err
        assert err.startswith("sergeant-major improve: error: ") and words in err and err.count("\n") == 1, err


def test_ctrl_c_lets_the_file_in_progress_finish_and_resume_goes_on(tmp_path, capsys, monkeypatch) -> None:
    """The first Ctrl-C stops the run at its next safe point: the label file in progress is finished and kept,
    no other is started, exit status 130 naming the command that continues; ``--resume`` then makes the rest."""
    import signal

    from training.distill import run_playouts as run

    made: list[str] = []
    real = run.label_job

    def interrupted(job):  # Ctrl-C while the first file is being labelled
        if not made:
            signal.raise_signal(signal.SIGINT)
        made.append(job[3])
        return real(job)

    monkeypatch.setattr(run, "label_job", interrupted)
    config = tmp_path / "c.yaml"
    config.write_text(
        f"kind: playouts\nname: r\noutput_dir: {tmp_path}\nworkers: 1\npolicy: {POLICY}\nepochs: 1\n"
        "labels:\n  - {seeds: [1, 2], hands: 16, types: [play]}\n"
    )
    assert _improve(["--config", str(config)]) == 130
    folder = tmp_path / "r"
    err = capsys.readouterr().err
    assert f"continue with: sergeant-major improve --resume {folder}" in err
    assert os.listdir(folder / "data" / "labels") == ["1.npz"] and not (folder / "summary.json").exists()
    assert _improve(["--resume", str(folder)]) == 0
    assert sorted(os.listdir(folder / "data" / "labels")) == ["1.npz", "2.npz"]
    assert (folder / "final_policy.pt").exists()
    assert "1 of 2 label files there; labelling 1" in capsys.readouterr().err


def _members(path) -> dict[str, bytes]:
    """Every array of a data file as the bytes of its ``.npy`` member (np.savez stores them uncompressed)."""
    with zipfile.ZipFile(path) as archive:
        return {name: archive.read(name) for name in sorted(archive.namelist())}


def test_improve_on_ray_labels_the_files_of_local_workers_and_resumes(tmp_path, capsys, local_ray, monkeypatch) -> None:
    """``improve --ray``: each label file is a Ray task on a local instance (the policy file's bytes sent with it,
    ``trained`` shipped with the code) and holds, array for array and byte for byte, what a local worker's
    ``label_job`` writes; Ctrl-C keeps the first file to arrive and cancels the other task, and the resumed run
    keeps that file and labels the other."""
    import signal

    from training.distill import run_playouts as run
    from training.distill.config_playouts import load_run_config

    written: list[str] = []
    real = label.write_labels

    def interrupted(out, arrays):  # Ctrl-C as the first file arrives
        if not written:
            signal.raise_signal(signal.SIGINT)
        written.append(os.path.basename(out))
        real(out, arrays)

    monkeypatch.setattr(label, "write_labels", interrupted)
    config = tmp_path / "c.yaml"
    config.write_text(
        f"kind: playouts\nname: r\noutput_dir: {tmp_path}\nworkers: 1\npolicy: {POLICY}\nepochs: 1\nlabels:\n"
        "  - {seeds: [1], hands: 16, types: [play]}\n  - {seeds: [3], hands: 4, types: [discard], policy: trained}\n"
    )
    assert _improve(["--config", str(config), "--ray", "--ray-connect-timeout", "30"]) == 130
    folder = tmp_path / "r"
    labels = folder / "data" / "labels"
    err = capsys.readouterr().err
    assert "0 of 2 label files there; labelling 2" in err and "with --ray, the next to finish" in err
    assert os.listdir(labels) == written and len(written) == 1 and not (folder / "summary.json").exists()
    kept = (labels / written[0]).stat().st_mtime_ns
    assert _improve(["--resume", str(folder), "--ray"]) == 0
    assert "1 of 2 label files there; labelling 1" in capsys.readouterr().err
    assert (labels / written[0]).stat().st_mtime_ns == kept and len(written) == 2
    files = run.label_files(load_run_config(str(config)), str(folder))
    assert sorted(os.path.basename(path) for path, _ in files) == sorted(written) == ["1.npz", "3.npz"]
    for path, job in files:
        local = str(tmp_path / f"local_{os.path.basename(path)}")
        run.label_job((*job[:3], local, *job[4:]))
        made, want = _members(path), _members(local)
        assert list(made) == list(want) and "values.npy" in made
        for name in want:
            assert made[name] == want[name], f"{os.path.basename(path)}: {name}"


def _moves(spec: str, obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """The most probable legal move of the policy file ``spec`` in each row."""
    agent = PPOAgent(spec, deterministic=True)
    logits = agent.policy.logits(obs.astype(np.float32))
    return np.where(mask.astype(bool), logits, -np.inf).argmax(axis=1)


def test_distil_copies_a_policy_into_another_network(tmp_path, capsys) -> None:
    """``distil``: the copy has the start's network and agrees with the teacher more than the start did
    (standard_v2 taught standard_v4's play: from 69% of the same moves to about 79%)."""
    start, out = os.path.join(ROOT, "agents", "policies", "standard_v2.pt"), str(tmp_path / "s.pt")
    distil = ["distil", "--teacher", POLICY, "--init", start, "--decisions", "20000", "--epochs", "2"]
    assert _steps([*distil, "--learning-rate", "3e-4", "--out", out]) == 0
    assert "the teacher's most probable move in" in capsys.readouterr().out
    assert PPOAgent(out).policy.net_arch == [512, 256]
    obs, mask, _ = fit._decisions(POLICY, 4000, 77, (PLAY,))
    wanted = _moves(POLICY, obs, mask)
    before, after = ((_moves(spec, obs, mask) == wanted).mean() for spec in (start, out))
    assert after > before + 0.05, (before, after)
    assert _steps(["distil", "--teacher", POLICY, "--init", start, "--decisions", "10", "--out", out]) == 2
    assert "--decisions must be in" in capsys.readouterr().err


def test_run_with_a_student_plays_the_copy_and_a_group_its_own_policy(tmp_path, capsys) -> None:
    """``student``: the run's policy is copied first (student.pt) and the copy labels, starts the Q-network and
    is the prior; a label group with its own ``policy`` is labelled by that one."""
    teacher = os.path.join(ROOT, "agents", "policies", "standard_v5.pt")
    config = tmp_path / "c.yaml"
    config.write_text(
        f"kind: playouts\nname: r\noutput_dir: {tmp_path}\nworkers: 1\npolicy: {teacher}\nepochs: 1\n"
        f"student: {{init: {POLICY}, decisions: 5120, epochs: 1}}\nlabels:\n"
        f"  - {{seeds: [1], hands: 8, types: [play]}}\n  - {{seeds: [2], hands: 8, types: [play], policy: {POLICY}}}\n"
    )
    assert _improve(["--config", str(config)]) == 0
    folder = tmp_path / "r"
    student = str(folder / "policies" / "student.pt")
    assert PPOAgent(student).policy.net_arch == [512, 256]
    for seed, spec in ((1, student), (2, POLICY)):
        rows = _rows(folder / "data" / "labels" / f"{seed}.npz")
        np.testing.assert_array_equal(rows["policy_move"], _moves(spec, rows["obs"], rows["mask"]))
    assert PPOAgent(str(folder / "final_policy.pt")).policy.net_arch == [1024, 512]
    # the folder as the release before the one layout wrote it, stopped after its fit: moved on resume, the
    # student and the Q-network kept
    for new, old in [("data/labels", "labels"), ("policies/student.pt", "student.pt"), ("policies/q.pt", "q.pt"),
                     ("policies/q.json", "q.json"), ("final_policy.pt", "policy.pt")]:  # fmt: skip
        os.replace(folder / new, folder / old)
    before = {}
    for seed in (1, 2):  # its label files of the old format (np.savez of the rows): converted once, on resume
        before[seed] = _rows(folder / "labels" / f"{seed}.npz")
        np.savez(folder / "labels" / f"{seed}.npz", **before[seed])
    record = json.loads((folder / "q.json").read_text())
    assert record["stamp"]["q_init"] == student
    record["stamp"]["q_init"] = str(folder / "student.pt")
    (folder / "q.json").write_text(json.dumps(record))
    (folder / "summary.json").unlink()
    fitted = (folder / "q.pt").stat().st_mtime_ns
    saved = (folder / "config.yaml").read_text()
    (folder / "config.yaml").write_text(saved.replace("kind: playouts\n", ""))  # a config of before kinds
    assert "kind:" not in (folder / "config.yaml").read_text()
    from sm_cli.cli import main

    assert main(["distill", "--resume", str(folder)]) == 0  # the one command: a play-out run by its label files
    err = capsys.readouterr().err
    assert "run-folder layout: labels -> data/labels, student.pt -> policies/student.pt, q.pt -> policies" in err
    assert "converted 2 label files of the old format into label shards: 1.npz, 2.npz" in err
    for seed in (1, 2):
        after = _rows(folder / "data" / "labels" / f"{seed}.npz")
        assert sorted(after) == sorted(before[seed])
        for name, array in before[seed].items():
            np.testing.assert_array_equal(after[name], array)
            assert after[name].dtype == array.dtype
    assert "fitted on these files with these settings: kept" in err and "labelling" not in err.split("kept")[-1]
    assert (folder / "policies" / "q.pt").stat().st_mtime_ns == fitted and (folder / "final_policy.pt").exists()
    assert not (folder / "labels").exists() and not (folder / "q.json").exists()


def test_label_and_fit_on_four_players_and_refused_rule_sets(tmp_path, capsys) -> None:
    """``label --rules``: a four-player file records its rule set, the fit writes a four-player Q-network from
    it; files of two rule sets are not fitted together, and a 74-action rule set is refused in one line."""
    four, three = str(tmp_path / "four.npz"), str(tmp_path / "three.npz")
    _steps(
        [
            "label",
            "--policy",
            FOUR,
            "--rules",
            "four-5-3-2-2",
            "--hands",
            "24",
            "--out",
            four,
            "--types",
            "discard,play",
        ]
    )
    _steps(["label", "--policy", POLICY, "--hands", "4", "--out", three, "--types", "trump,discard"])
    data = _rows(four)
    assert "four-5-3-2-2" in str(data["rules"]) and data["obs"].shape[1] == PPOAgent(FOUR).policy.observation_size
    assert set(data["phase"]) == {DISCARD, PLAY}
    legal_values = np.isfinite(data["values"]) == data["mask"].astype(bool)
    assert legal_values.all()  # every legal move has its value, no illegal one has
    assert _steps(["fit", "--data", four, "--init", FOUR, "--out", str(tmp_path / "q.pt"), "--epochs", "1"]) == 0
    assert PPOAgent(str(tmp_path / "q.pt")).trained_on == "four-5-3-2-2"
    combined = str(tmp_path / "c.pt")
    assert _steps(["combine", "--prior", FOUR, "--teacher", str(tmp_path / "q.pt"), "--out", combined]) == 0
    assert PPOAgent(combined).trained_on == "four-5-3-2-2" and PPOAgent(combined).policy.net_arch == [1024, 512]
    capsys.readouterr()
    assert _steps(["fit", "--data", f"{four},{three}", "--init", FOUR, "--out", str(tmp_path / "x.pt")]) == 2
    assert "labelled on different rule sets" in capsys.readouterr().err
    assert _steps(["label", "--rules", "calls", "--out", str(tmp_path / "c.npz")]) == 2
    assert "has 74 actions" in capsys.readouterr().err


def test_the_game_weight_adds_the_result_rewards_and_needs_them(tmp_path, capsys) -> None:
    """``fit --game-weight W`` values a move at its balance plus W times its result reward; files labelled before
    the results were recorded are refused in one line."""
    rows = {
        "values": np.array([[1.0, -2.0, np.nan]], dtype=np.float32),
        "results": np.array([[1.0, -0.5, np.nan]], dtype=np.float32),
    }
    np.testing.assert_array_equal(data.move_values(rows, 4.0, ["f"]), [[5.0, -4.0, np.nan]])
    np.testing.assert_array_equal(data.move_values(rows, 0.0, ["f"]), rows["values"])
    with pytest.raises(PlayoutsError, match="needs the result rewards"):
        data.move_values({"values": rows["values"]}, 4.0, ["old.npz"])
    assert _steps(["fit", "--data", "x", "--out", "y", "--game-weight", "-1"]) == 2
    assert "--game-weight in [0, 100]" in capsys.readouterr().err


def test_a_role_filter_labels_the_same_decisions_of_that_role_only(tmp_path, capsys) -> None:
    """``label --roles middle`` (a run's ``labels[].roles``): the same games are played, and exactly the middle's
    rows of the unfiltered file are labelled, with the same values; an unknown role is refused naming the roles."""
    every, middle = str(tmp_path / "all.npz"), str(tmp_path / "middle.npz")
    _steps(["label", "--policy", POLICY, "--hands", "12", "--types", "play", "--out", every])
    _steps(["label", "--policy", POLICY, "--hands", "12", "--types", "play", "--roles", "middle", "--out", middle])
    full, part = _rows(every), _rows(middle)
    roles = observed_roles(full["obs"].astype(np.float32))
    assert set(roles) == {0, 1, 2} and set(observed_roles(part["obs"].astype(np.float32))) == {2}
    np.testing.assert_array_equal(part["obs"], full["obs"][roles == 2])
    np.testing.assert_array_equal(part["values"], full["values"][roles == 2])
    capsys.readouterr()
    assert _steps(["label", "--roles", "middel", "--out", str(tmp_path / "x.npz")]) == 2
    assert "--roles must be some of dealer, eldest, middle, got ['middel']" in capsys.readouterr().err
    config = tmp_path / "c.yaml"
    config.write_text(f"name: r\noutput_dir: {tmp_path}\nlabels:\n  - {{seeds: [1], roles: [third]}}\n")
    assert _improve(["--config", str(config)]) == 2
    assert "roles must be some of dealer, eldest, middle, got ['third']" in capsys.readouterr().err


def test_load_puts_the_files_end_to_end_and_holds_out_the_last_tenth_of_each(tmp_path) -> None:
    """The fit's rows are the files' rows end to end (read one file at a time into one array); the held-out rows
    are the last tenth of each file; the result rewards are read only when asked for."""
    paths = [str(tmp_path / f"{seed}.npz") for seed in (1, 2)]
    for seed, path in zip((1, 2), paths, strict=True):
        label.label(POLICY, seed, 6, path, log=lambda line: None)
    files = [_rows(path) for path in paths]
    rows, train, held, _ = data.load_rows(paths)
    for name in ("obs", "mask", "values", "results", "phase", "policy_move"):
        np.testing.assert_array_equal(rows[name], np.concatenate([f[name] for f in files]))
        assert rows[name].dtype == files[0][name].dtype
    first, second = (len(f["phase"]) for f in files)
    expected = [*range(int(0.9 * first), first), *range(first + int(0.9 * second), first + second)]
    assert held.tolist() == expected and sorted([*train.tolist(), *expected]) == list(range(first + second))
    assert "results" not in data.load_rows(paths, results=False)[0]
    with pytest.raises(PlayoutsError, match=r"no data file 'missing.npz', '' \(label makes them\)"):
        data.load_rows([paths[0], "missing.npz", ""])


def _data_rows(n: int = 40) -> dict[str, np.ndarray]:
    """A valid data file's arrays, of the old format, of ``n`` standard-rules decisions (two legal moves each,
    made-up observations, their card planes 0 or 1, and values)."""
    rng = np.random.default_rng(n)
    mask = np.zeros((n, 56), dtype=np.int8)
    mask[:, 3] = mask[:, 9] = 1
    obs = rng.random((n, 789)).astype(np.float16)
    obs[:, :728] = rng.integers(0, 2, (n, 728))
    return {
        "obs": obs,
        "mask": mask,
        "values": np.where(mask == 1, rng.normal(size=(n, 56)), np.nan).astype(np.float32),
        "phase": rng.integers(0, 3, n),
        "policy_move": np.full(n, 9),
    }


def _npz(path, arrays: dict[str, np.ndarray], raw: dict[str, bytes] | None = None) -> str:
    """A data file of the old format as np.savez writes it (stored entries); ``raw``: entries written as these
    bytes instead."""
    import zipfile

    with zipfile.ZipFile(path, "w") as archive:
        for name, array in arrays.items():
            with archive.open(name + ".npy", "w") as entry:
                np.lib.format.write_array(entry, np.asanyarray(array), allow_pickle=True)
        for name, data in (raw or {}).items():
            archive.writestr(name + ".npy", data)
    return str(path)


def _header(shape: tuple[int, ...], dtype) -> bytes:
    import io

    buf = io.BytesIO()
    header = {"descr": np.lib.format.dtype_to_descr(np.dtype(dtype)), "fortran_order": False, "shape": shape}
    np.lib.format.write_array_header_1_0(buf, header)
    return buf.getvalue()


def _changed(**changes) -> dict[str, np.ndarray]:
    rows = _data_rows()
    for name, value in changes.items():
        if value is None:
            del rows[name]
        else:
            rows[name] = value(rows[name]) if callable(value) else value
    return rows


def _edit(name, index, value):
    def change(array):
        array = array.copy()
        array[index] = value
        return array

    return {name: change}


@pytest.mark.parametrize(
    ("arrays", "raw", "words"),
    [
        (_changed(values=lambda v: v.astype(object)), None, r"values: holds object \[40, 56\]; a data file holds numb"),
        (_changed(rules=np.array("[" * 5000 + "]" * 5000)), None, "rules: lists and objects nested more than 32"),
        (_changed(rules=np.array('{"players": 3, "x": ' + "9" * 400 + "}")), None, "a whole number of 400 digits"),
        (_changed(rules=np.array('{"actions": "many"}')), None, r"rules: unknown rule option\(s\) \['actions'\]"),
        (_changed(rules=np.array(["standard", "x"])), None, r"rules: holds <U8 \[2\]; a data file holds one text"),
        (_changed(mask=lambda m: m[:30]), None, r"its arrays hold different numbers of rows \(mask 30, obs 40"),
        (_changed(phase=None), None, r"its entries are \['mask', 'obs', 'policy_move', 'values'\]"),
        (_changed(extra=np.zeros(3)), None, "its entries are"),
        (_changed(obs=lambda o: o[:, :100]), None, r"obs: holds rows of \[100\]; the rule set 'standard' has \[789\]"),
        (
            _changed(phase=None),
            {"phase": _header((1_600_000_000,), np.int16) + bytes(80)},
            r"phase: declares 1600000000 entries of int16; the file holds 80 bytes of it",
        ),
        (_changed(**_edit("values", (4, 3), np.nan)), None, r"row 4: a legal move's value is not finite"),
        (_changed(**_edit("values", (5, 9), np.inf)), None, r"row 5: a legal move's value is not finite"),
        (_changed(**_edit("policy_move", 6, 2)), None, r"row 6: its policy_move is not a legal move"),
        (_changed(**_edit("policy_move", 7, 120)), None, r"row 7: its policy_move is no action 0-55"),
        (_changed(**_edit("phase", 8, 9)), None, r"row 8: its phase is none of \[0, 1, 2, 3\]"),
        (_changed(**_edit("mask", 2, 0)), None, r"row 2: its mask is not 0 and 1 with a legal move"),
    ],
)
def test_a_broken_or_hostile_old_data_file_is_one_line(tmp_path, arrays, raw, words) -> None:
    """A file of the old format is read within bounds and checked row by row before it is converted; one that is
    not right is one line, and left as it is."""
    path = _npz(tmp_path / "bad.npz", arrays, raw)
    before = open(path, "rb").read()
    with pytest.raises(PlayoutsError) as err:
        data.convert_old_labels(path)
    message = str(err.value)
    assert message.startswith(f"{path}: ") and "\n" not in message, message
    assert re.search(words, message), message
    assert open(path, "rb").read() == before


def test_old_data_files_are_converted_once_and_read_as_they_were(tmp_path) -> None:
    """A file of the old format is refused by the fit's reader, naming the conversion; converted (once), the fit
    reads its rows as they were, dtype for dtype; files not regular, or compressed old ones, are one line."""
    old = _data_rows()
    good = _npz(tmp_path / "good.npz", old)
    with pytest.raises(PlayoutsError, match=f"^{good}: a label file of the old format: improve --resume converts"):
        data.load_rows([good])
    assert data.convert_old_labels(good) and not data.convert_old_labels(good)
    rows, train, held, rules = data.load_rows([good])
    assert len(rows["obs"]) == 40 and len(held) == 4 and rules.name == "standard"
    for name, array in old.items():
        np.testing.assert_array_equal(rows[name], array)
        assert rows[name].dtype == array.dtype, name
    squeezed = tmp_path / "small.npz"
    np.savez_compressed(squeezed, **_data_rows())
    with pytest.raises(PlayoutsError, match=f"^{squeezed}: obs.npy is compressed; label writes np.savez"):
        data.convert_old_labels(str(squeezed))
    for path in ("/dev/zero", str(tmp_path)):
        assert not data.convert_old_labels(path)
        with pytest.raises(PlayoutsError, match=f"^{path}: not a regular file"):
            data.load_rows([path])


def test_the_one_command_runs_the_part_its_config_or_run_names(tmp_path) -> None:
    """``sergeant-major distill`` runs the part a config's ``kind:`` names (``--resume``: the run's config.yaml;
    a run folder with no kind and play-out label files: the play-outs); ``improve`` defaults to the play-outs."""
    root = os.path.join(ROOT, "configs")
    assert cli.run_part(["--config", os.path.join(root, "real_deal_v8.yaml")]) == "playouts"
    assert cli.run_part(["--config", os.path.join(root, "exit_v4.yaml")], default="playouts") == "distill"
    run = tmp_path / "run"
    run.mkdir()
    assert cli.run_part(["--resume", str(run)]) == "distill" and cli.run_part([], default="playouts") == "playouts"
    (run / "config.yaml").write_text("kind: playouts\nname: run\n")
    assert cli.run_part(["--quiet", f"--resume={run}"]) == "playouts"
    (run / "config.yaml").write_text("name: run\n")
    assert cli.run_part(["--resume", str(run)]) == "distill"
    (run / "data" / "labels").mkdir(parents=True)
    assert cli.run_part(["--resume", str(run)]) == "playouts"
    assert cli.run_part(["--config", str(tmp_path / "missing.yaml")], default="playouts") == "playouts"
