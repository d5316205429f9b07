"""benchmarks/real_deal_playouts.py: every legal move of a decision played out to the end of the hand in the
real deal, by the policy for every seat, gives the balance the pure-Python Game gives for the same moves."""

from __future__ import annotations

import os
import re

import numpy as np
import pytest
from helpers import benchmark_script

from agents import act
from agents.ppo_agent import PPOAgent
from sm_env.compiled.batch import VectorGame
from sm_env.core.episode import result_rewards
from sm_env.core.game import DISCARD, EXCHANGE, PLAY, TRUMP
from sm_env.core.knowledge import player_view
from sm_env.observation import observed_phases, observed_roles
from training.vector.fixed_agents import PolicyOpponent

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
POLICY = os.path.join(ROOT, "agents", "policies", "standard_v4.pt")
FOUR = os.path.join(ROOT, "agents", "policies", "four-5-3-2-2_v0.pt")
WIDE = os.path.join(ROOT, "agents", "policies", "standard_v5.pt")  # [1024, 512]: standard_v4's width twice


def _script():
    return benchmark_script("real_deal_playouts")


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
    script = _script()
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
            values, results = script.play_out(
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


def test_fit_merge_and_combine_write_policies_that_play(tmp_path, capsys) -> None:
    """The fit, the merge and the combination run end to end on a small data file (real positions, made-up
    values) and write policy files that play; the combination is exact."""
    script = _script()
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
    data = tmp_path / "data.npz"
    np.savez(data, **{name: np.array(values) for name, values in rows.items()})
    script.main(["fit", "--data", str(data), "--init", POLICY, "--out", str(tmp_path / "q.pt"), "--epochs", "1"])
    script.main(
        [
            "merge",
            "--data",
            str(data),
            "--init",
            POLICY,
            "--teacher",
            str(tmp_path / "q.pt"),
            "--out",
            str(tmp_path / "m.pt"),
            "--epochs",
            "1",
        ]
    )
    script.main(
        [
            "combine",
            "--prior",
            POLICY,
            "--teacher",
            str(tmp_path / "q.pt"),
            "--weight",
            "1.5",
            "--out",
            str(tmp_path / "c.pt"),
        ]
    )
    out = capsys.readouterr().out
    assert "margin 0.0  discard" in out and "play      held out" in out
    # the combined network is exactly 1.5 x the prior's logits + the Q-network's values in tricks
    prior, q = PPOAgent(POLICY).policy, PPOAgent(str(tmp_path / "q.pt")).policy
    both = PPOAgent(str(tmp_path / "c.pt")).policy
    assert both.net_arch == [a + b for a, b in zip(prior.net_arch, q.net_arch, strict=True)]
    for obs, legal in zip(rows["obs"][:50], rows["mask"][:50], strict=True):
        bits = sum(1 << int(a) for a in np.flatnonzero(legal))
        x = obs.astype(np.float32)
        want = 1.5 * prior.masked_logits(x, bits) + script.Q_SCALE * q.masked_logits(x, bits)
        np.testing.assert_allclose(both.masked_logits(x, bits), want, rtol=1e-4, atol=1e-4)
    for name in ("q.pt", "m.pt", "c.pt"):
        agent = PPOAgent(str(tmp_path / name))
        games.reset()
        view_game = games.game(0)
        assert act(agent, player_view(view_game, view_game.current_player)) in view_game.legal_actions()


def test_run_makes_every_stage_from_a_config_and_resumes(tmp_path, capsys) -> None:
    """``run --config``: the label files, the Q-network and the combined policy in the run folder; run again,
    every finished stage is kept; a bad decision type is refused naming the key and what is allowed."""
    script = _script()
    config = tmp_path / "c.yaml"
    config.write_text(
        f"name: r\noutput_dir: {tmp_path}\nworkers: 1\npolicy: {POLICY}\nq_init: {WIDE}\nepochs: 1\nweight: 2.0\n"
        "labels:\n"
        "  - {seeds: [1], hands: 16, types: [play]}\n  - {seeds: [2], hands: 3, types: [trump, discard]}\n"
    )
    script.main(["run", "--config", str(config)])
    folder = tmp_path / "r"
    for name in ("labels/1.npz", "labels/2.npz", "q.pt", "policy.pt", "config.yaml"):
        assert (folder / name).exists(), name
    assert set(np.load(folder / "labels" / "1.npz")["phase"]) == {PLAY}
    for name in ("1.npz", "2.npz"):  # a result reward for every legal move, NaN for the others
        labelled = np.load(folder / "labels" / name)
        legal = labelled["mask"].astype(bool)
        assert np.isin(labelled["results"][legal], [0.0, 1.0, -0.5]).all()
        assert np.isnan(labelled["results"][~legal]).all()
    assert set(np.load(folder / "labels" / "2.npz")["phase"]) == {TRUMP, DISCARD}
    stamp = (folder / "q.pt").stat().st_mtime_ns
    capsys.readouterr()
    script.main(["run", "--config", str(config)])
    assert "2 of 2 label files there; labelling 0" in capsys.readouterr().out
    assert (folder / "q.pt").stat().st_mtime_ns == stamp
    assert PPOAgent(str(folder / "q.pt")).policy.net_arch == [1024, 512]  # started from q_init (standard_v5)
    assert PPOAgent(str(folder / "policy.pt")).policy.net_arch == [1536, 768]  # standard_v4's [512, 256] beside it
    with pytest.raises(SystemExit):
        script.main(["run", "--config", str(config), "--set", "labels=[{seeds: [3], types: [bid]}]"])
    assert "types must be some of exchange, trump, discard, play" in capsys.readouterr().err
    with pytest.raises(SystemExit):  # refused before any labelling, though only the fit reads it
        script.main(["run", "--config", str(config), "--set", "q_init=missing.pt", "--set", "name=other"])
    assert "checkpoint file not found: missing.pt" in capsys.readouterr().err
    assert not list((tmp_path / "other" / "labels").iterdir())
    with pytest.raises(SystemExit):  # a data file is held in memory: its hands are bounded
        script.main(["run", "--config", str(config), "--set", "labels=[{seeds: [3], hands: 10000000}]"])
    assert "labels[0].hands" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        script.main(["label", "--hands", "10000000", "--out", str(tmp_path / "x.npz")])
    assert "--hands must be in 1..50000" in capsys.readouterr().err
    for command in (["fit", "--data", "x"], ["distil", "--teacher", "t", "--init", "i"]):  # passes are bounded
        with pytest.raises(SystemExit):
            script.main([*command, "--out", "y", "--epochs", "101"])
        assert "--epochs must be in 1..100, got 101" in capsys.readouterr().err


def _moves(spec: str, obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """The most probable legal move of the policy file ``spec`` in each row."""
    agent = PPOAgent(spec, deterministic=True)
    logits = agent.policy.logits(obs.astype(np.float32))
    return np.where(mask.astype(bool), logits, -np.inf).argmax(axis=1)


def test_distil_copies_a_policy_into_another_network(tmp_path, capsys) -> None:
    """``distil``: the copy has the start's network and agrees with the teacher more than the start did
    (standard_v2 taught standard_v4's play: from 69% of the same moves to about 79%)."""
    script = _script()
    start, out = os.path.join(ROOT, "agents", "policies", "standard_v2.pt"), str(tmp_path / "s.pt")
    script.main(
        ["distil", "--teacher", POLICY, "--init", start, "--decisions", "20000", "--epochs", "2"]
        + ["--learning-rate", "3e-4", "--out", out]
    )
    assert "the teacher's most probable move in" in capsys.readouterr().out
    assert PPOAgent(out).policy.net_arch == [512, 256]
    obs, mask, _ = script._decisions(POLICY, 4000, 77, (PLAY,))
    wanted = _moves(POLICY, obs, mask)
    before, after = ((_moves(spec, obs, mask) == wanted).mean() for spec in (start, out))
    assert after > before + 0.05, (before, after)
    with pytest.raises(SystemExit):
        script.main(["distil", "--teacher", POLICY, "--init", start, "--decisions", "10", "--out", out])
    assert "--decisions must be in" in capsys.readouterr().err


def test_run_with_a_student_plays_the_copy_and_a_group_its_own_policy(tmp_path) -> None:
    """``student``: the run's policy is copied first (student.pt) and the copy labels, starts the Q-network and
    is the prior; a label group with its own ``policy`` is labelled by that one."""
    script = _script()
    teacher = os.path.join(ROOT, "agents", "policies", "standard_v5.pt")
    config = tmp_path / "c.yaml"
    config.write_text(
        f"name: r\noutput_dir: {tmp_path}\nworkers: 1\npolicy: {teacher}\nepochs: 1\n"
        f"student: {{init: {POLICY}, decisions: 5120, epochs: 1}}\nlabels:\n"
        f"  - {{seeds: [1], hands: 8, types: [play]}}\n  - {{seeds: [2], hands: 8, types: [play], policy: {POLICY}}}\n"
    )
    script.main(["run", "--config", str(config)])
    folder = tmp_path / "r"
    student = str(folder / "student.pt")
    assert PPOAgent(student).policy.net_arch == [512, 256]
    for seed, spec in ((1, student), (2, POLICY)):
        rows = np.load(folder / "labels" / f"{seed}.npz")
        np.testing.assert_array_equal(rows["policy_move"], _moves(spec, rows["obs"], rows["mask"]))
    assert PPOAgent(str(folder / "policy.pt")).policy.net_arch == [1024, 512]


def test_label_and_fit_on_four_players_and_refused_rule_sets(tmp_path, capsys) -> None:
    """``label --rules``: a four-player file records its rule set, the fit writes a four-player Q-network from
    it; files of two rule sets are not fitted together, and a 74-action rule set is refused in one line."""
    script = _script()
    four, three = str(tmp_path / "four.npz"), str(tmp_path / "three.npz")
    script.main(
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
    script.main(["label", "--policy", POLICY, "--hands", "4", "--out", three, "--types", "trump,discard"])
    data = np.load(four)
    assert "four-5-3-2-2" in str(data["rules"]) and data["obs"].shape[1] == PPOAgent(FOUR).policy.observation_size
    assert set(data["phase"]) == {DISCARD, PLAY}
    legal_values = np.isfinite(data["values"]) == data["mask"].astype(bool)
    assert legal_values.all()  # every legal move has its value, no illegal one has
    script.main(["fit", "--data", four, "--init", FOUR, "--out", str(tmp_path / "q.pt"), "--epochs", "1"])
    assert PPOAgent(str(tmp_path / "q.pt")).trained_on == "four-5-3-2-2"
    combined = str(tmp_path / "c.pt")
    script.main(["combine", "--prior", FOUR, "--teacher", str(tmp_path / "q.pt"), "--out", combined])
    assert PPOAgent(combined).trained_on == "four-5-3-2-2" and PPOAgent(combined).policy.net_arch == [1024, 512]
    with pytest.raises(SystemExit, match="labelled on different rule sets"):
        script.main(["fit", "--data", f"{four},{three}", "--init", FOUR, "--out", str(tmp_path / "x.pt")])
    with pytest.raises(SystemExit):
        script.main(["label", "--rules", "calls", "--out", str(tmp_path / "c.npz")])
    assert "has 74 actions" in capsys.readouterr().err


def test_the_game_weight_adds_the_result_rewards_and_needs_them(tmp_path, capsys) -> None:
    """``fit --game-weight W`` values a move at its balance plus W times its result reward; files labelled before
    the results were recorded are refused in one line."""
    script = _script()
    rows = {
        "values": np.array([[1.0, -2.0, np.nan]], dtype=np.float32),
        "results": np.array([[1.0, -0.5, np.nan]], dtype=np.float32),
    }
    np.testing.assert_array_equal(script.move_values(rows, 4.0, ["f"]), [[5.0, -4.0, np.nan]])
    np.testing.assert_array_equal(script.move_values(rows, 0.0, ["f"]), rows["values"])
    with pytest.raises(SystemExit, match="needs the result rewards"):
        script.move_values({"values": rows["values"]}, 4.0, ["old.npz"])
    with pytest.raises(SystemExit):
        script.main(["fit", "--data", "x", "--out", "y", "--game-weight", "-1"])
    assert "--game-weight in [0, 100]" in capsys.readouterr().err


def test_a_role_filter_labels_the_same_decisions_of_that_role_only(tmp_path, capsys) -> None:
    """``label --roles middle`` (a run's ``labels[].roles``): the same games are played, and exactly the middle's
    rows of the unfiltered file are labelled, with the same values; an unknown role is refused naming the roles."""
    script = _script()
    every, middle = str(tmp_path / "all.npz"), str(tmp_path / "middle.npz")
    script.main(["label", "--policy", POLICY, "--hands", "12", "--types", "play", "--out", every])
    script.main(["label", "--policy", POLICY, "--hands", "12", "--types", "play", "--roles", "middle", "--out", middle])
    full, part = np.load(every), np.load(middle)
    roles = observed_roles(full["obs"].astype(np.float32))
    assert set(roles) == {0, 1, 2} and set(observed_roles(part["obs"].astype(np.float32))) == {2}
    np.testing.assert_array_equal(part["obs"], full["obs"][roles == 2])
    np.testing.assert_array_equal(part["values"], full["values"][roles == 2])
    with pytest.raises(SystemExit):
        script.main(["label", "--roles", "middel", "--out", str(tmp_path / "x.npz")])
    assert "--roles must be some of dealer, eldest, middle, got ['middel']" in capsys.readouterr().err
    config = tmp_path / "c.yaml"
    config.write_text(f"name: r\noutput_dir: {tmp_path}\nlabels:\n  - {{seeds: [1], roles: [third]}}\n")
    with pytest.raises(SystemExit):
        script.main(["run", "--config", str(config)])
    assert "roles must be some of dealer, eldest, middle, got ['third']" in capsys.readouterr().err


def test_load_puts_the_files_end_to_end_and_holds_out_the_last_tenth_of_each(tmp_path) -> None:
    """The fit's rows are the files' rows end to end (read one file at a time into one array); the held-out rows
    are the last tenth of each file; the result rewards are read only when asked for."""
    script = _script()
    paths = [str(tmp_path / f"{seed}.npz") for seed in (1, 2)]
    for seed, path in zip((1, 2), paths, strict=True):
        script.main(["label", "--policy", POLICY, "--seed", str(seed), "--hands", "6", "--out", path])
    files = [np.load(path) for path in paths]
    rows, train, held, _ = script._load(paths)
    for name in ("obs", "mask", "values", "results", "phase", "policy_move"):
        np.testing.assert_array_equal(rows[name], np.concatenate([f[name] for f in files]))
        assert rows[name].dtype == files[0][name].dtype
    first, second = (len(f["phase"]) for f in files)
    expected = [*range(int(0.9 * first), first), *range(first + int(0.9 * second), first + second)]
    assert held.tolist() == expected and sorted([*train.tolist(), *expected]) == list(range(first + second))
    assert "results" not in script._load(paths, results=False)[0]
    with pytest.raises(SystemExit, match=r"no data file 'missing.npz', '' \(label makes them\)"):
        script._load([paths[0], "missing.npz", ""])


def _data_rows(n: int = 40) -> dict[str, np.ndarray]:
    """A valid data file's arrays of ``n`` standard-rules decisions (two legal moves each, made-up values)."""
    rng = np.random.default_rng(n)
    mask = np.zeros((n, 56), dtype=np.int8)
    mask[:, 3] = mask[:, 9] = 1
    return {
        "obs": rng.random((n, 789)).astype(np.float16),
        "mask": mask,
        "values": np.where(mask == 1, rng.normal(size=(n, 56)), np.nan).astype(np.float32),
        "phase": rng.integers(0, 3, n),
        "policy_move": np.full(n, 9),
    }


def _npz(path, arrays: dict[str, np.ndarray], raw: dict[str, bytes] | None = None) -> str:
    """A data file as np.savez writes it (stored entries); ``raw``: entries written as these bytes instead."""
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
def test_a_broken_or_hostile_data_file_is_one_line(tmp_path, arrays, raw, words) -> None:
    path = _npz(tmp_path / "bad.npz", arrays, raw)
    good = _npz(tmp_path / "good.npz", _data_rows())
    with pytest.raises(SystemExit) as err:
        _script()._load([good, path])
    message = str(err.value.code)
    assert message.startswith(f"real_deal_playouts: {path}: ") and "\n" not in message, message
    assert re.search(words, message), message


def test_data_files_not_regular_or_compressed_are_one_line(tmp_path) -> None:
    script = _script()
    rows, train, held, rules = script._load([_npz(tmp_path / "good.npz", _data_rows())])
    assert len(rows["obs"]) == 40 and len(held) == 4 and rules.name == "standard"
    squeezed = tmp_path / "small.npz"
    np.savez_compressed(squeezed, **_data_rows())
    for path, words in [
        ("/dev/zero", "not a regular file"),
        (str(tmp_path), "not a regular file"),
        (str(squeezed), "obs.npy is compressed; label writes np.savez"),
    ]:
        with pytest.raises(SystemExit, match=f"^real_deal_playouts: {path}: {words}"):
            script._load([path])
