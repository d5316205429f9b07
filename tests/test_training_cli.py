"""training.cli and the run layer (training/common/runs.py): new runs, resume, interrupts, the end, errors."""

from __future__ import annotations

import json
import signal

import pytest

pytest.importorskip("torch")
pytest.importorskip("sb3_contrib")

from training.cli import main  # noqa: E402
from training.common.runs import fresh_run_dir, outputs_summary, time_summary  # noqa: E402
from training.sb3.config import load_config  # noqa: E402
from training.sb3.trainer import Trainer, planned_timesteps  # noqa: E402

TINY = (
    "name: tiny\n"
    "opponents: {mix: {random: 1}}\n"
    "ppo: {n_steps: 64, batch_size: 64, net_arch: [16]}\n"
    "train: {total_timesteps: 128, n_envs: 2, segment_steps: 128, checkpoint_every: 128, progress_bar: false}\n"
    "eval: {final_deals: 0, opponents: [random]}\n"
)


def tiny_config_file(tmp_path, extra: str = "") -> str:
    path = tmp_path / "tiny.yaml"
    path.write_text(TINY + f"output_dir: {tmp_path / 'runs'}\n" + extra)
    return str(path)


def test_the_closing_hint_quotes_the_key_s_value_not_the_run_s_length(tmp_path):
    """distill runs dagger_rounds + 1 rounds: its hint says the key's value (1), not the rounds (2)."""
    from training.common.runs import conclude
    from training.distill.config import load_distill_config
    from training.distill.fit import backend

    class Finished:  # a run that trained its 2 rounds
        wall = 1.0

        def progress(self) -> int:
            return 2

        def final_outputs(self) -> list:
            return []

        def facts(self) -> dict:
            return {}

    cfg = load_distill_config(None, ["dagger_rounds=1"])
    summary = conclude(backend("sergeant-major distill"), cfg, str(tmp_path), Finished())
    hint = summary["outputs"]["checkpoints/"]
    assert hint == f"go further: sergeant-major distill --resume {tmp_path} --set dagger_rounds=N (now 1)"
    assert json.loads((tmp_path / "summary.json").read_text())["progress"] == 2


def test_fresh_run_dir_skips_used_folders(tmp_path):
    assert fresh_run_dir(str(tmp_path), "quick") == (str(tmp_path / "quick"), "quick")
    (tmp_path / "quick").mkdir()
    assert fresh_run_dir(str(tmp_path), "quick") == (str(tmp_path / "quick"), "quick")  # empty: reused
    (tmp_path / "quick" / "config.yaml").write_text("")
    (tmp_path / "quick-2").mkdir()
    (tmp_path / "quick-2" / "x").write_text("")
    assert fresh_run_dir(str(tmp_path), "quick") == (str(tmp_path / "quick-3"), "quick-3")


def test_a_damaged_or_hostile_summary_reads_as_none(tmp_path):
    from training.common.runs import read_summary

    summary = tmp_path / "summary.json"
    summary.write_text('{"progress": 12}')
    assert read_summary(str(tmp_path)) == {"progress": 12}
    for text in ("[" * 100_000 + "]" * 100_000, '{"progress": ' + "9" * 5000 + "}", "[]", "{oops"):
        summary.write_text(text)
        assert read_summary(str(tmp_path)) is None
    summary.unlink()
    summary.symlink_to("/dev/zero")
    assert read_summary(str(tmp_path)) is None


def test_running_the_same_command_twice_starts_a_second_run(tmp_path, capsys):
    config = tiny_config_file(tmp_path)
    assert main(["--config", config, "--quiet"]) == 0
    assert f"new run: {tmp_path / 'runs' / 'tiny'}\n" in capsys.readouterr().out
    assert main(["--config", config, "--quiet"]) == 0
    out = capsys.readouterr().out
    second = tmp_path / "runs" / "tiny-2"
    assert f"new run: {second}\n" in out
    assert (second / "final_model.zip").is_file()
    assert load_config(str(second / "config.yaml")).name == "tiny-2"  # the saved config names its folder


def test_a_failed_start_leaves_no_run_folder(tmp_path, capsys):
    config = tiny_config_file(tmp_path, "pretrain: {teacher: no-such-agent}\n")
    assert main(["--config", config, "--quiet"]) == 2
    err = capsys.readouterr().err
    assert "pretrain.teacher" in err and "Traceback" not in err
    assert not (tmp_path / "runs" / "tiny").exists()
    run = tmp_path / "explicit"
    assert main(["--config", tiny_config_file(tmp_path), "--run-dir", str(run), "--set", "ppo.net_arch=[0]"]) == 2
    assert "--set ppo.net_arch=[0]: ppo.net_arch" in capsys.readouterr().err
    assert not run.exists()


def test_resume_with_a_bad_override_leaves_the_run_resumable(tmp_path, capsys):
    run = tmp_path / "run"
    assert main(["--config", tiny_config_file(tmp_path), "--run-dir", str(run), "--quiet"]) == 0
    saved = (run / "config.yaml").read_text()
    for override in ("ppo.net_arch=[64]", "opponents.mix={no-such-agent: 1}", "ppo.activation=relu"):
        capsys.readouterr()
        longer = ["--set", "train.total_timesteps=256"]  # a complete run is not touched: nothing to check
        assert main(["--resume", str(run), "--quiet", "--set", override, *longer]) == 2, override
        err = capsys.readouterr().err
        assert err.startswith("sergeant-major train: error: ") and err.count("\n") == 1 and "Traceback" not in err, err
        assert (run / "config.yaml").read_text() == saved, override  # not persisted
    assert main(["--resume", str(run), "--quiet", "--set", "train.total_timesteps=256"]) == 0
    assert load_config(str(run / "config.yaml")).train.total_timesteps == 256  # persisted once it worked


def test_progress_and_summary_name_every_output(tmp_path, capsys):
    config = tiny_config_file(
        tmp_path,
        "pretrain: {teacher: heuristic, decisions: 64, epochs: 1, batch_size: 32}\n"
        "eval: {final_deals: 2, opponents: [random]}\n",
    )
    run = tmp_path / "run"
    assert main(["--config", config, "--run-dir", str(run), "--set", "train.progress_bar=true"]) == 0
    captured = capsys.readouterr()
    assert "warm start: heuristic plays 64 decisions" in captured.err and "warm start done" in captured.err
    assert "final evaluation: 2 deals" in captured.out and "evaluating against random" in captured.err
    for name in ("final_model.zip", "final_policy.pt", "final_eval.json", "eval.jsonl", "tb/", "config.yaml"):
        assert f"  {name} " in captured.out, name
    assert f"tensorboard --logdir {run}/tb" in captured.out


def test_the_outputs_list_names_a_final_evaluation_only_when_it_ran(tmp_path, capsys):
    assert main(["--config", tiny_config_file(tmp_path), "--run-dir", str(tmp_path / "run"), "--quiet"]) == 0
    out = capsys.readouterr().out
    assert "final_eval.json" not in out and "  final_model.zip " in out
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    assert summary["progress"] == 128 and "final_eval" not in summary and "final_model.zip" in summary["outputs"]
    assert outputs_summary("runs/x", [("a.pt", "the policy")]) == "outputs in runs/x:\n  a.pt             the policy"


def test_times_after_a_resume_do_not_contradict():
    text = time_summary("learner decisions", done=512, start_done=256, wall=100.0, start_wall=90.0, elapsed=15.0)
    assert "this call trained 256 learner decisions in 10 s" in text and "took 15 s in all" in text
    assert "the whole run: 512 learner decisions in 100 s of training" in text
    assert "whole run" not in time_summary("learner decisions", 256, 0, 9.0, 0.0, elapsed=12.0)
    assert "(26 learner decisions/s)" in time_summary("learner decisions", 256, 0, 10.0, 0.0, elapsed=12.0)
    assert "2 rounds in 1767 s (one per 884 s)" in time_summary("rounds", 2, 0, 1767.0, 0.0, elapsed=1767.0)


def test_resuming_a_finished_run_says_it_is_complete_and_does_nothing(tmp_path, capsys):
    run = tmp_path / "run"
    assert main(["--config", tiny_config_file(tmp_path), "--run-dir", str(run), "--quiet"]) == 0
    before = {p.name: p.stat().st_mtime_ns for p in run.rglob("*") if p.is_file()}
    capsys.readouterr()
    assert main(["--resume", str(run)]) == 0
    out = capsys.readouterr().out
    assert out.count("\n") == 1 and f"{run} is complete (128 learner decisions" in out
    assert f"sergeant-major train --resume {run} --set train.total_timesteps=N" in out
    assert {p.name: p.stat().st_mtime_ns for p in run.rglob("*") if p.is_file()} == before  # nothing re-run


def test_ctrl_c_saves_a_checkpoint_and_names_the_command_that_continues(tmp_path, capsys, monkeypatch):
    """The first SIGINT stops the run after its segment with a checkpoint (checkpoint_every is far away);
    --resume then continues it to the end."""
    segment = Trainer.train_segment

    def interrupted(self, callback=None):
        segment(self, callback)
        signal.raise_signal(signal.SIGINT)

    monkeypatch.setattr(Trainer, "train_segment", interrupted)
    run = tmp_path / "run"
    sets = ["--set", "train.total_timesteps=512", "--set", "train.checkpoint_every=1000000"]
    assert main(["--config", tiny_config_file(tmp_path), "--run-dir", str(run), "--quiet", *sets]) == 130
    err = capsys.readouterr().err
    assert "stopping: finishing the current segment" in err
    assert f"interrupted after 128 learner decisions: the checkpoint is {run}/checkpoints/latest.zip" in err
    assert f"continue with: sergeant-major train --resume {run}" in err and "Traceback" not in err
    assert (run / "checkpoints" / "latest.zip").is_file() and not (run / "summary.json").exists()
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler  # the handler is put back
    monkeypatch.setattr(Trainer, "train_segment", segment)
    assert main(["--resume", str(run), "--quiet"]) == 0
    assert json.loads((run / "summary.json").read_text())["progress"] == 512


DMC_TINY = [  # tests/test_dmc.py's TINY, a run far longer than the test, progress on (writes after the signal)
    *("env.num_games=4", "dmc.n_steps=16", "dmc.batch_size=32", "dmc.replay_rollouts=8", "dmc.net_arch=[16]"),
    *("train.torch_threads=1", "train.progress=true", "eval.final_deals=0"),
    *("train.total_timesteps=100000000", "train.checkpoint_every=1000000000"),
]


@pytest.mark.parametrize(
    "name, reader", [("SIGINT", "closed after the signal"), ("SIGTERM", "closed before the signal")]
)
def test_a_signal_that_also_ends_the_reader_of_a_pipe_still_saves_and_exits_as_in_a_terminal(tmp_path, name, reader):
    """``train ... 2>&1 | tee log`` and Ctrl-C: the signal ends ``tee`` too and every later write finds a broken
    pipe; the run still writes its checkpoint and exits 130 (SIGTERM: 143), as it does in a terminal."""
    import os
    import select
    import subprocess
    import sys
    import time

    signum = getattr(signal, name)
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    run = tmp_path / "run"
    sets = [arg for key in DMC_TINY for arg in ("--set", key)]
    argv = [sys.executable, "-m", "sm_cli", "train", "--backend", "dmc", "--config", "configs/dmc.yaml"]
    read_end, write_end = os.pipe()
    process = subprocess.Popen([*argv, "--run-dir", str(run), *sets], cwd=root, stdout=write_end, stderr=write_end)
    os.close(write_end)
    try:
        seen, started = b"", None
        with os.fdopen(read_end, "rb", buffering=0) as pipe:  # as tee: reads while the run trains a second
            deadline = time.monotonic() + 300
            while process.poll() is None and time.monotonic() < min(deadline, started or deadline):
                if select.select([pipe], [], [], 0.1)[0]:
                    seen = (seen + pipe.read(65536))[-2000:]
                if started is None and b"decision" in seen:  # the progress bar: training has begun
                    started = time.monotonic() + 1.0
            assert process.poll() is None and started is not None, seen.decode(errors="replace")
            if reader == "closed after the signal":
                process.send_signal(signum)  # and the reader ends with it, long before the checkpoint is written
        if reader == "closed before the signal":
            time.sleep(0.5)  # the bar's writes already fail
            process.send_signal(signum)
        assert process.wait(timeout=300) == 128 + signum
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert (run / "checkpoints" / "latest.pt").is_file() and not (run / "summary.json").exists()


def test_resume_errors_name_the_command_typed(tmp_path, capsys):
    assert main(["--resume", str(tmp_path / "nothing")]) == 2
    assert capsys.readouterr().err.startswith("sergeant-major train: error: cannot resume")
    (tmp_path / "empty").mkdir()
    (tmp_path / "empty" / "config.yaml").write_text("name: x\n")
    assert main(["--backend", "vector", "--resume", str(tmp_path / "empty")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("sergeant-major train --backend vector: error: cannot resume") and "nothing was saved" in err
    assert err.count("\n") == 1


@pytest.mark.parametrize(
    "kind, config", [("vector", "selfplay.yaml"), ("dmc", "dmc.yaml"), ("rllib", "rllib_quickstart.yaml")]
)
def test_resume_finds_the_backend_in_the_run_s_config_before_any_checkpoint(tmp_path, capsys, kind, config):
    """A run stopped before its first checkpoint: --resume RUN says what --backend KIND --resume RUN says (no
    checkpoint in it), not that its config is of another kind."""
    import os
    import shutil

    run = tmp_path / "run"
    run.mkdir()
    shutil.copy(os.path.join(os.path.dirname(os.path.dirname(__file__)), "configs", config), run / "config.yaml")
    assert main(["--resume", str(run)]) == 2
    without = capsys.readouterr().err
    assert main(["--backend", kind, "--resume", str(run)]) == 2
    assert capsys.readouterr().err == without
    assert without.startswith(f"sergeant-major train --backend {kind}: error: cannot resume {run}: no checkpoint")
    assert without.count("\n") == 1


def test_resume_reads_the_kind_from_the_run_s_config_never_from_its_file_names(tmp_path, capsys):
    """A config.yaml without kind: is read as a --config file without one (--backend, else sb3): a batched
    trainer's checkpoint file in the run does not make it a batched run."""
    (tmp_path / "checkpoints").mkdir()
    (tmp_path / "checkpoints" / "latest.pt").write_bytes(b"")
    (tmp_path / "config.yaml").write_text("name: x\n")
    assert main(["--resume", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"sergeant-major train: error: cannot resume {tmp_path}: no checkpoint"), err
    (tmp_path / "config.yaml").write_text("kind: dmc\nname: x\n")
    with pytest.raises(SystemExit):
        main(["--backend", "vector", "--resume", str(tmp_path)])
    assert "that run was trained by --backend dmc, not vector" in capsys.readouterr().err


def test_resume_of_another_command_s_run_names_the_command_that_continues_it(tmp_path, capsys):
    (tmp_path / "config.yaml").write_text("kind: distill\nname: x\n")
    with pytest.raises(SystemExit) as info:
        main(["--resume", str(tmp_path)])
    assert info.value.code == 2
    err = capsys.readouterr().err
    assert "--resume: that is a 'distill' run, not a training run: continue it with sergeant-major distill" in err


@pytest.mark.parametrize(
    "done, total, segment", [(0, 300_000, 32_768), (0, 128, 128), (256, 300, 128), (512, 512, 128)]
)
def test_the_progress_bar_total_is_where_the_run_stops(done, total, segment):
    planned = planned_timesteps(done, total, segment)
    assert planned >= total and (planned - done) % segment == 0 and planned - segment < max(total, done + 1)


class _FakeTrainer:
    """A trainer of the run layer's protocol that trains by counting (what every backend's ending shares)."""

    def __init__(self, cfg, run_dir, resume):
        self.cfg, self.run_dir, self.wall = cfg, run_dir, 0.0
        self.done = 5 if resume else 0

    def progress(self):
        return self.done

    def train(self, stop):
        self.done, self.wall = self.cfg.train.total_timesteps, 2.0
        with open(f"{self.run_dir}/checkpoints/latest.zip", "w") as handle:
            handle.write("x")

    def final_outputs(self):
        return [("policy.pt", "the policy")]

    def evaluate(self, deals, final=False):
        row = {"balance": 0.5, "balance_ci": [0.1, 0.9], "opponent_balance": -0.25}
        return {"random": {role: dict(row) for role in ("dealer", "eldest", "middle", "all")}}

    def details(self):
        return "by phase: all of it"

    def facts(self):
        return {"fake": True}

    def close(self):
        pass


def test_every_backend_ends_the_same_way_a_table_and_the_outputs(tmp_path, capsys):
    """The run layer's ending (what `train --backend rllib` lacked): the final evaluation as a table on stdout,
    the time, every output; final_eval.json and summary.json written."""
    import argparse
    import os

    from training.common.runs import Backend, add_run_arguments, run_command
    from training.common.yaml_config import save_config

    def build(cfg, run_dir, resume, args):
        os.makedirs(os.path.join(run_dir, "checkpoints"), exist_ok=True)
        save_config(cfg, os.path.join(run_dir, "config.yaml"))  # each trainer saves it once it has loaded
        return _FakeTrainer(cfg, run_dir, resume)

    fake = Backend(
        prog="fake train",
        load_config=load_config,
        latest_checkpoint=lambda d: os.path.join(d, "checkpoints", "latest.zip") if os.path.isdir(d) else None,
        length=lambda cfg: (cfg.train.total_timesteps, "train.total_timesteps"),
        unit="steps",
        build=build,
    )
    parser = argparse.ArgumentParser(prog="fake train")
    add_run_arguments(parser, "a config")
    run = tmp_path / "run"
    config = tiny_config_file(tmp_path, "eval: {final_deals: 3, opponents: [random]}\n")
    assert run_command(fake, parser, ["--config", config, "--run-dir", str(run)]) == 0
    out = capsys.readouterr().out
    assert "final evaluation: 3 deals against random" in out and "duplicate evaluation, 3 deals x 3 roles" in out
    assert "random     all        +0.500   [+0.100, +0.900]    -0.250" in out
    assert "this call trained 128 steps in 2 s" in out and "by phase: all of it" in out
    for name in ("policy.pt", "final_eval.json", "checkpoints/", "config.yaml", "summary.json"):
        assert f"\n  {name} " in out, name
    summary = json.loads((run / "summary.json").read_text())
    assert summary["progress"] == 128 and summary["fake"] and summary["final_eval"]["random"]["all"]["balance"] == 0.5
    assert json.loads((run / "final_eval.json").read_text())["deals"] == 3
    assert run_command(fake, parser, ["--resume", str(run), "--set", "train.total_timesteps=256"]) == 0
    assert "the whole run: 256 steps" in capsys.readouterr().out
