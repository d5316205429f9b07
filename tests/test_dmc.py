"""The deep Monte-Carlo trainer (training/vector/dmc.py): its config, its targets, acting, runs and resume."""

from __future__ import annotations

import json
import re
import signal

import numpy as np
import pytest
import torch
from helpers import TINY_DMC

from agents import make_agent
from agents.players.ppo_agent import load_numpy_policy
from sm_env.core.cards import from_mask
from sm_env.core.game import Game
from sm_env.core.knowledge import player_view
from sm_env.observation import encode
from training.cli import main as train_main
from training.common.checkpoint import CheckpointError
from training.common.errors import ConfigError
from training.vector.config import dmc_config_from_dict, load_dmc_config
from training.vector.dmc import DMC, epsilon_greedy, main
from training.vector.episodes import EpisodeBook

TINY = TINY_DMC  # rollouts of 64 decisions; a first hand (no exchange) is 53 engine steps
HAND_NUMBER = 788  # the observation's entry "hand number / 100" (sm_env/observation.py)


def tiny(*extra: str) -> object:
    return load_dmc_config(None, [*TINY, *extra])


def _sets(*overrides: str) -> list[str]:
    return sum((["--set", s] for s in overrides), [])


# ---------------------------------------------------------------------------- config


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        (["dmc.batch_size=100000"], r"dmc.batch_size: must be at most the replay, .* = 16384, got 100000"),
        (["dmc.epsilon=1.5"], r"dmc.epsilon: must be in \[0, 1\], got 1.5"),
        (["dmc.epsilo=0.1"], r"unknown key 'dmc.epsilo' \(did you mean 'epsilon'\?\)"),
        (["dmc.activation=gelu"], r"dmc.activation: expected one of 'tanh', 'relu'"),
        (["dmc.replay_rollouts=0"], r"dmc.replay_rollouts: must be > 0, got 0"),
        (["ppo.n_steps=3"], r"unknown key 'ppo'"),  # the PPO sections are not this trainer's
        (["env.rules={target_score: 1099511627776}"], "env.rules: the batched trainer does not run these rules"),
    ],
)
def test_config_errors_name_the_key_and_what_is_allowed(overrides, message):
    with pytest.raises(ConfigError, match=message):
        load_dmc_config(None, overrides)


def test_defaults_and_the_shipped_config():
    cfg = dmc_config_from_dict({})
    assert (cfg.dmc.net_arch, cfg.dmc.activation, cfg.dmc.epsilon, cfg.dmc.learning_rate) == (
        [512, 256],
        "relu",
        0.01,
        1e-4,
    )
    shipped = load_dmc_config("configs/dmc.yaml")
    assert shipped.env.num_games == 256 and shipped.dmc.batch_size == 4096
    assert set(shipped.eval.opponents) == {"random", "heuristic"} and shipped.eval.every > 0


# ---------------------------------------------------------------------------- targets


def _watch(trainer: DMC) -> dict[int, list[tuple[np.ndarray, int, float]]]:
    """Wrap the trainer's engine: before each step note every game's (observation, seat, action, hand number);
    when a game ends, what its decisions' targets must be, from the reference record of the game
    (``VectorGame.finished_record``: the ``Game`` re-played, its hands' balances), keyed by where in the replay
    they must land (from the replay's cursor at the start: the games' decisions filed in the order the games ended,
    games in order within a step, decisions in order within a game)."""
    games, step = trainer.games, trainer.games.step
    scale = trainer.cfg.env.reward_scale
    logs: list[list[tuple[np.ndarray, int, int, int]]] = [[] for _ in range(games.num_games)]
    expected: dict[int, list[tuple[np.ndarray, int, float]]] = {}
    position = [trainer.cursor]  # where the next finished decisions land

    def watched(actions, *args, **kwargs):
        obs, seats = games.observe(), games.current_player
        for i in range(games.num_games):
            logs[i].append((obs[i].copy(), int(seats[i]), int(actions[i]), round(float(obs[i, HAND_NUMBER]) * 100)))
        rewards, done = step(actions, *args, **kwargs)
        rows = []
        for i in np.flatnonzero(done):
            hands = games.finished_record(int(i))["hands"]
            first = hands[0]["number"]
            for ob, seat, action, hand in logs[i]:
                rest = sum(h["balances"][seat] for h in hands[hand - first :])  # this hand's and the later ones'
                rows.append((ob, action, rest * scale))
            logs[i] = []
        if rows:
            expected[position[0]] = rows
            position[0] = (position[0] + len(rows)) % trainer.capacity
        return rewards, done

    games.step = watched
    return expected


def _check_targets(trainer: DMC, expected: dict[int, list[tuple[np.ndarray, int, float]]]) -> int:
    checked = 0
    for cursor, rows in expected.items():
        for j, (ob, action, target) in enumerate(rows):
            slot = (cursor + j) % trainer.capacity
            assert np.array_equal(trainer.replay_obs[slot], ob)
            assert trainer.replay_action[slot] == action
            assert trainer.replay_target[slot] == pytest.approx(target), (cursor, j)
            checked += 1
    return checked


@pytest.mark.parametrize("episode", ["hand", "game"])
def test_each_decision_is_regressed_on_its_own_seats_return(tmp_path, episode):
    """Hand episodes: every decision's target is the acting seat's balance in the hand; game episodes (2 hands
    at most): its balances from the decision's hand to the game's end. Checked against the reference records."""
    trainer = DMC(tiny(f"env.episode={episode}", "env.max_hands=2", "dmc.epsilon=0.3"), str(tmp_path))
    expected = _watch(trainer)
    for _ in range(8 if episode == "game" else 4):
        trainer.collect()
    assert trainer.episodes >= trainer.num_games
    targets = [t for rows in expected.values() for _, _, t in rows]
    assert len(set(targets)) >= 3  # the seats' returns differ: a seat mixed up shows
    assert _check_targets(trainer, expected) == trainer.filled


def test_a_target_read_from_the_next_seat_fails_the_check(tmp_path, monkeypatch):
    """The planted bug: each decision filed with the return of the seat after the one that made it."""
    finish = EpisodeBook.finish

    def next_seat(self, games):
        seats = self.seat.copy()
        self.seat = (self.seat + 1) % self.paid.shape[1]
        finished = finish(self, games)
        self.seat = seats
        return finished

    monkeypatch.setattr(EpisodeBook, "finish", next_seat)
    trainer = DMC(tiny(), str(tmp_path))
    expected = _watch(trainer)
    for _ in range(4):
        trainer.collect()
    with pytest.raises(AssertionError):
        _check_targets(trainer, expected)


# ---------------------------------------------------------------------------- acting


def test_greedy_and_exploring_actions_are_legal_and_greedy_is_the_best_legal_value(tmp_path):
    trainer = DMC(tiny("env.num_games=16"), str(tmp_path))
    g = trainer.games
    mask = torch.from_numpy(g.legal_mask()).bool()
    obs = torch.from_numpy(g.observe())
    with torch.no_grad():  # the illegal actions get the highest values: the mask must keep them out
        trainer.q[-1].bias += 1000.0 * (~mask[0]).float()
        values = trainer.q(obs)
    greedy = epsilon_greedy(trainer.q, obs, mask, 0.0, trainer.gen)
    assert mask[torch.arange(16), greedy].all()
    assert torch.equal(greedy, values.masked_fill(~mask, -np.inf).argmax(1))
    explored = torch.stack([epsilon_greedy(trainer.q, obs, mask, 1.0, trainer.gen) for _ in range(50)])
    assert mask[torch.arange(16).expand(50, -1), explored].all()
    assert len(set(explored[:, 0].tolist())) > 1  # uniform over the legal actions, not greedy
    rng = np.random.default_rng(0)
    for _ in range(60):  # greedy stays legal in every phase of a hand
        mask = torch.from_numpy(g.legal_mask()).bool()
        action = epsilon_greedy(trainer.q, torch.from_numpy(g.observe()), mask, 0.0, trainer.gen)
        assert mask[torch.arange(16), action].all()
        g.step(np.where(rng.random(16) < 0.5, action.numpy(), [rng.choice(np.flatnonzero(m)) for m in mask.numpy()]))


# ---------------------------------------------------------------------------- runs


def test_tiny_run_end_to_end_writes_a_policy_that_make_agent_plays_greedily(tmp_path, capsys):
    run = tmp_path / "run"
    sets = _sets(*TINY, "train.total_timesteps=320", "eval.every=256", "eval.deals=2", "eval.opponents=[random]")
    assert train_main(["--backend", "dmc", "--config", "configs/dmc.yaml", "--run-dir", str(run), *sets]) == 0
    assert "network (forward/backward)" in capsys.readouterr().out
    assert (run / "checkpoints" / "latest.pt").is_file()
    rows = [json.loads(line) for line in (run / "metrics.jsonl").read_text().splitlines()]
    assert [r["global_step"] for r in rows] == [64, 128, 192, 256, 320]
    assert rows[-1]["trained"] == 32 and rows[-1]["loss"] >= 0 and rows[-1]["wall"] > 0
    (evaluation,) = [json.loads(line) for line in (run / "eval.jsonl").read_text().splitlines()]
    assert evaluation["global_step"] == 256 and evaluation["wall"] > 0
    assert isinstance(evaluation["advantage"]["random"], float)
    # the policy file: the Q-network, played greedily by ppo:PATH
    path = run / "final_policy.pt"
    policy, meta = load_numpy_policy(path)
    assert meta["outputs"] == "q_values" and meta["trainer"] == "training.vector.dmc" and meta["num_timesteps"] == 320
    agent = make_agent(f"ppo:{path}", seed=0)
    trainer = DMC(tiny(), str(tmp_path / "network"))  # the trained network, acting as in training
    trainer.q.load_state_dict(torch.load(run / "checkpoints" / "latest.pt", weights_only=True)["net"])
    others = [make_agent("random", seed=s) for s in (1, 2)]
    for seed in range(2):
        game = Game(seed=seed, max_hands=1)
        while (seat := game.current_player) is not None:
            view = player_view(game, seat)
            if seat == 0:
                action = agent.act(view)
                assert action in from_mask(view.legal)
                obs = torch.from_numpy(encode(view)[None])
                mask = torch.zeros(1, trainer.num_actions, dtype=torch.bool)
                mask[0, from_mask(view.legal)] = True
                greedy = epsilon_greedy(trainer.q, obs, mask, 0.0, trainer.gen)  # the network's greedy action
                assert action == int(greedy[0])
            else:
                action = others[seat - 1].act(view)
            game.apply(action)


def test_resume_continues_to_the_same_result_as_an_uninterrupted_run(tmp_path):
    whole = DMC(tiny("train.total_timesteps=640"), str(tmp_path / "a"))
    whole.train()
    first = DMC(tiny("train.total_timesteps=300"), str(tmp_path / "b"))  # stops mid-hand, after updates began
    first.train()
    assert first.global_step == 320 and first.updates > 0 and first.book.length.max() > 0
    second = DMC(tiny("train.total_timesteps=640"), str(tmp_path / "b"), resume=True)
    assert second.global_step == 320 and second.filled == first.filled
    second.train()
    assert second.global_step == whole.global_step == 640 and second.updates == whole.updates
    for (name, a), b in zip(whole.q.state_dict().items(), second.q.state_dict().values(), strict=True):
        assert torch.equal(a, b), name
    assert np.array_equal(whole.replay_target, second.replay_target)
    assert np.array_equal(whole.replay_obs, second.replay_obs)
    assert np.array_equal(whole.games.get_state()["st"], second.games.get_state()["st"])
    assert torch.equal(whole.gen.get_state(), second.gen.get_state())
    assert [r["loss"] for r in whole.history][-5:] == [r["loss"] for r in second.history][-5:]


def test_the_progress_bar_counts_the_decisions_as_they_are_made_with_an_eta(tmp_path, capsys, monkeypatch):
    """As the self-play trainer's: advanced at every engine step (at each update it already counts the rollout's
    decisions), with the total and an ETA (stderr)."""
    seen = []
    update = DMC.update

    def counted(self):
        seen.append((self.bar.n, self.global_step + self.num_games * self.cfg.dmc.n_steps))
        return update(self)

    monkeypatch.setattr(DMC, "update", counted)
    DMC(tiny("train.progress=true", "train.total_timesteps=192"), str(tmp_path)).train()
    assert len(seen) == 3 and all(shown == counted for shown, counted in seen), seen
    err = capsys.readouterr().err
    assert re.search(r"dmc: +100%\|.*\| 192/192 \[\d\d:\d\d<00:00", err), err


def test_ctrl_c_writes_a_checkpoint_and_resume_finds_the_backend(tmp_path, capsys, monkeypatch):
    update = DMC.update

    def interrupted(self):
        stats = update(self)
        signal.raise_signal(signal.SIGINT)
        return stats

    monkeypatch.setattr(DMC, "update", interrupted)
    run = tmp_path / "run"
    sets = _sets(*TINY, "train.total_timesteps=192", "train.checkpoint_every=1000000")
    assert train_main(["--backend", "dmc", "--config", "configs/dmc.yaml", "--run-dir", str(run), *sets]) == 130
    err = capsys.readouterr().err
    assert f"continue with: sergeant-major train --backend dmc --resume {run}" in err
    assert (run / "checkpoints" / "latest.pt").is_file()
    monkeypatch.setattr(DMC, "update", update)
    assert train_main(["--resume", str(run), "--quiet"]) == 0  # the backend is found in the run folder
    assert json.loads((run / "summary.json").read_text())["progress"] == 192
    assert train_main(["--resume", str(run)]) == 0
    assert "is complete" in capsys.readouterr().out
    with pytest.raises(SystemExit):
        train_main(["--backend", "vector", "--resume", str(run)])
    assert "that run was trained by --backend dmc, not vector" in capsys.readouterr().err


def test_resume_refuses_another_network_or_replay_and_a_damaged_checkpoint(tmp_path, capsys):
    DMC(tiny("train.total_timesteps=64"), str(tmp_path)).train()
    with pytest.raises(CheckpointError, match=r"trained with dmc.net_arch \[16\], the config says \[32\]"):
        DMC(tiny("dmc.net_arch=[32]"), str(tmp_path), resume=True)
    with pytest.raises(CheckpointError, match=r"trained with dmc.replay_rollouts 8, the config says 2"):
        DMC(tiny("dmc.replay_rollouts=2"), str(tmp_path), resume=True)
    latest = tmp_path / "checkpoints" / "latest.pt"
    state = torch.load(latest, weights_only=True)
    state["open"]["length"][0] = 10**6
    torch.save(state, latest)
    with pytest.raises(CheckpointError, match="the checkpoint is damaged"):
        DMC(tiny(), str(tmp_path), resume=True)
    assert main(["--resume", str(tmp_path / "nothing")]) == 2


@pytest.fixture(scope="module")
def saved_dmc(tmp_path_factory):
    """The checkpoint of a tiny run of 64 decisions (its open episodes and replay filled)."""
    folder = tmp_path_factory.mktemp("dmc")
    DMC(tiny("train.total_timesteps=64"), str(folder)).train()
    return torch.load(folder / "checkpoints" / "latest.pt", weights_only=True)


def _replay(state, action, target):
    """Two decisions in the replay (a tiny run has finished no episode yet)."""
    state["replay"] = {
        "obs": torch.zeros(2, state["open"]["obs"].shape[-1]),
        "action": torch.tensor(action),
        "target": torch.tensor(target, dtype=torch.float32),
    }
    state["counters"].update(filled=2, cursor=2)


def _nan_first(entries):
    first = next(iter(entries.values()))
    first.view(-1)[0] = float("nan")


@pytest.mark.parametrize(
    ("tamper", "words"),
    [
        (lambda s: s["open"]["action"].view(-1).__setitem__(0, 56), r"open.action holds values outside \[0, 56\)"),
        (lambda s: s["open"]["seat"].view(-1).__setitem__(0, -1), r"open.seat holds values outside \[0, 3\)"),
        (lambda s: s["open"].__setitem__("paid_now", s["open"]["paid_now"][:2]), r"open.paid_now is float64 \[2, 3\]"),
        (lambda s: _replay(s, [3, 99], [0.5, 1.0]), r"replay.action holds values outside \[0, 56\)"),
        (lambda s: _replay(s, [3, 4], [0.5, float("inf")]), "replay.target holds NaN or infinite"),
        (lambda s: _replay(s, [3, 4, 5], [0.5, 1.0]), r"replay.action is int64 \[3\]; the run has \[2\]"),
        (lambda s: _nan_first(s["net"]), r"net\.\S+ holds NaN or infinite values"),
        (lambda s: s["counters"].__setitem__("cursor", 10**9), "the replay's counters"),
        (lambda s: s["counters"].__setitem__("episodes", "many"), r"counters.episodes is 'many'"),
    ],
)
def test_every_field_of_a_dmc_checkpoint_is_checked(saved_dmc, tmp_path, tamper, words):
    import copy

    state = copy.deepcopy(saved_dmc)
    tamper(state)
    (tmp_path / "checkpoints").mkdir()
    latest = tmp_path / "checkpoints" / "latest.pt"
    torch.save(state, latest)
    with pytest.raises(CheckpointError, match=rf"^{latest}: the checkpoint is damaged \(.*{words}") as err:
        DMC(tiny(), str(tmp_path), resume=True)
    assert "\n" not in str(err.value)


def test_a_dmc_checkpoint_is_the_one_format_and_an_older_release_s_still_resumes(saved_dmc, tmp_path):
    import copy

    state = copy.deepcopy(saved_dmc)
    assert (state.pop("format"), state.pop("trainer")) == ("sergeant-major-checkpoint/1", "dmc")
    state["format"] = "sergeant-major-vector-dmc/1"  # as the release before the one format wrote it
    (tmp_path / "checkpoints").mkdir()
    torch.save(state, tmp_path / "checkpoints" / "latest.pt")
    resumed = DMC(tiny(), str(tmp_path), resume=True)
    assert resumed.global_step == saved_dmc["counters"]["global_step"]
    for a, b in zip(resumed.q.state_dict().values(), saved_dmc["net"].values(), strict=True):
        assert torch.equal(a, b)
