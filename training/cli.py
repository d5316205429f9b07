"""The training command line: ``sergeant-major train`` (also ``python -m training.train``).

    sergeant-major train --config configs/quickstart.yaml
    sergeant-major train --config configs/quickstart.yaml --set ppo.learning_rate=1e-4 --set train.n_envs=4
    sergeant-major train --resume runs/quickstart            # continue exactly where it stopped
    sergeant-major train --resume runs/quickstart --set train.total_timesteps=400000   # train longer
    sergeant-major train --evaluate runs/quickstart/final_model.zip --eval-config configs/eval.yaml
    sergeant-major train --backend rllib --config configs/rllib_quickstart.yaml [--address HEAD:6379]
    sergeant-major train --backend vector --config configs/selfplay.yaml    # self-play PPO, batched engine

A new run goes to <output_dir>/<name>; if that folder is already used,
to the first free <name>-2, <name>-3, ... (the folder used is
printed), so the same command can be run again. --run-dir DIR picks the
folder itself and refuses one that already holds a run.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

from agents.ppo_agent import PPOAgent
from sm_env.atomic import atomic_path
from training.evaluation.evaluate import evaluate_policy_file, format_table
from training.sb3.config import ConfigError, config_from_dict, load_config, load_eval_config
from training.sb3.trainer import Trainer, train

PROG = "sergeant-major train"


def fresh_run_dir(output_dir: str, name: str) -> tuple[str, str]:
    """(run folder, run name) for a new run: ``output_dir/name`` unless it exists and is not
    empty, else the first free ``output_dir/name-N`` (N = 2, 3, ...)."""
    candidate, n = name, 1
    while True:
        path = os.path.join(output_dir, candidate)
        if not os.path.exists(path) or (os.path.isdir(path) and not os.listdir(path)):
            return path, candidate
        n += 1
        candidate = f"{name}-{n}"


def time_summary(trainer: Trainer, elapsed: float) -> str:
    """What this call trained and how long it took; after a resume, the whole run too."""
    steps = int(trainer.model.num_timesteps)
    call_steps = steps - trainer.start_timesteps
    call_wall = trainer.wall - trainer.start_wall
    rate = call_steps / call_wall if call_wall > 0 else 0.0
    text = (
        f"this call trained {call_steps} learner decisions in {call_wall:.0f} s ({rate:.0f} decisions/s) "
        f"and took {elapsed:.0f} s in all (warm start, evaluations and saving included)"
    )
    if trainer.start_timesteps:
        text += f"; the whole run: {steps} learner decisions in {trainer.wall:.0f} s of training"
    return text


def outputs_summary(run_dir: str, final_eval: bool) -> str:
    """Every output of a run and how to look at it."""
    policy = f"ppo:{run_dir}/final_model.zip"
    rows = [
        ("final_model.zip", f"the trained policy; play against it: sergeant-major play --opponents {policy} {policy}"),
        ("final_policy.pt", "the same policy as plain tensors (agents.make_agent('ppo:PATH') loads either)"),
    ]
    if final_eval:
        rows.append(("final_eval.json", f"the final evaluation: python -m json.tool {run_dir}/final_eval.json"))
    rows += [
        ("eval.jsonl", "every evaluation, one JSON object a line (pandas.read_json(path, lines=True))"),
        ("tb/", f"TensorBoard logs: tensorboard --logdir {run_dir}/tb"),
        ("checkpoints/", f"train longer: {PROG} --resume {run_dir} --set train.total_timesteps=N"),
        ("config.yaml", "the resolved config of the run"),
    ]
    return f"outputs in {run_dir}:\n" + "\n".join(f"  {name:<16} {what}" for name, what in rows)


def _backend(argv: list[str]) -> str | None:
    """The value of ``--backend`` in ``argv`` (None when not given)."""
    for i, arg in enumerate(argv):
        if arg == "--backend" and i + 1 < len(argv):
            return argv[i + 1]
        if arg.startswith("--backend="):
            return arg.split("=", 1)[1]
    return None


def main(argv: list[str] | None = None) -> int:
    """Run the training command line; returns the exit status (2: bad input, 130: interrupted).

    ``--backend rllib`` hands the whole command line to :func:`training.rllib.trainer.main`,
    ``--backend vector`` to :func:`training.vector.ppo.main`.
    """
    argv = list(sys.argv[1:] if argv is None else argv)
    if _backend(argv) == "rllib":
        from training.rllib.trainer import main as rllib_main

        return rllib_main(argv)
    if _backend(argv) == "vector":
        from training.vector.ppo import main as vector_main

        return vector_main(argv)
    parser = argparse.ArgumentParser(
        prog=PROG,
        description="Train a policy with MaskablePPO, from a config file to an evaluated result.",
        epilog="examples:\n" + __doc__.split("\n\n")[1] + "\n\n" + __doc__.split("\n\n")[2],
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "--backend",
        choices=("sb3", "rllib", "vector"),
        default="sb3",
        help="sb3: MaskablePPO on this machine (default); rllib: RLlib PPO on Ray (configs/rllib_*.yaml, --address); "
        "vector: self-play masked PPO on the batched engine (configs/selfplay.yaml)",
    )
    parser.add_argument("--config", help="YAML config file (see configs/ and `sergeant-major config`)")
    parser.add_argument("--resume", metavar="RUN_DIR", help="continue the run in RUN_DIR from its latest checkpoint")
    parser.add_argument(
        "--set",
        dest="sets",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="override one config field, e.g. --set ppo.learning_rate=1e-4 (repeatable)",
    )
    parser.add_argument("--run-dir", help="run folder (default: <output_dir>/<name>, or <name>-2, ... if used)")
    parser.add_argument("--quiet", action="store_true", help="no progress output")
    parser.add_argument(
        "--evaluate", metavar="POLICY", help="only evaluate a policy file (no training), with --eval-config settings"
    )
    parser.add_argument(
        "--eval-config",
        metavar="FILE",
        default=None,
        help="evaluation settings for --evaluate (default: configs/eval.yaml if it exists)",
    )
    parser.add_argument("overrides", nargs="*", metavar="KEY=VALUE", help="more overrides, like --set")
    args = parser.parse_args(argv)
    overrides = args.sets + args.overrides
    if args.evaluate or (args.eval_config and not args.config and not args.resume):
        return evaluate_main(args.evaluate, args.eval_config, overrides)
    if args.resume and args.config:
        parser.error("give either --config (a new run) or --resume RUN_DIR (continue a run), not both")
    if not args.resume and not args.config:
        parser.error("--config FILE is needed to start a run (or --resume RUN_DIR to continue one)")
    run_dir = args.resume or args.run_dir or ""
    try:
        if args.resume:
            cfg = load_config(os.path.join(run_dir, "config.yaml"), overrides)
            if not os.path.isfile(os.path.join(run_dir, "checkpoints", "latest.zip")):
                raise ConfigError(f"cannot resume {run_dir}: no checkpoints/latest.zip in it")
        else:
            cfg = load_config(args.config, overrides)
            if args.run_dir:
                if os.path.exists(os.path.join(run_dir, "checkpoints", "latest.zip")):
                    raise ConfigError(
                        f"{run_dir} already holds a run: continue it with {PROG} --resume {run_dir}, "
                        f"or leave out --run-dir to start a new run in a fresh folder"
                    )
            else:
                run_dir, name = fresh_run_dir(cfg.output_dir, cfg.name)
                cfg.name = name
        print(f"{'resuming' if args.resume else 'new run'}: {run_dir}", flush=True)
        started = time.perf_counter()
        trainer = train(cfg, run_dir, resume=bool(args.resume), quiet=args.quiet)
    except ConfigError as err:
        print(f"{PROG}: error: {err}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        latest = os.path.join(run_dir, "checkpoints", "latest.zip")
        where = f"the last checkpoint is {latest}" if os.path.isfile(latest) else "no checkpoint was written yet"
        print(f"\ninterrupted: {where}; continue with: {PROG} --resume {run_dir}", file=sys.stderr)
        return 130
    try:
        trainer.save_final()
        final_eval = cfg.eval.final_deals > 0
        if final_eval:
            if not args.quiet:
                print(f"final evaluation: {cfg.eval.final_deals} deals against {', '.join(cfg.eval.opponents)}")
            results = trainer.evaluate(cfg.eval.final_deals, final=True)
            summary = {"num_timesteps": int(trainer.model.num_timesteps), "deals": cfg.eval.final_deals}
            with atomic_path(os.path.join(run_dir, "final_eval.json")) as tmp, open(tmp, "w", encoding="utf-8") as f:
                json.dump({**summary, "results": results}, f, indent=1)
            print(
                f"\nduplicate evaluation, {cfg.eval.final_deals} deals x 3 roles, mode {cfg.eval.mode}: "
                "balance = the policy's mean balance per hand against two copies of the opponent; "
                "opp. bal = the opponent's in the same games; advantage = the policy's balance minus the "
                "opponent's own balance in the same seat on the same deal (95% bootstrap CIs over deals)"
            )
            print(format_table(results))
        print()
        print(time_summary(trainer, time.perf_counter() - started))
        print(f"final model: {run_dir}/final_model.zip")
        print(outputs_summary(run_dir, final_eval))
    finally:
        trainer.close()
    return 0


def evaluate_main(policy: str | None, eval_config: str | None, overrides: list[str]) -> int:
    """``--evaluate POLICY``: the final-evaluation table of a trained policy."""
    try:
        if eval_config is None and os.path.isfile(os.path.join("configs", "eval.yaml")):
            eval_config = os.path.join("configs", "eval.yaml")
        spec = load_eval_config(eval_config, overrides)
        path = policy or spec.policy
        if not path:
            raise ConfigError("no policy to evaluate: give --evaluate PATH or 'policy:' in the eval config")
        if not os.path.isfile(path):
            raise ConfigError(f"policy file not found: {path}")
        cfg = config_from_dict({"env": {"rules": spec.rules}, "eval": {"opponents": ["random"], "final_deals": 1}})
        cfg.eval = spec.eval
        PPOAgent(path)  # validates the file before any game is played
    except (ConfigError, ValueError) as err:
        print(f"{PROG}: error: {err}", file=sys.stderr)
        return 2
    started = time.perf_counter()
    results = evaluate_policy_file(path, cfg, spec.eval.final_deals)
    print(
        f"{path}: duplicate evaluation, {spec.eval.final_deals} deals x 3 roles, mode {spec.eval.mode} "
        f"({time.perf_counter() - started:.0f} s)"
    )
    print(format_table(results))
    return 0
