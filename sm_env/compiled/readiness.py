"""Whether numba's cache holds the env kernels, and compiling them in the background.

The compiled path of ``raw_env`` and ``SingleSeatEnv`` (:mod:`sm_env.compiled.single`) is numba code with
``cache=True``: the first call after a fresh install compiles it (about a minute on 2 cores), every later process
loads it from numba's cache in about half a second. With ``compiled="auto"`` (their default) a process whose
cache lacks the kernels does not wait:

- it plays on the Python engine, which gives the same games, observations, masks, rewards and records bit for
  bit (``tests/test_env_kernel.py``), about five times slower per decision;
- it says so in one line on standard error, once per process;
- it starts one background process (its own session, lowered priority, :func:`compile_main`) that compiles the
  kernels and then writes the ready stamp; a later ``reset`` of any env, in this process or another, finds the
  stamp and takes the compiled path.

``compiled=True`` compiles in the foreground when needed (announced in one line), ``compiled=False`` never uses
the kernels. The kernels with no Python twin to play on meanwhile (the batched engine, the compiled searches)
compile in the foreground at their first use: :func:`first_compile` announces that in one line when their
cache lacks them (what, about how long, that it happens once). ``sergeant-major compile`` fills the cache of
every kernel group at once. Setting the environment variable ``SM_ENV_BACKGROUND_COMPILE=0`` turns the
background process off (``auto`` then stays on the Python engine until something else compiles the kernels).

The stamp is a file beside numba's cache of ``single.py``, named after what decides whether that cache is
valid: the size and modification time of the files the env kernels are compiled from (``KERNEL_SOURCES``),
numba's and Python's versions and the CPU. It is written only after the kernels were compiled or loaded, so
a stamp always means a cache that loads without compiling. One background compile runs at a time per stamp
(a lock file holding its process id).
"""

from __future__ import annotations

import hashlib
import os
import platform
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from sm_env.files.atomic import atomic_path

COMPILED_MODES = (True, False, "auto")
ENV_VARIABLE = "SM_ENV_BACKGROUND_COMPILE"
BACKGROUND_CODE = "import sys; from sm_env.compiled.readiness import compile_main; sys.exit(compile_main(sys.argv[1]))"
KERNEL_SOURCES = ("single.py", "kernels.py", "twister.py", "codes.py")  # what the env kernels are compiled from
LOCK_SECONDS = 1800  # a lock older than this is stale (its compile died without removing it)

_ready = False  # this process has loaded the kernels (or seen the stamp)
_announced = False  # the one line was printed


def check_compiled(compiled: object) -> bool | str:
    """``compiled`` checked: True, False or "auto" (ValueError naming the three otherwise)."""
    if compiled is True or compiled is False or compiled == "auto":
        return compiled  # type: ignore[return-value]
    raise ValueError(f"compiled must be True, False or 'auto', got {compiled!r}")


def _cache_dir() -> Path:
    """Where numba keeps the cache of sm_env/compiled/single.py (imports numba)."""
    from . import single

    try:
        return Path(single.step_env._cache._cache_path)  # numba's own choice (NUMBA_CACHE_DIR, a writable folder)
    except AttributeError:  # another numba layout: beside the file, as numba's default
        return Path(single.__file__).parent / "__pycache__"


def _key() -> str:
    import numba

    here = Path(__file__).parent
    parts = [numba.__version__, sys.version, platform.machine(), os.environ.get("NUMBA_CPU_NAME", "host")]
    for path in (here / name for name in KERNEL_SOURCES):
        stat = path.stat()
        parts.append(f"{path.name}:{stat.st_size}:{stat.st_mtime_ns}")
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()[:16]


_stamp: list[Path] = []


def stamp_path() -> Path:
    """The ready stamp of this install's env kernels (found once per process)."""
    if not _stamp:
        _stamp.append(_cache_dir() / f"sm_env-single-{_key()}.ready")
    return _stamp[0]


def env_kernels_ready() -> bool:
    """True when the env kernels load from numba's cache without compiling (or are loaded in this process)."""
    global _ready
    if not _ready:
        try:
            _ready = stamp_path().exists()
        except OSError:
            return False
    return _ready


def mark_ready() -> None:
    """Write the stamp: call only after the kernels were compiled or loaded (``compiled_kernels()`` returned)."""
    global _ready
    _ready = True
    try:
        stamp = stamp_path()
        with atomic_path(stamp) as tmp:
            Path(tmp).write_text(f"compiled {time.strftime('%Y-%m-%d %H:%M:%S')} by process {os.getpid()}\n")
    except OSError:  # a read-only cache folder: the kernels still work, only the next process cannot know
        pass


def load_kernels() -> None:
    """Compile (or load) the env kernels in this process and stamp them ready; announced when it will compile."""
    from .single import compiled_kernels

    if not env_kernels_ready():
        _say("compiling the env kernels now with numba (about a minute on 2 cores, once per install)")
    compiled_kernels()
    mark_ready()


_quiet = False  # no announcement: sergeant-major compile says itself what compiles (quiet())


@contextmanager
def quiet() -> Iterator[None]:
    """No compile announced in this process during the block (``sergeant-major compile``, whose workers would
    each print the same line, says itself what it compiles and how far it is)."""
    global _quiet
    before, _quiet = _quiet, True
    try:
        yield
    finally:
        _quiet = before


def _say(what: str) -> None:
    global _announced
    if not _announced and not _quiet:
        _announced = True
        print(f"sm_env: {what}", file=sys.stderr, flush=True)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _take_lock(lock: Path) -> bool:
    """The lock of the background compile, taken by this process; False when a live compile holds it."""
    for _ in range(2):
        try:
            fd = os.open(lock, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
        except FileExistsError:
            try:
                pid = int(lock.read_text().strip() or 0)
                stale = time.time() - lock.stat().st_mtime > LOCK_SECONDS or not _alive(pid)
            except (OSError, ValueError):
                stale = True
            if not stale:
                return False
            lock.unlink(missing_ok=True)
            continue
        with os.fdopen(fd, "w") as out:
            out.write("0")  # the child writes its own id
        return True
    return False


def compile_in_background() -> str:
    """Start the background compile unless one runs or the environment variable turns it off; what happens, as
    the end of the line :func:`use_compiled` says."""
    if os.environ.get(ENV_VARIABLE, "1") == "0":
        return f"{ENV_VARIABLE}=0: nothing compiles them now (sergeant-major compile does)"
    try:
        stamp = stamp_path()
        lock = stamp.with_suffix(".compiling")
        stamp.parent.mkdir(parents=True, exist_ok=True)
        if not _take_lock(lock):
            return "another process is compiling them"
        log = stamp.with_suffix(".log")
        with open(log, "w", encoding="utf-8") as out:
            child = subprocess.Popen(
                [sys.executable, "-c", BACKGROUND_CODE, str(lock)],
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,
                close_fds=True,
            )
        lock.write_text(str(child.pid))
        return f"they compile in the background, about a minute, once per install (log: {log})"
    except OSError as err:
        return f"they cannot be compiled in the background ({err.strerror}; sergeant-major compile does it)"


def use_compiled(compiled: bool | str) -> bool:
    """Whether an env built with ``compiled`` takes the compiled path at this reset (its rule set supported).

    True: yes (compiled in the foreground, announced, if the cache lacks the kernels); False: no; "auto": when
    the kernels are ready, else the Python engine, with the background compile started and one line said.
    """
    if compiled is False:
        return False
    if env_kernels_ready():
        return True
    if compiled is True:
        load_kernels()
        return True
    _say(
        "the compiled engine is not in numba's cache yet: games run on the Python engine (the same games, "
        f"slower) until it is; {compile_in_background()}"
    )
    return False


def compile_main(lock: str) -> int:
    """The background process: lower priority, compile, stamp, free the lock."""
    try:
        os.nice(10)
    except OSError:
        pass
    start = time.perf_counter()
    try:
        load_kernels()
        print(f"compiled in {time.perf_counter() - start:.0f} s", flush=True)
        return 0
    finally:
        Path(lock).unlink(missing_ok=True)


GROUP_SOURCES = {
    "batch": ("sm_env/compiled", ("batch.py", "kernels.py", "twister.py", "codes.py", "state_check.py")),
    "search": (
        "agents/search",
        ("world_kernel.py", "rollout_kernel.py", "ismcts_kernel.py", "policy_kernel.py", "../players/heuristic.py"),
    ),
}
"""The kernel groups announced by :func:`first_compile`: the folder (from the packages' root) and files each is
compiled from."""
GROUP_TEXT = {
    "batch": ("the batched engine (VectorGame)", "2 minutes"),
    "search": ("the compiled searches (pimc, ismcts)", "30 seconds"),
}
"""What each group is, and about how long it compiles on 2 cores."""
_groups_done: set[str] = set()  # groups used without error in this process


def _group_stamp(group: str) -> Path:
    import numba

    folder, names = GROUP_SOURCES[group]
    root = Path(__file__).resolve().parents[2] / folder
    parts = [group, numba.__version__, sys.version, platform.machine(), os.environ.get("NUMBA_CPU_NAME", "host")]
    for path in (root / name for name in names):
        stat = path.stat()
        parts.append(f"{path.name}:{stat.st_size}:{stat.st_mtime_ns}")
    return _cache_dir() / f"sm_env-{group}-{hashlib.sha256(chr(10).join(parts).encode()).hexdigest()[:16]}.ready"


@contextmanager
def first_compile(group: str) -> Iterator[None]:
    """Around the use of a kernel ``group`` (:data:`GROUP_SOURCES`): the first time in this process, one line on
    standard error when numba's cache lacks it (what compiles now, about how long, once per install:
    :data:`GROUP_TEXT`); once the block ends without error, the group is stamped ready. Later blocks cost a set
    lookup."""
    if group in _groups_done:
        yield
        return
    try:
        stamp: Path | None = _group_stamp(group)
    except OSError:
        stamp = None
    if stamp is not None and not stamp.exists() and not _quiet:
        what, about = GROUP_TEXT[group]
        print(f"sm_env: compiling {what} with numba now (about {about} on 2 cores, once per install)", file=sys.stderr)
    yield
    _groups_done.add(group)
    if stamp is not None and not stamp.exists():
        try:
            with atomic_path(stamp) as tmp:
                Path(tmp).write_text(f"compiled {time.strftime('%Y-%m-%d %H:%M:%S')} by process {os.getpid()}\n")
        except OSError:
            pass
