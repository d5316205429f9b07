"""training.cli: the training command line (new runs, resume, outputs, errors)."""

from __future__ import annotations

import types

import pytest

pytest.importorskip("torch")
pytest.importorskip("sb3_contrib")

from training.cli import fresh_run_dir, main, outputs_summary, time_summary  # noqa: E402
from training.sb3.config import load_config  # noqa: E402
from training.sb3.trainer import planned_timesteps  # noqa: E402

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


def test_fresh_run_dir_skips_used_folders(tmp_path):
    assert fresh_run_dir(str(tmp_path), "quick") == (str(tmp_path / "quick"), "quick")
    (tmp_path / "quick").mkdir()
    assert fresh_run_dir(str(tmp_path), "quick") == (str(tmp_path / "quick"), "quick")  # empty: reused
    (tmp_path / "quick" / "config.yaml").write_text("")
    (tmp_path / "quick-2").mkdir()
    (tmp_path / "quick-2" / "x").write_text("")
    assert fresh_run_dir(str(tmp_path), "quick") == (str(tmp_path / "quick-3"), "quick-3")


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
        assert main(["--resume", str(run), "--quiet", "--set", override]) == 2, override
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


def test_outputs_summary_leaves_out_a_final_evaluation_that_did_not_run():
    assert "final_eval.json" not in outputs_summary("runs/x", final_eval=False)
    assert "final_eval.json" in outputs_summary("runs/x", final_eval=True)


def test_times_after_a_resume_do_not_contradict():
    trainer = types.SimpleNamespace(
        model=types.SimpleNamespace(num_timesteps=512), start_timesteps=256, wall=100.0, start_wall=90.0
    )
    text = time_summary(trainer, elapsed=15.0)
    assert "this call trained 256 learner decisions in 10 s" in text and "took 15 s in all" in text
    assert "the whole run: 512 learner decisions in 100 s of training" in text
    fresh = types.SimpleNamespace(
        model=types.SimpleNamespace(num_timesteps=256), start_timesteps=0, wall=9.0, start_wall=0
    )
    assert "whole run" not in time_summary(fresh, elapsed=12.0)


@pytest.mark.parametrize(
    "done, total, segment", [(0, 300_000, 32_768), (0, 128, 128), (256, 300, 128), (512, 512, 128)]
)
def test_the_progress_bar_total_is_where_the_run_stops(done, total, segment):
    planned = planned_timesteps(done, total, segment)
    assert planned >= total and (planned - done) % segment == 0 and planned - segment < max(total, done + 1)
