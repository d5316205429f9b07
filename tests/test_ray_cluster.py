"""The Ray jobs on a real multi-node cluster, on this machine: labelling, eval, RLlib, a lost node, shipped code.

One cluster for the whole module (``ray.cluster_utils.Cluster``: a head and a second node, one CPU and a small
object store each, every address on loopback); the node-loss tests add a node of their own and remove it while a
task runs there; the shipped-code test adds a node whose Python cannot import the project at all. Every wait is
bounded (the jobs' own ``timeout``, the threads' and sub-processes' timeouts) and the cluster is torn down in a
``finally``, so a hung cluster fails a test, not the test run.

The cluster runs with token authentication, what Ray 2.60 gives a cluster by default (``ray.init()`` makes a
token; ``ray start --head`` uses one when it exists): the token is in the environment of this process and of every
node and driver it starts (``RAY_AUTH_TOKEN``; nothing is written to ``~/.ray``), and a driver without it is
refused in one line.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import threading
import time
import uuid
import venv
import zipfile
from pathlib import Path

import numpy as np
import pytest
from helpers import listening_addresses, off_loopback

ray = pytest.importorskip("ray", reason="ray is not installed (pip install -e '.[rllib]')")
pytest.importorskip("ray.rllib", reason="ray[rllib] is not installed (pip install -e '.[rllib]')")

from conftest import ray_test_environment  # noqa: E402

from training.common.ray_cluster import RayOptions, project_root  # noqa: E402
from training.distill import data as distill_data  # noqa: E402
from training.evaluation import evaluate as ev  # noqa: E402
from training.evaluation.ray_tasks import play_chunk, play_deals_on_ray  # noqa: E402

NODE = {"num_cpus": 1, "object_store_memory": 80 * 2**20, "node_ip_address": "127.0.0.1"}
HEALTH_CHECKS = {  # a lost node is known lost in about 2 s (Ray's default: 15 s)
    "health_check_initial_delay_ms": 1000,
    "health_check_period_ms": 500,
    "health_check_timeout_ms": 500,
    "health_check_failure_threshold": 3,
}
TIMEOUT = 60  # seconds: the longest wait for any task of a job, a node, a sub-process (each takes a few)
SETTINGS = distill_data.DataSettings(seed=5, samples=2, chunk_hands=1, exchange_start=0.5)
SHARDS = 4  # one hand each
HEAD = {**NODE, "resources": {"head": 1}, "include_dashboard": False, "_system_config": HEALTH_CHECKS}
DEAL_CONFIG = ev.DealConfig(("heuristic", "random"), "hand", 11, ev.RuleSet(), 0, None, 1)
DEALS = 6


AUTH_VARIABLES = ("RAY_AUTH_MODE", "RAY_AUTH_TOKEN", "RAY_AUTH_TOKEN_PATH")


@contextlib.contextmanager
def _token_authentication():
    """Token authentication with a fresh token for this process and the processes it starts (module docstring);
    the earlier settings back afterwards."""
    from ray._private.authentication_test_utils import reset_auth_token_state

    saved = {name: os.environ.get(name) for name in AUTH_VARIABLES}
    os.environ.pop("RAY_AUTH_TOKEN_PATH", None)
    os.environ.update(RAY_AUTH_MODE="token", RAY_AUTH_TOKEN=uuid.uuid4().hex)
    reset_auth_token_state()  # Ray reads the mode once per process: read it again
    try:
        yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
        reset_auth_token_state()


@pytest.fixture(scope="module")
def cluster():
    """A head node (resource ``head``) and a second node (resource ``second``), this process the driver."""
    from ray.cluster_utils import Cluster

    if ray.is_initialized():  # a local instance of another module: tests/conftest.py's local_ray starts it again
        ray.shutdown()
    nodes = None
    with _token_authentication():
        ray_test_environment()
        try:
            nodes = Cluster(initialize_head=True, head_node_args=HEAD)
            second = nodes.add_node(**NODE, resources={"second": 1})
            # joined as a user's job joins it (--ray ADDRESS): on loopback, Ray's own lines held back
            _bounded(lambda: RayOptions(address=nodes.address, code="installed").connect(), "joining the cluster")
            yield nodes, second
        finally:
            ray.shutdown()
            if nodes is not None:
                nodes.shutdown()


def _bounded(call, what: str, seconds: float = TIMEOUT) -> None:
    """``call()`` in a thread, failing the test if it takes more than ``seconds`` (Ray's own connection
    retries can last many minutes)."""
    errors: list[BaseException] = []
    thread = threading.Thread(target=lambda: _record(call, errors), daemon=True)
    thread.start()
    thread.join(seconds)
    if thread.is_alive():
        pytest.fail(f"{what}: no answer in {seconds} s")
    if errors:
        raise errors[0]


def _record(call, errors: list[BaseException]) -> None:
    try:
        call()
    except BaseException as err:  # handed to the test's thread
        errors.append(err)


def _shards(folder) -> dict[str, dict[str, np.ndarray]]:
    names = sorted(n for n in os.listdir(folder) if n.endswith(".npz"))
    return {n: distill_data.read_shard(os.path.join(folder, n)) for n in names}


def _assert_same_data(got, want) -> None:
    a, b = _shards(got), _shards(want)
    assert list(a) == list(b) == [f"shard_{c:05d}.npz" for c in range(SHARDS)], "no shard lost, none extra"
    for name in a:
        for field in distill_data.FIELDS:
            np.testing.assert_array_equal(a[name][field], b[name][field], err_msg=f"{name} {field}")


@pytest.fixture(scope="module")
def local_data(tmp_path_factory):
    """The reference: the same shards labelled in this process (no Ray)."""
    folder = str(tmp_path_factory.mktemp("local") / "data")
    distill_data.generate(folder, SHARDS, SETTINGS, log=lambda _: None)
    return folder


def _options(nodes) -> RayOptions:
    return RayOptions(address=nodes.address, code="installed", timeout=TIMEOUT)


def test_every_node_listens_on_loopback_only_and_the_job_joined_there(cluster):
    """The head, the second node and their workers (all started from this process) listen on 127.0.0.1 only,
    and the driver joined the address it was given, not the machine's network address (Ray's rewrite)."""
    nodes, _ = cluster
    on_both = [_where.options(resources={name: 0.01}).remote() for name in ("head", "second")]
    assert len(set(ray.get(on_both, timeout=TIMEOUT))) == 2, "a worker on each node"
    listening = listening_addresses(os.getpid())
    assert len(listening) >= 8, listening  # two nodes' GCS, raylets, agents and workers
    assert off_loopback(listening) == set()
    assert nodes.address.startswith("127.0.0.1:")
    assert ray.get_runtime_context().gcs_address == nodes.address


@ray.remote(num_cpus=0)
def _where() -> str:
    return ray.get_runtime_context().get_node_id()


def test_labelling_across_the_nodes_equals_the_local_run_and_resumes_without_loss(
    cluster, local_data, tmp_path, capsys
):
    nodes, _ = cluster
    folder = str(tmp_path / "data")
    lines: list[str] = []

    def stop_after_one_shard(line: str) -> None:
        lines.append(line)
        if line.startswith("shard "):
            raise KeyboardInterrupt  # as Ctrl-C after the first shard was written

    with pytest.raises(KeyboardInterrupt):
        distill_data.generate(folder, SHARDS, SETTINGS, log=stop_after_one_shard, ray=_options(nodes))
    assert len([n for n in os.listdir(folder) if n.endswith(".npz")]) == 1
    command = ["--out", folder, "--hands", str(SHARDS), "--seed", "5", "--samples", "2", "--chunk-hands", "1"]
    command += ["--exchange-start", "0.5", "--ray", nodes.address, "--ray-code", "installed"]
    codes: list[int] = []
    _bounded(lambda: codes.append(distill_data.main(command)), "the labelling command")  # resumes the folder
    assert codes == [0]
    assert f"1 of {SHARDS} shards present, {SHARDS - 1} to label" in capsys.readouterr().out
    _assert_same_data(folder, local_data)


def _hold_head_and_second():
    """A placement group holding the one CPU of the head and of the second node (no process starts): the
    next task can only start on a node added since. ``remove_placement_group`` frees them."""
    from ray.util.placement_group import placement_group

    group = placement_group([{"CPU": 1, "head": 1}, {"CPU": 1, "second": 1}], strategy="SPREAD")
    ray.get(group.ready(), timeout=TIMEOUT)
    return group


def _remove_when_reached(nodes, node, marker: str, errors: list[str]) -> threading.Thread:
    """Hold the other nodes until a task on ``node`` has written ``marker``, then free them and remove ``node``
    from the cluster (the task there is killed in the middle)."""
    from ray.util.placement_group import remove_placement_group

    held = _hold_head_and_second()

    def watch() -> None:
        deadline = time.monotonic() + TIMEOUT
        while not os.path.exists(marker):
            if time.monotonic() > deadline:
                errors.append("no task reached the node to remove")
                break
            time.sleep(0.05)
        remove_placement_group(held)
        nodes.remove_node(node, allow_graceful=False)

    thread = threading.Thread(target=watch, daemon=True)
    thread.start()
    return thread


def _doomed_node(nodes):
    node = nodes.add_node(**NODE)
    nodes.wait_for_nodes(timeout=TIMEOUT)
    return node


def test_a_node_lost_in_the_middle_of_labelling_loses_nothing(cluster, local_data, tmp_path, monkeypatch):
    nodes, _ = cluster
    doomed = _doomed_node(nodes)
    marker = str(tmp_path / "reached")
    doomed_id = doomed.node_id
    label = distill_data.label_shard_task

    def stall_on_the_doomed_node(settings, chunk):
        """Label as usual, except on the node about to be removed: stay there (it is killed mid-task)."""
        if ray.get_runtime_context().get_node_id() == doomed_id:
            open(marker, "w").close()
            time.sleep(2 * TIMEOUT)
        return label(settings, chunk)

    monkeypatch.setattr(distill_data, "label_shard_task", stall_on_the_doomed_node)
    errors: list[str] = []
    watcher = _remove_when_reached(nodes, doomed, marker, errors)
    lines: list[str] = []
    folder = str(tmp_path / "data")
    distill_data.generate(folder, SHARDS, SETTINGS, log=lines.append, ray=_options(nodes))
    watcher.join(TIMEOUT)
    assert not errors and not watcher.is_alive()
    retried = [line for line in lines if "worker was lost" in line]
    assert len(retried) == 1 and "retrying (try 2 of 3)" in retried[0], lines
    _assert_same_data(folder, local_data)


PLAYOUTS = """kind: playouts
name: r
output_dir: {folder}
policy: {policy}
epochs: 1
labels:
  - {{seeds: [1, 2, 3], hands: 6, types: [play]}}
"""
"""A play-out run of three label files (``sergeant-major improve``), its policy a file the tasks get as bytes."""


def _members(path) -> dict[str, bytes]:
    """Every array of a label file as the bytes of its ``.npy`` member (np.savez stores them uncompressed)."""
    with zipfile.ZipFile(path) as archive:
        return {name: archive.read(name) for name in sorted(archive.namelist())}


def test_a_node_lost_in_the_middle_of_the_play_outs_labelling_loses_nothing(cluster, tmp_path, monkeypatch):
    """``improve --ray``: the label files made across the nodes, one node removed while it labels a file, are
    the files of a local worker (``label_job``), byte for byte, and the log names the one retry."""
    from training.common.runs import StopRequest
    from training.distill import run_playouts as run
    from training.distill.config_playouts import load_run_config

    nodes, _ = cluster
    config = tmp_path / "c.yaml"
    policy = os.path.join(project_root(), "agents", "policies", "standard_v4.pt")
    config.write_text(PLAYOUTS.format(folder=tmp_path, policy=policy))
    cfg = load_run_config(str(config))
    doomed = _doomed_node(nodes)
    marker = str(tmp_path / "reached")
    doomed_id = doomed.node_id
    label = run.label_task

    def stall_on_the_doomed_node(job, policy):
        """Label as usual, except on the node about to be removed: stay there (it is killed mid-task)."""
        if ray.get_runtime_context().get_node_id() == doomed_id:
            open(marker, "w").close()
            time.sleep(2 * TIMEOUT)
        return label(job, policy)

    monkeypatch.setattr(run, "label_task", stall_on_the_doomed_node)
    errors: list[str] = []
    watcher = _remove_when_reached(nodes, doomed, marker, errors)
    lines: list[str] = []
    trainer = run.PlayoutsRun(cfg, str(tmp_path / "r"), quiet=True, ray=_options(nodes))
    trainer.log = lines.append
    trainer.train(StopRequest())
    watcher.join(TIMEOUT)
    assert not errors and not watcher.is_alive()
    retried = [line for line in lines if "worker was lost" in line]
    assert len(retried) == 1 and retried[0].startswith("label file ") and "retrying (try 2 of 3)" in retried[0], lines
    files = run.label_files(cfg, str(tmp_path / "r"))
    assert [os.path.basename(path) for path, _ in files] == ["1.npz", "2.npz", "3.npz"]
    for path, job in files:
        local = str(tmp_path / f"local_{os.path.basename(path)}")
        run.label_job((*job[:3], local, *job[4:]))
        made, want = _members(path), _members(local)
        assert list(made) == list(want) and "values.npy" in made
        for name in want:
            assert made[name] == want[name], f"{os.path.basename(path)}: {name}"


def _strip(results: list[dict]) -> list[dict]:
    return [{**r, "seconds": None} for r in results]  # timing aside


def test_eval_across_the_nodes_survives_a_lost_node_and_equals_one_worker(cluster, tmp_path):
    nodes, _ = cluster
    doomed = _doomed_node(nodes)
    marker = str(tmp_path / "reached")
    doomed_id = doomed.node_id
    seen = str(tmp_path / "seen")
    os.makedirs(seen)

    def note_the_node_and_stall_on_the_doomed_one(config, indices):
        node = ray.get_runtime_context().get_node_id()
        open(os.path.join(seen, node), "w").close()
        if node == doomed_id:
            open(marker, "w").close()
            time.sleep(2 * TIMEOUT)
        return play_chunk(config, indices)

    errors: list[str] = []
    watcher = _remove_when_reached(nodes, doomed, marker, errors)
    lines: list[str] = []
    results = play_deals_on_ray(
        DEAL_CONFIG,
        DEALS,
        chunk_size=1,
        task=note_the_node_and_stall_on_the_doomed_one,
        timeout=TIMEOUT,
        log=lines.append,
    )
    watcher.join(TIMEOUT)
    assert not errors and not watcher.is_alive()
    assert doomed_id in os.listdir(seen) and len(os.listdir(seen)) >= 2, "the deals ran across the nodes"
    assert len([line for line in lines if line.startswith("deals ") and "worker was lost" in line]) == 1, lines
    ev.init_worker(DEAL_CONFIG)
    assert _strip(results) == _strip([ev.play_deal(i) for i in range(DEALS)])


def test_eval_command_on_the_cluster_equals_one_local_worker(cluster, tmp_path):
    nodes, _ = cluster
    kwargs = {"deals": 4, "seed": 3, "bootstrap": 50, "progress": False}
    on_ray = ev.evaluate(["heuristic", "random"], ray=_options(nodes), **kwargs).to_dict()
    local = ev.evaluate(["heuristic", "random"], workers=1, **kwargs).to_dict()
    for data in (on_ray, local):
        for key in ("timing", "elapsed_seconds"):
            data.pop(key)
        data["config"].pop("workers"), data["config"].pop("ray")
    assert on_ray == local


def test_dmc_actors_on_the_nodes_survive_a_lost_node(cluster, tmp_path, monkeypatch):
    """``train --backend dmc --ray ADDRESS`` with ``train.actors: 2``: actor 0 on a node that is removed once the
    run has filed rollouts; the run finishes, the lost actor replaced (one line) and its rollouts dropped."""
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

    from training.vector import actors, dmc
    from training.vector.config import load_dmc_config

    nodes, _ = cluster
    doomed = _doomed_node(nodes)
    doomed_id = doomed.node_id

    def placed(index: int, generation: int) -> dict:
        if index == 0 and generation == 0:  # the first actor 0 on the node about to go
            return {"scheduling_strategy": NodeAffinitySchedulingStrategy(doomed_id, soft=False)}
        return {"scheduling_strategy": "SPREAD"}

    monkeypatch.setattr(actors, "actor_options", placed)
    lines: list[str] = []
    monkeypatch.setattr(dmc, "progress", lines.append)
    # rounds of 128 decisions (2 actors, 4 games each, 16 steps): the node goes after the second, 8 in all (each
    # round is a few Ray calls, slow on a busy machine: 63 rounds of 32 took 29-76 s in the suite, 17 s alone)
    tiny = ["env.num_games=8", "dmc.n_steps=16", "dmc.batch_size=32", "dmc.replay_rollouts=2", "dmc.net_arch=[16]"]
    quiet = ["train.progress=false", "eval.every=0", "eval.final_deals=0", "train.actors=2"]
    cfg = load_dmc_config(None, [*tiny, *quiet, "train.total_timesteps=1000"])
    trainer = dmc.DMC(cfg, str(tmp_path), ray=RayOptions(address=nodes.address, code="installed", timeout=TIMEOUT))

    def remove_once_running() -> None:
        deadline = time.monotonic() + 3 * TIMEOUT
        while trainer.global_step < 200 and time.monotonic() < deadline:
            time.sleep(0.05)
        nodes.remove_node(doomed, allow_graceful=False)

    remover = threading.Thread(target=remove_once_running, daemon=True)
    remover.start()
    try:
        _bounded(trainer.train, "training with actors on the cluster", 4 * TIMEOUT)  # 3 actors start: imports
    finally:
        trainer.close()
    remover.join(TIMEOUT)
    assert trainer.global_step >= 1000 and trainer.updates > 0
    assert trainer.pool is None  # closed: its Ray actors ended
    lost = [line for line in lines if "was lost" in line]
    assert lost and lost[0].startswith("actor 0 was lost ("), lines


def test_rllib_trains_two_iterations_with_its_env_runner_on_the_second_node(cluster, tmp_path):
    from training.rllib.config import rllib_config_from_dict
    from training.rllib.trainer import RLlibTrainer

    _, second = cluster
    cfg = rllib_config_from_dict(
        {
            "name": "cluster",
            "output_dir": str(tmp_path),
            "ppo": {"train_batch_size": 100, "minibatch_size": 50, "num_epochs": 1, "hiddens": [16]},
            "train": {
                "iterations": 2,
                "num_env_runners": 1,
                "envs_per_runner": 1,
                "runner_resources": {"second": 1},
                "checkpoint_every": 2,
            },
            "eval": {"every": 0, "final_deals": 0},
        }
    )
    trainer = RLlibTrainer(cfg, str(tmp_path / "run"), quiet=True)
    try:
        trainer.train()
        where = trainer.algo.env_runner_group.foreach_env_runner(
            lambda runner: ray.get_runtime_context().get_node_id(), local_env_runner=False, timeout_seconds=TIMEOUT
        )
        assert where == [second.node_id]
        assert trainer.iteration == 2 and trainer.env_steps >= 200
    finally:
        trainer.close()


# ---------------------------------------------------------------- the code reaches nodes that do not have it

PROJECT_NAMES = ("sm_env", "agents", "training", "sm_cli", "sm_web", "__editable__", "sergeant_major_rl")


def _bare_python(folder) -> str:
    """A Python with every package of this one (Ray, numpy, ...) but not the project (neither a checkout nor
    an install, editable or not): a virtual environment whose one ``.pth`` names a folder of links to this
    environment's site-packages, the project's entries left out."""
    site = os.path.dirname(os.path.dirname(ray.__file__))
    links = folder / "site"
    links.mkdir()
    for name in os.listdir(site):
        if not name.startswith(PROJECT_NAMES) and not name.endswith(".pth"):
            os.symlink(os.path.join(site, name), links / name)
    env = folder / "venv"
    venv.create(env, with_pip=False, symlinks=True)
    python = str(env / "bin" / "python")
    own_site = subprocess.run(
        [python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True,
        text=True,
        check=True,
        timeout=TIMEOUT,
    ).stdout.strip()
    with open(os.path.join(own_site, "packages.pth"), "w", encoding="utf-8") as handle:
        handle.write(str(links) + "\n")
    return python


BARE_NODE = """
import socket, sys, time
import ray._private.services as services
from ray._private.node import Node
from ray._private.parameter import RayParams
from ray._raylet import DASHBOARD_AGENT_LISTEN_PORT_NAME, persist_port
ask = services.get_node
def patient(*args, **kwargs):  # Ray gives a new node's raylet 30 s to register: too short on a loaded 2-core machine
    deadline = time.monotonic() + float(sys.argv[3])
    while True:
        try:
            return ask(*args, **kwargs)
        except RuntimeError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.5)
services.get_node = patient
def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]
# the agents' ports chosen here: given none, the raylet waits 15 s (fixed in Ray) for each agent to write its
# port to a file and aborts after; a cold agent in this bare environment can take 20 s on a loaded machine
agent_ports = {name: free_port() for name in
               ("metrics_agent_port", "metrics_export_port", "dashboard_agent_listen_port", "runtime_env_agent_port")}
params = RayParams(gcs_address=sys.argv[1], node_ip_address="127.0.0.1", num_cpus=1, num_gpus=0,
                   object_store_memory=int(sys.argv[2]), min_worker_port=0, max_worker_port=0, **agent_ports)
start_processes = Node.start_ray_processes
def start_after_the_port_file(self):  # the raylet also waits 15 s for the agent's HTTP port file: written first,
    persist_port(self._session_dir, self._node_id, DASHBOARD_AGENT_LISTEN_PORT_NAME,  # with the port the agent
                 agent_ports["dashboard_agent_listen_port"])                            # is given (it writes it too)
    start_processes(self)
Node.start_ray_processes = start_after_the_port_file
node = Node(params, head=False, shutdown_at_exit=True, spawn_reaper=True)  # SIGTERM: its processes stop
while True:
    time.sleep(1)
"""
"""A node of the cluster as ``cluster_utils`` starts one, in a process of its own (``ray start`` refuses a
second node on one machine when every address is on loopback)."""


SHIPPED = ev.DealConfig(("heuristic", "random"), "hand", 3, ev.RuleSet(), 0, None, 1)
DRIVER = """
import json, sys
from training.evaluation.ray_tasks import play_deals_on_ray
from training.evaluation.deals import DealConfig
from sm_env.core.rules import RuleSet
config = DealConfig(("heuristic", "random"), "hand", 3, RuleSet(), 0, None, 1)
results = play_deals_on_ray(config, 4, sys.argv[1], chunk_size=2, code=sys.argv[2], timeout=60)
print(json.dumps([{**r, "seconds": None} for r in results]))
"""
"""The job of ``eval --ray ADDRESS --ray-code CODE`` (its deals, without the command's tables), as a driver of
its own: it joins the cluster, passing the runtime_env of CODE, and prints the results."""


def _bare_environment() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "RAY_ADDRESS")}


def _start_bare_node(python: str, address: str, cwd: Path, log_path: Path) -> subprocess.Popen:
    """BARE_NODE in a process group of its own, its output into ``log_path``."""
    start = [python, "-c", BARE_NODE, address, str(NODE["object_store_memory"]), str(3 * TIMEOUT)]
    with open(log_path, "wb") as log:
        return subprocess.Popen(
            start, cwd=cwd, env=_bare_environment(), stdout=log, stderr=subprocess.STDOUT, start_new_session=True
        )


def _joins(node: subprocess.Popen, alive: int) -> bool:
    """Whether the cluster counts ``alive`` live nodes before ``node`` exits or 4 * TIMEOUT pass (the node
    itself waits up to 3 * TIMEOUT for its raylet)."""
    deadline = time.monotonic() + 4 * TIMEOUT
    while sum(n["Alive"] for n in ray.nodes()) < alive:
        if time.monotonic() >= deadline or node.poll() is not None:
            return False
        time.sleep(0.2)
    return True


def _stop_bare_node(node: subprocess.Popen) -> None:
    with contextlib.suppress(ProcessLookupError):  # the group is gone when the node failed to start
        os.killpg(node.pid, signal.SIGTERM)  # the node's processes: started by this test, in their own group
    node.wait(TIMEOUT)


def test_a_job_ships_its_code_to_a_node_that_cannot_import_the_project(cluster, tmp_path):
    from ray.util.placement_group import remove_placement_group

    nodes, _ = cluster
    python = _bare_python(tmp_path)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    held = _hold_head_and_second()  # the jobs' tasks can only run on the bare node
    bare = None
    try:
        for attempt in range(2):  # a raylet can die at start-up on a loaded 2-core machine: start it again, once
            bare_log = tmp_path / f"bare_node_{attempt}.log"  # its output, quoted when it does not join
            bare = _start_bare_node(python, nodes.address, elsewhere, bare_log)
            if _joins(bare, 3):
                break
            _stop_bare_node(bare)
            bare = None
        if bare is None:
            tail = bare_log.read_text(errors="replace")[-3000:]
            pytest.fail(f"the bare node did not join in 2 starts; the last one's output ends:\n{tail}")
        driver_env = {**_bare_environment(), "PYTHONPATH": project_root()}  # the driver alone has the project
        drivers = {  # the two jobs at once (each mostly waits: its imports, joining, the bare node's workers)
            code: subprocess.Popen(
                [sys.executable, "-c", DRIVER, nodes.address, code],
                cwd=elsewhere,
                env=driver_env,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
            for code in ("installed", "ship")
        }
        runs = {}
        for code, driver in drivers.items():
            try:
                out, err = driver.communicate(timeout=2 * TIMEOUT)
            except subprocess.TimeoutExpired:
                driver.kill()
                out, err = driver.communicate()
            runs[code] = subprocess.CompletedProcess(driver.args, driver.returncode, out, err)
    finally:
        remove_placement_group(held)
        if bare is not None:
            _stop_bare_node(bare)
    installed, shipped = runs["installed"], runs["ship"]
    # the premise: without its code shipped, the job fails there (the bare node cannot import the project)
    assert installed.returncode != 0 and "No module named 'training'" in installed.stderr, installed.stderr[-2000:]
    assert shipped.returncode == 0, shipped.stderr[-2000:]
    ev.init_worker(SHIPPED)
    assert json.loads(shipped.stdout) == json.loads(json.dumps(_strip([ev.play_deal(i) for i in range(4)])))


def test_a_driver_without_the_token_is_refused_in_one_line(cluster, tmp_path):
    nodes, _ = cluster
    without = {k: v for k, v in _bare_environment().items() if k not in AUTH_VARIABLES}
    without.update(HOME=str(tmp_path), PYTHONPATH=project_root())  # no ~/.ray/auth_token there either
    command = ["--agents", "random", "heuristic", "--deals", "2", "--no-progress", "--out", str(tmp_path / "ev")]
    started = time.monotonic()
    refused = subprocess.run(
        [sys.executable, "-m", "training.evaluation.command", *command, "--ray", nodes.address],
        cwd=tmp_path,
        env=without,
        capture_output=True,
        text=True,
        timeout=2 * TIMEOUT,
    )
    assert refused.returncode == 2 and "Traceback" not in refused.stderr, refused.stderr[-2000:]
    last = refused.stderr.strip().splitlines()[-1]
    assert last.startswith(f"sergeant-major eval: error: could not join the Ray cluster at {nodes.address} "), last
    assert "this machine joins without authentication (RAY_AUTH_MODE unset)" in last and "auth_token" in last
    assert "(the head said: Authentication token is missing or incorrect)" in last, last
    # said as soon as Ray logs the head's refusal, not after Ray's own 20 retries a second apart
    assert time.monotonic() - started < 15


# ---------------------------------------------------------------- the runtime environments (no cluster)


def test_the_shipped_code_is_the_three_packages_and_the_requirements_leave_ray_out():
    from training.common.ray_cluster import PACKAGES, connect, requirements, runtime_env

    env = runtime_env("ship")
    assert [os.path.basename(p) for p in env["py_modules"]] == list(PACKAGES)
    assert all(os.path.isfile(os.path.join(p, "__init__.py")) for p in env["py_modules"])
    assert "pip" not in env and runtime_env("installed") is None
    pip = runtime_env("ship+pip")["pip"]
    assert pip == requirements() and any(r.startswith("numba") for r in pip)
    assert not any(r.split("[")[0].startswith("ray") for r in pip), "the nodes' own Ray is kept"
    with pytest.raises(ValueError, match="--ray-code must be one of auto, ship, ship\\+pip, installed"):
        connect(None, "everything")
