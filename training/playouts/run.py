"""A play-out run: every stage of a config in its run folder, resumable (``sergeant-major improve``).

Stages, each kept once made (a killed or interrupted run resumes where it stopped, ``--resume RUN_DIR``), in
the one run-folder layout (training/common/folders.py):

1. ``policies/student.pt`` (only with ``student:``): the policy copied into a smaller network, which then plays
   in its place (:func:`training.playouts.fit.distil`);
2. ``data/labels/<seed>.npz``: one data file per seed of each label group (:func:`training.playouts.label.label`),
   ``workers`` at a time in the project's worker pool; a file is written whole or not at all, so the finished
   ones are the run's checkpoint;
3. ``policies/q.pt``: the Q-network fitted on every label file (:func:`training.playouts.fit.fit`);
   ``policies/q.json`` records the files and the fit's settings it was made with and the held-out gains; a q.pt
   made from other files or settings (``--resume RUN_DIR --set labels=...``) is fitted again;
4. ``final_policy.pt``: the policy combined with the Q-network (:func:`training.playouts.fit.combine`, a
   second; made again on every run).

Ctrl-C lets the label files in progress finish and stops (the finished files are kept; a copy or a fit in
progress is dropped and starts again on resume); a second Ctrl-C stops at once. ``summary.json`` is written
last.
"""

from __future__ import annotations

import os
import queue
import signal
import time
from collections.abc import Callable
from typing import Any

from sm_env.files.json_files import JsonError, read_json
from training.common.folders import (
    DATA,
    FINAL_POLICY,
    POLICIES,
    move_old_layout,
    save_training_seconds,
    training_seconds,
)
from training.common.progress import progress_bar
from training.common.runs import Backend, StopRequest, progress, write_json
from training.common.workers import spawn_pool
from training.common.yaml_config import ConfigError, save_config
from training.playouts.config import TYPES, RunConfig, labelled_rules, load_run_config

PROG = "python -m training.playouts"
LABELS = os.path.join(DATA, "labels")  # the label files, <seed>.npz
STUDENT = os.path.join(POLICIES, "student.pt")
Q_NET = os.path.join(POLICIES, "q.pt")
Q_RECORD = os.path.join(POLICIES, "q.json")  # what q.pt was fitted from, and its report
UNIT = "stages"
Job = tuple[str, int, int, str, tuple[int, ...], str, tuple[str, ...] | None]  # label()'s arguments


def _ignore_interrupts() -> None:
    """A labelling worker leaves Ctrl-C to the run (which lets the files in progress finish)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def label_job(job: Job) -> tuple[str, list[str]]:
    """Label one data file (``label(*job)``); its path and the lines it logged."""
    from training.playouts.label import label

    lines: list[str] = []
    label(*job, log=lines.append)
    return job[3], lines


def label_files(config: RunConfig, run_dir: str) -> list[tuple[str, Job]]:
    """Every data file of ``config`` in ``run_dir`` and the label job that makes it."""
    player = config.policy if config.student is None else os.path.join(run_dir, STUDENT)
    out = []
    for group in config.labels:
        policy = player if group.policy is None else group.policy
        types = tuple(TYPES[t] for t in group.types)
        roles = None if group.roles is None else tuple(group.roles)
        for seed in group.seeds:
            path = os.path.join(run_dir, LABELS, f"{seed}.npz")
            out.append((path, (policy, seed, group.hands, path, types, config.rules, roles)))
    return out


def stage_count(config: RunConfig) -> int:
    """How many stages ``config`` has (the length of its run): the copy, one per label file, the fit, the
    combination."""
    return (config.student is not None) + sum(len(group.seeds) for group in config.labels) + 2


def latest_saved(run_dir: str) -> str | None:
    """The newest file a play-out run keeps (a label file, the student, the Q-network, the final policy), or
    None."""
    labels = os.path.join(run_dir, LABELS)
    names = [os.path.join(LABELS, n) for n in os.listdir(labels)] if os.path.isdir(labels) else []
    found = [
        os.path.join(run_dir, name)
        for name in [*names, STUDENT, Q_NET, FINAL_POLICY]
        if name.endswith((".npz", ".pt")) and os.path.isfile(os.path.join(run_dir, name))
    ]
    return max(found, key=os.path.getmtime) if found else None


def old_layout(config: RunConfig, run_dir: str) -> list[str]:
    """Move a run folder of an older release (``labels/``, ``student.pt``, ``q.pt``, ``q.json``, ``policy.pt`` at
    its top) into the one layout, keeping ``q.json``'s record of the student it started from (so that q.pt is
    not fitted again); returns the moves made."""
    moves = [("labels", LABELS), ("student.pt", STUDENT), ("q.pt", Q_NET), ("q.json", Q_RECORD)]
    moved = move_old_layout(run_dir, [*moves, ("policy.pt", FINAL_POLICY)])
    record_path = os.path.join(run_dir, Q_RECORD)
    try:
        record = read_json(record_path, "a fit's record")
    except JsonError:
        return moved
    stamp = record.get("stamp") if isinstance(record, dict) else None
    if isinstance(stamp, dict) and stamp.get("q_init") == os.path.join(run_dir, "student.pt"):
        stamp["q_init"] = os.path.join(run_dir, STUDENT)
        write_json(record_path, record)
    return moved


class PlayoutsRun:
    """A play-out run as the run layer drives it (module docstring)."""

    def __init__(self, config: RunConfig, run_dir: str, quiet: bool = False) -> None:
        from training.playouts.label import policy_agent

        self.config, self.run_dir, self.quiet = config, run_dir, quiet
        self.log: Callable[[str], None] = (lambda text: None) if quiet else progress
        players = {config.policy, *(group.policy for group in config.labels if group.policy is not None)}
        # the players, and q_init (read only by the fit, hours later): a wrong one is refused before any work
        for spec in sorted(players) + ([] if config.q_init is None else [config.q_init]):
            try:
                policy_agent(spec, labelled_rules(config.rules))
            except ValueError as err:  # a FixedAgentError, a RulesError: one line
                raise ConfigError(str(err)) from None
        os.makedirs(os.path.join(run_dir, LABELS), exist_ok=True)
        os.makedirs(os.path.join(run_dir, POLICIES), exist_ok=True)
        save_config(config, os.path.join(run_dir, "config.yaml"))
        self.wall = training_seconds(run_dir)
        self.report: dict[str, Any] | None = None

    # ---------------------------------------------------------------- the stages and what is done

    @property
    def player(self) -> str:
        """The policy that plays: the run's, or its copy (policies/student.pt)."""
        return self.config.policy if self.config.student is None else os.path.join(self.run_dir, STUDENT)

    def label_files(self) -> list[tuple[str, Job]]:
        return label_files(self.config, self.run_dir)

    def q_stamp(self) -> dict[str, Any]:
        """What ``q.pt`` is fitted from: the label files and the fit's settings."""
        cfg = self.config
        return {
            "files": [os.path.basename(path) for path, _ in self.label_files()],
            "q_init": self.player if cfg.q_init is None else cfg.q_init,
            "rules": cfg.rules,
            "epochs": cfg.epochs,
            "learning_rate": cfg.learning_rate,
            "seed": cfg.seed,
            "game_weight": cfg.game_weight,
        }

    def _q_record(self) -> dict[str, Any] | None:
        try:
            record = read_json(os.path.join(self.run_dir, Q_RECORD), "a fit's record")
        except JsonError:
            return None
        return record if isinstance(record, dict) else None

    def q_fresh(self) -> bool:
        """Whether ``policies/q.pt`` is there and was fitted from this config's files and settings
        (``policies/q.json``)."""
        record = self._q_record()
        return (
            os.path.isfile(os.path.join(self.run_dir, Q_NET))
            and record is not None
            and record.get("stamp") == self.q_stamp()
        )

    def progress(self) -> int:
        done = sum(os.path.isfile(path) for path, _ in self.label_files())
        if self.config.student is not None:
            done += os.path.isfile(self.player)
        if self.q_fresh():
            done += 1 + (self.report is not None and os.path.isfile(os.path.join(self.run_dir, FINAL_POLICY)))
        return done

    # ---------------------------------------------------------------- training

    def train(self, stop: StopRequest) -> None:
        started, before = time.perf_counter(), self.wall
        try:
            self._stages(stop)
        except ConfigError:
            raise
        except ValueError as err:  # a damaged data file, a policy that cannot play the rules, ...
            raise ConfigError(str(err)) from None
        finally:
            self.wall = before + time.perf_counter() - started
            save_training_seconds(self.run_dir, self.wall)

    def _stages(self, stop: StopRequest) -> None:
        from training.playouts.fit import combine, distil, fit

        cfg, folder = self.config, self.run_dir
        if cfg.student is not None and not os.path.exists(self.player):
            student = cfg.student
            self.log(f"copying {cfg.policy} into the network of {student.init}: {self.player}")
            args = (cfg.policy, student.init, student.decisions, self.player, student.epochs, student.learning_rate)
            if not distil(*args, cfg.seed, cfg.rules, log=self.log, stop=lambda: bool(stop)):
                return
        if not self._label(stop):
            return
        q_path, out = os.path.join(folder, Q_NET), os.path.join(folder, FINAL_POLICY)
        if self.q_fresh():
            self.log(f"{q_path} is fitted on these files with these settings: kept")
            self.report = (self._q_record() or {}).get("report")
        else:
            stamp = self.q_stamp()
            files = [path for path, _ in self.label_files()]
            self.log(f"fitting the Q-network on {len(files)} label files ({cfg.epochs} epochs)")
            report = fit(
                files, stamp["q_init"], q_path, cfg.epochs, cfg.learning_rate, cfg.seed, cfg.game_weight,
                log=self.log, stop=lambda: bool(stop),
            )  # fmt: skip
            if report is None:
                return
            write_json(os.path.join(folder, Q_RECORD), {"stamp": stamp, "report": report})
            self.report = report
        combine(self.player, q_path, cfg.weight, out)

    def _label(self, stop: StopRequest) -> bool:
        """Make the missing label files, ``workers`` at a time; False when ``stop`` ended it first."""
        files = self.label_files()
        jobs = [job for path, job in files if not os.path.exists(path)]
        self.log(f"{len(files) - len(jobs)} of {len(files)} label files there; labelling {len(jobs)}")
        if not jobs:
            return True
        bar = progress_bar(len(files), "label files", "file", enabled=not self.quiet, initial=len(files) - len(jobs))
        try:
            if len(jobs) == 1 or self.config.workers == 1:
                for job in jobs:
                    if stop:
                        return False
                    path, lines = label_job(job)
                    self._labelled(path, lines, bar)
                return True
            return self._label_in_pool(jobs, stop, bar)
        finally:
            bar.close()

    def _labelled(self, path: str, lines: list[str], bar: Any) -> None:
        for line in lines:
            self.log(line)
        bar.update(1)

    def _label_in_pool(self, jobs: list[Job], stop: StopRequest, bar: Any) -> bool:
        """The jobs in the project's pool (one thread a worker; no worker outlives this process), at most one a
        worker in flight, so that a stop lets the files in progress finish and starts no other."""
        done: queue.Queue = queue.Queue()
        waiting, running = list(jobs), 0
        # maxtasksperchild=1: a fresh process a file (the memory of a labelled file goes back to the system)
        with spawn_pool(min(self.config.workers, len(jobs)), _ignore_interrupts, maxtasksperchild=1) as pool:
            while waiting or running:
                while waiting and running < self.config.workers and not stop:
                    pool.apply_async(label_job, (waiting.pop(0),), callback=done.put, error_callback=done.put)
                    running += 1
                if not running:
                    break
                try:
                    result = done.get(timeout=1.0)
                except queue.Empty:
                    continue
                running -= 1
                if isinstance(result, BaseException):
                    raise result
                self._labelled(*result, bar)
        return not waiting

    # ---------------------------------------------------------------- the end

    def final_outputs(self) -> list[tuple[str, str]]:
        folder = self.run_dir
        policy, q_net = os.path.join(folder, FINAL_POLICY), os.path.join(folder, Q_NET)
        rows = [
            (FINAL_POLICY, f"the policy; measure it: sergeant-major eval --agents ppo:{policy} trained heuristic"),
            (Q_NET, f"the Q-network (values in tricks / 4); its discards: mix:base=trained;discard=ppo:{q_net}"),
            (Q_RECORD, "the files and settings q.pt was fitted with, and its held-out real-deal gains"),
            (LABELS + "/", "the play-out data files (training/playouts/data.py)"),
        ]
        if self.config.student is not None:
            rows.append((STUDENT, "the copy of the policy that played"))
        return rows

    def evaluate(self, deals: int, final: bool = False) -> dict[str, Any]:
        raise NotImplementedError("a play-out config has no eval section: sergeant-major eval measures policy.pt")

    def details(self) -> str:
        return ""

    def facts(self) -> dict[str, Any]:
        return {
            "policy": os.path.join(self.run_dir, FINAL_POLICY),
            "label_files": len(self.label_files()),
            "fit": self.report,
        }

    def close(self) -> None:
        pass


def backend(prog: str = PROG) -> Backend:
    """The play-out pipeline as the run layer sees it (``sergeant-major improve``)."""
    return Backend(
        prog=prog,
        load_config=load_run_config,
        latest_checkpoint=latest_saved,
        length=lambda cfg: (stage_count(cfg), "labels"),
        unit=UNIT,
        build=lambda cfg, run_dir, resume, args: PlayoutsRun(cfg, run_dir, quiet=args.quiet),
        stop_point="letting the label files in progress finish (a fit in progress starts again on resume)",
        saved=LABELS + "/",
        old_layout=old_layout,
        further="{prog} --resume {run_dir} --set 'labels=[...]' (more seeds; the fit is made again on them)",
    )
