"""The ``serve`` and ``view`` commands (argparse; ``sergeant-major serve`` / ``view`` call these).

Exit status 0 after a clean stop (Ctrl-C), 2 for a usage error or a bad input
(an unknown agent, a record that does not replay, a missing web extra), with
a one-line message.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

DEFAULT_HOST = "127.0.0.1"


def _common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--host", default=DEFAULT_HOST, help="address to listen on (default 127.0.0.1: this computer only)"
    )
    parser.add_argument("--port", type=int, default=8000, help="port (default 8000)")
    parser.add_argument(
        "--records", default="runs/web", metavar="DIR", help="folder for the records of played games (default runs/web)"
    )
    parser.add_argument(
        "--pace", type=float, default=0.8, help="seconds between two agent moves on the page (default 0.8)"
    )
    parser.add_argument("--max-games", type=int, default=64, help="most live games at once (default 64)")
    parser.add_argument("--idle-minutes", type=float, default=60.0, help="a game idle this long ends (default 60)")


def _fail(prog: str, message: str) -> int:
    print(f"{prog}: error: {message}", file=sys.stderr)
    return 2


def _run(prog: str, args: argparse.Namespace, preload: dict | None, opponents: Sequence[str], path: str) -> int:
    try:
        import uvicorn

        from .app import Config, create_app
    except ImportError as err:
        return _fail(prog, f"the web app needs the web extra ({err}); install it with: pip install -e '.[web]'")
    if not 0 < args.port < 65536:
        return _fail(prog, f"--port must be 1-65535, got {args.port}")
    if args.pace < 0 or args.max_games < 1 or args.idle_minutes <= 0:
        return _fail(prog, "--pace must be >= 0, --max-games >= 1 and --idle-minutes > 0")
    config = Config(
        pace=args.pace,
        records_dir=args.records,
        max_sessions=args.max_games,
        idle_seconds=args.idle_minutes * 60,
        preload=preload,
        opponents=(opponents[0], opponents[1]),
    )
    app = create_app(config)
    if args.host not in (DEFAULT_HOST, "localhost", "::1"):
        print(
            f"{prog}: listening on {args.host}: other computers on the network can reach this server", file=sys.stderr
        )
    shown_host = "localhost" if args.host in (DEFAULT_HOST, "::1") else args.host
    print(f"Open http://{shown_host}:{args.port}{path} (Ctrl-C stops)")
    uvicorn.run(app, host=args.host, port=args.port, log_level="warning")
    return 0


def serve_main(argv: Sequence[str] | None = None) -> int:
    """Start the play page (``/``) and the replay viewer (``/replay``)."""
    parser = argparse.ArgumentParser(
        prog="sergeant-major serve",
        description="Play Sergeant Major in a browser against two agents, and view saved games.",
    )
    _common(parser)
    parser.add_argument(
        "--opponents",
        nargs=2,
        default=["heuristic", "heuristic"],
        metavar="SPEC",
        help="opponents offered first on the page (default: heuristic heuristic; any agent spec: pimc, trained, ...)",
    )
    args = parser.parse_args(argv)
    from agents import AgentSpecError, make_opponent

    for spec in args.opponents:
        try:
            make_opponent(spec, seed=0)
        except AgentSpecError as err:
            return _fail("sergeant-major serve", f"--opponents: {err}")
    return _run("sergeant-major serve", args, None, args.opponents, "/")


def view_main(argv: Sequence[str] | None = None) -> int:
    """Start the server with ``RECORD`` open in the replay viewer."""
    parser = argparse.ArgumentParser(
        prog="sergeant-major view", description="Step through a saved game record in a browser."
    )
    parser.add_argument("record", help="a game record (JSON)")
    _common(parser)
    args = parser.parse_args(argv)
    from sm_env.records import RecordError, load_record

    from .replays import Timeline

    prog = "sergeant-major view"
    try:
        record = load_record(args.record)
        Timeline(record)
    except (OSError, RecordError) as err:
        return _fail(prog, str(err))
    return _run(prog, args, record, ("heuristic", "heuristic"), "/replay")


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m sm_web serve|view ...``."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] in ("serve", "view"):
        return (serve_main if argv[0] == "serve" else view_main)(argv[1:])
    print("usage: python -m sm_web {serve,view} [options]  (try: python -m sm_web serve --help)", file=sys.stderr)
    return 2
