"""The run layer every trainer's command shares: run folders, ``--config/--resume/--set/--run-dir``, Ctrl-C, the end.

``sergeant-major train`` (every ``--backend``), ``sergeant-major distill`` and ``sergeant-major exploit`` are
:func:`run_command` over a :class:`Backend` (the trainer's config loader, checkpoint finder and length) and behave
the same:

- ``--config FILE`` starts a new run in ``<output_dir>/<name>`` or, if that folder is used, in the first free
  ``<name>-2``, ``<name>-3``, ... (:func:`fresh_run_dir`; the folder used is printed and the saved config
  names it); ``--run-dir DIR`` picks the folder and refuses one that holds a run;
- ``--resume RUN_DIR`` continues a run from its ``config.yaml`` and its latest checkpoint; ``--set KEY=VALUE``
  (or a trailing ``KEY=VALUE``) overrides a config key in both cases. A run whose ``summary.json`` (written
  last) says it reached the config's length (or, for a backend with a time budget, what its ``reached`` says) is
  complete: one line says so, exit status 0; a backend whose defaults make a run (``needs_config=False``:
  exploit) starts one without ``--config`` too;
- Ctrl-C (SIGINT) asks the trainer to stop at its next safe point (the end of the current segment, rollout,
  iteration or shard) and to write a checkpoint there; the command names it and the command that continues,
  exit status 130. A second Ctrl-C stops at once, keeping the last checkpoint written. SIGTERM does the same
  (exit status 143). Output whose reader is gone (``| tee log``: the same Ctrl-C ends ``tee``) is dropped, so
  the checkpoint and the exit status are the same as in a terminal;
- progress (bars, a line per rollout, periodic evaluations) goes to stderr; results go to stdout: the run
  folder, the final evaluation table, the time taken, every output and how to use it;
- a user error is one line ``PROG: error: ...`` on stderr, exit status 2, and leaves the run as it was.

Run folder: ``config.yaml`` (the resolved config, what ``--resume`` reads), ``checkpoints/``, the logs, the
outputs, ``final_eval.json`` (the final evaluation, when there is one) and ``summary.json``; the layout of the
trainers the project owns is training/common/folders.py's.
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass
from typing import Any, Protocol

from sm_env.files import json_files
from sm_env.files.atomic import atomic_path
from sm_env.files.json_files import JsonError, dump_json, nan_to_null, parse_json, read_json
from sm_env.files.paths import OutputPathError, check_output_path
from training.common.folders import fresh_run_dir
from training.common.progress import write_line
from training.common.tables import format_table
from training.common.yaml_config import ConfigError

SUMMARY = "summary.json"
FINAL_EVAL = "final_eval.json"
EVAL_HEADER = (
    "duplicate evaluation, {deals} deals x 3 roles, mode {mode}: balance = the policy's mean balance per hand "
    "against two copies of the opponent; opp. bal = the opponent's in the same games; advantage = the policy's "
    "balance minus the opponent's own balance in the same seat on the same deal (95% bootstrap CIs over deals)"
)


def check_folder_path(folder: str, what: str) -> None:
    """A ConfigError naming ``what`` (the option or key that gave ``folder``) if ``folder`` cannot be a run
    folder (:func:`sm_env.files.paths.check_output_path`: a file, under a file, in /proc, not writable)."""
    try:
        check_output_path(folder, what, folder=True)
    except OutputPathError as err:
        raise ConfigError(str(err)) from None


def progress(message: str) -> None:
    """A progress line (stderr, flushed): what a run is doing, as opposed to its results (stdout); above a
    progress bar, if one is on screen."""
    write_line(message)


@contextmanager
def removed_on_failure(run_dir: str, resume: bool) -> Iterator[None]:
    """A new run's folder that did not exist before is removed if the block fails (a failed start leaves
    nothing behind); a resumed run's folder is never touched."""
    made = not resume and not os.path.exists(run_dir)
    try:
        yield
    except BaseException:
        if made:
            shutil.rmtree(run_dir, ignore_errors=True)
        raise


def write_json(path: str, payload: Any) -> None:
    """A run's JSON output (summary, final evaluation, report), indented, atomically; a figure that could not be
    computed (NaN: no episode ended, no decision of a kind) as null (:func:`sm_env.files.json_files.nan_to_null`)."""
    json_files.write_json(path, nan_to_null(payload), indent=1)


def write_lines(path: str, rows: list[dict[str, Any]]) -> None:
    """``rows`` as JSON lines (one object a line: ``pandas.read_json(path, lines=True)``), atomically; NaN as
    null, as :func:`write_json`."""
    lines = [dump_json(nan_to_null(row), path) + "\n" for row in rows]
    with atomic_path(path) as tmp, open(tmp, "w", encoding="utf-8") as handle:
        handle.writelines(lines)


MAX_LINES_BYTES = 64 << 20  # a run's JSON-lines log (one line a round or evaluation: a few MB at most)


def read_lines(path: str, what: str) -> list[dict[str, Any]]:
    """The objects of the JSON-lines file ``path`` (:func:`write_lines`'), blank lines skipped; none when it
    is missing. A :class:`JsonError` ``"<path> line <n>: ..."`` for a line that is not a JSON object, or a file
    over :data:`MAX_LINES_BYTES` (``what`` names the file's part in the run)."""
    if not os.path.isfile(path):
        return []
    with open(path, "rb") as handle:
        data = handle.read(MAX_LINES_BYTES + 1)
    if len(data) > MAX_LINES_BYTES:
        raise JsonError(f"{path}: larger than {MAX_LINES_BYTES} bytes, the most {what} may hold")
    rows = []
    for number, line in enumerate(data.splitlines(), 1):
        if not line.strip():
            continue
        source = f"{path} line {number} ({what}; mend or delete the line)"
        row = parse_json(line, source)
        if not isinstance(row, dict):
            raise JsonError(f"{source}: a JSON {type(row).__name__}, not an object")
        rows.append(row)
    return rows


# ---------------------------------------------------------------------------- interrupts


STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)  # Ctrl-C; kill, or a batch system's end of time


class StopRequest:
    """Set by the first Ctrl-C (or SIGTERM) while :func:`stop_on_interrupt` is active: trainers look at it at
    their safe points (``if stop: save a checkpoint and return``); falsy until then. ``signum``: the signal
    that asked (the exit status is 128 + it: 130 for Ctrl-C, 143 for SIGTERM)."""

    def __init__(self) -> None:
        self.requested = False
        self.signum = int(signal.SIGINT)

    def __bool__(self) -> bool:
        return self.requested


@contextmanager
def stop_on_interrupt(what: str, stop: StopRequest | None = None) -> Iterator[StopRequest]:
    """The first SIGINT or SIGTERM sets the request (and says ``what`` happens next); a second one raises
    KeyboardInterrupt at once. Outside the main thread (no signal handlers there) both are left as they are."""
    stop = StopRequest() if stop is None else stop

    def handler(signum: int, frame: Any) -> None:
        if stop.requested:
            raise KeyboardInterrupt
        stop.requested, stop.signum = True, signum
        progress(f"\nstopping: {what} (Ctrl-C again to stop at once, losing the work since the last checkpoint)")

    try:
        previous = {signum: signal.signal(signum, handler) for signum in STOP_SIGNALS}
    except ValueError:  # not the main thread
        yield stop
        return
    try:
        yield stop
    finally:
        for signum, action in previous.items():
            signal.signal(signum, action)


class PipeSafe:
    """A text stream (stdout, stderr) whose writes survive a reader that is gone: ``train ... | tee log`` and
    Ctrl-C, which ends ``tee`` too. The first write that finds the pipe broken points the stream's file
    descriptor at os.devnull (for every writer of it: tqdm's bars, child processes) and is dropped, so the
    trainer goes on to its checkpoint and exit status instead of dying of BrokenPipeError."""

    def __init__(self, stream: Any) -> None:
        self.stream = stream

    def write(self, text: str) -> int:
        try:
            return self.stream.write(text)
        except BrokenPipeError:
            self._to_devnull()
            return len(text)

    def flush(self) -> None:
        try:
            self.stream.flush()
        except BrokenPipeError:
            self._to_devnull()

    def _to_devnull(self) -> None:
        devnull = os.open(os.devnull, os.O_WRONLY)
        try:
            os.dup2(devnull, self.stream.fileno())
        except (OSError, ValueError):  # no descriptor (a test's capture): nothing reaches the pipe again anyway
            pass
        finally:
            os.close(devnull)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.stream, name)


@contextmanager
def pipe_safe_output() -> Iterator[None]:
    """sys.stdout and sys.stderr as :class:`PipeSafe` streams, and SIGPIPE ignored (in the main thread), for the
    block; both flushed (safely) and given back after it."""
    saved = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = PipeSafe(sys.stdout), PipeSafe(sys.stderr)
    try:
        previous = signal.signal(signal.SIGPIPE, signal.SIG_IGN) if hasattr(signal, "SIGPIPE") else None
    except ValueError:  # not the main thread
        previous = None
    try:
        yield
    finally:
        for stream in (sys.stdout, sys.stderr):
            if isinstance(stream, PipeSafe):
                stream.flush()
        sys.stdout, sys.stderr = saved
        if previous is not None:
            signal.signal(signal.SIGPIPE, previous)


# ---------------------------------------------------------------------------- the command line


SET_EXAMPLE = "seed=1"
"""The ``--set`` example of every run command's help: a key of :class:`training.common.run_config.RunSection`,
which every run config has (``tests/test_help_examples.py`` checks each command's examples with its loader)."""


def add_run_arguments(parser: argparse.ArgumentParser, config_help: str, example: str = SET_EXAMPLE) -> None:
    """The options of every run command: --config, --resume, --set (``example``: a ``KEY=VALUE`` its config
    takes), --run-dir, --quiet, KEY=VALUE."""
    parser.add_argument("--config", metavar="FILE", help=config_help)
    parser.add_argument("--resume", metavar="RUN_DIR", help="continue the run in RUN_DIR from its latest checkpoint")
    add_set_argument(parser, f"override one config field, e.g. --set {example} (repeatable)")
    parser.add_argument("--run-dir", help="run folder (default: <output_dir>/<name>, or <name>-2, ... if used)")
    parser.add_argument("--quiet", action="store_true", help="no progress output")
    parser.add_argument("overrides", nargs="*", metavar="KEY=VALUE", help="more overrides, like --set")


def add_set_argument(parser: argparse.ArgumentParser, help_text: str) -> None:
    """The repeatable ``--set KEY=VALUE`` of a command that reads a config: the overrides in ``args.sets``."""
    parser.add_argument("--set", dest="sets", action="append", default=[], metavar="KEY=VALUE", help=help_text)


class TrainerRun(Protocol):
    """What :func:`run_command` asks of a trainer (built for a run folder, new or resumed)."""

    wall: float  # seconds of training over the whole run

    def progress(self) -> int:
        """How far the run is, in the backend's unit (learner decisions, iterations, rounds)."""

    def train(self, stop: StopRequest) -> None:
        """Train to the config's length or until ``stop``; either way a checkpoint at the end."""

    def final_outputs(self) -> list[tuple[str, str]]:
        """Write the final outputs; (file, what it is and how to use it) for each."""

    def evaluate(self, deals: int, final: bool = False) -> dict[str, Any]:
        """The duplicate evaluation against ``eval.opponents`` (``format_table``'s layout)."""

    def details(self) -> str:
        """More about the time taken (may be empty)."""

    def facts(self) -> dict[str, Any]:
        """What ``summary.json`` records besides the run layer's own keys (may be empty)."""

    def close(self) -> None: ...


def checkpoint_at(*parts: str) -> Callable[[str], str | None]:
    """A :class:`Backend`'s ``latest_checkpoint``: the file ``run_dir/<parts>``, or None when there is none."""

    def latest(run_dir: str) -> str | None:
        path = os.path.join(run_dir, *parts)
        return path if os.path.isfile(path) else None

    return latest


@dataclass(frozen=True)
class Backend:
    """One trainer as a run command sees it."""

    prog: str  # the command the user typed, named in every message: "sergeant-major train --backend vector"
    load_config: Callable[[str | None, list[str]], Any]  # (file, overrides) -> a validated config
    latest_checkpoint: Callable[[str], str | None]  # run folder -> its newest checkpoint, or None
    length: Callable[[Any], tuple[int, str]]  # config -> (how far it runs, the key that says so)
    unit: str  # what progress() counts
    build: Callable[[Any, str, bool, argparse.Namespace], TrainerRun]  # (cfg, run_dir, resume, args) -> trainer
    stop_point: str | None = "finishing the current segment, then writing a checkpoint"  # None: Ctrl-C stops at
    # once (a trainer whose every step is saved as it is made: KeyboardInterrupt loses nothing)
    saved: str = "checkpoints/"  # where the state to resume from is (the outputs list names it)
    needs_config: bool = True  # False: a new run without --config starts from the config's defaults
    reached: Callable[[Any, dict[str, Any]], str | None] | None = None  # (cfg, summary.json) -> why the run is
    # complete, or None; default: its progress reaches the config's length (a budget of time needs more)
    further: str | Callable[[Any], str] | None = None  # how a complete run goes further, with {prog} and
    # {run_dir} (or config -> that text); default: "{prog} --resume {run_dir} --set KEY=N", KEY the length's key
    old_layout: Callable[[Any, str], list[str]] | None = None  # (cfg, run folder) -> what it moved: on --resume,
    # moves a run folder of an older release into the one layout (training/common/folders.move_old_layout)


def go_further(backend: Backend, cfg: Any, run_dir: str, now: bool = True) -> str:
    """How the run in ``run_dir`` goes further (:attr:`Backend.further`, or ``--set`` of its length's key, with
    the key's value ``now`` if asked)."""
    if backend.further is not None:
        text = backend.further(cfg) if callable(backend.further) else backend.further
        return text.format(prog=backend.prog, run_dir=run_dir)
    _, key = backend.length(cfg)
    text = f"{backend.prog} --resume {run_dir} --set {key}=N"
    # the key's value, which may not be the length (distill: dagger_rounds + 1 rounds)
    return f"{text} (now {config_value(cfg, key)})" if now else text


def open_run(backend: Backend, parser: argparse.ArgumentParser, args: argparse.Namespace) -> tuple[Any, str]:
    """The config and the run folder of this command (new or resumed); ConfigError for a user mistake."""
    if args.resume and args.config:
        parser.error("give either --config (a new run) or --resume RUN_DIR (continue a run), not both")
    if not args.resume and not args.config and backend.needs_config:
        parser.error("--config FILE is needed to start a run (or --resume RUN_DIR to continue one)")
    overrides = list(args.sets) + list(args.overrides)
    if args.resume:
        run_dir = args.resume
        if not os.path.isfile(os.path.join(run_dir, "config.yaml")):
            raise ConfigError(f"cannot resume {run_dir}: it holds no run (no config.yaml)")
        cfg = backend.load_config(os.path.join(run_dir, "config.yaml"), overrides)
        if backend.old_layout is not None:
            moved = backend.old_layout(cfg, run_dir)
            if moved:
                progress(f"{run_dir}: moved into this release's run-folder layout: {', '.join(moved)}")
        if backend.latest_checkpoint(run_dir) is None:
            raise ConfigError(
                f"cannot resume {run_dir}: no checkpoint in it (nothing was saved); start it again with "
                f"{backend.prog} --config FILE"
            )
        return cfg, run_dir
    cfg = backend.load_config(args.config, overrides)
    if args.run_dir:
        if backend.latest_checkpoint(args.run_dir) is not None:
            raise ConfigError(
                f"{args.run_dir} already holds a run: continue it with {backend.prog} --resume {args.run_dir}, "
                "or leave out --run-dir to start a new run in a fresh folder"
            )
        check_folder_path(args.run_dir, "--run-dir")
        return cfg, args.run_dir
    check_folder_path(cfg.output_dir, "output_dir")
    run_dir, cfg.name = fresh_run_dir(cfg.output_dir, cfg.name)
    check_folder_path(run_dir, "output_dir")
    return cfg, run_dir


def completed(run_dir: str, target: int) -> int | None:
    """How far a finished run went (its ``summary.json``), if that reaches ``target``; else None."""
    summary = read_summary(run_dir)
    if summary is None:
        return None
    try:
        done = int(summary["progress"])
    except (ValueError, KeyError, TypeError):
        return None
    return done if done >= target else None


def finished(backend: Backend, cfg: Any, run_dir: str, length: int) -> str | None:
    """Why the run in ``run_dir`` is complete under ``cfg`` (its ``summary.json`` against the config: the
    backend's ``reached``, else its progress against ``length``), or None when it is not."""
    if backend.reached is None:
        done = completed(run_dir, length)
        return None if done is None else f"{done} {backend.unit}, the config asks for {length}"
    summary = read_summary(run_dir)
    return None if summary is None else backend.reached(cfg, summary)


def read_summary(run_dir: str) -> dict[str, Any] | None:
    """The ``summary.json`` of a run (written last, when it finished), or None when there is none to read (a
    missing, damaged or hostile file: read within bounds, :func:`sm_env.files.json_files.read_json`)."""
    try:
        summary = read_json(os.path.join(run_dir, SUMMARY), "a run's summary")
    except JsonError:
        return None
    return summary if isinstance(summary, dict) else None


def time_summary(unit: str, done: int, start_done: int, wall: float, start_wall: float, elapsed: float) -> str:
    """What this call trained and how long it took; after a resume, the whole run too."""
    call, call_wall = done - start_done, wall - start_wall
    rate = call / call_wall if call_wall > 0 else 0.0
    speed = f"{rate:.0f} {unit}/s" if rate >= 1 or call == 0 else f"one per {call_wall / call:.0f} s"
    text = (
        f"this call trained {call} {unit} in {call_wall:.0f} s ({speed}) "
        f"and took {elapsed:.0f} s in all (evaluations and saving included)"
    )
    if start_done:
        text += f"; the whole run: {done} {unit} in {wall:.0f} s of training"
    return text


def config_value(cfg: Any, key: str) -> Any:
    """The value of the dotted config ``key`` (``train.total_timesteps``) in ``cfg``."""
    value = cfg
    for part in key.split("."):
        value = getattr(value, part)
    return value


def outputs_summary(run_dir: str, rows: list[tuple[str, str]]) -> str:
    """Every output of a run and how to look at it, one a line."""
    return f"outputs in {run_dir}:\n" + "\n".join(f"  {name:<16} {what}" for name, what in rows)


def conclude(backend: Backend, cfg: Any, run_dir: str, trainer: TrainerRun, announce: bool = False) -> dict[str, Any]:
    """The end of every run, in files: the final outputs, the final evaluation (``final_eval.json``, when
    ``eval.final_deals`` > 0) and, last, ``summary.json`` (how far the run went: what makes it complete, its
    time, its final evaluation, its outputs with what each is). Returns the summary. ``announce``: say that
    the final evaluation starts (stdout)."""
    rows = trainer.final_outputs()
    deals = cfg.eval.final_deals if hasattr(cfg, "eval") else 0
    summary: dict[str, Any] = {"progress": trainer.progress(), "unit": backend.unit, "train_seconds": trainer.wall}
    summary.update(trainer.facts())
    if deals > 0:
        if announce:
            print(f"final evaluation: {deals} deals against {', '.join(cfg.eval.opponents)}", flush=True)
        results = trainer.evaluate(deals, final=True)
        final = {"progress": trainer.progress(), "unit": backend.unit, "deals": deals, "results": results}
        write_json(os.path.join(run_dir, FINAL_EVAL), final)
        rows.append((FINAL_EVAL, f"the final evaluation: python -m json.tool {run_dir}/{FINAL_EVAL}"))
        summary["final_eval"] = results
    rows.append((backend.saved, f"go further: {go_further(backend, cfg, run_dir)}"))
    rows.append(("config.yaml", "the resolved config of the run"))
    rows.append((SUMMARY, "how far the run went, its time and its final evaluation"))
    summary["outputs"] = dict(rows)
    write_json(os.path.join(run_dir, SUMMARY), summary)
    return summary


def report(cfg: Any, run_dir: str, summary: dict[str, Any], times: str) -> None:
    """The end of every run, on stdout: the final evaluation table, the time taken, the outputs."""
    if "final_eval" in summary:
        print("\n" + EVAL_HEADER.format(deals=cfg.eval.final_deals, mode=cfg.eval.mode))
        print(format_table(summary["final_eval"]))
    print("\n" + times)
    print(outputs_summary(run_dir, list(summary["outputs"].items())), flush=True)


def run_command(backend: Backend, parser: argparse.ArgumentParser, argv: list[str] | None) -> int:
    """Parse a run command line and run it (module docstring); the exit status (2: bad input, 130: interrupted
    by Ctrl-C, 143: by SIGTERM). Its output may lose its reader (``| tee log`` and Ctrl-C): the run goes on to
    its checkpoint and exit status all the same (:class:`PipeSafe`)."""
    args = parser.parse_args(argv)
    with pipe_safe_output():
        return _run(backend, parser, args)


def _run(backend: Backend, parser: argparse.ArgumentParser, args: argparse.Namespace) -> int:
    """:func:`run_command` once its command line is parsed."""
    run_dir = ""
    stop = StopRequest()
    try:
        cfg, run_dir = open_run(backend, parser, args)
        if args.resume:
            length, _ = backend.length(cfg)
            why = finished(backend, cfg, run_dir, length)
            if why is not None:
                further = go_further(backend, cfg, run_dir, now=False)
                print(f"{run_dir} is complete ({why}): nothing to do; go further with {further}")
                return 0
        print(f"{'resuming' if args.resume else 'new run'}: {run_dir}", flush=True)
        started = time.perf_counter()
        stopping = stop_on_interrupt(backend.stop_point, stop) if backend.stop_point else nullcontext(stop)
        trainer = None
        try:
            with stopping as stop:  # the training only: Ctrl-C in the final evaluation stops at once
                with removed_on_failure(run_dir, bool(args.resume)):
                    trainer = backend.build(cfg, run_dir, bool(args.resume), args)
                start = (trainer.progress(), trainer.wall)
                trainer.train(stop)
            if stop:
                print(
                    f"\ninterrupted after {trainer.progress()} {backend.unit}: the checkpoint is "
                    f"{backend.latest_checkpoint(run_dir)}; continue with: {backend.prog} --resume {run_dir}",
                    file=sys.stderr,
                    flush=True,
                )
                return 128 + stop.signum
            summary = conclude(backend, cfg, run_dir, trainer, announce=not args.quiet)
            done, wall = trainer.progress(), trainer.wall
            times = time_summary(backend.unit, done, start[0], wall, start[1], time.perf_counter() - started)
            report(cfg, run_dir, summary, "\n".join(filter(None, [times, trainer.details()])))
        finally:
            if trainer is not None:
                trainer.close()
    except (ConfigError, JsonError) as err:  # a config, or a file of the run that cannot be read back
        print(f"{backend.prog}: error: {err}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        latest = backend.latest_checkpoint(run_dir) if run_dir else None
        where = (
            f"the last checkpoint is {latest}; continue with: {backend.prog} --resume {run_dir}"
            if latest
            else "nothing was saved; start the run again"
        )
        print(f"\ninterrupted: {where}", file=sys.stderr, flush=True)
        return 128 + stop.signum
    return 0
