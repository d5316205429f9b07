"""Make the screenshots of docs/browser.md: start of a hand, an exchange, the end of a game, the replay viewer.

    python docs/images/make_screenshots.py [--out docs/images] [--chromium /usr/bin/chromium]

Starts the web app on 127.0.0.1 (a free port), plays games by clicking the
first card that may be played (headless Chromium through Playwright) and
saves PNG files. Needs the web extra and a Chromium (Debian's ``chromium``).
"""

from __future__ import annotations

import argparse
import os
import shutil
import tempfile
import threading
import time

import uvicorn
from playwright.sync_api import sync_playwright

from sm_web.app import Config, create_app

READY = "['your-turn', 'hand-over', 'over'].includes(document.body.dataset.status)"


def start_server(records: str) -> tuple[uvicorn.Server, str]:
    server = uvicorn.Server(
        uvicorn.Config(create_app(Config(pace=0, records_dir=records)), host="127.0.0.1", port=0, log_level="warning")
    )
    threading.Thread(target=server.run, daemon=True).start()
    while not server.started:
        time.sleep(0.05)
    return server, f"http://127.0.0.1:{server.servers[0].sockets[0].getsockname()[1]}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=os.path.dirname(os.path.abspath(__file__)))
    parser.add_argument("--chromium", default=shutil.which("chromium"))
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    server, base = start_server(tempfile.mkdtemp())
    shots: dict[str, str] = {}

    def shot(page, name: str) -> None:
        if name not in shots:
            shots[name] = os.path.join(args.out, f"{name}.png")
            page.screenshot(path=shots[name], full_page=True)
            print("saved", shots[name])

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=args.chromium, args=["--no-sandbox"])
        page = browser.new_page(viewport={"width": 1100, "height": 860}, bypass_csp=True)
        page.goto(base + "/")
        shot(page, "browser-welcome")
        seed = args.seed
        while "browser-game-over" not in shots or "browser-exchange" not in shots:
            page.fill("input[name=opp1]", "heuristic")
            page.fill("input[name=opp2]", "pimc")
            page.fill("input[name=seed]", str(seed))
            page.select_option("#pace", "0")
            page.click("#deal")
            while True:
                page.wait_for_function(READY, timeout=60000)
                status = page.evaluate("document.body.dataset.status")
                if status == "hand-over":
                    if "Game over" in page.inner_text("#hand-over-body"):
                        if "browser-exchange" in shots:
                            shot(page, "browser-game-over")
                        break
                    page.click("#continue")
                    continue
                if status == "over":
                    break
                phase = page.evaluate("document.querySelector('.center .note').textContent")
                if "phase: play" in phase and "tricks played: 0" in phase and "hand 1" not in shots:
                    shot(page, "browser-hand-start")
                    shots["hand 1"] = ""
                if "phase: exchange" in phase:
                    shot(page, "browser-exchange")
                updates = page.evaluate("Number(document.body.dataset.updates || 0)")
                choices = page.locator("#choices button")
                cards = page.locator("#my-hand button.card:not([disabled])")
                if choices.count():
                    choices.first.click()
                elif "phase: play" in phase:
                    cards.first.click()  # the highest card of the first suit that may be played
                else:
                    cards.last.click()  # send or discard a low card

                page.wait_for_function(f"Number(document.body.dataset.updates) > {updates}")
            seed += 1
        page.goto(base + "/replay?from=game")
        page.wait_for_function("document.body.dataset.step === '0'")
        for _ in range(60):
            page.click("#forward")
        page.wait_for_function("document.body.dataset.step === '60'")
        shot(page, "browser-replay")
        browser.close()
    server.should_exit = True


if __name__ == "__main__":
    main()
