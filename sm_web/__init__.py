"""Play Sergeant Major in a browser, and step through saved games.

A small local web app (Starlette, run by uvicorn): a person plays a whole
game of any preset against two built-in agents (three with four players), and
a replay viewer steps through any game record. The page of a player only ever
receives that seat's :class:`~sm_env.core.knowledge.PlayerView`, turned into
JSON on the server (:mod:`sm_env.display.scene`); hidden hands and the kitty
never reach it.

Commands (``pip install -e '.[web]'``)::

    sergeant-major serve [--host 127.0.0.1] [--port 8000] [--opponents heuristic pimc] [--rules standard]
                         [--watch heuristic pimc trained] [--pace 0.8]
    sergeant-major view RECORD.json [--analysis ANALYSIS.json] [--host 127.0.0.1] [--port 8000]

``serve --watch`` opens the page on a game of those agents (one per seat) to watch; ``view --analysis``
shows an analysis written by ``sergeant-major analyse RECORD --out FILE`` with its record.

or ``python -m sm_web serve ...`` / ``python -m sm_web view ...``. In Python,
:func:`sm_web.app.create_app` builds the app for any ASGI server.
"""

from __future__ import annotations

from collections.abc import Sequence


def serve_main(argv: Sequence[str] | None = None) -> int:
    """``serve``: start the play page and the replay viewer; returns the exit status."""
    from .cli import serve_main as run

    return run(argv)


def view_main(argv: Sequence[str] | None = None) -> int:
    """``view RECORD.json``: start the server with a record open in the replay viewer."""
    from .cli import view_main as run

    return run(argv)


__all__ = ["serve_main", "view_main"]
