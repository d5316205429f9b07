"""The web app: a page to play against agents and a replay viewer (Starlette).

Pages (static files, no card in them): ``/`` play, ``/replay`` the viewer.

JSON API (the session is the ``sm_session`` cookie, set by ``/api/new`` or
``/api/replay``; POST bodies are JSON objects, ``Content-Type:
application/json``)::

    GET  /api/options        presets (every one) and their players, agent kinds, the pace of agents' moves, the
                             rule set and opponents offered first, the agents of a game to watch at once (or null)
    POST /api/new            {"seat": 0, "opponents": ["heuristic", "pimc"], "rules": "standard",
                              "seed": 7 | null, "max_hands": 100} -> state (one opponent per other seat);
                             {"watch": true, "agents": [one per seat], ...}: a game to watch (every hand shown)
    GET  /api/state          the game in progress (a reload resumes it) -> {"game": state | null}
    POST /api/act            {"action": 12 | "AC"}: the human's move -> {"event", "game"}
    POST /api/step           one move of the agent to act -> {"event", "game"}
    GET  /api/hint           ?samples=N (1-200, default 20): on your turn, the shipped policy's probability and
                             the search's value (search, else pimc) of each of your legal actions -> {"hint": advice}
                             (agents.advice)
    POST /api/stop           stop the game (it is saved) -> state
    GET  /api/record         the record of the finished or stopped game (a download)
    POST /api/replay         a record (JSON object), or {"from_game": true} -> {"steps", "hand_starts", ...}
    GET  /api/replay/frame   ?step=N&view=all|0|1|2(|3) -> the table at step N
    POST /api/replay/analysis {"hand": 1, "samples": 20, "seed": 0, "threshold": 0.5}: one hand of the record
                             in view scored by pimc (agents.analysis; samples 1-50; one analysis at a time on
                             the server) -> the analysis of that hand, each decision with its ``move`` in words
                             (agents.analysis.with_moves)
    GET  /api/replay/stored-analysis  the analysis read from a file for the record in view (``view RECORD
                             --analysis FILE``), one per hand as /api/replay/analysis gives them -> {"analyses"}

Errors are ``{"error": "..."}`` with status 400 (a malformed or illegal
request: bad JSON, nested deeper than :data:`MAX_DEPTH`, a number longer than
:data:`MAX_DIGITS` digits, a float or true where a whole number is due), 404
(no game or replay in this session), 409 (not now: not your turn, game over),
413 (body too large: :data:`MAX_BODY`, a record :data:`MAX_RECORD_BODY`), 415
(not JSON) or 503 (too many live games, an agent's move that took too long, :data:`RECORD_CHECKS` records
sent to the viewer being checked already, a record whose check took more than :data:`RECORD_CHECK_WAIT` s). A
request that fails changes nothing and starts no session; one refused before its body was read (413, 415, 503)
is answered with ``Connection: close``, so that the rest of the body is not read. Every API answer to a
live session renews its cookie (its age is the idle limit).

Handlers are module-level endpoints; they read the server's
:class:`~sm_web.sessions.SessionStore` and :class:`Config` from
``request.app.state`` (``store``, ``config``). An agent's decision runs in a
daemon thread without the session's lock (see :func:`agent_move`), so a search
never blocks the event loop, other requests of the session, or the server's
stop. A record sent to the viewer is read and re-played in a process of its own
(:class:`RecordChecks`), so that no body, however slow to parse, holds the
server's interpreter while moves wait.

The state sent for play is built from the human seat's
:func:`sm_env.core.knowledge.player_view` only (see :mod:`sm_web.sessions`).
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import pickle
import signal
import subprocess
import sys
import threading
import traceback
from collections.abc import Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any, BinaryIO

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse, Response
from starlette.routing import BaseRoute, Mount, Route
from starlette.staticfiles import StaticFiles

from agents.analysis import AnalysisError, with_moves
from sm_env.core.rules import PRESETS
from sm_env.files.json_files import JsonError, parse_json
from sm_env.records import ReplayError

from .replays import Timeline, analysis_key
from .sessions import (
    PlayedGame,
    Session,
    SessionStore,
    Turn,
    WebError,
    begin_agent_step,
    begin_hint,
    build_game,
    check_opponent,
    check_page_seed,
    finish_agent_step,
    hint_samples,
    human_act,
    keep_hint,
    make_hint,
    offered_agents,
    record_of,
)

STATIC = os.path.join(os.path.dirname(os.path.abspath(__file__)), "static")
COOKIE = "sm_session"
MAX_BODY = 16_384  # bytes of a request body
MAX_RECORD_BODY = 3_000_000  # bytes of a record sent to the viewer (about 100,000 actions, records.actions.MAX_STEPS)
RECORD_CHECKS = 4  # records sent to the viewer admitted at once (one checked at a time, the others waiting)
RECORD_CHECK_WAIT = 60.0  # seconds one record's check may take in its process (a legal 3 MB record takes about 2)
RECORD_NICE = 10  # the niceness added to the process that checks records (POSIX): it yields the cores to moves
MAX_DEPTH = 16  # nesting of a JSON body (a record needs 6)
MAX_DIGITS = 40  # digits of a whole number in a JSON body (a seed below 2**128 has at most 39)
WORK_THREAD = "sm-web-work"  # the name of the daemon threads of in_daemon_thread (searches, record checks)
DECISION_WAIT = 30.0  # seconds a request waits for an agent's move (a web search takes at most 5)
ANALYSIS_WAIT = 300.0  # seconds a request waits for the analysis of a hand (four players search in Python)
SECURITY_HEADERS = {
    "X-Content-Type-Options": "nosniff",
    "Content-Security-Policy": "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'",
    "Referrer-Policy": "no-referrer",
    "X-Frame-Options": "DENY",
}
log = logging.getLogger("sm_web")


@dataclass
class Config:
    """Settings of one server.

    pace: seconds the page waits between two agent moves. records_dir: where
    games are saved (None: not saved). max_sessions / idle_seconds bound the
    live games. preload: a record the viewer opens with (``view`` command);
    preload_name: the name the viewer shows for it (its file's name).
    preload_analysis: an analysis of ``preload`` read from a file, checked by
    :func:`agents.analysis.check_analysis` (``view --analysis``), shown with it.
    opponents: offered first on the page (checked by :func:`sm_web.sessions.check_opponent`;
    a ``ppo:PATH`` here may then be chosen on the page). rules: the preset chosen
    first on the page. watch: one agent per seat of ``rules``: the page starts a
    game of them to watch when it opens with no game in progress (``serve
    --watch``; its ``ppo:PATH`` specs may be chosen on the page too). seed: the
    seed the page's form starts with (``serve --seed``: :func:`sm_web.sessions.check_page_seed`;
    None: empty, a random deal).
    """

    pace: float = 0.8
    records_dir: str | None = "runs/web"
    max_sessions: int = 64
    idle_seconds: float = 3600.0
    preload: dict[str, Any] | None = None
    opponents: tuple[str, str] = ("heuristic", "heuristic")
    rules: str = "standard"
    watch: tuple[str, ...] | None = None
    seed: int | None = None
    preload_analysis: dict[str, Any] | None = None
    preload_name: str | None = None

    @property
    def trusted(self) -> tuple[str, ...]:
        """The specs the server was started with (a ``ppo:PATH`` among them may be chosen on the page)."""
        return tuple(self.opponents) + tuple(self.watch or ())


def _error(status: int, message: str) -> JSONResponse:
    return JSONResponse({"error": message}, status_code=status)


def _json(data: Any, status: int = 200) -> JSONResponse:
    return JSONResponse(data, status_code=status)


class SecurityHeaders:
    """ASGI middleware: every response gets :data:`SECURITY_HEADERS` (no framing, no sniffing, own scripts only)."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self.headers = [(k.lower().encode(), v.encode()) for k, v in SECURITY_HEADERS.items()]

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def send_with_headers(message: Any) -> None:
            if message["type"] == "http.response.start":
                message = dict(message)
                message["headers"] = list(message.get("headers", [])) + self.headers
            await send(message)

        await self.app(scope, receive, send_with_headers)


# ---------------------------------------------------------------------- request bodies


def parse_body(data: bytes) -> Any:
    """A JSON body, read by the project's one bounded reader (:func:`sm_env.files.json_files.parse_json`):
    WebError 400 for bad JSON, nesting deeper than :data:`MAX_DEPTH`, whole numbers longer than
    :data:`MAX_DIGITS` digits, NaN, Infinity or numbers too large for a float."""
    try:
        return parse_json(data or b"null", "the body", MAX_DEPTH, MAX_DIGITS)
    except JsonError as err:
        raise WebError(400, str(err)) from None


async def read_body(request: Request, limit: int = MAX_BODY, what: str = "a request body") -> Any:
    """The request's JSON body (WebError 415, 413 naming the limit, or 400 from :func:`parse_body`)."""
    data = await read_bytes(request, limit, what)
    return parse_body(data) if len(data) <= MAX_BODY else await run_in_threadpool(parse_body, data)


async def read_bytes(request: Request, limit: int, what: str) -> bytes:
    """The request's body, unparsed: WebError 415 unless it is sent as JSON, 413 past ``limit`` bytes."""
    kind = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if kind != "application/json":
        raise WebError(415, f"send the body as JSON with Content-Type: application/json (got {kind or 'none'!r})")
    too_large = WebError(413, f"the request body is larger than {limit:,} bytes, the limit for {what}")
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > limit:
        raise too_large
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise too_large
        chunks.append(chunk)
    request.state.body_read = True
    return b"".join(chunks)


def _body_left(request: Request) -> bool:
    """Whether the request sent a body that was not read (refused before or while reading it): its answer then
    closes the connection, so that the server does not read the rest (up to 3 MB of a refused record) for nothing."""
    if getattr(request.state, "body_read", False):
        return False
    length = request.headers.get("content-length", "")
    return "transfer-encoding" in request.headers or (length.isdigit() and int(length) > 0)


# ---------------------------------------------------------------------- shared state


def _store(request: Request) -> SessionStore:
    return request.app.state.store


def _config(request: Request) -> Config:
    return request.app.state.config


def session_of(request: Request) -> Session | None:
    """The request's live session (by its cookie), or None."""
    return _store(request).get(request.cookies.get(COOKIE))


def live_session(request: Request) -> Session:
    """The request's live session; WebError 404 when there is none."""
    session = session_of(request)
    if session is None:
        raise WebError(404, "no game in this session (it may have expired): start a new game (POST /api/new)")
    return session


def played_of(session: Session) -> PlayedGame:
    """The session's game (call under its lock); WebError 404 when it has none."""
    if session.played is None:
        raise WebError(404, "no game in this session: start a new game (POST /api/new)")
    return session.played


def new_session(request: Request) -> Session:
    """A session for a request that succeeded (WebError 503 when the store is full); its cookie is set."""
    session = _store(request).create()
    request.state.new_session = session
    return session


def api(handler: Callable[[Request], Awaitable[Response]]) -> Callable[[Request], Awaitable[Response]]:
    """An API endpoint: WebError becomes its JSON error, any other failure a logged JSON 500; the live
    session's cookie is set again (so it lasts as long as the session's idle limit)."""

    async def endpoint(request: Request) -> Response:
        try:
            response = await handler(request)
        except WebError as err:
            response = _error(err.status, str(err))
            if _body_left(request):
                response.headers["Connection"] = "close"
        except Exception:
            log.exception("%s %s failed", request.method, request.url.path)
            response = _error(500, "the server could not answer this request (its log says why)")
        session = getattr(request.state, "new_session", None) or session_of(request)
        if session is not None:
            seconds = int(_store(request).idle_seconds)
            response.set_cookie(COOKIE, session.id, httponly=True, samesite="strict", max_age=seconds)
        return response

    endpoint.__name__ = endpoint.__qualname__ = handler.__name__
    endpoint.__doc__ = handler.__doc__
    return endpoint


def _locked(session: Session, work: Callable[[], Any]) -> Awaitable[Any]:
    """Run ``work`` under the session's lock in a worker thread."""

    def run() -> Any:
        with session.lock:
            return work()

    return run_in_threadpool(run)


def in_daemon_thread(work: Callable[[], Any]) -> asyncio.Future:
    """A future for ``work()`` run in a daemon thread: nobody waits for it when the server stops."""
    loop = asyncio.get_running_loop()
    future = loop.create_future()

    def deliver(ok: bool, value: Any) -> None:
        if not future.done():
            (future.set_result if ok else future.set_exception)(value)

    def run() -> None:
        try:
            outcome = (True, work())
        except Exception as err:
            outcome = (False, err)
        try:
            loop.call_soon_threadsafe(deliver, *outcome)
        except RuntimeError:  # the loop is closed: the server stopped meanwhile
            pass

    threading.Thread(target=run, name=WORK_THREAD, daemon=True).start()
    return future


def check_record(source: bytes | dict[str, Any]) -> Timeline:
    """A record sent to the viewer, checked (in the record checks' process): a body's bytes are read by
    :func:`parse_body`, a record already read (the session's game, the preloaded record) is taken as it is, then
    :class:`~sm_web.replays.Timeline` re-plays it; WebError 400 naming what is wrong."""
    record = parse_body(source) if isinstance(source, bytes) else source
    try:
        return Timeline(record)
    except ReplayError as err:
        raise WebError(400, f"not a record this viewer can show: {err}") from None


def _read_message(stream: BinaryIO) -> Any:
    """One message of the record checks' pipes (a pickle after its length in 8 bytes); EOFError once the other
    end is closed."""
    head = stream.read(8)
    size = int.from_bytes(head, "big") if len(head) == 8 else -1
    data = stream.read(size) if size >= 0 else b""
    if size < 0 or len(data) < size:
        raise EOFError("the other end of the record checks' pipe is closed")
    return pickle.loads(data)


def _write_message(stream: BinaryIO, value: Any) -> None:
    """Send ``value`` as one message of the record checks' pipes (see :func:`_read_message`)."""
    data = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
    stream.write(len(data).to_bytes(8, "big"))
    stream.write(data)
    stream.flush()


def serve_checks() -> None:
    """The loop of the record checks' process (:class:`RecordProcess`): ``(function, argument)`` in on stdin; out
    on stdout ``("ok", value)``, ``("refused", status, message)`` for a WebError or ``("failed", traceback)``;
    until the server's end of stdin closes (the server stopped or ended). What the checks print goes to stderr."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C stops the server, which ends this process
    if hasattr(os, "nice"):
        os.nice(RECORD_NICE)  # the server's moves get a busy machine's cores first
    requests = sys.stdin.buffer
    answers = os.fdopen(os.dup(sys.stdout.fileno()), "wb")
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())
    while True:
        try:
            function, argument = _read_message(requests)
        except EOFError:
            return
        try:
            answer: tuple[Any, ...] = ("ok", function(argument))
        except WebError as err:
            answer = ("refused", err.status, str(err))
        except Exception:
            answer = ("failed", traceback.format_exc())
        del argument
        try:
            _write_message(answers, answer)
        except OSError:  # the server ended
            return
        except Exception:  # an answer that cannot be pickled
            _write_message(answers, ("failed", traceback.format_exc()))


_BOOT = "import json, sys; sys.path[:] = json.loads(sys.argv[1]); from sm_web.app import serve_checks; serve_checks()"


class RecordProcess:
    """A process of its own (``python -c``, with the server's ``sys.path``; started at the first call, again after
    it ended) that runs the record checks, so that parsing and re-playing a record never hold the server's
    interpreter: the body goes down a pipe, the answer (a :class:`~sm_web.replays.Timeline` or the error) comes
    back pickled. One call at a time (:class:`RecordChecks` gives the turns); a call of more than ``seconds``
    kills the process."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.closed = False
        self._process: subprocess.Popen | None = None

    def call(self, function: Callable[[Any], Any], argument: Any) -> Any:
        """``function(argument)`` in the process (``function`` is sent by name: a module's own): its value, or
        the WebError it raised; WebError 503 when it took more than ``seconds``, the process ended meanwhile or
        the server is stopping."""
        stopping = WebError(503, "the server is stopping: it checks no more records")
        if self.closed:
            raise stopping
        if self._process is not None and self._process.poll() is not None:
            self.kill()  # it ended since the last call: its pipes are closed
        process = self._process
        if process is None:
            command = [sys.executable, "-c", _BOOT, json.dumps(sys.path)]
            process = self._process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        late = threading.Event()

        def too_late() -> None:
            late.set()
            process.kill()

        watch = threading.Timer(self.seconds, too_late)
        watch.daemon = True
        watch.start()
        try:
            _write_message(process.stdin, (function, argument))
            answer = _read_message(process.stdout)
        except (EOFError, OSError):
            self.kill()
            if self.closed:
                raise stopping from None
            if late.is_set():
                too_long = f"the record took more than {self.seconds:g} s to check (stopped): send it again"
                raise WebError(503, too_long) from None
            raise WebError(503, "the process checking records ended while checking this one: send it again") from None
        finally:
            watch.cancel()
        if answer[0] == "ok":
            return answer[1]
        if answer[0] == "refused":
            raise WebError(answer[1], answer[2])
        raise RuntimeError(f"the record check failed in its process:\n{answer[1]}")

    def kill(self) -> None:
        """End the process and wait for it (from any thread: a call under way gets 503); a later call starts
        another."""
        process, self._process = self._process, None
        if process is not None:
            process.kill()
            process.wait(5)
            for stream in (process.stdin, process.stdout):
                try:
                    stream.close()
                except OSError:
                    pass

    def close(self) -> None:
        """End the process for good (the server stops): later calls get 503."""
        self.closed = True
        self.kill()


class RecordChecks:
    """The checks of the records sent to the viewer: each read and re-played in a process of its own
    (:class:`RecordProcess`), so that no check holds the server's interpreter, whatever the body costs to parse;
    one at a time (parsing and re-playing one take the most memory), waited for in a daemon thread of its own,
    never in the worker threads that serve moves; and at most ``limit`` admitted at once, checked or waiting:
    one more gets 503 before its body is read. So uploads cannot hold up a move, nor hold more than ``limit``
    bodies in memory."""

    def __init__(self, limit: int, seconds: float = RECORD_CHECK_WAIT) -> None:
        self.limit = limit
        self.admitted = 0  # checked or waiting (a slot is freed when its check ends, even if its request is gone)
        self.process = RecordProcess(seconds)
        self._count = threading.Lock()
        self._one = threading.Lock()

    def _leave(self) -> None:
        with self._count:
            self.admitted -= 1

    async def run(self, read: Callable[[], Awaitable[bytes]], check: Callable[[bytes], Any]) -> Any:
        """``check(await read())`` once admitted and its turn comes, in a daemon thread (``check`` runs the
        record's check by ``self.process.call``); WebError 503 when ``limit`` are admitted."""
        with self._count:
            if self.admitted >= self.limit:
                raise WebError(503, f"the server is checking {self.limit} records already: send yours in a moment")
            self.admitted += 1
        try:
            data = await read()
        except BaseException:
            self._leave()
            raise

        def one() -> Any:
            try:
                with self._one:
                    return check(data)
            finally:
                self._leave()

        return await in_daemon_thread(one)

    def close(self) -> None:
        """Stop the checks' process (the server stops): a check under way, and any later one, gets 503."""
        self.process.close()


# ---------------------------------------------------------------------- endpoints


async def play_page(request: Request) -> Response:
    return FileResponse(os.path.join(STATIC, "play.html"))


async def replay_page(request: Request) -> Response:
    return FileResponse(os.path.join(STATIC, "replay.html"))


async def favicon(request: Request) -> Response:
    return Response(status_code=204)


async def options(request: Request) -> Response:
    """Presets (every one; ``players``: how many seats each has), the agents the page may ask for, the default
    opponents and rule set, the agents of a game to watch at once (``watch``, or null), the pace."""
    config = _config(request)
    agents = offered_agents(config.trusted)
    agents += [o for o in dict.fromkeys(config.trusted) if o not in agents]
    return _json(
        {
            "presets": sorted(PRESETS),
            "players": {name: preset.num_players for name, preset in sorted(PRESETS.items())},
            "agents": agents,
            "opponents": list(config.opponents),
            "rules": config.rules,
            "watch": None if config.watch is None else list(config.watch),
            "seed": config.seed,
            "pace": config.pace,
            "preloaded": config.preload is not None,
            "preloaded_name": None if config.preload is None else config.preload_name,
        }
    )


async def new_game(request: Request) -> Response:
    """A new game (the session's old one is stopped and saved); nothing changes if it cannot start."""
    body = await read_body(request)
    store, config = _store(request), _config(request)

    def start() -> tuple[PlayedGame, dict[str, Any]]:
        played = build_game(body, config.trusted)
        return played, played.state()

    played, state = await run_in_threadpool(start)
    session = session_of(request) or new_session(request)
    await _locked(session, lambda: store.replace(session, played))
    return _json({"game": state})


async def game_state(request: Request) -> Response:
    """The game in progress, or ``{"game": null}``."""
    session = session_of(request)
    if session is None:
        return _json({"game": None})
    return _json(await _locked(session, lambda: {"game": None if session.played is None else session.played.state()}))


async def human_move(request: Request) -> Response:
    """The human's move."""
    body = await read_body(request)
    session, store = live_session(request), _store(request)

    def work() -> dict[str, Any]:
        played = played_of(session)
        event = human_act(played, body)
        if played.finished:
            store.save(played)
        return {"event": event, "game": played.state()}

    return _json(await _locked(session, work))


async def agent_move(request: Request) -> Response:
    """One move of the agent to act. Its decision runs in a daemon thread without the session's lock;
    the move is applied only if the game did not change meanwhile and the request still waits for it
    (at most :data:`DECISION_WAIT` seconds, then 503 and the move is dropped)."""
    session, store = live_session(request), _store(request)
    turn: Turn = await _locked(session, lambda: begin_agent_step(played_of(session)))

    def think() -> dict[str, Any]:
        try:
            action = turn.decide()
        except Exception:
            with session.lock:
                turn.release()
            raise
        with session.lock:
            event = finish_agent_step(turn, action)
            if turn.played.finished:
                store.save(turn.played)
            return {"event": event, "game": turn.played.state()}

    answer = in_daemon_thread(think)
    try:
        return _json(await asyncio.wait_for(asyncio.shield(answer), DECISION_WAIT))
    except asyncio.TimeoutError:
        pass

    def give_up() -> bool:
        turn.abandoned = not turn.done
        return turn.done

    if await _locked(session, give_up):  # applied just now: its answer is on its way
        return _json(await answer)
    raise WebError(503, f"the agent took more than {DECISION_WAIT:g} s to choose its move (dropped): ask again")


async def hint(request: Request) -> Response:
    """The hint for the human's turn: built from the human seat's view alone, in a daemon thread without the
    session's lock (like an agent's move), within the web's bound of samples, one at a time per game (409
    meanwhile); kept for the position."""
    session = live_session(request)
    unknown = sorted(set(request.query_params) - {"samples"})
    if unknown:
        raise WebError(400, f"unknown query parameter(s) {unknown}; use samples")
    samples = hint_samples(request.query_params.get("samples"))

    def begin() -> tuple[PlayedGame, Any]:
        played = played_of(session)
        return played, (played.moves, begin_hint(played, samples))

    played, (moves, begun) = await _locked(session, begin)
    if isinstance(begun, dict):
        return _json({"hint": begun})
    view, seed = begun

    def work() -> dict[str, Any]:
        made = None
        try:
            made = make_hint(view, samples, seed)
            return made
        finally:
            with session.lock:
                keep_hint(played, samples, moves, made)

    try:
        made = await asyncio.wait_for(asyncio.shield(in_daemon_thread(work)), DECISION_WAIT)
    except asyncio.TimeoutError:
        raise WebError(503, f"the hint took more than {DECISION_WAIT:g} s: ask again with fewer samples") from None
    return _json({"hint": made})


async def stop_game(request: Request) -> Response:
    """Stop the game (it is saved)."""
    session, store = live_session(request), _store(request)

    def work() -> dict[str, Any]:
        played = played_of(session)
        if not played.finished:
            played.stopped = True
        store.save(played)
        return {"game": played.state()}

    return _json(await _locked(session, work))


async def download_record(request: Request) -> Response:
    """The record of the finished or stopped game, as a download."""
    session = live_session(request)
    played, data = await _locked(session, lambda: (played_of(session), record_of(played_of(session))))
    name = f"sergeant-major-seed{played.seed}.json"
    return JSONResponse(data, headers={"Content-Disposition": f'attachment; filename="{name}"'})


async def load_replay(request: Request) -> Response:
    """Check a record (or the session's finished game, or the preloaded record, with its stored analysis if any) and
    keep it for the viewer. A record sent is read and re-played in the record checks' process
    (:func:`check_record`); a body of at most :data:`MAX_BODY` bytes is read here first, for the two requests
    that name a record the server holds."""
    config = _config(request)
    session = session_of(request)
    checks: RecordChecks = request.app.state.record_checks

    def check(data: bytes) -> Timeline:
        source: bytes | dict[str, Any] = data
        body = parse_body(data) if len(data) <= MAX_BODY else None
        if body == {"from_game": True}:
            if session is None:
                raise WebError(404, "no game in this session (it may have expired): start a new game")
            with session.lock:
                source = record_of(played_of(session))
        elif isinstance(body, dict) and set(body) == {"preloaded"}:
            if config.preload is None:
                raise WebError(404, "this server was started without a record to view")
            source = config.preload
        timeline = checks.process.call(check_record, source)
        if source is config.preload and config.preload_analysis is not None:
            timeline.keep_stored(config.preload_analysis)  # checked against the record by view --analysis
        return timeline

    timeline = await checks.run(lambda: read_bytes(request, MAX_RECORD_BODY, "a record to view"), check)
    session = session or new_session(request)
    session.replay = timeline
    return _json(timeline.summary())


async def replay_frame(request: Request) -> Response:
    """The table at one step of the record in view."""
    session = live_session(request)
    timeline = session.replay
    if timeline is None:
        raise WebError(404, "no record loaded in this session: POST one to /api/replay")
    query = request.query_params
    unknown = sorted(set(query) - {"step", "view"})
    if unknown:
        raise WebError(400, f"unknown query parameter(s) {unknown}; use step and view")
    text = query.get("step", "0")
    if not (text.isascii() and text.isdigit() and len(text) <= 9 and int(text) <= len(timeline)):
        raise WebError(400, f"step must be a whole number from 0 to {len(timeline)}, got {text!r:.20}")
    view = query.get("view", "all")
    seats = [str(s) for s in range(timeline.players)]
    if view != "all" and view not in seats:
        raise WebError(400, f"view must be all (every hand) or a seat {', '.join(seats)}, got {view!r:.20}")
    viewer = None if view == "all" else int(view)
    return _json(await run_in_threadpool(timeline.frame, int(text), viewer))


async def stored_analysis(request: Request) -> Response:
    """The analysis read from a file (``view RECORD --analysis FILE``) of the record in view, one per hand."""
    session = live_session(request)
    timeline = session.replay
    if timeline is None:
        raise WebError(404, "no record loaded in this session: POST one to /api/replay")
    analyses = timeline.stored_analyses()
    if not analyses:
        raise WebError(
            404, "the record in view has no stored analysis (sergeant-major view RECORD --analysis FILE shows one)"
        )
    return _json({"analyses": [with_moves(a) for a in analyses]})


ANALYSIS_FIELDS = {"hand": 1, "samples": 20, "seed": 0, "threshold": 0.5}


async def replay_analysis(request: Request) -> Response:
    """The analysis of one hand of the record in view, in a daemon thread; one at a time on the server (503
    while another runs), at most :data:`sm_web.replays.ANALYSIS_SAMPLES` samples per decision."""
    body = await read_body(request)
    session = live_session(request)
    timeline = session.replay
    if timeline is None:
        raise WebError(404, "no record loaded in this session: POST one to /api/replay")
    if not isinstance(body, dict) or set(body) - set(ANALYSIS_FIELDS):
        raise WebError(400, f"expected a JSON object with some of {sorted(ANALYSIS_FIELDS)}, got {body!r:.60}")
    settings = {**ANALYSIS_FIELDS, **body}
    try:  # every setting checked before the search is queued: a malformed one is a 400, never a 500 or a 503
        key = analysis_key(len(timeline.hand_starts), *(settings[name] for name in ANALYSIS_FIELDS))
    except AnalysisError as err:
        raise WebError(400, str(err)) from None
    busy: threading.Lock = request.app.state.analysis_lock
    if not busy.acquire(blocking=False):
        raise WebError(503, "the server is analysing another hand: ask again in a moment")

    def work() -> dict[str, Any]:
        try:
            return with_moves(timeline.analysis(*key))
        except AnalysisError as err:
            raise WebError(400, str(err)) from None
        finally:
            busy.release()

    try:
        return _json(await asyncio.wait_for(asyncio.shield(in_daemon_thread(work)), ANALYSIS_WAIT))
    except asyncio.TimeoutError:
        raise WebError(503, f"the analysis took more than {ANALYSIS_WAIT:g} s: ask with fewer samples") from None


async def not_found(request: Request) -> Response:
    raise WebError(404, f"no such API route: {request.method} {request.url.path}")


@asynccontextmanager
async def lifespan(app: Starlette) -> Any:
    """On stop: every open game is saved and the record checks' process ends."""
    yield
    app.state.store.close()
    app.state.record_checks.close()


def routes() -> list[BaseRoute]:
    """The routes of the module docstring."""
    return [
        Route("/", play_page),
        Route("/replay", replay_page),
        Route("/favicon.ico", favicon),
        Route("/api/options", api(options)),
        Route("/api/new", api(new_game), methods=["POST"]),
        Route("/api/state", api(game_state)),
        Route("/api/act", api(human_move), methods=["POST"]),
        Route("/api/step", api(agent_move), methods=["POST"]),
        Route("/api/hint", api(hint)),
        Route("/api/stop", api(stop_game), methods=["POST"]),
        Route("/api/record", api(download_record)),
        Route("/api/replay", api(load_replay), methods=["POST"]),
        Route("/api/replay/frame", api(replay_frame)),
        Route("/api/replay/analysis", api(replay_analysis), methods=["POST"]),
        Route("/api/replay/stored-analysis", api(stored_analysis)),
        Route("/api/{rest:path}", api(not_found), methods=["GET", "POST"]),
        Mount("/static", StaticFiles(directory=STATIC), name="static"),
    ]


def create_app(config: Config | None = None, store: SessionStore | None = None) -> Starlette:
    """The app: routes above, sessions in ``store`` (one built from ``config`` if not given).

    ValueError when ``config.opponents`` or ``config.watch`` holds a spec a page could not ask for (see
    :func:`sm_web.sessions.check_opponent`), ``config.rules`` is not a preset, ``config.watch`` has not one agent
    per seat of it, ``config.seed`` is not one a page holds exactly (0 to 2**53 - 1), or
    ``config.preload_analysis`` comes without ``config.preload``."""
    config = config or Config()
    for field, specs in (("opponents", config.opponents), ("watch", config.watch or ())):
        for spec in specs:
            try:
                check_opponent(spec, config.trusted)
            except WebError as err:
                raise ValueError(f"Config.{field}: {err}") from None
    if config.rules not in PRESETS:
        raise ValueError(f"Config.rules: unknown rule set {config.rules!r}; the presets are {sorted(PRESETS)}")
    seats = PRESETS[config.rules].num_players
    if config.watch is not None and len(config.watch) != seats:
        raise ValueError(
            f"Config.watch: {config.rules} has {seats} seats: give one agent per seat, not {len(config.watch)}"
        )
    try:
        check_page_seed(config.seed)
    except ValueError as err:
        raise ValueError(f"Config.seed: {err}") from None
    if config.preload_analysis is not None and config.preload is None:
        raise ValueError("Config.preload_analysis: an analysis is shown with its record: give Config.preload too")
    if store is None:
        store = SessionStore(config.max_sessions, config.idle_seconds, config.records_dir)
    app = Starlette(routes=routes(), lifespan=lifespan, middleware=[Middleware(SecurityHeaders)])
    app.state.store = store
    app.state.config = config
    app.state.record_checks = RecordChecks(RECORD_CHECKS)
    app.state.analysis_lock = threading.Lock()  # one analysis at a time: each takes a core for seconds
    return app
