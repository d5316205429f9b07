"""The ``serve`` and ``view`` commands (argparse; ``sergeant-major serve`` / ``view`` call these).

``serve --watch A B C`` opens the page on a game of those agents to watch (one per seat of ``--rules``,
checked before the server starts); ``serve --seed N`` fills the page's seed field with N, so the first game
(watched or played) is dealt from it and can be dealt again; ``view RECORD --analysis FILE`` shows an
analysis written by ``sergeant-major analyse RECORD --out FILE`` with the record, without searching
(refused, before the server starts, unless it is a whole analysis of that record:
:func:`agents.analysis.check_analysis`).

Ctrl-C (SIGINT) or SIGTERM stops the server: requests still running get
:data:`STOP_SECONDS`, then the open games are saved and the process ends, even
while an agent is searching (exit status 0 after Ctrl-C; after SIGTERM the
process ends by that signal, as uvicorn does). A search still running then is
not waited for: the process ends at once (``os._exit``), as a compiled search
holds the interpreter until its kernel returns, which kept a stopped server
alive 1.4 s more. Exit status 2 for a usage error or a bad input
(an unknown agent, a record that does not replay, an analysis of another record, a
missing web extra, a port in use), with a one-line message. ``--port 0`` takes a free port; the first
line printed names the address.
"""

from __future__ import annotations

import argparse
import os
import socket
import sys
import threading
from collections.abc import Sequence
from typing import Any

DEFAULT_HOST = "127.0.0.1"
STOP_SECONDS = 1.5  # how long a stopping server waits for requests in flight (it ends within about 2 s)


def _common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--host", default=DEFAULT_HOST, help="address to listen on (default 127.0.0.1: this computer only)"
    )
    parser.add_argument("--port", type=int, default=8000, help="port (default 8000; 0: a free one)")
    parser.add_argument(
        "--records", default="runs/web", metavar="DIR", help="folder for the records of played games (default runs/web)"
    )
    parser.add_argument(
        "--pace",
        type=float,
        default=0.8,
        metavar="SECONDS",
        help="seconds between two agent moves on the page (default 0.8)",
    )
    parser.add_argument("--max-games", type=int, default=64, help="most live games at once (default 64)")
    parser.add_argument("--idle-minutes", type=float, default=60.0, help="a game idle this long ends (default 60)")


def _fail(prog: str, message: str) -> int:
    print(f"{prog}: error: {message}", file=sys.stderr)
    return 2


def _run(prog: str, args: argparse.Namespace, path: str, **settings: Any) -> int:
    """Build the app (``settings``: fields of :class:`sm_web.app.Config`) and serve it until stopped."""
    try:
        import uvicorn

        from .app import WORK_THREAD, Config, create_app
    except ImportError as err:
        return _fail(prog, f"the web app needs the web extra ({err}); install it with: pip install -e '.[web]'")
    if not 0 <= args.port < 65536:
        return _fail(prog, f"--port must be 0-65535 (0: a free port), got {args.port}")
    if args.pace < 0 or args.max_games < 1 or args.idle_minutes <= 0:
        return _fail(prog, "--pace must be >= 0, --max-games >= 1 and --idle-minutes > 0")
    config = Config(
        pace=args.pace,
        records_dir=args.records,
        max_sessions=args.max_games,
        idle_seconds=args.idle_minutes * 60,
        **settings,
    )
    try:
        app = create_app(config)
    except ValueError as err:
        return _fail(prog, str(err))
    try:
        listening = listening_socket(args.host, args.port)
    except OSError as err:
        return _fail(prog, f"cannot listen on {args.host} port {args.port}: {err.strerror or err}")
    port = listening.getsockname()[1]
    if args.host not in (DEFAULT_HOST, "localhost", "::1"):
        print(
            f"{prog}: listening on {args.host}: other computers on the network can reach this server", file=sys.stderr
        )
    shown_host = "localhost" if args.host in (DEFAULT_HOST, "::1") else args.host
    watching = f" to watch {', '.join(config.watch)}" if config.watch else ""
    print(f"Open http://{shown_host}:{port}{path}{watching} (Ctrl-C stops)", flush=True)
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", timeout_graceful_shutdown=STOP_SECONDS))
    try:
        server.run(sockets=[listening])  # on SIGTERM uvicorn ends the process by that signal once stopped
    except KeyboardInterrupt:  # Ctrl-C: uvicorn raises it again once the server has stopped
        pass
    if any(t.name == WORK_THREAD and t.is_alive() for t in threading.enumerate()):
        sys.stdout.flush()  # the games are saved; an agent's search would hold the interpreter's exit
        sys.stderr.flush()
        os._exit(0)
    return 0


def listening_socket(host: str, port: int) -> socket.socket:
    """The server's TCP socket on ``host``/``port`` (0: a free port), made with ``IPPROTO_TCP`` so that asyncio
    turns Nagle's algorithm off on every connection it accepts (it does only for sockets of that protocol:
    ``socket.create_server``'s, protocol 0, kept each answer after the first on a connection ~40 ms behind,
    waiting for the client's delayed acknowledgement)."""
    listening = socket.socket(_family(host), socket.SOCK_STREAM, socket.IPPROTO_TCP)
    try:
        if os.name == "posix":
            listening.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listening.bind((host, port))
        listening.listen()
    except OSError:
        listening.close()
        raise
    return listening


def _family(host: str) -> socket.AddressFamily:
    try:
        return socket.getaddrinfo(host, None, type=socket.SOCK_STREAM)[0][0]
    except OSError:
        return socket.AF_INET


def serve_main(argv: Sequence[str] | None = None) -> int:
    """Start the play page (``/``) and the replay viewer (``/replay``)."""
    parser = argparse.ArgumentParser(
        prog="sergeant-major serve",
        description="Play Sergeant Major in a browser against two agents, watch agents play each other, and view "
        "saved games.",
    )
    _common(parser)
    parser.add_argument(
        "--opponents",
        nargs=2,
        default=["heuristic", "heuristic"],
        metavar="SPEC",
        help="opponents offered first on the page (default: heuristic heuristic; random, heuristic, pimc, ismcts, "
        "trained, or ppo:PATH / rllib:PATH, which the page may then choose; search parameters within the page's "
        "bounds, e.g. pimc:seconds=1)",
    )
    parser.add_argument(
        "--rules",
        default="standard",
        metavar="PRESET",
        help="the rule set chosen first on the page (default standard; 'sergeant-major rules' lists the presets)",
    )
    parser.add_argument(
        "--watch",
        nargs="+",
        metavar="SPEC",
        help="open the page on a game of these agents to watch, one per seat of --rules (three; four with a "
        "four-player rule set), e.g. --watch heuristic pimc trained; every hand is shown, one move every --pace "
        "seconds; the same specs as --opponents",
    )
    parser.add_argument(
        "--seed",
        type=int,
        default=None,
        help="the seed the page's form starts with (0 to 2**53 - 1): the first game, watched or played, is dealt "
        "from it (default: empty, a random deal)",
    )
    args = parser.parse_args(argv)
    prog = "sergeant-major serve"
    from agents import AgentSpecError, make_opponent, parse_spec
    from sm_env.core.rules import PRESETS

    from .sessions import WebError, check_opponent, check_page_seed

    if args.rules not in PRESETS:
        return _fail(
            prog, f"--rules: unknown rule set {args.rules!r}; the page offers the presets {', '.join(PRESETS)}"
        )
    rules = PRESETS[args.rules]
    try:
        check_page_seed(args.seed)
    except ValueError as err:
        return _fail(prog, f"--seed: {err}")
    trusted = list(args.opponents) + list(args.watch or ())
    for spec in args.opponents:
        try:
            check_opponent(spec, trusted)  # the bounds a page's choice has
            make_opponent(spec, seed=0)
        except (AgentSpecError, WebError) as err:
            return _fail(prog, f"--opponents: {err}")
    if args.watch is not None:
        seats = rules.num_players
        if len(args.watch) != seats:
            four = [name for name, preset in PRESETS.items() if preset.num_players == 4]
            hint = f"; four agents need a four-player rule set: --rules {' or '.join(four)}" if seats == 3 else ""
            return _fail(
                prog,
                f"--watch: {args.rules} has {seats} seats: give {seats} agent specs, one per seat "
                f"(got {len(args.watch)}: {' '.join(args.watch)}){hint}",
            )
        for spec in args.watch:
            try:
                if parse_spec(spec.strip())[0] == "human":
                    raise AgentSpecError(
                        f"{spec!r}: every seat of a watched game is an agent; to play, leave out --watch"
                    )
                check_opponent(spec, trusted)
                make_opponent(spec, seed=0).check_rules(rules)  # a trained policy plays its layout's rule sets only
            except (AgentSpecError, WebError, ValueError) as err:
                return _fail(prog, f"--watch: {err}")
    return _run(
        prog,
        args,
        "/",
        opponents=(args.opponents[0], args.opponents[1]),
        rules=args.rules,
        watch=None if args.watch is None else tuple(s.strip() for s in args.watch),
        seed=args.seed,
    )


def view_main(argv: Sequence[str] | None = None) -> int:
    """Start the server with ``RECORD`` open in the replay viewer (and ``--analysis FILE`` shown with it)."""
    parser = argparse.ArgumentParser(
        prog="sergeant-major view", description="Step through a saved game record in a browser."
    )
    parser.add_argument("record", help="a game record (JSON)")
    parser.add_argument(
        "--analysis",
        metavar="FILE",
        help="show this analysis of RECORD (written by 'sergeant-major analyse RECORD --out FILE') without "
        "searching: its costs, flagged moves and per-seat table; refused unless it is a whole analysis of RECORD",
    )
    _common(parser)
    args = parser.parse_args(argv)
    from agents.analysis import AnalysisError, check_analysis, load_analysis
    from sm_env.records import RecordError, load_record

    from .replays import Timeline

    prog = "sergeant-major view"
    try:
        record = load_record(args.record)
        timeline = Timeline(record)
    except (OSError, RecordError) as err:
        return _fail(prog, str(err))
    analysis = None
    if args.analysis is not None:
        try:
            data = load_analysis(args.analysis)
        except AnalysisError as err:
            return _fail(prog, f"--analysis: {err}")
        try:
            analysis = check_analysis(data, timeline.read)
        except AnalysisError as err:
            return _fail(prog, f"--analysis {args.analysis} (with the record {args.record}): {err}")
    name = os.path.basename(args.record)
    return _run(prog, args, "/replay", preload=record, preload_analysis=analysis, preload_name=name)


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m sm_web serve|view ...``."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] in ("serve", "view"):
        return (serve_main if argv[0] == "serve" else view_main)(argv[1:])
    print("usage: python -m sm_web {serve,view} [options]  (try: python -m sm_web serve --help)", file=sys.stderr)
    return 2
