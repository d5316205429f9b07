"""Play on the web server while records that are slow to parse are uploaded to its viewer: move latency.

Starts ``sergeant-major serve`` on 127.0.0.1 (a free port, games not saved), plays games as one client (seat 0
against two heuristics: the human's moves ``POST /api/act`` and the agents' moves ``POST /api/step``, and
``GET /api/options`` after each), first alone for ``--idle`` seconds, then for ``--seconds`` while ``--uploads``
threads of another process each send a body of ``--size`` bytes to ``POST /api/replay`` every ``--every``
seconds (all at once: a burst of 48 every 2 s by default; 0: each again as soon as it is answered):

- ``lists``: ``[[],[],...]``, about 978,000 empty lists in 3 MB (the default);
- ``object``: ``{"x": [[],[],...]}``, the same inside an object.

It prints the median and the maximum latency of the moves and of the options, alone and under the uploads, the
answers the uploads got (by status) and the machine's load (1-minute load average).

    python benchmarks/bench_web_uploads.py [--uploads 48] [--every 2] [--seconds 20] [--payload lists|object]
"""

from __future__ import annotations

import argparse
import http.client
import json
import multiprocessing
import os
import re
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from typing import Any

HOST = "127.0.0.1"


def payload(kind: str, size: int) -> bytes:
    """A JSON body of about ``size`` bytes of empty lists (``kind`` lists or object)."""
    head, tail = (b"[", b"]") if kind == "lists" else (b'{"x": [', b"]}")
    count = (size - len(head) - len(tail) + 1) // 3
    return head + b",".join([b"[]"] * count) + tail


def start_server(folder: str) -> tuple[subprocess.Popen, int]:
    """``sergeant-major serve`` on a free port of 127.0.0.1; the process and its port."""
    command = [sys.executable, "-m", "sm_web", "serve", "--host", HOST, "--port", "0", "--pace", "0"]
    command += ["--records", folder]
    server = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
    line = server.stdout.readline()
    found = re.search(r":(\d+)/", line)
    if found is None:
        server.kill()
        raise SystemExit(f"the server did not start: {line!r}")
    return server, int(found.group(1))


class Player:
    """One client playing seat 0 through the JSON API, timing every request, each on a connection of its own (on
    a kept-alive one every answer waits 40 ms more: the server's accepted sockets are not TCP_NODELAY, so the body
    of an answer waits for the ACK of its headers, which the client delays)."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.cookie = ""

    def request(self, method: str, path: str, body: Any = None) -> tuple[float, int, Any]:
        """(seconds, status, JSON answer) of one request."""
        headers = {"Cookie": self.cookie}
        data = None
        if body is not None:
            data = json.dumps(body).encode()
            headers["Content-Type"] = "application/json"
        start = time.perf_counter()
        connection = http.client.HTTPConnection(HOST, self.port, timeout=60)
        try:
            connection.request(method, path, body=data, headers=headers)
            response = connection.getresponse()
            answer = response.read()
        finally:
            connection.close()
        took = time.perf_counter() - start
        cookie = response.getheader("set-cookie")
        if cookie:
            self.cookie = cookie.split(";")[0]
        return took, response.status, json.loads(answer)

    def play(self, seconds: float, seed: int) -> tuple[list[float], list[float]]:
        """Play for ``seconds`` (new games as they end): the latencies of the moves and of the options."""
        moves: list[float] = []
        options: list[float] = []
        end = time.perf_counter() + seconds
        game = None
        while time.perf_counter() < end:
            if game is None or game["over"]:
                body = {"seat": 0, "opponents": ["heuristic", "heuristic"], "seed": seed, "max_hands": 100}
                game = self.request("POST", "/api/new", body)[2]["game"]
                seed += 1
            if game["your_turn"]:
                action = game["legal"][0] if game["legal"] else game["choices"][0]["action"]
                took, status, answer = self.request("POST", "/api/act", {"action": action})
            else:
                took, status, answer = self.request("POST", "/api/step")
            if status != 200:
                raise SystemExit(f"a move got {status}: {answer}")
            moves.append(took)
            game = answer["game"]
            options.append(self.request("GET", "/api/options")[0])
        return moves, options


def upload_loop(port: int, body: bytes, threads: int, every: float, stop: Any, counts: Any) -> None:
    """``threads`` threads, each posting ``body`` to the viewer every ``every`` seconds (0: again as soon as it is
    answered) until ``stop`` is set; the answers (statuses, or the error of a connection the server closed)
    counted into ``counts``."""
    seen: Counter = Counter()
    lock = threading.Lock()
    start = time.monotonic()

    def one() -> None:
        due = start
        while not stop.wait(max(due - time.monotonic(), 0)):
            due = max(due + every, time.monotonic()) if every else due
            connection = http.client.HTTPConnection(HOST, port, timeout=120)
            try:
                connection.request("POST", "/api/replay", body=body, headers={"Content-Type": "application/json"})
                response = connection.getresponse()
                response.read()
                status = str(response.status)
            except OSError as err:  # the server answered before reading the body and closed the connection
                status = type(err).__name__
            finally:
                connection.close()
            with lock:
                seen[status] += 1

    workers = [threading.Thread(target=one, daemon=True) for _ in range(threads)]
    for worker in workers:
        worker.start()
    stop.wait()
    for worker in workers:
        worker.join(120)
    counts.update(seen)  # a managed dict: one update


def summary(name: str, seconds: list[float]) -> str:
    """How many, the median and the maximum, in ms."""
    ms = sorted(s * 1000 for s in seconds)
    return f"{name}: {len(ms)} answered, median {statistics.median(ms):.0f} ms, max {ms[-1]:.0f} ms"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--uploads", type=int, default=48, help="threads uploading at once (default 48)")
    again = "seconds between two uploads of a thread (default 2; 0: again as soon as answered)"
    parser.add_argument("--every", type=float, default=2.0, help=again)
    parser.add_argument("--seconds", type=float, default=20.0, help="seconds of play under the uploads")
    parser.add_argument("--idle", type=float, default=5.0, help="seconds of play before the uploads")
    parser.add_argument("--payload", choices=("lists", "object"), default="lists")
    parser.add_argument("--size", type=int, default=2_934_000, help="bytes of each upload (at most 3,000,000)")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    body = payload(args.payload, args.size)
    with tempfile.TemporaryDirectory() as folder:
        server, port = start_server(folder)
        try:
            player = Player(port)
            idle = player.play(args.idle, args.seed)
            context = multiprocessing.get_context("spawn")
            manager = context.Manager()
            stop, counts = context.Event(), manager.dict()
            uploader = context.Process(target=upload_loop, args=(port, body, args.uploads, args.every, stop, counts))
            uploader.start()
            time.sleep(2.0)  # the uploads under way
            loaded = player.play(args.seconds, args.seed + 1000)
            stop.set()
            uploader.join(180)
            answered = dict(sorted(counts.items()))
            manager.shutdown()
        finally:
            server.terminate()
            server.wait(30)
    every = f"every {args.every:g} s" if args.every else "again as soon as answered"
    print(f"{len(body):,} bytes of {args.payload} per upload, {args.uploads} threads each uploading {every}")
    print(f"alone ({args.idle:g} s)       {summary('moves', idle[0])}; {summary('options', idle[1])}")
    print(f"under uploads ({args.seconds:g} s) {summary('moves', loaded[0])}; {summary('options', loaded[1])}")
    print(f"uploads answered: {answered}; load average {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
