"""Acting processes apart from the learner, DouZero's layout: ``train.actors: N`` for the batched trainers.

``train.actors: 0`` (the default): the learner's process acts and learns in turn (training/vector/dmc.py,
training/vector/ppo.py). ``N >= 1``: N acting processes (``spawn``, one torch thread each, ended with the learner's
process: training/common/workers.py) each play a :class:`VectorGame` of their share of ``env.num_games`` with a
copy of the learner's networks and hand each rollout to the learner (the main process), which files it and
updates. What an actor is, and what its rollout holds, is the trainer's (the ``kind`` of :class:`ActorPool`:
:class:`training.vector.dmc.DMCActors`, the finished decisions of the episodes that ended;
:class:`training.vector.ppo.PPOActors`, the whole rollout buffer of its games); the transport, the rounds and the
lost actors are this file's.

Transport: shared memory made by the learner before the actors start (torch's ``share_memory_``); only small
integers cross the pipes, never a pickled array. Nothing an actor touches is locked, and each actor has pipes of
its own, so that an actor killed at any point (``kill -9``, the out-of-memory killer) leaves nothing held: a lock
or a shared queue's lock that a killed actor held would hang the learner and the other actors for good.

- **weights**: the flat float32 tensors the kind publishes (the network's parameters; the PPO snapshot pool) and
  a sequence number, odd while the learner writes them (a seqlock). The learner writes them after each update
  (:meth:`ActorPool.publish`); an actor copies them (:func:`load_flat`) at the start of each rollout when the
  number moved, and copies again if it moved during the copy (:func:`_load_published`), so its network never
  changes in the middle of a rollout. The version of the weights is half the sequence number.
- **rollouts**: each actor owns ``kind.slots`` slots of the kind's arrays (:meth:`layout`). A rollout fills one
  slot or more; the slot's number, its count, and (with the rollout's last slot) the decisions played, the
  episodes ended and the hands' balances by role go down the actor's pipe to the learner, and the learner hands
  the slot back down another pipe once filed. An actor without a free slot waits.

**Staleness, bounded**: the learner takes its rollouts in rounds, one whole rollout from every actor a round,
and a rollout that arrives from an actor already heard from in this round waits, its slots unfreed, for the
next. An actor takes a free slot before it plays a rollout (the learner frees a slot as soon as it has filed it,
before it updates on it), so it plays during the learner's update and fills at most ``kind.slots`` slots ahead:
every rollout is played with the weights of at most ``kind.slots`` updates ago (``actor_lag`` in
``metrics.jsonl``), however uneven the actors' speeds: a slow actor holds the round up instead of falling behind.
(Until 2026-12-07 an actor took its slot after playing, one update staler: at most ``kind.slots + 1``.)

**Across machines** (``sergeant-major train --backend dmc|vector --ray [ADDRESS]``): :class:`RayActorPool`, the
same actors as Ray actors spread over a cluster's nodes, Ray carrying the weights and the rollouts.

**A lost actor** (killed, out of memory, its node gone) is replaced by a new one with fresh games (its seeds'
generation counts up), one line in the log; the slots it had filled and not yet seen filed, and its unfinished
rollout, are dropped.

**Determinism**: each actor's games and draws are seeded from (run seed, actor, generation), but the order in
which the actors' rollouts reach the learner depends on timing: with actors a run is not bit-for-bit repeatable
(``train.actors: 0`` is). **Resume**: a checkpoint holds the learner; the actors' games are not saved, and a
resumed run deals them anew.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable
from multiprocessing.connection import wait
from typing import Any

import numpy as np
import torch
from torch import nn

from training.common.workers import die_with_parent, limit_threads

POLL = 1.0  # seconds between the learner's looks at its actors while it waits for decisions
START_TIMEOUT = 300.0  # seconds without any decision from any actor before the learner gives up (a broken actor)
Store = Callable[[int, dict[str, np.ndarray]], None]  # the learner's filing of a slot: (actor, its arrays)


def games_of(num_games: int, actors: int) -> list[int]:
    """Each actor's share of ``num_games`` games (the first ones take the remainder)."""
    return [num_games // actors + (i < num_games % actors) for i in range(actors)]


def load_flat(module: nn.Module, flat: Any) -> None:
    """A flat float32 vector (:func:`flat_parameters`' layout) into ``module``'s parameters, copied: the module
    never shares memory with ``flat`` (a shared tensor the learner rewrites, or Ray's read-only array)."""
    vector = torch.tensor(np.asarray(flat))  # a copy
    torch.nn.utils.vector_to_parameters(vector, module.parameters())


def flat_parameters(module: nn.Module) -> torch.Tensor:
    """``module``'s parameters as one float32 vector on the CPU."""
    return torch.nn.utils.parameters_to_vector(module.parameters()).detach().cpu()


class ActorPool:
    """The learner's side: the shared memory, the actors' processes, and :meth:`gather` / :meth:`publish`.

    ``cfg``: the run's config; ``trainer``: the learner (its networks' shapes are every actor's); ``kind``: what
    the actors are (:class:`DMCActors`, :class:`training.vector.ppo.PPOActors`: the arrays of a slot, the tensors
    published, the acting object of a process); ``log``: where the lines about lost actors go; ``balances``: the
    learner's :class:`training.vector.ppo.RoleBalances`, to which the actors' hands by role are added."""

    def __init__(self, cfg: Any, trainer: Any, kind: Any, log: Callable[[str], None], balances: Any) -> None:
        import torch.multiprocessing as tmp

        self.cfg, self.kind, self.log = cfg, kind, log
        self.balances = balances  # the learner's RoleBalances: the actors' hands by role are added to it
        self.ctx = tmp.get_context("spawn")
        self.count = cfg.train.actors
        self.games = games_of(cfg.env.num_games, self.count)
        self.offsets = [sum(self.games[:index]) for index in range(self.count)]  # each actor's first game
        self.shared = [tensor.clone().share_memory_() for tensor in kind.published(trainer)]
        self.sequence = self.ctx.RawValue("q", 0)  # the weights' seqlock: odd while publish writes them
        self.stop = self.ctx.RawValue("b", 0)  # 1: the actors end (a plain flag: no lock to be held)
        self.slots = [
            {
                name: torch.zeros((kind.slots, *shape), dtype=dtype).share_memory_()
                for name, (shape, dtype) in kind.layout(trainer, games).items()
            }
            for games in self.games
        ]
        self.generation = [0] * self.count
        self.inbox: list[Any] = [None] * self.count  # each actor's filled slots (the reading end of its pipe)
        self.free: list[Any] = [None] * self.count  # each actor's free slots (the writing end of its pipe)
        self.processes: list[Any] = [None] * self.count
        self.early: list[list[tuple[Any, ...]]] = [[] for _ in range(self.count)]  # next rounds' slots, in order
        self.lost = 0
        for index in range(self.count):
            self._start(index)

    @property
    def weights(self) -> torch.Tensor:
        """The learner's network as the actors load it (the first tensor published)."""
        return self.shared[0]

    @property
    def version(self) -> int:
        """How many times the weights were published."""
        return self.sequence.value // 2

    def _start(self, index: int) -> None:
        """Actor ``index`` started (again) with new pipes, its slots all free."""
        for end in (self.inbox[index], self.free[index]):  # a lost actor's pipes
            if end is not None:
                end.close()
        inbox, filled = self.ctx.Pipe(duplex=False)
        slots_free, free = self.ctx.Pipe(duplex=False)
        shared = (self.shared, self.sequence, self.stop, filled, slots_free, self.slots[index])
        args = (self.kind, index, self.generation[index], self.games[index], self.cfg, shared)
        name = f"{self.kind.name}-{index}"
        process = self.ctx.Process(target=_actor_main, args=args, name=name, daemon=True)
        process.start()
        filled.close()  # the actor's ends are the actor's alone: its death reads as the end of its pipe here
        slots_free.close()
        for slot in range(self.kind.slots):
            free.send(slot)
        self.inbox[index], self.free[index], self.processes[index] = inbox, free, process

    def publish(self, trainer: Any) -> None:
        """The learner's networks for the actors (they take them at their next rollout)."""
        self.sequence.value += 1  # odd: an actor copying now copies again
        for shared, tensor in zip(self.shared, self.kind.published(trainer), strict=True):
            shared.copy_(tensor)
        self.sequence.value += 1

    def gather(self, store: Store, decisions: int | None = None) -> dict[str, int]:
        """Rounds (module docstring: one whole rollout from every actor each) until ``decisions`` decisions were
        played (None: one round), filing every slot with ``store(actor, arrays)``; returns the decisions
        ``played``, the ``episodes`` ended and ``actor_lag``: the most updates by which the weights of a rollout
        filed here were behind the learner's (0: the latest; at most ``kind.slots``)."""
        totals = {"played": 0, "episodes": 0, "actor_lag": 0}
        while True:
            owed = set(range(self.count))  # the actors whose rollout this round still waits for
            for index in range(self.count):  # slots that came early, in an earlier round
                while index in owed and self.early[index]:
                    self._file(self.early[index].pop(0), store, owed, totals)
            waited = 0.0
            while owed:
                self._replace_lost()
                ready = wait([end for end in self.inbox if not end.closed], timeout=POLL)
                if not ready:
                    waited += POLL
                    if waited >= START_TIMEOUT:
                        raise RuntimeError(f"no decision from any of the {self.count} actors in {START_TIMEOUT:g} s")
                    continue
                waited = 0.0
                for end in ready:
                    index = self.inbox.index(end)
                    try:
                        message = end.recv()
                    except (EOFError, OSError):  # the actor is gone: replaced at the next look
                        end.close()
                        continue
                    if index in owed:
                        self._file(message, store, owed, totals)
                    else:  # ahead of this round: kept, its slot not yet free, so that actor waits
                        self.early[index].append(message)
            if decisions is None or totals["played"] >= decisions:
                return totals

    def _file(self, message: tuple[Any, ...], store: Store, owed: set[int], totals: dict[str, int]) -> None:
        """One slot filed and freed; the slot that ends its actor's rollout adds the rollout's counts to
        ``totals`` and takes the actor off ``owed``."""
        index, slot, count, rollout, ended, balances, version = message
        if count:
            store(index, {name: array[slot, :count].numpy() for name, array in self.slots[index].items()})
        with contextlib.suppress(OSError):  # an actor lost meanwhile: replaced at the next look
            self.free[index].send(slot)
        if balances is None:  # one of several slots of a rollout: its last one carries the counts
            return
        owed.discard(index)
        self.balances.add(*balances)
        totals["played"] += rollout
        totals["episodes"] += ended
        totals["actor_lag"] = max(totals["actor_lag"], self.version - version)

    def _replace_lost(self) -> None:
        """Start a new actor in place of each one that died (module docstring)."""
        for index, process in enumerate(self.processes):
            if process.is_alive():
                continue
            self.lost += 1
            self.generation[index] += 1
            self.early[index] = []  # its slots are all free again in the new actor
            self.log(
                f"actor {index} was lost (exit code {process.exitcode}); its unfinished rollout is dropped and a new "
                f"actor deals fresh games (generation {self.generation[index]})"
            )
            self._start(index)

    def close(self) -> None:
        """Stop the actors and wait for them (a few seconds at most, then they are killed)."""
        self.stop.value = 1
        for free in self.free:  # an actor waiting for a slot wakes at the end of its pipe and stops
            free.close()
        deadline = time.monotonic() + 10.0
        for process in self.processes:
            process.join(max(0.1, deadline - time.monotonic()))
            if process.is_alive():
                process.kill()
                process.join(5.0)
        for inbox in self.inbox:
            inbox.close()


class RayActorPool:
    """The actors as Ray actors, spread over a cluster's nodes (``sergeant-major train --backend dmc --ray
    [ADDRESS]``, training/common/ray_cluster.py): Ray carries the weights (one object a update, ``ray.put``) and
    each rollout's finished decisions (a Ray actor's return value): no transport of the project's. Each actor has
    ``kind.slots`` rollouts asked of it at a time (the staleness of :class:`ActorPool`); a rollout asked of an
    actor whose process or node was lost is dropped, and the actor replaced (fresh games, the next generation),
    one line in the log. Same interface as :class:`ActorPool`."""

    def __init__(self, cfg: Any, trainer: Any, kind: Any, log: Callable[[str], None], balances: Any, ray: Any) -> None:
        import ray as ray_module

        ray.connect()  # a RayOptions: a local instance on loopback, or the cluster at its address
        self.ray, self.cfg, self.kind, self.log, self.balances = ray_module, cfg, kind, log, balances
        self.count = cfg.train.actors
        self.games = games_of(cfg.env.num_games, self.count)
        self.offsets = [sum(self.games[:index]) for index in range(self.count)]
        self.generation = [0] * self.count
        self.version, self.lost = 0, 0
        self.weights = self.ray.put([tensor.numpy() for tensor in kind.published(trainer)])
        self.handles: list[Any] = [None] * self.count
        self.pending: dict[Any, tuple[int, int, int]] = {}  # a rollout asked: its actor, generation, weights' version
        self.remote_class = self.ray.remote(num_cpus=1, max_restarts=0, max_task_retries=0)(_RayActing)
        for index in range(self.count):
            self._start(index)

    def _start(self, index: int) -> None:
        options = actor_options(index, self.generation[index])
        self.handles[index] = self.remote_class.options(**options).remote(
            self.kind, index, self.generation[index], self.games[index], self.cfg
        )
        for _ in range(self.kind.slots):
            self._ask(index)

    def _ask(self, index: int) -> None:
        reference = self.handles[index].rollout.remote(self.weights)
        self.pending[reference] = (index, self.generation[index], self.version)

    def publish(self, trainer: Any) -> None:
        """The learner's networks for the rollouts asked from now on."""
        self.weights = self.ray.put([tensor.numpy() for tensor in self.kind.published(trainer)])
        self.version += 1

    def gather(self, store: Store, decisions: int | None = None) -> dict[str, int]:
        """As :meth:`ActorPool.gather`: rounds of one rollout from every actor (the oldest asked of each), taken
        as they finish on any node; a rollout asked ``kind.slots`` rounds ago, so ``actor_lag`` is at most
        ``kind.slots``."""
        from ray.exceptions import RayError, RayTaskError

        totals = {"played": 0, "episodes": 0, "actor_lag": 0}
        while decisions is None or totals["played"] < decisions:
            owed = set(range(self.count))
            waited = 0.0
            while owed:
                oldest = {}  # each owed actor's oldest rollout asked (a Ray actor runs its calls in order)
                for reference, (index, _, _) in self.pending.items():
                    if index in owed and index not in oldest:
                        oldest[index] = reference
                ready, _ = self.ray.wait(list(oldest.values()), num_returns=1, timeout=POLL)
                if not ready:
                    waited += POLL
                    if waited >= START_TIMEOUT:
                        raise RuntimeError(f"no rollout from any of the {self.count} Ray actors in {START_TIMEOUT:g} s")
                    continue
                waited = 0.0
                index, _, version = self.pending.pop(ready[0])
                try:
                    arrays, rollout, ended, balances = self.ray.get(ready[0])
                except RayTaskError as err:  # the acting itself failed: a bug, not a lost node
                    raise err.as_instanceof_cause() from None
                except RayError as err:  # its process or node was lost
                    self._replace(index, type(err).__name__)
                    continue
                if len(next(iter(arrays.values()))):
                    store(index, arrays)
                owed.discard(index)
                totals["played"] += rollout
                totals["episodes"] += ended
                totals["actor_lag"] = max(totals["actor_lag"], self.version - version)
                self.balances.add(*balances)
                self._ask(index)
            if decisions is None:
                break
        return totals

    def _replace(self, index: int, reason: str) -> None:
        self.lost += 1
        self.generation[index] += 1
        for reference, (i, _, _) in list(self.pending.items()):
            if i == index:
                del self.pending[reference]
        with contextlib.suppress(Exception):  # gone already
            self.ray.kill(self.handles[index], no_restart=True)
        self.log(
            f"actor {index} was lost ({reason}: its Ray process or node); its unfinished rollouts are dropped and a "
            f"new actor deals fresh games (generation {self.generation[index]})"
        )
        self._start(index)

    def close(self) -> None:
        """End the Ray actors (the cluster stays)."""
        for handle in self.handles:
            with contextlib.suppress(Exception):
                self.ray.kill(handle, no_restart=True)
        self.pending.clear()


def actor_options(index: int, generation: int) -> dict[str, Any]:
    """Where Ray places actor ``index``: spread over the nodes (a test may place one on a node it then removes)."""
    return {"scheduling_strategy": "SPREAD"}


class _RayActing:
    """An acting object of ``kind`` in a Ray actor: one torch thread; :meth:`rollout` takes the published tensors
    it is to play with."""

    def __init__(self, kind: Any, index: int, generation: int, num_games: int, cfg: Any) -> None:
        limit_threads()
        self.acting = kind.acting(index, generation, num_games, cfg)

    def rollout(self, tensors: list[np.ndarray]) -> tuple[dict[str, np.ndarray], int, int, tuple[Any, ...]]:
        self.acting.load(tensors)
        return self.acting.rollout()


def _actor_main(kind: Any, index: int, generation: int, num_games: int, cfg: Any, shared: tuple[Any, ...]) -> None:
    """One acting process (module docstring): rollouts until the learner says stop, each copied into one slot
    or more (the last one carries the rollout's counts)."""
    die_with_parent()
    limit_threads()
    torch.set_num_threads(1)
    tensors, sequence, stop, filled, free, slots = shared
    acting = kind.acting(index, generation, num_games, cfg)
    seen = -1  # the sequence number of the weights this actor plays with
    capacity = next(iter(slots.values())).shape[1]
    while True:
        slot = _free_slot(free, stop)  # taken before the rollout is played: its weights are the newest then
        if slot is None:
            return
        if sequence.value != seen:
            seen = _load_published(acting, tensors, sequence)
        arrays, played, ended, balances = acting.rollout()
        rows = len(next(iter(arrays.values())))
        start = 0
        while True:
            end = min(start + capacity, rows)
            count = end - start
            for name, array in arrays.items():
                slots[name][slot, :count] = torch.from_numpy(array[start:end])
            last = end == rows
            counts = (played, ended, balances) if last else (0, 0, None)
            filled.send((index, slot, count, *counts, seen // 2))
            start = end
            if last:
                break
            slot = _free_slot(free, stop)  # a rollout longer than one slot
            if slot is None:
                return


def _free_slot(free: Any, stop: Any) -> int | None:
    """The next slot the learner freed (an actor waits for it), or None once the learner stops the pool."""
    try:
        slot = free.recv()
    except EOFError:  # the learner closed the pool
        return None
    return None if stop.value else slot


def _load_published(acting: Any, tensors: list[torch.Tensor], sequence: Any) -> int:
    """Copy the published tensors into ``acting`` as a seqlock reader: again while the learner writes them (an
    odd sequence number) or if it wrote during the copy; the even sequence number of the weights copied."""
    while True:
        before = sequence.value
        if before % 2 == 0:
            acting.load(tensors)
            if sequence.value == before:
                return before
        time.sleep(0.001)
