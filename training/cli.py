"""The training command line: ``sergeant-major train`` (also ``python -m training.train``).

    sergeant-major train --config configs/quickstart.yaml
    sergeant-major train --config configs/quickstart.yaml --set ppo.learning_rate=1e-4 --set train.n_envs=4
    sergeant-major train --resume runs/quickstart            # continue exactly where it stopped
    sergeant-major train --resume runs/quickstart --set train.total_timesteps=400000   # train longer
    sergeant-major train --evaluate runs/quickstart/final_model.zip --eval-config configs/eval.yaml
    sergeant-major train --evaluate rllib:runs/rllib_quickstart/policy   # any agent spec, too
    sergeant-major train --config configs/rllib_quickstart.yaml [--address HEAD:6379]   # RLlib PPO on Ray
    sergeant-major train --config configs/selfplay.yaml    # self-play PPO, batched engine
    sergeant-major train --config configs/dmc.yaml         # deep Monte-Carlo, batched engine

The backend is the config file's ``kind:`` (--backend may say it again;
a file without one: --backend, else sb3); --resume reads it from the run's
config.yaml the same way. A new run goes to <output_dir>/<name>; if
that folder is already used, to the first free <name>-2, <name>-3, ... (the folder used is
printed), so the same command can be run again. --run-dir DIR picks the
folder itself and refuses one that already holds a run. Ctrl-C stops at the next safe point
and writes a checkpoint (twice: at once). Every backend behaves the same
(training/common/runs.py).
"""

from __future__ import annotations

import argparse
import os
import sys
import time

from agents import AGENT_KINDS, KNOWN_AGENTS, make_opponent, parse_spec
from training.common.ray_cluster import CONNECT_TIMEOUT, add_ray_arguments
from training.common.run_config import CONFIG_KINDS
from training.common.runs import Backend, add_run_arguments, run_command
from training.common.tables import format_table
from training.common.yaml_config import ConfigError, read_yaml
from training.evaluation.config import load_eval_config
from training.evaluation.evaluate import evaluate_against

PROG = "sergeant-major train"
BACKENDS = ("sb3", "rllib", "vector", "dmc")
RESUMED_BY = {  # the run folders of the other run commands, by kind
    "distill": "sergeant-major distill",
    "exploit": "sergeant-major exploit",
    "playouts": "sergeant-major improve",
}


def _option(argv: list[str], name: str) -> str | None:
    """The value of the option ``name`` (``--config``) in ``argv``, given as ``name VALUE`` or ``name=VALUE``; None
    when it is not given."""
    for i, arg in enumerate(argv):
        if arg == name and i + 1 < len(argv):
            return argv[i + 1]
        if arg.startswith(name + "="):
            return arg.partition("=")[2]
    return None


def _file_kind(path: str | None) -> str | None:
    """The ``kind:`` of the config file ``path`` (a ``--config`` file, or a run's ``config.yaml``, which every run
    saves with its kind); None: no path, no such file, no kind or an unknown one, or a file that cannot be read
    (the trainer's own reading of the file then says why)."""
    if path is None:
        return None
    try:
        kind = read_yaml(path).get("kind")
    except ConfigError:
        return None
    return kind if isinstance(kind, str) and kind in CONFIG_KINDS else None


def backend(name: str, prog: str = PROG) -> Backend:
    """The run layer's view of a backend, its messages naming ``prog`` (``sergeant-major train --backend X``)."""
    if name == "rllib":
        from training.rllib.trainer import backend as rllib_backend

        return rllib_backend(prog)
    if name == "vector":
        from training.vector.ppo import backend as vector_backend

        return vector_backend(prog)
    if name == "dmc":
        from training.vector.dmc import backend as dmc_backend

        return dmc_backend(prog)
    from training.sb3.trainer import backend as sb3_backend

    return sb3_backend(prog)


def build_parser(prog: str = PROG) -> argparse.ArgumentParser:
    """The parser of ``sergeant-major train`` (every backend)."""
    parser = argparse.ArgumentParser(
        prog=prog,
        description="Train a policy with MaskablePPO, from a config file to an evaluated result.",
        epilog="examples:\n" + __doc__.split("\n\n")[1] + "\n\n" + __doc__.split("\n\n")[2],
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "--backend",
        choices=BACKENDS,
        default=None,
        help="sb3: MaskablePPO on this machine (default); rllib: RLlib PPO on Ray (configs/rllib_*.yaml, --address); "
        "vector: self-play masked PPO on the batched engine (configs/selfplay.yaml); dmc: deep Monte-Carlo self-play "
        "on the batched engine (configs/dmc.yaml); --resume finds it in the run",
    )
    add_run_arguments(parser, "YAML config file (see configs/ and `sergeant-major config`)")
    parser.add_argument("--address", default=None, help="rllib: Ray cluster address (default: a local Ray instance)")
    add_ray_arguments(parser, "the acting processes of --backend dmc or vector (train.actors)", actors=True)
    parser.add_argument(
        "--evaluate",
        metavar="POLICY",
        help="only evaluate a policy (no training), with --eval-config settings: a policy file (final_model.zip, "
        "final_policy.pt) or any agent spec (rllib:RUN/policy, trained, search, ...)",
    )
    parser.add_argument(
        "--eval-config",
        metavar="FILE",
        default=None,
        help="evaluation settings for --evaluate (default: configs/eval.yaml if it exists)",
    )
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run the training command line; returns the exit status (2: bad input, 130: interrupted)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser()
    given, kind, resume = _option(argv, "--backend"), _file_kind(_option(argv, "--config")), _option(argv, "--resume")
    found = _file_kind(os.path.join(resume, "config.yaml")) if resume is not None else None
    if kind is not None and kind not in BACKENDS:
        parser.error(f"--config: this is a {kind!r} config: run it with {CONFIG_KINDS[kind]}")
    if found is not None and found not in BACKENDS:
        again = f": continue it with {RESUMED_BY[found]} --resume RUN_DIR" if found in RESUMED_BY else ""
        parser.error(f"--resume: that is a {found!r} run, not a training run{again}")
    if given and kind and given != kind:
        parser.error(f"--config: this is a {kind!r} config, not --backend {given}: leave out --backend")
    name = given or found or kind or "sb3"
    if name not in BACKENDS:
        parser.parse_args(argv)  # argparse's own error for a bad --backend
    if given and found and given != found:
        parser.error(f"--resume: that run was trained by --backend {found}, not {given}: leave out --backend")
    args, _ = parser.parse_known_args(argv)
    if args.evaluate or (args.eval_config and not args.config and not args.resume):
        return evaluate_main(args.evaluate, args.eval_config, args.sets + args.overrides)
    prog = PROG if name == "sb3" else f"{PROG} --backend {name}"
    if args.ray is not None and name not in ("dmc", "vector"):
        parser.error(
            "--ray is for --backend dmc or vector (their acting processes as Ray actors); rllib takes --address"
        )
    ray_settings = args.ray_code != "auto" or args.ray_connect_timeout != CONNECT_TIMEOUT
    if name != "rllib" and (args.address or (ray_settings and args.ray is None)):
        parser.error(
            "--address is for --backend rllib; --ray-code and --ray-connect-timeout for rllib, or dmc and vector "
            "with --ray"
        )
    return run_command(backend(name, prog), build_parser(prog), argv)


def evaluated_spec(policy: str) -> str:
    """The agent spec ``--evaluate POLICY`` plays: a policy file (what ``ppo:`` loads: the ``.pt`` of the vector
    and DMC trainers, SB3's ``.zip``) becomes ``ppo:FILE``; anything else must be an agent spec (``rllib:RUN/policy``,
    ``ppo:FILE``, ``trained``, ``search``, ``pimc:...``)."""
    if os.path.isfile(policy):
        return f"ppo:{policy}"
    if parse_spec(policy)[0] not in AGENT_KINDS:
        raise ConfigError(
            f"--evaluate {policy!r}: no such policy file, and not an agent spec; give a policy file (final_model.zip, "
            f"final_policy.pt) or a spec ({', '.join(k for k in KNOWN_AGENTS if k != 'human')})"
        )
    return policy


def evaluate_main(policy: str | None, eval_config: str | None, overrides: list[str]) -> int:
    """``--evaluate POLICY``: the final-evaluation table of a trained policy."""
    try:
        if eval_config is None and os.path.isfile(os.path.join("configs", "eval.yaml")):
            eval_config = os.path.join("configs", "eval.yaml")
        spec = load_eval_config(eval_config, overrides)
        path = policy or spec.policy
        if not path:
            raise ConfigError("no policy to evaluate: give --evaluate PATH or 'policy:' in the eval config")
        agent = evaluated_spec(path)
        make_opponent(agent)  # validates the file or spec before any game is played
    except (ConfigError, ValueError) as err:
        print(f"{PROG}: error: {err}", file=sys.stderr)
        return 2
    started = time.perf_counter()
    results = evaluate_against(agent, spec.eval, spec.env.rules, spec.eval.final_deals)
    print(
        f"{path}: duplicate evaluation, {spec.eval.final_deals} deals x 3 roles, mode {spec.eval.mode} "
        f"({time.perf_counter() - started:.0f} s)"
    )
    print(format_table(results))
    return 0
