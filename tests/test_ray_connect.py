"""``--ray ADDRESS`` that leads to no cluster: one line within a bounded time, never a wait of minutes.

Every address here is on loopback: a port with nothing listening (refused at once), a port that accepts TCP
connections and answers nothing (what a wrong port or a stuck head looks like to Ray), or an address of another
form. No Ray instance is started in this process: the refused ports fail the TCP probe before ``ray.init``, and
the silent port's ``ray.init`` runs in a sub-process of its own.
"""

from __future__ import annotations

import errno
import os
import socket
import subprocess
import sys
import time

import pytest

pytest.importorskip("ray", reason="ray is not installed (pip install -e '.[rllib]')")

from training.common import ray_cluster  # noqa: E402
from training.common.ray_cluster import RayConnectError, connect, connect_seconds, probe, split_address  # noqa: E402


@pytest.fixture(autouse=True)
def _not_connected():
    """Each test starts unconnected (``connect`` keeps a connection this process already has): the Ray group's
    worker (tests/conftest.py) may hold the local instance of an earlier test."""
    import ray

    if ray.is_initialized():
        ray.shutdown()


@pytest.fixture
def closed_port() -> int:
    """A loopback port with nothing listening (bound, then closed)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.mark.parametrize("scheme", ["", "ray://"])
def test_a_closed_port_is_one_line_at_once(closed_port, scheme):
    address = f"{scheme}127.0.0.1:{closed_port}"
    started = time.monotonic()
    with pytest.raises(RayConnectError) as caught:
        connect(address, "installed")
    assert time.monotonic() - started < 5
    message = str(caught.value)
    assert "\n" not in message
    assert f"cannot reach the Ray cluster at {address}: nothing listens on port {closed_port}" in message
    assert "connection refused" in message and "ray start --head" in message


@pytest.mark.parametrize(
    ("address", "why"),
    [
        ("http://127.0.0.1:6379", "unknown scheme 'http://'"),
        ("127.0.0.1", "not an address"),
        ("127.0.0.1:port", "not an address"),
        ("127.0.0.1:70000", "not an address"),
        ("ray://127.0.0.1:1/job", "not an address"),
    ],
)
def test_an_address_of_another_form_is_refused_by_name(address, why):
    with pytest.raises(RayConnectError, match=f"^--ray {address}: {why}; give HOST:PORT"):
        connect(address, "installed")


def test_the_address_forms():
    assert split_address("10.0.0.1:6379") == ("", "10.0.0.1", 6379)
    assert split_address("ray://head.example:10001") == ("ray", "head.example", 10001)
    assert split_address("[::1]:6379") == ("", "::1", 6379)


@pytest.mark.parametrize(
    ("failure", "why"),
    [
        (TimeoutError(), "no answer from 10.9.9.9:6379 in 5 s (host down or unreachable"),
        (OSError(errno.EHOSTUNREACH, "No route to host"), "10.9.9.9:6379 unreachable (No route to host)"),
        (socket.gaierror(socket.EAI_NONAME, "Name or service not known"), "host '10.9.9.9' not found"),
    ],
)
def test_an_unreachable_or_unknown_host_is_one_line(monkeypatch, failure, why):
    def fail(*args, **kwargs):
        raise failure

    monkeypatch.setattr(ray_cluster.socket, "create_connection", fail)
    with pytest.raises(RayConnectError, match=r"^cannot reach the Ray cluster at 10\.9\.9\.9:6379: " + why[:20]):
        probe("10.9.9.9:6379", 5)
    with pytest.raises(RayConnectError) as caught:
        probe("10.9.9.9:6379", 5)
    assert why in str(caught.value)


SILENT_DRIVER = """
import sys, time
from training.common.ray_cluster import RayConnectError, connect
started = time.monotonic()
try:
    connect(sys.argv[1], "installed", connect_timeout=float(sys.argv[2]))
except RayConnectError as err:
    print(f"{time.monotonic() - started:.1f}", err)
"""


def test_a_port_that_answers_nothing_gives_up_after_the_connect_timeout(tmp_path):
    with socket.socket() as silent:  # accepts connections (the kernel does), never speaks
        silent.bind(("127.0.0.1", 0))
        silent.listen(8)
        address = f"127.0.0.1:{silent.getsockname()[1]}"
        env = {**os.environ, "RAY_AUTH_MODE": "disabled", "RAY_USAGE_STATS_ENABLED": "0"}
        env["PYTHONPATH"] = ray_cluster.project_root()
        done = subprocess.run(
            [sys.executable, "-c", SILENT_DRIVER, address, "3"],
            capture_output=True,
            text=True,
            timeout=60,  # Ray's own retries outlast this by minutes
            cwd=tmp_path,
            env=env,
        )
    waited, _, message = done.stdout.strip().partition(" ")
    assert message.startswith(f"the Ray cluster at {address} did not take this driver in 3 s"), done.stdout
    assert "RAY_AUTH_MODE" in message and "--ray-connect-timeout" in message
    assert 2.5 < float(waited) < 10
    assert done.stderr == "", "Ray's own lines are held back: the project's line is the only one"
    log_file = message.rpartition("Ray's own messages: ")[2]
    assert os.path.basename(log_file).startswith("sergeant-major-ray-join-"), message
    with open(log_file, encoding="utf-8") as held:  # what Ray said instead
        assert f"Connecting to existing Ray cluster at address: {address}" in held.read(), "joined the address given"
    os.remove(log_file)


def test_the_connect_timeout_option_is_checked():
    assert connect_seconds("0.5") == 0.5
    for bad in ("0", "-1", "soon", "nan", "3601"):
        with pytest.raises(Exception, match="must be seconds, > 0 and at most 3600"):
            connect_seconds(bad)


def _one_error_line(err: str, prog: str, address: str) -> None:
    lines = [line for line in err.splitlines() if line.strip()]
    assert lines[-1].startswith(f"{prog}: error: cannot reach the Ray cluster at {address}: "), err
    assert "Traceback" not in err


def test_eval_and_tournament_say_so_in_one_line(closed_port, tmp_path, capsys):
    from sm_cli import main as cli_main

    address = f"127.0.0.1:{closed_port}"
    agents = ["--agents", "random", "heuristic", "--deals", "2", "--no-progress", "--ray", address]
    assert cli_main(["eval", *agents, "--out", str(tmp_path / "ev")]) == 2
    _one_error_line(capsys.readouterr().err, "sergeant-major eval", address)
    assert cli_main(["tournament", *agents, "--out", str(tmp_path / "tour")]) == 2
    _one_error_line(capsys.readouterr().err, "sergeant-major tournament", address)


def test_distill_says_so_in_one_line_and_leaves_no_run_folder(closed_port, tmp_path, capsys):
    from sm_cli import main as cli_main

    address = f"127.0.0.1:{closed_port}"
    runs = tmp_path / "runs"
    argv = ["distill", "--config", "configs/distill.yaml", "--set", f"output_dir={runs}", "--ray", address]
    assert cli_main(argv) == 2
    _one_error_line(capsys.readouterr().err, "sergeant-major distill", address)
    assert not runs.exists() or not any(runs.iterdir())


def test_improve_says_so_in_one_line_and_leaves_no_run_folder(closed_port, tmp_path, capsys):
    from sm_cli import main as cli_main

    address = f"127.0.0.1:{closed_port}"
    runs = tmp_path / "runs"
    config = tmp_path / "c.yaml"
    config.write_text(f"kind: playouts\nname: r\noutput_dir: {runs}\nlabels:\n  - {{seeds: [1], hands: 4}}\n")
    assert cli_main(["improve", "--config", str(config), "--ray", address]) == 2
    _one_error_line(capsys.readouterr().err, "sergeant-major improve", address)
    assert not runs.exists() or not any(runs.iterdir())


def test_the_rllib_trainer_says_so_in_one_line_and_leaves_no_run_folder(closed_port, tmp_path, capsys):
    pytest.importorskip("ray.rllib", reason="ray[rllib] is not installed (pip install -e '.[rllib]')")
    from sm_cli import main as cli_main

    address = f"127.0.0.1:{closed_port}"
    runs = tmp_path / "runs"
    argv = ["train", "--backend", "rllib", "--config", "configs/rllib_quickstart.yaml", "--address", address]
    assert cli_main([*argv, "--set", f"output_dir={runs}"]) == 2
    _one_error_line(capsys.readouterr().err, "sergeant-major train --backend rllib", address)
    assert not runs.exists() or not any(runs.iterdir())


def test_ray_alone_starts_a_new_local_instance_on_loopback(monkeypatch):
    """``--ray`` with no address (and no RAY_ADDRESS) asks Ray for a new local instance on 127.0.0.1: given no
    address, ``ray.init`` would join the cluster a ``ray start`` on this machine left running (another user's, a
    test's), token and all."""
    import ray

    calls = []
    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    monkeypatch.setattr(ray, "init", lambda **kwargs: calls.append(kwargs))
    connect(None, "installed", num_cpus=1)
    assert len(calls) == 1
    assert calls[0]["address"] == "local" and calls[0]["_node_ip_address"] == "127.0.0.1"
    assert calls[0]["include_dashboard"] is False
