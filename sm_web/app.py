"""The web app: a page to play against agents and a replay viewer (Starlette).

Pages (static files, no card in them): ``/`` play, ``/replay`` the viewer.

JSON API (the session is the ``sm_session`` cookie, set by ``/api/new`` or
``/api/replay``; POST bodies are JSON objects, ``Content-Type:
application/json``)::

    GET  /api/options        presets, agent kinds, the pace of agents' moves
    POST /api/new            {"seat": 0, "opponents": ["heuristic", "pimc"], "rules": "standard",
                              "seed": 7 | null, "max_hands": 100} -> state
    GET  /api/state          the game in progress (a reload resumes it) -> {"game": state | null}
    POST /api/act            {"action": 12 | "AC"}: the human's move -> {"event", "game"}
    POST /api/step           one move of the agent to act -> {"event", "game"}
    POST /api/stop           stop the game (it is saved) -> state
    GET  /api/record         the record of the finished or stopped game (a download)
    POST /api/replay         a record (JSON object), or {"from_game": true} -> {"steps", "hand_starts", ...}
    GET  /api/replay/frame   ?step=N&view=all|0|1|2 -> the table at step N

Errors are ``{"error": "..."}`` with status 400 (a malformed or illegal
request), 404 (no game or replay in this session), 409 (not now: not your
turn, game over), 413 (body too large), 415 (not JSON) or 503 (too many live
games). A request that fails changes nothing.

The state sent for play is built from the human seat's
:func:`sm_env.core.knowledge.player_view` only (see :mod:`sm_web.sessions`).
"""

from __future__ import annotations

import json
import os
from collections.abc import Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from agents import KNOWN_AGENTS
from sm_env.core.rules import PRESETS
from sm_env.records import ReplayError

from .replays import Timeline
from .sessions import Session, SessionStore, WebError, agent_step, human_act, record_of

STATIC = os.path.join(os.path.dirname(os.path.abspath(__file__)), "static")
COOKIE = "sm_session"
MAX_BODY = 16_384
MAX_RECORD_BODY = 8_000_000
SECURITY_HEADERS = {
    "X-Content-Type-Options": "nosniff",
    "Content-Security-Policy": "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'",
    "Referrer-Policy": "no-referrer",
    "X-Frame-Options": "DENY",
}


@dataclass
class Config:
    """Settings of one server.

    pace: seconds the page waits between two agent moves. records_dir: where
    games are saved (None: not saved). max_sessions / idle_seconds bound the
    live games. preload: a record the viewer opens with (``view`` command).
    """

    pace: float = 0.8
    records_dir: str | None = "runs/web"
    max_sessions: int = 64
    idle_seconds: float = 3600.0
    preload: dict[str, Any] | None = None
    opponents: tuple[str, str] = ("heuristic", "heuristic")


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


async def _body(request: Request, limit: int = MAX_BODY) -> Any:
    """The request's JSON body (WebError 415, 413 or 400 naming what was wrong)."""
    kind = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if kind != "application/json":
        raise WebError(415, f"send the body as JSON with Content-Type: application/json (got {kind or 'none'!r})")
    data = b""
    async for chunk in request.stream():
        data += chunk
        if len(data) > limit:
            raise WebError(413, f"the request body is larger than {limit} bytes")
    try:
        return json.loads(data or b"null")
    except (json.JSONDecodeError, UnicodeDecodeError) as err:
        raise WebError(400, f"the body is not valid JSON: {err}") from None


def create_app(config: Config | None = None, store: SessionStore | None = None) -> Starlette:
    """The app: routes above, sessions in ``store`` (one built from ``config`` if not given)."""
    config = config or Config()
    if store is None:
        store = SessionStore(config.max_sessions, config.idle_seconds, config.records_dir)

    def session_of(request: Request) -> Session | None:
        return store.get(request.cookies.get(COOKIE))

    def endpoint(
        handler: Callable[[Request], Awaitable[Response]],
    ) -> Callable[[Request], Awaitable[Response]]:
        async def wrapped(request: Request) -> Response:
            try:
                return await handler(request)
            except WebError as err:
                return _error(err.status, str(err))

        return wrapped

    def page(name: str) -> Callable[[Request], Awaitable[Response]]:
        async def serve(request: Request) -> Response:
            return FileResponse(os.path.join(STATIC, name))

        return serve

    async def options(request: Request) -> Response:
        return _json(
            {
                "presets": sorted(name for name, preset in PRESETS.items() if preset.num_players == 3),
                "agents": [a for a in KNOWN_AGENTS if a != "human"],
                "opponents": list(config.opponents),
                "pace": config.pace,
                "preloaded": config.preload is not None,
            }
        )

    def live(request: Request) -> Session:
        session = session_of(request)
        if session is None:
            raise WebError(404, "no game in this session (it may have expired): start a new game (POST /api/new)")
        return session

    def with_cookie(response: Response, session: Session) -> Response:
        response.set_cookie(COOKIE, session.id, httponly=True, samesite="strict", max_age=int(store.idle_seconds))
        return response

    async def new_game(request: Request) -> Response:
        body = await _body(request)
        session = session_of(request)
        created = session is None
        if created:
            session = store.create()

        def start() -> dict[str, Any]:
            with session.lock:
                return store.new_game(session, body, config.opponents).state()

        try:
            state = await run_in_threadpool(start)
        except WebError:
            if created:
                store.forget(session.id)
            raise
        return with_cookie(_json({"game": state}), session)

    async def state(request: Request) -> Response:
        session = session_of(request)
        if session is None or session.played is None:
            return _json({"game": None})

        def read() -> dict[str, Any]:
            with session.lock:
                return {"game": session.played.state() if session.played is not None else None}

        return _json(await run_in_threadpool(read))

    def played_of(session: Session) -> Any:
        if session.played is None:
            raise WebError(404, "no game in this session: start a new game (POST /api/new)")
        return session.played

    def move(run: Callable[[Any, Any], dict[str, Any]], needs_body: bool) -> Callable[[Request], Awaitable[Response]]:
        async def handler(request: Request) -> Response:
            body = await _body(request) if needs_body else None
            session = live(request)

            def work() -> dict[str, Any]:
                with session.lock:
                    played = played_of(session)
                    event = run(played, body)
                    if played.finished:
                        store.save(played)
                    return {"event": event, "game": played.state()}

            return _json(await run_in_threadpool(work))

        return handler

    async def stop(request: Request) -> Response:
        session = live(request)

        def work() -> dict[str, Any]:
            with session.lock:
                played = played_of(session)
                if not played.finished:
                    played.stopped = True
                store.save(played)
                return {"game": played.state()}

        return _json(await run_in_threadpool(work))

    async def record(request: Request) -> Response:
        session = live(request)

        def work() -> tuple[Any, dict[str, Any]]:
            with session.lock:
                played = played_of(session)
                return played, record_of(played)

        played, data = await run_in_threadpool(work)
        name = f"sergeant-major-seed{played.seed}.json"
        return JSONResponse(data, headers={"Content-Disposition": f'attachment; filename="{name}"'})

    async def load_replay(request: Request) -> Response:
        body = await _body(request, MAX_RECORD_BODY)
        session = session_of(request)
        created = session is None
        if created:
            session = store.create()
        try:
            if body == {"from_game": True}:

                def finished_record() -> dict[str, Any]:
                    with session.lock:
                        return record_of(played_of(session))

                source = await run_in_threadpool(finished_record)
            elif isinstance(body, dict) and set(body) == {"preloaded"}:
                if config.preload is None:
                    raise WebError(404, "this server was started without a record to view")
                source = config.preload
            else:
                source = body
            try:
                timeline = await run_in_threadpool(Timeline, source)
            except ReplayError as err:
                raise WebError(400, f"not a record this viewer can show: {err}") from None
        except WebError:
            if created:
                store.forget(session.id)
            raise
        session.replay = timeline
        summary = {
            "steps": len(timeline),
            "hand_starts": timeline.hand_starts,
            "rules": timeline.record["rules"].get("name", "custom"),
            "seed": timeline.record.get("seed"),
            "hands": len(timeline.record["hands"]),
        }
        return with_cookie(_json(summary), session)

    async def replay_frame(request: Request) -> Response:
        session = live(request)
        timeline = session.replay
        if timeline is None:
            raise WebError(404, "no record loaded in this session: POST one to /api/replay")
        query = request.query_params
        unknown = sorted(set(query) - {"step", "view"})
        if unknown:
            raise WebError(400, f"unknown query parameter(s) {unknown}; use step and view")
        try:
            step = int(query.get("step", "0"))
        except ValueError:
            raise WebError(400, f"step must be a whole number from 0 to {len(timeline)}") from None
        if not 0 <= step <= len(timeline):
            raise WebError(400, f"step must be a whole number from 0 to {len(timeline)}, got {step}")
        view = query.get("view", "all")
        if view not in ("all", "0", "1", "2"):
            raise WebError(400, f"view must be all (every hand) or a seat 0, 1 or 2, got {view!r}")
        viewer = None if view == "all" else int(view)
        return _json(await run_in_threadpool(timeline.frame, step, viewer))

    async def not_found(request: Request) -> Response:
        return _error(404, f"no such API route: {request.method} {request.url.path}")

    @asynccontextmanager
    async def lifespan(app: Starlette) -> Any:
        yield
        store.close()

    routes = [
        Route("/", page("play.html")),
        Route("/replay", page("replay.html")),
        Route("/favicon.ico", lambda request: Response(status_code=204)),
        Route("/api/options", endpoint(options)),
        Route("/api/new", endpoint(new_game), methods=["POST"]),
        Route("/api/state", endpoint(state)),
        Route("/api/act", endpoint(move(human_act, True)), methods=["POST"]),
        Route("/api/step", endpoint(move(lambda played, _body: agent_step(played), False)), methods=["POST"]),
        Route("/api/stop", endpoint(stop), methods=["POST"]),
        Route("/api/record", endpoint(record)),
        Route("/api/replay", endpoint(load_replay), methods=["POST"]),
        Route("/api/replay/frame", endpoint(replay_frame)),
        Route("/api/{rest:path}", endpoint(not_found), methods=["GET", "POST"]),
        Mount("/static", StaticFiles(directory=STATIC), name="static"),
    ]
    app = Starlette(routes=routes, lifespan=lifespan, middleware=[Middleware(SecurityHeaders)])
    app.state.store = store
    app.state.config = config
    return app
