"""A distillation run's final evaluation goes through training.evaluation like every trainer's, and the strength
measurement of a policy per role (``python -m training.evaluation.strength``) is part of the package."""

from __future__ import annotations

import json

from sm_cli.cli import main as cli_main
from training.evaluation import strength

TINY_RUN = "name: tiny\nhands: 2\ndata: {seed: 3, samples: 2, chunk_hands: 1}\nfit: {epochs: 1, net_arch: [16]}\n"


def test_a_distillation_run_ends_with_the_evaluation_every_trainer_reports(tmp_path, capsys):
    config = tmp_path / "tiny.yaml"
    config.write_text(TINY_RUN + f"output_dir: {tmp_path / 'runs'}\neval: {{final_deals: 2, opponents: [random]}}\n")
    assert cli_main(["distill", "--config", str(config), "--quiet"]) == 0
    out = capsys.readouterr().out
    assert "final evaluation: 2 deals against random" not in out  # --quiet: no announcement
    assert "duplicate evaluation, 2 deals" in out and "final_eval.json" in out
    run = tmp_path / "runs" / "tiny"
    final = json.loads((run / "final_eval.json").read_text())
    assert final["deals"] == 2 and set(final["results"]["random"]) == {"dealer", "eldest", "middle", "all"}
    assert json.loads((run / "summary.json").read_text())["final_eval"] == final["results"]
    config.write_text(TINY_RUN + f"output_dir: {tmp_path / 'runs'}\nname: none\n")  # the default: none
    assert cli_main(["distill", "--config", str(config), "--quiet"]) == 0
    assert not (tmp_path / "runs" / "none" / "final_eval.json").exists()
    config.write_text(TINY_RUN + "eval: {start_balances: [1, 1]}\n")
    assert cli_main(["distill", "--config", str(config)]) == 2
    assert "eval.start_balances" in capsys.readouterr().err


def test_the_strength_measurement_reports_every_role(tmp_path, capsys):
    out = tmp_path / "s.json"
    args = ["--policy", "random", "--deals", "2", "--workers", "1", "--pimc", "--pimc-spec", "heuristic"]
    assert strength.main([*args, "--game-deals", "1", "--out", str(out)]) == 0
    figures = json.loads(out.read_text())
    assert set(figures["random"]) >= {"dealer", "eldest", "middle", "all", "ms_per_decision"}
    assert figures["random"]["all"]["mean"] < 0 and "speed_ratio" in figures and "game" in figures
    assert "| random |" in capsys.readouterr().out
