"""``eval --ray``: the duplicate evaluation's deals as Ray tasks, equal to the local process pool."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
from helpers import listening_addresses, off_loopback

pytest.importorskip("ray", reason="ray is not installed (pip install -e '.[rllib]')")

from training.evaluation import command  # noqa: E402
from training.evaluation import evaluate as ev  # noqa: E402
from training.evaluation.ray_tasks import chunks, play_chunk, play_deals_on_ray  # noqa: E402
from training.evaluation.result import EvalResult  # noqa: E402


def _strip(result: EvalResult) -> dict:
    data = result.to_dict()
    for key in ("timing", "elapsed_seconds"):
        data.pop(key)
    for key in ("workers", "ray"):
        data["config"].pop(key)
    return data


def test_a_local_instance_listens_on_loopback_only(local_ray):
    """The local instance of ``--ray`` (``connect``, as eval, tournament, distill and RLlib training start it):
    its GCS, raylet, agents and a worker listen on 127.0.0.1 only, never on every interface."""
    ray = local_ray
    assert ray.get(ray.remote(lambda: 1).remote(), timeout=60) == 1  # a worker process is up
    listening = listening_addresses(os.getpid())
    assert len(listening) >= 5, listening
    assert off_loopback(listening) == set()
    assert ray.get_runtime_context().gcs_address.startswith("127.0.0.1:")


def test_every_ray_instance_of_the_project_starts_in_connect():
    """No product module calls ``ray.init`` but ``training/common/ray_cluster.py``: every Ray instance the project
    starts or joins goes through ``connect``, which keeps it on loopback."""
    root = Path(__file__).resolve().parent.parent
    callers = [
        str(path.relative_to(root))
        for package in ("sm_env", "agents", "training", "sm_cli", "sm_web", "benchmarks")
        for path in (root / package).rglob("*.py")
        if re.search(r"\bray\.init\(", path.read_text(encoding="utf-8"))
    ]
    assert callers == ["training/common/ray_cluster.py"]


def test_chunks_cover_every_deal_once():
    assert chunks(7, 3) == [[0, 1, 2], [3, 4, 5], [6]]
    assert sum(chunks(100, 7), []) == list(range(100))


@pytest.mark.parametrize("mode", ["hand", "game"])
def test_eval_on_ray_equals_one_local_worker(local_ray, mode):
    agents = ["heuristic", "random", "pimc:samples=2"] if mode == "hand" else ["heuristic", "random"]
    kwargs = {"deals": 10, "mode": mode, "seed": 7, "max_hands": 3, "bootstrap": 200, "progress": False}
    local = ev.evaluate(agents, workers=1, **kwargs)
    on_ray = ev.evaluate(agents, ray="", **kwargs)
    assert _strip(on_ray) == _strip(local)
    assert on_ray.config["ray"] == "" and on_ray.config["workers"] is None


def test_deals_of_a_lost_worker_are_retried(local_ray, tmp_path):
    marker = str(tmp_path / "crashed")

    def crash_first_attempt(config, indices):
        """Kill the worker process the first time chunk 0 is played (a lost worker), then play normally."""
        if indices[0] == 0 and not os.path.exists(marker):
            open(marker, "w").close()
            os._exit(1)
        return play_chunk(config, indices)

    config = ev.DealConfig(("heuristic", "random"), "hand", 3, ev.RuleSet(), 0, None, 1)
    seen = []
    results = play_deals_on_ray(config, 6, on_result=seen.append, chunk_size=2, task=crash_first_attempt)
    assert os.path.exists(marker), "the first attempt did crash its worker"
    ev.init_worker(config)
    expected = [ev.play_deal(i) for i in range(6)]
    assert [{**r, "seconds": None} for r in results] == [{**r, "seconds": None} for r in expected]  # timing aside
    assert sorted(r["index"] for r in seen) == list(range(6))


def test_an_agent_error_is_raised_not_retried(local_ray):
    config = ev.DealConfig(("heuristic", "no-such-agent"), "hand", 3, ev.RuleSet(), 0, None, 1)
    with pytest.raises(ValueError, match="unknown agent"):
        play_deals_on_ray(config, 2, chunk_size=1)


def test_eval_command_line_takes_ray(local_ray, tmp_path, capsys):
    out = tmp_path / "eval"
    code = command.main(
        ["--agents", "heuristic", "random", "--deals", "4", "--ray", "--no-progress", "--bootstrap", "50"]
        + ["--out", str(out)]
    )
    assert code == 0
    assert (out / "results.json").exists() or any(p.suffix == ".json" for p in out.iterdir())


def test_a_connected_process_refuses_another_cluster_and_keeps_its_own(local_ray):
    from training.common.ray_cluster import RayConnectError, connect

    current = local_ray.get_runtime_context().gcs_address
    other = f"127.0.0.1:{int(current.rpartition(':')[2]) % 65535 + 1}"
    with pytest.raises(
        RayConnectError, match=rf"--ray {other}: this process is already connected to the Ray cluster at {current}"
    ):
        connect(other, "installed")
    connect(current, "installed")  # its own cluster, and no address: the connection kept
    connect(None, "installed")
    assert local_ray.is_initialized() and local_ray.get_runtime_context().gcs_address == current
