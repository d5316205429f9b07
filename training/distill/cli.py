"""``sergeant-major distill``: the one label -> fit -> policy pipeline, a run from a config or a step by hand.

Its parts: the labellers (a search, :mod:`training.distill.data`: pimc's values of each legal move; real-deal
play-outs, :mod:`training.distill.label_playouts`: each legal move played out by the policy) and the fits
(imitation of the search, :mod:`training.distill.fit`; the Q-network, ``fit.method: q`` and the play-out runs,
:mod:`training.distill.fit_q`). A run (the run layer of every trainer, training/common/runs.py: run folder,
``config.yaml``, ``summary.json``, ``--resume``, ``--set``, Ctrl-C) is the part its config's ``kind:`` names
(``--resume RUN_DIR``: the run's ``config.yaml``): ``distill`` (search labels, :mod:`training.distill.fit`) or
``playouts`` (play-out labels, :mod:`training.distill.run_playouts`)::

    sergeant-major distill --config configs/distill_v2.yaml          # search labels, an imitation fit
    sergeant-major distill --config configs/real_deal_v8.yaml        # play-out labels, the Q-network, combined
    sergeant-major distill --resume runs/real_deal_v8                # go on where a killed run stopped
    sergeant-major distill --config configs/real_deal_v8.yaml --ray HEAD:6379   # the labelling on a Ray cluster

``sergeant-major improve`` is this command's play-out part alone (runs and steps). The play-out steps by hand
(``sergeant-major distill STEP --help``; also ``python -m training.distill STEP``)::

    sergeant-major distill label --seed 21 --hands 18000 --out runs/playouts/s21.npz
    sergeant-major distill fit --data runs/playouts/s21.npz,runs/playouts/s22.npz --out q.pt
    sergeant-major distill combine --prior trained --teacher q.pt --weight 0.5 --out policy.pt
    sergeant-major distill merge --data runs/playouts/s21.npz --teacher q.pt --out merged.pt
    sergeant-major distill distil --teacher policy.pt --init agents/policies/standard_v4.pt --out small.pt
    sergeant-major distill belief --policy trained --out belief.pt      # pimc:rollout=policy,belief=belief.pt
    sergeant-major eval --agents 'mix:base=trained;discard=ppo:q.pt' trained heuristic --deals 3000 \\
        --seed 7 --start-balances=-1,-1,2

``label`` plays hands with a policy and labels their decisions with real-deal play-outs
(:mod:`training.distill.label_playouts`); ``fit`` fits the Q-network, ``combine`` adds it to a prior policy,
``merge`` fine-tunes a policy to take its exchange, trump and discards, ``distil`` copies a policy into a smaller
network (:mod:`training.distill.fit_q`); ``belief`` learns where the hidden cards lie from a policy's self-play,
for pimc's deals (:mod:`training.distill.belief`). A bad input is one line ``PROG STEP: error: ...``, exit
status 2.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable

from sm_env.files.paths import check_output_path
from training.common.device import DEVICE_CHOICES, device_problem
from training.common.ray_cluster import add_ray_arguments
from training.common.runs import add_run_arguments, run_command
from training.common.yaml_config import ConfigError, read_yaml
from training.distill.config_playouts import FIT_BATCH, MAX_DECISIONS, MAX_EPOCHS, MAX_HANDS, TYPES, role_numbers

PROG = "sergeant-major distill"  # the name in messages (also python -m training.distill; sm_cli gives its own)
PARTS = ("distill", "playouts")
"""The parts a run can be, by its config's ``kind:``: search labels and their fit, or play-out labels."""
STEPS = ("label", "fit", "merge", "combine", "distil", "belief")


def run_parser(prog: str = PROG) -> argparse.ArgumentParser:
    """The command line of a play-out run (``--config``/``--resume``, the run layer's)."""
    parser = argparse.ArgumentParser(
        prog=prog,
        description="Policy improvement by play-outs in the real deal: label decisions with every legal move "
        "played out, fit a Q-network on them, combine it with the policy (configs/real_deal_*.yaml).",
        epilog=f"A new run goes to <output_dir>/<name> (or <name>-2, ... if that is used); --resume RUN_DIR goes on "
        f"where it stopped, keeping the label files made. The steps one at a time: {prog} "
        f"{{{','.join(STEPS)}}} --help.",
    )
    add_run_arguments(parser, "YAML config (configs/real_deal_*.yaml; sergeant-major config --kind playouts: its keys)")
    add_ray_arguments(parser, "the labelling (one task per label file, in place of workers; written here)")
    return parser


def steps_parser(prog: str = PROG) -> argparse.ArgumentParser:
    """The command line of the steps run by hand (``label``, ``fit``, ``merge``, ``combine``, ``distil``)."""
    parser = argparse.ArgumentParser(prog=prog, description="The steps of the play-out pipeline, one at a time.")
    sub = parser.add_subparsers(dest="command", required=True)
    lab = sub.add_parser("label", help="play hands and label their decisions with real-deal play-outs")
    lab.add_argument("--policy", default="trained", help="agent spec of the policy (trained or ppo:PATH)")
    lab.add_argument("--seed", type=int, default=0)
    lab.add_argument("--hands", type=int, default=1000, help="hands to play (all slots together)")
    lab.add_argument("--out", required=True, help="data file (.npz)")
    lab.add_argument("--types", default="exchange,trump,discard", help=f"decision types labelled, of {','.join(TYPES)}")
    lab.add_argument("--rules", default="standard", help="the rule preset played (56 actions, three or four players)")
    lab.add_argument("--roles", default=None, help="label only these roles' decisions, e.g. middle (default: all)")
    fitter = sub.add_parser("fit", help="fit the Q-network on labelled files")
    fitter.add_argument("--data", required=True, help="comma-separated data files")
    fitter.add_argument("--init", default="trained", help="policy whose hidden layers start the network")
    fitter.add_argument("--out", required=True, help="policy file to write")
    fitter.add_argument("--epochs", type=int, default=4)
    fitter.add_argument("--learning-rate", type=float, default=3e-4)
    fitter.add_argument("--seed", type=int, default=0)
    fitter.add_argument(
        "--game-weight", type=float, default=0.0, help="tricks per unit of result reward where a hand ends the game"
    )
    merger = sub.add_parser("merge", help="one policy: the Q-network's exchange, trump and discards, the play kept")
    merger.add_argument("--data", required=True, help="comma-separated data files (the fit's)")
    merger.add_argument("--init", default="trained", help="the policy to fine-tune")
    merger.add_argument("--teacher", required=True, help="the Q-network written by fit")
    merger.add_argument("--types", default="exchange,trump,discard", help="decision types taken from the teacher")
    merger.add_argument("--margin", type=float, default=0.0, help="tricks the Q-network's move must gain")
    merger.add_argument("--out", required=True, help="policy file to write")
    merger.add_argument("--epochs", type=int, default=2)
    merger.add_argument("--learning-rate", type=float, default=1e-5)
    merger.add_argument("--seed", type=int, default=0)
    distiller = sub.add_parser("distil", help="a copy of a policy in a smaller network (keeps rounds from growing)")
    distiller.add_argument("--teacher", required=True, help="the policy copied")
    distiller.add_argument("--init", required=True, help="the policy whose network (shape and weights) starts the copy")
    distiller.add_argument("--decisions", type=int, default=1_000_000, help="decisions of the teacher's self-play")
    distiller.add_argument("--out", required=True, help="policy file to write")
    distiller.add_argument("--epochs", type=int, default=3)
    distiller.add_argument("--learning-rate", type=float, default=1e-4)
    distiller.add_argument("--seed", type=int, default=0)
    distiller.add_argument("--rules", default="standard", help="the rule preset of the self-play")
    believer = sub.add_parser("belief", help="a belief network (where the hidden cards lie) from a policy's self-play")
    believer.add_argument("--policy", default="trained", help="the self-play policy (trained or ppo:PATH)")
    believer.add_argument("--decisions", type=int, default=7_200_000, help="card-play decisions learnt (each once)")
    believer.add_argument("--out", required=True, help="belief file to write (OUT.ckpt: its checkpoint)")
    believer.add_argument("--learning-rate", type=float, default=1e-3)
    believer.add_argument("--seed", type=int, default=0)
    believer.add_argument("--rules", default="standard", help="the rule preset of the self-play")
    for step in (fitter, merger, distiller, believer):
        step.add_argument(
            "--device",
            default="auto",
            help=f"where the network trains: {', '.join(DEVICE_CHOICES)} (default auto: CUDA where present, else the "
            "CPU; the self-play and the data stay on the CPU)",
        )
    combiner = sub.add_parser("combine", help="one policy: a prior policy's logits plus the Q-network's values")
    combiner.add_argument("--prior", default="trained", help="the policy whose logits are the prior")
    combiner.add_argument("--teacher", required=True, help="the Q-network written by fit")
    combiner.add_argument("--weight", type=float, default=1.0, help="tricks per unit of the prior's logits")
    combiner.add_argument("--out", required=True, help="policy file to write")
    return parser


def distill_parser(prog: str = PROG) -> argparse.ArgumentParser:
    """The command line of a search-distillation run (``--config``/``--resume``, or ``--fit-data`` to only fit)."""
    parser = argparse.ArgumentParser(
        prog=prog,
        description="Search distillation: label positions with a search, then fit a policy to the labels "
        "(configs/distill*.yaml, configs/exit_*.yaml).",
        epilog="A new run goes to <output_dir>/<name> (or <name>-2, ... if that is used); --resume RUN_DIR "
        "continues one, labelling and fitting only what is missing (training/common/runs.py). A config of kind "
        f"playouts is a play-out run; the play-out steps one at a time: {prog} {{{','.join(STEPS)}}} --help.",
    )
    add_run_arguments(parser, "YAML config (configs/distill*.yaml, configs/real_deal_*.yaml; its kind: the part)")
    parser.add_argument("--fit-data", default=None, help="only fit: comma-separated labelled data folders")
    parser.add_argument("--out", default=None, help="with --fit-data: the policy file to write")
    add_ray_arguments(parser, "the labelling (one task per shard; the shards are written here)")
    return parser


def _named_path(argv: list[str], option: str) -> str | None:
    """The value of ``option`` (``--config`` or ``--resume``) in ``argv``, or None."""
    for i, arg in enumerate(argv):
        if arg == option and i + 1 < len(argv):
            return argv[i + 1]
        if arg.startswith(f"{option}="):
            return arg.split("=", 1)[1]
    return None


def run_part(argv: list[str], default: str = "distill") -> str:
    """The part a run command line runs (:data:`PARTS`): the ``kind:`` of ``--config FILE``, or of ``--resume
    RUN_DIR``'s ``config.yaml`` (a run folder without one: ``playouts`` where it holds play-out label files);
    ``default`` where none says (a file that cannot be read: the part's own reading then says why)."""
    config, resume = _named_path(argv, "--config"), _named_path(argv, "--resume")
    path = config if config is not None else None if resume is None else os.path.join(resume, "config.yaml")
    if path is None:
        return default
    try:
        kind = read_yaml(path).get("kind")
    except (ConfigError, AttributeError):
        kind = None
    if kind in PARTS:
        return kind
    if kind is None and resume is not None and config is None:
        labels = (os.path.join(resume, "labels"), os.path.join(resume, "data", "labels"))
        if any(os.path.isdir(folder) for folder in labels):
            return "playouts"
    return default


def main(argv: list[str] | None = None, prog: str = PROG, part: str | None = None) -> int:
    """``sergeant-major distill``: a run (``--config``/``--resume``: the part its kind names, :func:`run_part`;
    ``--fit-data``: only a fit) or a play-out step (``label``, ``fit``, ...); the exit status (2: bad input, 130:
    interrupted). ``sergeant-major improve`` is this with ``part="playouts"``: the play-out part only (a config of
    another kind is refused in one line naming the command that runs it)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] in STEPS:
        return steps(argv, prog)
    if (part or run_part(argv)) == "playouts":
        from training.distill.run_playouts import backend as playouts_backend

        return run_command(playouts_backend(prog), run_parser(prog), argv)
    return distill_run(argv, prog)


def distill_run(argv: list[str], prog: str = PROG) -> int:
    """A search-distillation run, or with ``--fit-data`` only its fit (:mod:`training.distill.fit`)."""
    from training.distill.config import load_distill_config
    from training.distill.fit import backend, fit_folders

    parser = distill_parser(prog)
    args = parser.parse_args(argv)
    if not args.fit_data:
        if args.out:
            parser.error("--out goes with --fit-data")
        return run_command(backend(prog), parser, argv)
    try:
        if not args.out:
            raise ConfigError("--fit-data needs --out PATH (the policy file to write)")
        if args.resume:
            raise ConfigError("--fit-data fits once (give --config, not --resume)")
        check_output_path(args.out, "--out")
        config = load_distill_config(args.config, args.sets + args.overrides)
        fit_folders(config, [f for f in args.fit_data.split(",") if f], args.out)
    except ValueError as err:
        print(f"{prog}: error: {err}", file=sys.stderr)
        return 2
    return 0


def steps(argv: list[str], prog: str = PROG) -> int:
    """Run one step of the pipeline by hand (module docstring); the exit status."""
    parser = steps_parser(prog)
    args = parser.parse_args(argv)
    sub = f"{prog} {args.command}"

    def refuse(message: str) -> int:
        print(f"{sub}: error: {message}", file=sys.stderr)
        return 2

    if not 1 <= getattr(args, "epochs", 1) <= MAX_EPOCHS:
        return refuse(f"--epochs must be in 1..{MAX_EPOCHS}, got {args.epochs}")
    problem = device_problem(getattr(args, "device", "auto"))
    if problem is not None:
        return refuse(f"--device: {problem}, got {args.device!r:.40}")
    try:
        check_output_path(args.out, "--out")  # every step writes a file: checked before the work
        return _step(args, refuse)
    except ValueError as err:  # a bad rule set, policy or data file (RulesError, FixedAgentError, PlayoutsError, ...)
        return refuse(str(err))


def _step(args: argparse.Namespace, refuse: Callable[[str], int]) -> int:
    from training.distill.config_playouts import labelled_rules
    from training.distill.fit_q import combine, distil, fit, merge
    from training.distill.label_playouts import label

    if args.command == "belief":
        from training.distill.belief import fit_belief

        fit_belief(args.policy, args.out, args.decisions, args.learning_rate, args.seed, args.rules, device=args.device)
    elif args.command == "label":
        kinds = args.types.split(",")
        if not 1 <= args.hands <= MAX_HANDS or not set(kinds) <= set(TYPES):
            return refuse(f"--hands must be in 1..{MAX_HANDS} (got {args.hands}), --types some of {','.join(TYPES)}")
        ruleset = labelled_rules(args.rules)
        roles = None if args.roles is None else tuple(args.roles.split(","))
        try:
            role_numbers(ruleset, roles)
        except ValueError as err:
            return refuse(f"--{err}")
        label(args.policy, args.seed, args.hands, args.out, tuple(TYPES[kind] for kind in kinds), ruleset, roles)
    elif args.command == "combine":
        if not 0 <= args.weight <= 1000:
            return refuse(f"--weight must be in [0, 1000], got {args.weight}")
        combine(args.prior, args.teacher, args.weight, args.out)
    elif args.command == "distil":
        if not FIT_BATCH * 10 <= args.decisions <= MAX_DECISIONS or not args.learning_rate > 0:
            return refuse(
                f"--decisions must be in {FIT_BATCH * 10}..{MAX_DECISIONS} (got {args.decisions}), --learning-rate > 0"
            )
        distil(
            args.teacher,
            args.init,
            args.decisions,
            args.out,
            args.epochs,
            args.learning_rate,
            args.seed,
            args.rules,
            device=args.device,
        )
    elif args.command == "merge":
        kinds = args.types.split(",")
        if not args.margin >= 0 or not args.learning_rate > 0 or not set(kinds) <= {"exchange", "trump", "discard"}:
            return refuse("--margin must be >= 0, --learning-rate > 0, --types some of exchange,trump,discard")
        merge(
            args.data.split(","),
            args.init,
            args.teacher,
            kinds,
            args.margin,
            args.out,
            args.epochs,
            args.learning_rate,
            args.seed,
            device=args.device,
        )
    else:
        if not args.learning_rate > 0 or not 0 <= args.game_weight <= 100:
            return refuse(
                f"--learning-rate must be > 0 (got {args.learning_rate}), --game-weight in [0, 100] "
                f"(got {args.game_weight})"
            )
        fit(
            args.data.split(","),
            args.init,
            args.out,
            args.epochs,
            args.learning_rate,
            args.seed,
            args.game_weight,
            device=args.device,
        )
    return 0
