"""Ray for the jobs that take ``--ray [ADDRESS]``: joining a cluster, shipping the code, retrying lost tasks.

Five jobs run on Ray: the evaluation's deals (``sergeant-major eval --ray``), a tournament's tables
(``sergeant-major tournament --ray``), the labelling of positions for distillation (``sergeant-major distill
--ray``), the play-outs' label files (``sergeant-major improve --ray``) and RLlib training (``sergeant-major train
--backend rllib --address``). They share this module (``docs/cluster.md`` is the user's page):

- :func:`connect`: ``address`` None, ``""`` or ``"local"`` starts a local Ray instance (None and ``""`` join the
  one ``RAY_ADDRESS`` names instead, if set); otherwise it joins the cluster at that address (``ray start
  --head`` prints it; ``"auto"``: the cluster this machine belongs to). Nothing happens if this process is
  connected already (a caller's own ``ray.init``). Joining is bounded: ``HOST:PORT`` (or ``ray://HOST:PORT``)
  is first probed with a TCP connection, then ``ray.init`` gets what is left of ``connect_timeout``
  (:data:`CONNECT_TIMEOUT` by default, ``--ray-connect-timeout``), its own log lines held back; an address
  that leads to no cluster (a closed port, an unreachable or unknown host, another scheme, a cluster that
  refuses this driver or does not answer) raises :class:`RayConnectError`, one line naming the address, what
  was tried and what to check.
- Loopback: a local instance listens on ``127.0.0.1`` only (every Ray process of it: GCS, raylet, agents,
  workers), and an address on loopback (``127.0.0.1:PORT``, ``localhost:PORT``, ``auto`` finding one) is
  joined on loopback: :func:`stay_on_loopback`. Left to itself, Ray 2.60 on Linux rewrites ``127.0.0.1`` to
  the machine's network address and listens on every interface, so anyone who can reach the machine could
  run code in it; the probe then checked one socket and ``ray.init`` joined another.
- :func:`runtime_env`: how the project's code reaches the nodes, by ``code`` mode (:data:`CODE_MODES`):

  ``auto``      ``ship`` when joining a cluster, ``installed`` for a local instance (the default);
  ``ship``      the packages ``sm_env``, ``agents`` and ``training`` of this checkout travel as Ray
                ``py_modules`` (uploaded once per version of the code, cached on each node): nodes need Python,
                Ray and the project's requirements, not the project;
  ``ship+pip``  the same, and Ray installs the requirements (numpy, numba, torch, ...) on each node with pip
                (nodes need only Python and Ray; the first job on a node waits for the install);
  ``installed`` nothing is shipped: every node has the project installed (a container image, a shared disk).

- :func:`as_completed`: a list of jobs (a key and the arguments of one call of a task function), run as Ray
  tasks spread over the nodes; yields ``(key, result)`` as each finishes, every key exactly once. A task whose
  worker or node was lost is submitted again (up to ``attempts`` tries in all), and the log says which and
  why; an exception raised by the task itself is not retried but raised here. Every wait is bounded
  (``timeout``: the longest time without any task finishing), and the tasks still running are cancelled when
  the caller stops early (an error, Ctrl-C).

Needs ``pip install -e ".[rllib]"`` (or just ``ray``).
"""

from __future__ import annotations

import contextlib
import ipaddress
import logging
import os
import signal
import socket
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Generator, Hashable, Sequence
from dataclasses import dataclass
from typing import Any

from training.common.errors import ConfigError

CODE_MODES = ("auto", "ship", "ship+pip", "installed")
PACKAGES = ("sm_env", "agents", "training")
"""The packages a Ray worker imports (the command line and the web app stay on the driver)."""
EXCLUDES = ["__pycache__", "*.pyc"]
PROJECT = "sergeant-major-rl"
PIP_EXTRA = "rllib"  # the requirements a worker needs: the core ones and this extra's (torch, pydantic, ...)
RAY_MISSING = "--ray needs Ray: pip install -e '.[rllib]' (or pip install ray)"
CONNECT_TIMEOUT = 60.0  # seconds: the longest wait to join a cluster (--ray-connect-timeout)
MAX_CONNECT_TIMEOUT = 3600.0
REFUSAL_POLL = 0.25  # seconds between looks at Ray's held-back log for a refusal while it joins
REFUSED = "InvalidAuthToken"  # what Ray's GCS client logs when the head refuses the driver's authentication
PROBE_TIMEOUT = 5.0  # seconds: the TCP probe of the head's port (part of the connect timeout)
LOOPBACK = "127.0.0.1"
LOOPBACK_VARIABLE = "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"
"""Ray's switch (``0``) that keeps its node address on loopback instead of the machine's network address."""


def project_root() -> str:
    """The folder that holds the packages of :data:`PACKAGES` (this checkout, or site-packages)."""
    return os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def requirements() -> list[str]:
    """The project's requirements as pip strings: the core ones and those of the ``rllib`` extra, Ray left out
    (the nodes run it already, in the version of the cluster); read from the installed package's metadata."""
    from importlib import metadata

    try:
        listed = metadata.requires(PROJECT) or []
    except metadata.PackageNotFoundError:
        raise ValueError(f"--ray-code ship+pip reads the requirements of the installed {PROJECT}") from None
    wanted = []
    for line in listed:
        spec, _, marker = line.partition(";")
        if marker and f'extra == "{PIP_EXTRA}"' not in marker:
            continue
        name = spec.split("[")[0].split("<")[0].split(">")[0].split("=")[0].strip()
        if name.lower() not in ("ray", PROJECT):
            wanted.append(spec.strip())
    return wanted


def runtime_env(code: str) -> dict[str, Any] | None:
    """The Ray ``runtime_env`` of a job for a code mode other than ``auto`` (module docstring); None: none."""
    if code not in CODE_MODES or code == "auto":
        raise ValueError(f"code mode must be one of {', '.join(m for m in CODE_MODES if m != 'auto')}, got {code!r}")
    if code == "installed":
        return None
    root = project_root()
    env: dict[str, Any] = {"py_modules": [os.path.join(root, name) for name in PACKAGES], "excludes": list(EXCLUDES)}
    if code == "ship+pip":
        env["pip"] = requirements()
    return env


class RayConnectError(ConfigError):
    """An address that leads to no Ray cluster this driver may join (or Ray missing): a bad setting, reported
    in one line like any other (``PROG: error: ...``, exit status 2)."""


def split_address(address: str) -> tuple[str, str, int]:
    """``(scheme, host, port)`` of ``HOST:PORT`` (scheme ``""``) or ``ray://HOST:PORT`` (scheme ``"ray"``,
    Ray Client); an IPv6 host goes in brackets (``[::1]:6379``). Anything else raises :class:`RayConnectError`."""
    scheme, sep, rest = address.partition("://")
    if not sep:
        scheme, rest = "", address
    if scheme not in ("", "ray"):
        raise RayConnectError(
            f"--ray {address}: unknown scheme {scheme + '://'!r}; give HOST:PORT (ray start --head prints it), "
            "ray://HOST:PORT (Ray Client) or auto (the cluster this machine belongs to)"
        )
    host, colon, port = rest.rpartition(":")
    host = host[1:-1] if host.startswith("[") and host.endswith("]") else host
    if not colon or not host or not port.isdigit() or not 0 < int(port) < 65536 or "/" in rest:
        raise RayConnectError(
            f"--ray {address}: not an address; give HOST:PORT (ray start --head prints it, e.g. 10.0.0.1:6379), "
            "ray://HOST:PORT (Ray Client) or auto"
        )
    return scheme, host, int(port)


def is_loopback(host: str) -> bool:
    """Whether ``host`` names this machine's loopback interface (``localhost``, ``127.x.x.x``, ``::1``)."""
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def stay_on_loopback() -> None:
    """Keep every Ray process started from here on, in this process and its children, on loopback: Ray's node
    address stays ``127.0.0.1`` (:data:`LOOPBACK_VARIABLE` ``=0`` in the environment, which the raylet and its
    workers inherit, and in this process's Ray, which read it when first imported). Together with
    ``_node_ip_address=127.0.0.1`` for a new instance, every listener is on ``127.0.0.1`` (checked by
    ``tests/test_ray_eval.py`` and ``tests/test_ray_cluster.py``). Call it before Ray starts or joins."""
    os.environ[LOOPBACK_VARIABLE] = "0"
    from ray._private import ray_constants

    ray_constants.ENABLE_RAY_CLUSTER = False


def join_address(address: str) -> str:
    """The ``HOST:PORT`` (or ``ray://HOST:PORT``) that ``ray.init(address=address)`` will use: ``auto`` read as
    Ray reads it (``RAY_ADDRESS``, else the last ``ray start`` on this machine); one on loopback kept there
    (:func:`stay_on_loopback`). :class:`RayConnectError` when ``auto`` finds no cluster."""
    if address == "auto":
        from ray._private.services import get_ray_address_from_environment

        try:
            found = get_ray_address_from_environment("auto", None)
        except (ConnectionError, OSError, ValueError) as err:
            first = (str(err).strip().splitlines() or [""])[0][:200]
            raise RayConnectError(f"--ray auto: no Ray cluster found on this machine ({first})") from None
        if not found or found == "auto":
            raise RayConnectError("--ray auto: no Ray cluster found on this machine (start one with ray start --head)")
        address = found
    _, host, _ = split_address(address)
    if is_loopback(host):
        stay_on_loopback()
    return address


def probe(address: str, timeout: float) -> None:
    """A TCP connection to the host and port of ``address`` (:func:`split_address`), closed at once; raises
    :class:`RayConnectError` naming what failed (unknown host, refused, unreachable, no answer in ``timeout``)."""
    _, host, port = split_address(address)
    check = "check the host and port (ray start --head prints them), that the head runs, and the firewall"
    try:
        with socket.create_connection((host, port), timeout=timeout):
            return
    except socket.gaierror as err:
        why = f"host {host!r} not found ({err.strerror})"
    except ConnectionRefusedError:
        why = f"nothing listens on port {port} of {host} (connection refused)"
    except TimeoutError:
        why = f"no answer from {host}:{port} in {timeout:g} s (host down or unreachable, or a firewall drops it)"
    except OSError as err:
        why = f"{host}:{port} unreachable ({err.strerror or err})"
    raise RayConnectError(f"cannot reach the Ray cluster at {address}: {why}; {check}")


def _init_bounded(ray: Any, target: str, timeout: float, limit: float, **kwargs: Any) -> None:
    """``ray.init(**kwargs)`` given at most ``timeout`` seconds (Ray's own retries can last many minutes): run in a
    daemon thread, Ray's log lines held back (:class:`_HeldBack`); an error or the timeout raises
    :class:`RayConnectError` naming ``target``, the cluster's address (``limit``: the connect timeout the message
    names)."""
    outcome: list[BaseException | None] = []

    def join() -> None:
        try:
            ray.init(**kwargs)
            outcome.append(None)
        except BaseException as err:  # handed to the caller's thread
            outcome.append(err)

    worker_log = logging.getLogger("ray._private.worker")
    quiet = _DropMessage("SIGTERM handler is not set")  # set below, in the main thread
    worker_log.addFilter(quiet)
    held, refused = _HeldBack(), ""
    try:
        thread = threading.Thread(target=join, name="ray-connect", daemon=True)
        thread.start()
        deadline = time.monotonic() + max(timeout, 0.1)
        while thread.is_alive() and time.monotonic() < deadline and not refused:
            thread.join(min(REFUSAL_POLL, max(deadline - time.monotonic(), 0.0)))
            refused = held.refusal()
    finally:
        worker_log.removeFilter(quiet)
        log_file = held.end(still_running=not outcome)
    check = (
        f"{auth_hint()}; check too that the port is the head's and that this machine runs the cluster's Ray and "
        "Python versions (docs/cluster.md)"
    )
    if refused and not outcome:  # Ray would retry a refused token for about 20 s before it says so
        raise RayConnectError(
            f"could not join the Ray cluster at {target} (the head said: {refused}): {check}; Ray's own "
            f"messages: {log_file}"
        )
    if not outcome:
        raise RayConnectError(
            f"the Ray cluster at {target} did not take this driver in {limit:g} s (its port answers, ray.init "
            f"still waits; --ray-connect-timeout SECONDS waits longer): {check}; Ray's own messages: {log_file}"
        )
    err = outcome[0]
    if err is not None:
        first = (str(err).strip().splitlines() or [""])[0][:200]
        raise RayConnectError(
            f"could not join the Ray cluster at {target} ({type(err).__name__}: {first}): {check}; Ray's own "
            f"messages: {log_file}"
        )
    held.discard()
    if threading.current_thread() is threading.main_thread():  # what ray.init does in the main thread
        signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(signum))


class _HeldBack:
    """Ray's own log lines while it joins a cluster (its C++ core writes to file descriptor 2 directly, its Python
    loggers to the stream they hold) go to a temporary file, not the terminal, so that a failed join reads as the
    project's one line. :meth:`end` puts descriptor 2 back and removes the file after a join that succeeded, keeps
    the file (and returns its path) after one that failed; while ``ray.init`` is still running (a join given up
    on) descriptor 2 stays on the file, since Ray's threads go on writing, and ``sys.stderr`` moves to a copy of
    the original descriptor, so that what this process prints still reaches the terminal."""

    def __init__(self) -> None:
        sys.stderr.flush()
        fd, self.path = tempfile.mkstemp(prefix="sergeant-major-ray-join-", suffix=".log")
        self.saved = os.dup(2)
        os.dup2(fd, 2)
        os.close(fd)

    def end(self, still_running: bool) -> str:
        """Put descriptor 2 back, or keep it on the file while ``ray.init`` runs (class docstring); the file's path."""
        if still_running:
            sys.stderr = os.fdopen(self.saved, "w", buffering=1, encoding=sys.stderr.encoding, errors="replace")
            return self.path
        os.dup2(self.saved, 2)
        os.close(self.saved)
        return self.path

    def refusal(self) -> str:
        """The head's refusal of this driver's authentication, if Ray has logged one (:data:`REFUSED`), else ''."""
        with contextlib.suppress(OSError), open(self.path, encoding="utf-8", errors="replace") as held:
            for line in held:
                if REFUSED in line:
                    return line.rpartition(f"{REFUSED}: ")[2].strip()[:200] or REFUSED
        return ""

    def discard(self) -> None:
        """Remove the file (a join that succeeded)."""
        with contextlib.suppress(OSError):
            os.remove(self.path)


def auth_hint() -> str:
    """What this machine's Ray authentication is, and what a cluster with token authentication needs of it (Ray
    2.60: ``ray start --head`` uses a token when one exists there; a driver or node joining an address uses one
    only with ``RAY_AUTH_MODE=token``)."""
    mode = os.environ.get("RAY_AUTH_MODE", "")
    if mode.lower() == "token":
        return (
            "this machine joins with token authentication (RAY_AUTH_MODE=token): its token (RAY_AUTH_TOKEN, "
            "RAY_AUTH_TOKEN_PATH or ~/.ray/auth_token) must be the head's"
        )
    return (
        f"this machine joins without authentication (RAY_AUTH_MODE {mode or 'unset'}), which a head with a token "
        "refuses (Ray's default when ~/.ray/auth_token exists on the head): set RAY_AUTH_MODE=token and copy the "
        "head's ~/.ray/auth_token here"
    )


class _DropMessage(logging.Filter):
    def __init__(self, text: str) -> None:
        super().__init__()
        self.text = text

    def filter(self, record: logging.LogRecord) -> bool:
        return self.text not in record.getMessage()


def connect(
    address: str | None = None,
    code: str = "auto",
    num_cpus: int | None = None,
    connect_timeout: float = CONNECT_TIMEOUT,
) -> None:
    """Join the cluster at ``address``, or start a local instance (``num_cpus``, no dashboard); ``code``: how
    the code reaches the nodes (module docstring). Does nothing if this process is connected already, unless
    ``address`` names another cluster (a HOST:PORT whose port is not the connected head's): that raises
    :class:`RayConnectError` rather than run the job where it was not asked to. Joining takes at most about
    ``connect_timeout`` seconds, else raises :class:`RayConnectError` (module docstring)."""
    if code not in CODE_MODES:
        raise ValueError(f"--ray-code must be one of {', '.join(CODE_MODES)}, got {code!r}")
    if not connect_timeout > 0:
        raise ValueError(f"the connect timeout must be > 0 seconds, got {connect_timeout}")
    try:
        import ray
    except ImportError:
        raise RayConnectError(RAY_MISSING) from None
    if ray.is_initialized():
        _check_connected_to(ray, address)
        return
    target = address or os.environ.get("RAY_ADDRESS") or None
    if target == "local":
        target = None
    env = runtime_env(code if code != "auto" else ("ship" if target else "installed"))
    if target is None:
        stay_on_loopback()
        ray.init(  # "local": a new instance, never the cluster that a `ray start` on this machine left running
            address="local",
            num_cpus=num_cpus,
            runtime_env=env,
            include_dashboard=False,
            log_to_driver=False,
            _node_ip_address=LOOPBACK,
        )
        return
    started = time.monotonic()
    target = join_address(target)
    probe(target, min(PROBE_TIMEOUT, connect_timeout))
    left = connect_timeout - (time.monotonic() - started)
    # RAY_ADDRESS is left to Ray (address None), which then applies its rules for an address it finds itself
    # (a token on this machine turns token authentication on, as for "auto")
    init = {"address": address or None, "runtime_env": env, "log_to_driver": False}
    _init_bounded(ray, target, left, connect_timeout, **init)


def _check_connected_to(ray: Any, address: str | None) -> None:
    """Raise :class:`RayConnectError` if ``address`` (HOST:PORT) is not the cluster this process is connected to,
    by port (a host has several names; Ray Client's ray:// port is not the head's, so those are not compared)."""
    if not address or address in ("auto", "local") or address.startswith("ray://"):
        return
    _, _, port = split_address(address)
    current = ray.get_runtime_context().gcs_address
    if current and current.rpartition(":")[2] != str(port):
        raise RayConnectError(
            f"--ray {address}: this process is already connected to the Ray cluster at {current}; run the job in a "
            "new process, or call ray.shutdown() first"
        )


@dataclass(frozen=True)
class RayOptions:
    """Where and how a job runs on Ray (``--ray [ADDRESS]`` and ``--ray-code``)."""

    address: str | None = None  # None or "": a local instance (or RAY_ADDRESS); else a cluster's address
    code: str = "auto"  # how the code reaches the nodes: CODE_MODES
    attempts: int = 3  # tries of a task whose worker was lost
    timeout: float | None = None  # the longest wait, in seconds, for any task to finish (None: no limit)
    connect_timeout: float = CONNECT_TIMEOUT  # the longest wait, in seconds, to join the cluster

    @classmethod
    def of(cls, value: str | RayOptions | None) -> RayOptions | None:
        """None stays None (no Ray); an address (``""``: local) becomes options with the defaults."""
        return value if value is None or isinstance(value, RayOptions) else cls(address=value)

    @classmethod
    def from_args(cls, args: Any) -> RayOptions | None:
        """The options of a parsed command line (:func:`add_ray_arguments`); None without ``--ray``."""
        if args.ray is None:
            return None
        return cls(address=args.ray, code=args.ray_code, connect_timeout=args.ray_connect_timeout)

    def connect(self) -> None:
        """:func:`connect` to this address with this code mode and connect timeout."""
        connect(self.address or None, self.code, connect_timeout=self.connect_timeout)

    def run_tasks(
        self,
        task: Callable[..., Any],
        jobs: Sequence[tuple[Hashable, tuple[Any, ...]]],
        describe: Callable[[Hashable], str] = str,
        log: Callable[[str], None] | None = None,
    ) -> Generator[tuple[Hashable, Any], None, None]:
        """:func:`as_completed` on this cluster (joined first) with these tries and this timeout: the labelling
        jobs' one way onto Ray (``distill --ray``, ``improve --ray``)."""
        self.connect()
        return as_completed(task, jobs, attempts=self.attempts, timeout=self.timeout, describe=describe, log=log)


def add_ray_arguments(parser: Any, what: str, actors: bool = False) -> None:
    """The ``--ray [ADDRESS]``, ``--ray-code MODE`` and ``--ray-connect-timeout SECONDS`` options of a command
    (``what``: what runs on Ray: as tasks, the same results as local processes; as actors if ``actors``)."""
    runs = "actors" if actors else "tasks"
    same = "" if actors else "; the same results as local processes"
    parser.add_argument(
        "--ray",
        nargs="?",
        const="",
        default=None,
        metavar="ADDRESS",
        help=f"run {what} as Ray {runs}: on a local Ray instance, or on the cluster at ADDRESS "
        f"(ray start --head prints it){same} (docs/cluster.md)",
    )
    add_code_argument(parser)


def add_code_argument(parser: Any) -> None:
    """The ``--ray-code MODE`` and ``--ray-connect-timeout SECONDS`` options alone (the RLlib trainer names its
    cluster with ``--address``)."""
    parser.add_argument(
        "--ray-code",
        choices=CODE_MODES,
        default="auto",
        help="how the code reaches the Ray nodes: ship (as py_modules), ship+pip (and pip-install the "
        "requirements), installed (nothing shipped); auto (default): ship when joining a cluster",
    )
    parser.add_argument(
        "--ray-connect-timeout",
        type=connect_seconds,
        default=CONNECT_TIMEOUT,
        metavar="SECONDS",
        help=f"give up joining the Ray cluster after SECONDS, with one line saying what to check "
        f"(default {CONNECT_TIMEOUT:g}; up to {MAX_CONNECT_TIMEOUT:g})",
    )


def connect_seconds(text: str) -> float:
    """The value of ``--ray-connect-timeout``: seconds, > 0 and at most :data:`MAX_CONNECT_TIMEOUT`."""
    import argparse

    try:
        seconds = float(text)
    except ValueError:
        seconds = float("nan")
    if not 0 < seconds <= MAX_CONNECT_TIMEOUT:
        raise argparse.ArgumentTypeError(f"must be seconds, > 0 and at most {MAX_CONNECT_TIMEOUT:g}, got {text!r}")
    return seconds


def say(message: str) -> None:
    """The default log of :func:`as_completed`: a line on stderr (stdout may hold a table)."""
    print(message, file=sys.stderr, flush=True)


def as_completed(
    task: Callable[..., Any],
    jobs: Sequence[tuple[Hashable, tuple[Any, ...]]],
    *,
    attempts: int = 3,
    timeout: float | None = None,
    describe: Callable[[Hashable], str] = str,
    log: Callable[[str], None] | None = None,
) -> Generator[tuple[Hashable, Any], None, None]:
    """Run ``task(*args)`` for every ``(key, args)`` of ``jobs`` as Ray tasks; yield ``(key, result)`` as each
    finishes (module docstring). ``describe(key)`` names a job in the log (e.g. ``"shard 3"``)."""
    import ray
    from ray.exceptions import GetTimeoutError, RayError, RayTaskError

    if attempts < 1:
        raise ValueError(f"attempts must be >= 1, got {attempts}")
    log = log or say
    remote = ray.remote(max_retries=0)(task).options(scheduling_strategy="SPREAD")  # retries are ours: logged
    arguments = dict(jobs)
    pending = {remote.remote(*args): key for key, args in jobs}
    tries = dict.fromkeys(arguments, 1)
    try:
        while pending:
            ready, _ = ray.wait(list(pending), num_returns=1, timeout=timeout)
            if not ready:
                waiting = ", ".join(describe(k) for k in list(pending.values())[:5])
                raise TimeoutError(f"no Ray task finished in {timeout} s (waiting for {waiting}): is the cluster up?")
            key = pending.pop(ready[0])
            try:
                result = ray.get(ready[0], timeout=timeout)
            except RayTaskError as err:  # the task itself raised: not a lost worker
                raise err.as_instanceof_cause() from None
            except GetTimeoutError:
                raise TimeoutError(f"{describe(key)}: its result did not arrive in {timeout} s") from None
            except RayError as err:  # its worker process or its node was lost
                reason = type(err).__name__
                if tries[key] >= attempts:
                    raise RuntimeError(f"{describe(key)} failed {attempts} times on Ray ({reason}): {err}") from None
                tries[key] += 1
                log(f"{describe(key)}: its Ray worker was lost ({reason}); retrying (try {tries[key]} of {attempts})")
                pending[remote.remote(*arguments[key])] = key
                continue
            yield key, result
    finally:
        for ref in pending:  # stopped early: nothing keeps running for a caller that left
            ray.cancel(ref, force=True)
