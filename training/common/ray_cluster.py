"""Ray for the jobs that take ``--ray [ADDRESS]``: joining a cluster, shipping the code, retrying lost tasks.

Three jobs run on Ray: the evaluation's deals (``sergeant-major eval --ray``), the labelling of positions for
distillation (``sergeant-major distill --ray``) and RLlib training (``sergeant-major train --backend rllib
--address``). They share this module (``docs/cluster.md`` is the user's page):

- :func:`connect`: ``address`` None or ``""`` starts a local Ray instance (or joins the one ``RAY_ADDRESS``
  names); otherwise it joins the cluster at that address (``ray start --head`` prints it). Nothing happens if
  this process is connected already (a caller's own ``ray.init``).
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

import os
import sys
from collections.abc import Callable, Hashable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

CODE_MODES = ("auto", "ship", "ship+pip", "installed")
PACKAGES = ("sm_env", "agents", "training")
"""The packages a Ray worker imports (the command line and the web app stay on the driver)."""
EXCLUDES = ["__pycache__", "*.pyc"]
PROJECT = "sergeant-major-rl"
PIP_EXTRA = "rllib"  # the requirements a worker needs: the core ones and this extra's (torch, pydantic, ...)
RAY_MISSING = "--ray needs Ray: pip install -e '.[rllib]' (or pip install ray)"


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


def connect(address: str | None = None, code: str = "auto", num_cpus: int | None = None) -> None:
    """Join the cluster at ``address``, or start a local instance (``num_cpus``, no dashboard); ``code``: how
    the code reaches the nodes (module docstring). Does nothing if this process is connected already."""
    if code not in CODE_MODES:
        raise ValueError(f"--ray-code must be one of {', '.join(CODE_MODES)}, got {code!r}")
    try:
        import ray
    except ImportError:
        raise ValueError(RAY_MISSING) from None
    if ray.is_initialized():
        return
    joining = bool(address) or bool(os.environ.get("RAY_ADDRESS"))
    env = runtime_env(code if code != "auto" else ("ship" if joining else "installed"))
    if joining:
        ray.init(address=address or None, runtime_env=env, log_to_driver=False)
    else:
        ray.init(num_cpus=num_cpus, runtime_env=env, include_dashboard=False, log_to_driver=False)


@dataclass(frozen=True)
class RayOptions:
    """Where and how a job runs on Ray (``--ray [ADDRESS]`` and ``--ray-code``)."""

    address: str | None = None  # None or "": a local instance (or RAY_ADDRESS); else a cluster's address
    code: str = "auto"  # how the code reaches the nodes: CODE_MODES
    attempts: int = 3  # tries of a task whose worker was lost
    timeout: float | None = None  # the longest wait, in seconds, for any task to finish (None: no limit)

    @classmethod
    def of(cls, value: str | RayOptions | None) -> RayOptions | None:
        """None stays None (no Ray); an address (``""``: local) becomes options with the defaults."""
        return value if value is None or isinstance(value, RayOptions) else cls(address=value)

    @classmethod
    def from_args(cls, args: Any) -> RayOptions | None:
        """The options of a parsed command line (:func:`add_ray_arguments`); None without ``--ray``."""
        return None if args.ray is None else cls(address=args.ray, code=args.ray_code)

    def connect(self) -> None:
        """:func:`connect` to this address with this code mode."""
        connect(self.address or None, self.code)


def add_ray_arguments(parser: Any, what: str) -> None:
    """The ``--ray [ADDRESS]`` and ``--ray-code MODE`` options of a command (``what``: what runs as tasks)."""
    parser.add_argument(
        "--ray",
        nargs="?",
        const="",
        default=None,
        metavar="ADDRESS",
        help=f"run {what} as Ray tasks: on a local Ray instance, or on the cluster at ADDRESS "
        "(ray start --head prints it); the same results as local processes (docs/cluster.md)",
    )
    add_code_argument(parser)


def add_code_argument(parser: Any) -> None:
    """The ``--ray-code MODE`` option alone (the RLlib trainer names its cluster with ``--address``)."""
    parser.add_argument(
        "--ray-code",
        choices=CODE_MODES,
        default="auto",
        help="how the code reaches the Ray nodes: ship (as py_modules), ship+pip (and pip-install the "
        "requirements), installed (nothing shipped); auto (default): ship when joining a cluster",
    )


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
) -> Iterator[tuple[Hashable, Any]]:
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
