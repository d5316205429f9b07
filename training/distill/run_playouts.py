"""A play-out run: every stage of a config in its run folder, resumable (``sergeant-major distill``, ``improve``).

Stages, each kept once made (a killed or interrupted run resumes where it stopped, ``--resume RUN_DIR``), in
the one run-folder layout (training/common/folders.py):

1. ``policies/student.pt`` (only with ``student:``): the policy copied into a smaller network, which then plays
   in its place (:func:`training.distill.fit_q.distil`);
2. ``data/labels/<seed>.npz``: one data file per seed of each label group
   (:func:`training.distill.label_playouts.label`), ``workers`` at a time in the project's worker pool, or with
   ``--ray`` one Ray task a file (its arrays made there, :func:`label_task`, and written here: the same bytes); a
   file is written whole or not at all, so the finished ones are the run's checkpoint;
3. ``policies/q.pt``: the Q-network fitted on every label file (:func:`training.distill.fit_q.fit`);
   ``policies/q.json`` records the files and the fit's settings it was made with and the held-out gains; a q.pt
   made from other files or settings (``--resume RUN_DIR --set labels=...``) is fitted again;
4. ``final_policy.pt``: the policy combined with the Q-network (:func:`training.distill.fit_q.combine`, a
   second; made again on every run).

With ``rounds`` above 1 (policy iteration, ``weight: 0``) stages 2-4 repeat: round r >= 1 labels
``data/labels/round<r>/<seed>.npz`` with round r-1's policy, fits ``policies/q_round<r>.pt`` (``.json``: its
record) from round r-1's Q-network, and its policy is ``policies/round<r>.pt`` (round 0's: ``round0.pt``);
``final_policy.pt`` is the last round's. ``policy: fresh`` starts round 0 from ``policies/fresh.pt``, a network
initialised from ``seed``. With ``eval.every`` above 0 each round's policy is evaluated once (``eval.jsonl``: the
round, the decisions labelled so far, the training seconds, the advantage against each opponent); evaluations do
not count as training time.

Ctrl-C lets the label files in progress finish and stops (with ``--ray``: the next file to arrive is kept, the
other tasks cancelled; the finished files are kept; a copy or a fit in progress is dropped and starts again on
resume); a second Ctrl-C stops at once. ``summary.json`` is written last.
"""

from __future__ import annotations

import os
import queue
import signal
import tempfile
import time
from collections.abc import Callable
from typing import Any

from sm_env.files.atomic import atomic_copy
from sm_env.files.json_files import JsonError, read_json
from training.common import budget
from training.common.folders import (
    DATA,
    FINAL_POLICY,
    POLICIES,
    move_old_layout,
    save_training_seconds,
    training_seconds,
)
from training.common.progress import progress_bar
from training.common.ray_cluster import RayOptions
from training.common.runs import Backend, StopRequest, progress, read_lines, write_json, write_lines
from training.common.scalars import ScalarLog
from training.common.workers import limit_threads, spawn_pool
from training.common.yaml_config import ConfigError, save_config
from training.distill.config_playouts import FRESH, ROUND_SEED, TYPES, RunConfig, labelled_rules, load_run_config

PROG = "sergeant-major improve"  # the play-out part of the one command (training.distill.cli)
LABELS = os.path.join(DATA, "labels")  # the label files, <seed>.npz
STUDENT = os.path.join(POLICIES, "student.pt")
FRESH_POLICY = os.path.join(POLICIES, "fresh.pt")  # policy: fresh
Q_NET = os.path.join(POLICIES, "q.pt")
Q_RECORD = os.path.join(POLICIES, "q.json")  # what q.pt was fitted from, and its report
EVALS = "eval.jsonl"
UNIT = "stages"
Job = tuple[str, int, int, str, tuple[int, ...], str, tuple[str, ...] | None]  # label()'s arguments


def _ignore_interrupts() -> None:
    """A labelling worker leaves Ctrl-C to the run (which lets the files in progress finish)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def label_job(job: Job) -> tuple[str, list[str]]:
    """Label one data file (``label(*job)``); its path and the lines it logged."""
    from training.distill.label_playouts import label

    lines: list[str] = []
    label(*job, log=lines.append)
    return job[3], lines


def label_task(job: Job, policy: bytes | None) -> tuple[dict[str, Any], str]:
    """One data file's arrays and closing line (``label_arrays``), as a Ray task (``--ray``): on one torch thread,
    the policy read from ``policy``, its file's bytes (None: ``trained``, shipped with the code), since the
    driver's path may not exist on the node; the driver writes the file."""
    from training.distill.label_playouts import label_arrays

    limit_threads()
    spec, seed, hands, _, types, rules, roles = job
    if policy is None:
        return label_arrays(spec, seed, hands, types, rules, roles)
    with tempfile.TemporaryDirectory(prefix="sergeant-major-policy-") as folder:
        path = os.path.join(folder, os.path.basename(policy_file(spec)))
        with open(path, "wb") as handle:
            handle.write(policy)
        return label_arrays(f"ppo:{path}", seed, hands, types, rules, roles)


def policy_file(spec: str) -> str:
    """The file of a player's spec (``ppo:PATH`` or ``PATH``); ``trained`` has none: ``""``."""
    return "" if spec == "trained" else spec.removeprefix("ppo:")


def round_labels(r: int) -> str:
    """Round ``r``'s label folder in a run folder (round 0: the one of a single-round run)."""
    return LABELS if r == 0 else os.path.join(LABELS, f"round{r}")


def round_q(r: int) -> tuple[str, str]:
    """Round ``r``'s Q-network and its record in a run folder (round 0: ``q.pt``, ``q.json``)."""
    if r == 0:
        return Q_NET, Q_RECORD
    return os.path.join(POLICIES, f"q_round{r}.pt"), os.path.join(POLICIES, f"q_round{r}.json")


def round_policy(config: RunConfig, r: int) -> str:
    """Round ``r``'s policy in a run folder: ``final_policy.pt`` for a single round, else ``policies/round<r>.pt``."""
    return FINAL_POLICY if config.rounds == 1 else os.path.join(POLICIES, f"round{r}.pt")


def player(config: RunConfig, run_dir: str, r: int = 0) -> str:
    """The policy that plays round ``r``: the run's (or its copy, or the fresh network), then the round before's."""
    if r > 0:
        return os.path.join(run_dir, round_policy(config, r - 1))
    if config.student is not None:
        return os.path.join(run_dir, STUDENT)
    return os.path.join(run_dir, FRESH_POLICY) if config.policy == FRESH else config.policy


def label_files(config: RunConfig, run_dir: str, r: int = 0) -> list[tuple[str, Job]]:
    """Every data file of round ``r`` of ``config`` in ``run_dir`` and the label job that makes it."""
    playing = player(config, run_dir, r)
    out = []
    for group in config.labels:
        policy = playing if group.policy is None else group.policy
        types = tuple(TYPES[t] for t in group.types)
        roles = None if group.roles is None else tuple(group.roles)
        for seed in group.seeds:
            path = os.path.join(run_dir, round_labels(r), f"{seed}.npz")
            out.append((path, (policy, seed + r * ROUND_SEED, group.hands, path, types, config.env.rules, roles)))
    return out


def stage_count(config: RunConfig) -> int:
    """How many stages ``config`` has (the length of its run): the copy, and for every round one per label file,
    the fit and the round's policy."""
    return (config.student is not None) + config.rounds * (sum(len(group.seeds) for group in config.labels) + 2)


def fresh_policy(config: RunConfig, path: str) -> None:
    """A freshly initialised network of ``config.arch`` (:func:`training.distill.network.fresh_policy`, drawn from
    ``config.seed``) as a policy file for ``config.env.rules``: where the from-scratch recipe starts."""
    from agents.players.ppo_agent import PolicyShape, export_policy
    from training.distill import network

    ruleset = labelled_rules(config.env.rules)
    policy = network.fresh_policy(PolicyShape.of(ruleset), config.arch, config.seed)
    export_policy(policy, path, rules=ruleset, trainer="fresh")


def latest_saved(run_dir: str) -> str | None:
    """The newest file a play-out run keeps (a label file, the student, the Q-network, the final policy), or
    None."""
    names = []
    for folder, _, files in os.walk(os.path.join(run_dir, LABELS)):
        names += [os.path.relpath(os.path.join(folder, n), run_dir) for n in files]
    policies = os.path.join(run_dir, POLICIES)
    names += [os.path.join(POLICIES, n) for n in os.listdir(policies)] if os.path.isdir(policies) else []
    found = [
        os.path.join(run_dir, name)
        for name in [*names, FINAL_POLICY]
        if name.endswith((".npz", ".pt")) and os.path.isfile(os.path.join(run_dir, name))
    ]
    return max(found, key=os.path.getmtime) if found else None


def old_layout(config: RunConfig, run_dir: str) -> list[str]:
    """Move a run folder of an older release (``labels/``, ``student.pt``, ``q.pt``, ``q.json``, ``policy.pt`` at
    its top) into the one layout, keeping ``q.json``'s record of the student it started from (so that q.pt is
    not fitted again), and convert its label files of the old format (:func:`convert_label_files`); returns the
    moves made."""
    moves = [("labels", LABELS), ("student.pt", STUDENT), ("q.pt", Q_NET), ("q.json", Q_RECORD)]
    moved = move_old_layout(run_dir, [*moves, ("policy.pt", FINAL_POLICY)])
    convert_label_files(run_dir)
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


def convert_label_files(run_dir: str) -> list[str]:
    """Convert the run's label files of the old format into label shards, in place, the rows the same
    (:func:`training.distill.data_playouts.convert_old_labels`; the fit's record names files, so none is fitted
    again); one line says which. Returns them."""
    from training.distill.data_playouts import convert_old_labels

    labels = os.path.join(run_dir, LABELS)
    found = sorted(
        os.path.join(folder, name)
        for folder, _, names in os.walk(labels)
        for name in names
        if name.endswith(".npz") and not name.startswith(".")
    )
    converted = [path for path in found if convert_old_labels(path)]
    if converted:
        names = ", ".join(os.path.relpath(path, labels) for path in converted)
        progress(f"{run_dir}: converted {len(converted)} label files of the old format into label shards: {names}")
    return converted


class PlayoutsRun:
    """A play-out run as the run layer drives it (module docstring)."""

    def __init__(self, config: RunConfig, run_dir: str, quiet: bool = False, ray: RayOptions | None = None) -> None:
        from training.distill.label_playouts import policy_agent

        self.config, self.run_dir, self.quiet, self.ray = config, run_dir, quiet, ray
        if ray is not None:  # join now: an address that leads to no cluster leaves no new run folder
            ray.connect()
        self.log: Callable[[str], None] = (lambda text: None) if quiet else progress
        players = {config.policy, *(group.policy for group in config.labels if group.policy is not None)} - {FRESH}
        # the players, and q_init (read only by the fit, hours later): a wrong one is refused before any work
        for spec in sorted(players) + ([] if config.q_init is None else [config.q_init]):
            try:
                policy_agent(spec, labelled_rules(config.env.rules))
            except ValueError as err:  # a FixedAgentError, a RulesError: one line
                raise ConfigError(str(err)) from None
        os.makedirs(os.path.join(run_dir, LABELS), exist_ok=True)
        os.makedirs(os.path.join(run_dir, POLICIES), exist_ok=True)
        save_config(config, os.path.join(run_dir, "config.yaml"))
        self.wall = training_seconds(run_dir)
        self.report: dict[str, Any] | None = None
        self.evals: list[dict[str, Any]] = self._read_evals()
        self.eval_seconds = 0.0  # of this call: not training time
        self._started, self._before = time.perf_counter(), self.wall  # this call's start (train() sets them again)
        self.tb = ScalarLog(run_dir, config.tensorboard)  # each round's fit and evaluation (RUN/tb)

    # ---------------------------------------------------------------- the stages and what is done

    @property
    def player(self) -> str:
        """The policy that plays round 0: the run's, its copy (policies/student.pt) or the fresh network."""
        return player(self.config, self.run_dir)

    def label_files(self, r: int = 0) -> list[tuple[str, Job]]:
        return label_files(self.config, self.run_dir, r)

    def fit_files(self, r: int) -> list[str]:
        """The label files round ``r``'s fit reads: those of the last ``window`` rounds up to ``r``."""
        rounds = range(max(0, r - self.config.window + 1), r + 1)
        return [path for k in rounds for path, _ in self.label_files(k)]

    def q_stamp(self, r: int = 0) -> dict[str, Any]:
        """What round ``r``'s Q-network is fitted from: the label files and the fit's settings."""
        cfg = self.config
        files = [os.path.relpath(path, os.path.join(self.run_dir, LABELS)) for path in self.fit_files(r)]
        if r > 0:
            q_init = os.path.join(self.run_dir, round_q(r - 1)[0])  # the round before's Q-network, head and all
        else:
            q_init = self.player if cfg.q_init is None else cfg.q_init
        stamp = {
            "files": files,
            "q_init": q_init,
            "rules": cfg.env.rules,
            "epochs": cfg.epochs,
            "learning_rate": cfg.learning_rate,
            "seed": cfg.seed,
            "game_weight": cfg.game_weight,
        }
        return stamp if cfg.rounds == 1 else {**stamp, "round": r}

    def _q_record(self, r: int = 0) -> dict[str, Any] | None:
        try:
            record = read_json(os.path.join(self.run_dir, round_q(r)[1]), "a fit's record")
        except JsonError:
            return None
        return record if isinstance(record, dict) else None

    def q_fresh(self, r: int = 0) -> bool:
        """Whether round ``r``'s Q-network is there and was fitted from this config's files and settings (its
        record, ``policies/q.json`` for round 0)."""
        record = self._q_record(r)
        return (
            os.path.isfile(os.path.join(self.run_dir, round_q(r)[0]))
            and record is not None
            and record.get("stamp") == self.q_stamp(r)
        )

    def progress(self) -> int:
        cfg = self.config
        done = int(cfg.student is not None and os.path.isfile(self.player))
        for r in range(cfg.rounds):
            done += sum(os.path.isfile(path) for path, _ in self.label_files(r))
            if self.q_fresh(r):
                last = r == cfg.rounds - 1
                made = os.path.isfile(os.path.join(self.run_dir, round_policy(cfg, r)))
                done += 1 + (made and (self.report is not None or not last))
        return done

    # ---------------------------------------------------------------- training

    def train(self, stop: StopRequest) -> None:
        self._started, self._before = time.perf_counter(), self.wall
        try:
            self._stages(stop)
        except ConfigError:
            raise
        except ValueError as err:  # a damaged data file, a policy that cannot play the rules, ...
            raise ConfigError(str(err)) from None
        finally:
            self._save_time()

    def _training_time(self) -> float:
        """The run's training seconds so far: the calls before this one's and this call's, evaluations left out."""
        return self._before + time.perf_counter() - self._started - self.eval_seconds

    def _save_time(self) -> None:
        """The training time so far into ``times.json`` (after every label file, fit and call: a killed run
        loses at most the stage in progress)."""
        self.wall = self._training_time()
        save_training_seconds(self.run_dir, self.wall)

    def _stages(self, stop: StopRequest) -> None:
        from training.distill.fit_q import distil

        cfg = self.config
        if cfg.policy == FRESH and not os.path.isfile(self.player):
            self.log(f"a fresh network {cfg.arch} (seed {cfg.seed}) plays round 0: {self.player}")
            fresh_policy(cfg, self.player)
        if cfg.student is not None and not os.path.exists(self.player):
            student = cfg.student
            self.log(f"copying {cfg.policy} into the network of {student.init}: {self.player}")
            args = (cfg.policy, student.init, student.decisions, self.player, student.epochs, student.learning_rate)
            if not distil(*args, cfg.seed, cfg.env.rules, log=self.log, stop=lambda: bool(stop), device=cfg.device):
                return
        for r in range(cfg.rounds):
            if r and self._out_of_time(r):
                atomic_copy(self._path(round_policy(cfg, r - 1)), self._path(FINAL_POLICY))
                return
            if cfg.rounds > 1:
                self.log(f"round {r + 1} of {cfg.rounds}: {player(cfg, self.run_dir, r)} plays{self._time_left(r)}")
            if not self._label(stop, r) or not self._fit(stop, r):
                return
            if cfg.eval.every > 0 and not any(row["round"] == r for row in self.evals):
                self._evaluate_round(r, self._training_time())
        if cfg.rounds > 1:
            atomic_copy(self._path(round_policy(cfg, cfg.rounds - 1)), self._path(FINAL_POLICY))

    def _out_of_time(self, r: int) -> bool:
        """Whether ``max_hours`` of training are spent before round ``r`` (one not made yet): the run then ends
        with round ``r - 1``'s policy, as at its last round (a bigger budget goes on with round ``r``)."""
        seconds, cfg = self._training_time(), self.config
        made = self.q_fresh(r) and os.path.isfile(self._path(round_policy(cfg, r)))
        if made or not budget.spent(seconds, cfg.max_hours):
            return False
        self.log(
            f"the budget of {cfg.max_hours:g} h of training is spent ({seconds / 3600:.2f} h): the run ends with "
            f"round {r} of {cfg.rounds}'s policy"
        )
        return True

    def _time_left(self, r: int) -> str:
        """What the log says of the time before round ``r``: the training so far and about how long the rest
        takes at the rounds' mean so far, or until the budget (``max_hours``) if that comes first."""
        seconds, cfg = self._training_time(), self.config
        if r == 0:
            return ""
        left = (cfg.rounds - r) * seconds / r
        ends = "the last round"
        limit = budget.budget_seconds(cfg.max_hours)
        if limit is not None and limit - seconds < left:
            left, ends = max(0.0, limit - seconds), f"the budget of {cfg.max_hours:g} h"
        return f" ({seconds / 3600:.2f} h of training so far; about {left / 60:.0f} min to {ends})"

    def _path(self, name: str) -> str:
        return os.path.join(self.run_dir, name)

    def _fit(self, stop: StopRequest, r: int) -> bool:
        """Round ``r``'s Q-network (kept when fitted from these files and settings) and its policy; False when
        ``stop`` ended the fit."""
        from training.distill.fit_q import combine, fit

        cfg = self.config
        (q_name, record_name), out = round_q(r), self._path(round_policy(cfg, r))
        q_path = self._path(q_name)
        if self.q_fresh(r):
            self.log(f"{q_path} is fitted on these files with these settings: kept")
            self.report = (self._q_record(r) or {}).get("report")
        else:
            stamp = self.q_stamp(r)
            files = self.fit_files(r)
            self.log(f"fitting the Q-network on {len(files)} label files ({cfg.epochs} epochs)")
            report = fit(
                files, stamp["q_init"], q_path, cfg.epochs, cfg.learning_rate, cfg.seed, cfg.game_weight,
                fresh_head=r == 0, log=self.log, stop=lambda: bool(stop), device=cfg.device,
            )  # fmt: skip
            if report is None:
                return False
            write_json(self._path(record_name), {"stamp": stamp, "report": report})
            self.report = report
            self._save_time()
            self._log_fit(r, report)
        combine(player(cfg, self.run_dir, r), q_path, cfg.weight, out)
        return True

    def _decisions(self, r: int) -> int:
        """The decisions labelled in rounds 0 to ``r``: the step of the round's TensorBoard scalars."""
        return sum(_rows(path) for k in range(r + 1) for path, _ in self.label_files(k))

    def _log_fit(self, r: int, report: dict[str, Any]) -> None:
        """Round ``r``'s fit to TensorBoard: per decision type, the held-out gain of the Q-network's move over the
        policy's (``fit/<type>_gain``, tricks a decision) and the share of moves it changes (margin 0)."""
        figures = {}
        for gain in report.get("gains", []):
            if gain.get("margin") == 0.0:
                figures[f"fit/{gain['type']}_gain"] = gain["mean"]
                figures[f"fit/{gain['type']}_changed"] = gain["changed"]
        self.tb.scalars({**figures, "time/train_seconds": self.wall}, self._decisions(r))
        self.tb.flush()

    def _read_evals(self) -> list[dict[str, Any]]:
        """The rounds' evaluations made so far (``eval.jsonl``; none when it is missing)."""
        rows = read_lines(self._path(EVALS), "the rounds' evaluations")
        return [row for row in rows if isinstance(row.get("round"), int) and row["round"] < self.config.rounds]

    def _evaluate_round(self, r: int, wall: float) -> None:
        """Evaluate round ``r``'s policy on ``eval.deals`` deals: one line of ``eval.jsonl`` (not training time)."""
        from training.common.tables import format_table
        from training.evaluation.evaluate import eval_scalars, evaluate_against, role_figures

        started, cfg = time.perf_counter(), self.config
        decisions = self._decisions(r)
        policy = self._path(round_policy(cfg, r))
        results = evaluate_against(f"ppo:{policy}", cfg.eval, cfg.env.rules, cfg.eval.deals)
        self.evals.append(
            {
                "round": r,
                "decisions": decisions,
                "wall": wall,
                "deals": cfg.eval.deals,
                **role_figures(results),
                "results": results,
            }
        )
        write_lines(self._path(EVALS), self.evals)
        self.tb.scalars({**eval_scalars(results), "time/train_seconds": wall}, decisions)
        self.tb.flush()
        self.log(f"round {r + 1}: {decisions} decisions labelled, {wall:.0f} s:\n" + format_table(results))
        self.eval_seconds += time.perf_counter() - started

    def _label(self, stop: StopRequest, r: int = 0) -> bool:
        """Make round ``r``'s missing label files, ``workers`` at a time; False when ``stop`` ended it first."""
        files = self.label_files(r)
        os.makedirs(os.path.dirname(files[0][0]), exist_ok=True)
        jobs = [job for path, job in files if not os.path.exists(path)]
        self.log(f"{len(files) - len(jobs)} of {len(files)} label files there; labelling {len(jobs)}")
        if not jobs:
            return True
        bar = progress_bar(len(files), "label files", "file", enabled=not self.quiet, initial=len(files) - len(jobs))
        try:
            if self.ray is not None:
                return self._label_on_ray(self.ray, jobs, stop, bar)
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
        self._save_time()

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

    def _label_on_ray(self, options: RayOptions, jobs: list[Job], stop: StopRequest, bar: Any) -> bool:
        """The jobs as Ray tasks (``RayOptions.run_tasks``: a task whose worker or node was lost is labelled again,
        and logged), each file written here, by the driver, as it arrives; a stop keeps the next file to arrive
        and cancels the others."""
        import ray

        from training.distill.label_playouts import write_labels

        if stop:
            return False
        options.connect()
        policies: dict[str, Any] = dict.fromkeys(job[0] for job in jobs)
        for spec in policies:
            if policy_file(spec):
                with open(policy_file(spec), "rb") as handle:
                    policies[spec] = ray.put(handle.read())  # once, however many files it plays
        tasks = [(job[3], (job, policies[job[0]])) for job in jobs]
        labels = os.path.join(self.run_dir, LABELS)
        finished = options.run_tasks(
            label_task, tasks, describe=lambda path: f"label file {os.path.relpath(path, labels)}", log=self.log
        )
        try:
            for done, (path, (arrays, line)) in enumerate(finished, 1):
                write_labels(path, arrays)
                self._labelled(path, [f"{line} -> {path}"], bar)
                if stop and done < len(tasks):
                    return False
            return True
        finally:
            finished.close()  # the tasks still running are cancelled

    # ---------------------------------------------------------------- the end

    def final_outputs(self) -> list[tuple[str, str]]:
        folder = self.run_dir
        policy, q_net = os.path.join(folder, FINAL_POLICY), os.path.join(folder, Q_NET)
        rows = [
            (FINAL_POLICY, f"the policy; measure it: sergeant-major eval --agents ppo:{policy} trained heuristic"),
            (Q_NET, f"the Q-network (values in tricks / 4); its discards: mix:base=trained;discard=ppo:{q_net}"),
            (Q_RECORD, "the files and settings q.pt was fitted with, and its held-out real-deal gains"),
            (LABELS + "/", "the play-out data files (training/distill/data_playouts.py)"),
        ]
        if self.config.student is not None:
            rows.append((STUDENT, "the copy of the policy that played"))
        if self.config.rounds > 1:
            rows.append((POLICIES + "/", "round<r>.pt, q_round<r>.pt (.json): each round's policy and Q-network"))
        if self.evals:
            rows.append((EVALS, "each round's evaluation (pandas.read_json(path, lines=True)): the learning curve"))
        return rows

    def evaluate(self, deals: int, final: bool = False) -> dict[str, Any]:
        """The final policy against ``eval.opponents`` on ``deals`` deals (``eval.final_deals`` at the end)."""
        from training.evaluation.evaluate import evaluate_against

        return evaluate_against(f"ppo:{self._path(FINAL_POLICY)}", self.config.eval, self.config.env.rules, deals)

    def details(self) -> str:
        return ""

    def facts(self) -> dict[str, Any]:
        return {
            "policy": os.path.join(self.run_dir, FINAL_POLICY),
            "label_files": sum(len(self.label_files(r)) for r in range(self.config.rounds)),
            "rounds": self.config.rounds,
            "fit": self.report,
        }

    def close(self) -> None:
        """The TensorBoard file closed."""
        self.tb.close()


def _rows(path: str) -> int:
    """The decisions in a label file (its header's)."""
    from training.distill.data import shard_rows

    return shard_rows(path)


def further(config: RunConfig) -> str:
    """How a complete run goes further: a policy-iteration run by more rounds (or a bigger budget, with one), a
    one-round run by more seeds."""
    if config.rounds > 1:
        more = f"--set rounds=N (now {config.rounds}: more policy iteration)"
        if config.max_hours > 0:
            more = f"--set max_hours=H (now {config.max_hours:g}) or {more}"
        return f"{{prog}} --resume {{run_dir}} {more}"
    return "{prog} --resume {run_dir} --set 'labels=[...]' (more seeds; the fit is made again on them)"


def backend(prog: str = PROG) -> Backend:
    """The play-out pipeline as the run layer sees it (``sergeant-major improve``)."""
    return Backend(
        prog=prog,
        load_config=load_run_config,
        latest_checkpoint=latest_saved,
        length=lambda cfg: (stage_count(cfg), "labels"),
        unit=UNIT,
        build=lambda cfg, run_dir, resume, args: PlayoutsRun(
            cfg, run_dir, quiet=args.quiet, ray=RayOptions.from_args(args)
        ),
        stop_point="letting the label files in progress finish (with --ray, the next to finish; a fit in progress "
        "starts again on resume)",
        saved=LABELS + "/",
        old_layout=old_layout,
        further=further,
        reached=lambda cfg, summary: budget.reached(summary, stage_count(cfg), cfg.max_hours, UNIT),
    )
