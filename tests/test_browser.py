"""A real headless browser plays a whole hand by clicking, reloads mid-hand, stops, and the saved record replays.

Needs the web extra (Playwright for Python) and a Chromium: Debian's
``chromium`` package (``apt-get install chromium``) or Playwright's own
(``playwright install chromium``); set ``SM_CHROMIUM`` to use another
executable. Without them the test is skipped and says why.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import threading
import time

import pytest

try:
    import uvicorn
    from playwright.sync_api import Error as PlaywrightError
    from playwright.sync_api import sync_playwright
except ImportError as err:
    pytest.skip(f"the browser test needs the web extra (uvicorn, playwright): {err}", allow_module_level=True)

from web_helpers import cards_in, known_cards

from sm_env.records import load_record, replay
from sm_web.app import Config, create_app

STATUS_READY = "['your-turn', 'hand-over', 'over'].includes(document.body.dataset.status)"


def _chromium() -> str | None:
    """A Chromium executable: $SM_CHROMIUM, Debian's chromium, or None (Playwright's own, if installed)."""
    if os.environ.get("SM_CHROMIUM"):
        return os.environ["SM_CHROMIUM"]
    for name in ("chromium", "chromium-browser"):
        found = shutil.which(name)
        if found:
            return found
    return None


@pytest.fixture(scope="module")
def browser():
    executable = _chromium()
    with sync_playwright() as p:
        try:
            launched = p.chromium.launch(executable_path=executable, args=["--no-sandbox"])
        except PlaywrightError as err:
            pytest.skip(
                "no Chromium for Playwright: install Debian's chromium (apt-get install chromium) or run "
                f"'playwright install chromium', or set SM_CHROMIUM ({str(err).splitlines()[0]})"
            )
        yield launched
        launched.close()


@pytest.fixture
def server(tmp_path):
    """The app on 127.0.0.1 at a free port, in a thread; yields (base url, records folder, its sessions)."""
    records = tmp_path / "records"
    app = create_app(Config(pace=0, records_dir=str(records)))
    with _serving(app) as base:
        yield base, records, app.state.store


@contextlib.contextmanager
def _serving(app):
    """Serve ``app`` on 127.0.0.1 at a free port, in a thread; yields its base url."""
    config = uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning", lifespan="on")
    running = uvicorn.Server(config)
    thread = threading.Thread(target=running.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not running.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            pytest.fail("the web server did not start")
        time.sleep(0.05)
    port = running.servers[0].sockets[0].getsockname()[1]
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        running.should_exit = True
        thread.join(timeout=10)


def test_play_a_whole_hand_by_clicking_then_the_record_replays(browser, server):
    base, records, store = server
    page = browser.new_page(viewport={"width": 1100, "height": 950}, bypass_csp=True)  # lets waits evaluate
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.goto(base + "/")
    page.wait_for_function("document.querySelectorAll('#agent-kinds option').length > 0")
    offered = page.locator("#agent-kinds option").evaluate_all("els => els.map(e => e.value)")
    assert "heuristic" in offered and not {"human", "ppo:PATH", "rllib:PATH"} & set(offered)  # only what it accepts
    page.select_option("select[name=seat]", "1")
    page.fill("input[name=opp1]", "heuristic")
    page.fill("input[name=opp2]", "random")
    page.fill("input[name=seed]", "5")
    page.select_option("#pace", "0")
    page.click("#deal")
    clicked: list[str] = []
    reloaded = False
    positions = 0
    for _ in range(200):
        page.wait_for_function(STATUS_READY, timeout=15000)
        status = page.evaluate("document.body.dataset.status")
        if status != "your-turn":
            break
        assert not page.is_hidden("#prompt") and page.inner_text("#prompt").strip()
        (session,) = store.sessions()
        shown = cards_in(page.content())  # the page as drawn holds no card seat 1 may not know
        assert shown <= known_cards(session.played.game, 1), sorted(shown - known_cards(session.played.game, 1))
        positions += 1
        if positions == 2:  # the hint toggle: the policy's and pimc's figures on the legal moves, nothing more
            page.check("#hints")
            page.wait_for_function("document.body.dataset.hints !== undefined", timeout=15000)
            assert page.locator("#my-hand .hint, #choices .hint").count() == int(
                page.evaluate("document.body.dataset.hints")
            )
            assert "samples" in page.inner_text("#hint-note")
            shown = cards_in(page.content())
            assert shown <= known_cards(session.played.game, 1), sorted(shown - known_cards(session.played.game, 1))
            page.uncheck("#hints")
            assert page.locator(".hint").count() == 0
        legal_cards = page.locator("#my-hand button.card:not([disabled])")
        choices = page.locator("#choices button")
        updates = page.evaluate("Number(document.body.dataset.updates || 0)")
        if choices.count():
            choices.first.click()
        else:
            # every clickable card is legal; the others are disabled
            assert legal_cards.count() >= 1
            assert (
                page.locator("#my-hand button.card[disabled]").count() + legal_cards.count()
                == page.locator("#my-hand button.card").count()
            )
            clicked.append(legal_cards.first.get_attribute("data-card"))
            legal_cards.first.click()
        page.wait_for_function(f"Number(document.body.dataset.updates) > {updates}")  # the click was answered
        if len(clicked) == 6 and not reloaded:  # a reload in the middle of the hand resumes the game
            hand_before = sorted(page.locator("#my-hand .card").evaluate_all("els => els.map(e => e.dataset.card)"))
            page.reload()
            page.wait_for_function(STATUS_READY, timeout=15000)
            assert not page.is_visible("#intro")
            hand_after = sorted(page.locator("#my-hand .card").evaluate_all("els => els.map(e => e.dataset.card)"))
            assert hand_after == hand_before
            page.select_option("#pace", "0")
            reloaded = True
    assert reloaded and positions >= 16
    room = page.evaluate(
        "(() => { const s = getComputedStyle(document.getElementById('log')); "
        "return parseFloat(s.paddingLeft) / parseFloat(s.fontSize); })()"
    )
    assert room >= 2.5  # the markers of entries 10 and up ("10.") are not clipped
    page.wait_for_function(STATUS_READY, timeout=15000)
    assert page.evaluate("document.body.dataset.status") in ("hand-over", "over")
    assert page.is_visible("#hand-over")
    assert "Hand 1 is over" in page.inner_text("#hand-over-title")
    assert "quota" in page.inner_text("#hand-over-body")
    # behind it, hand 1 at its end, not the next deal: its 16 tricks, nobody to act, its whole log; the last
    # trick's cards each with its player
    if page.evaluate("document.body.dataset.status") == "hand-over":
        table = page.inner_text("#table")
        assert "Hand 1 \u00b7" in table and "tricks played: 16" in table and "to act" not in table, table
        assert page.inner_text("#prompt") == "Hand 1 is over."
        assert page.locator("#log li").count() >= 48 and page.locator("#choices button").count() == 0
        last = page.locator("#hand-over-body .last-trick .played").all_inner_texts()
        assert len(last) == 3 and any("You" in t for t in last) and sum("player_" in t for t in last) == 2, last
    # stop the game: the record is saved and can be downloaded from the page
    if page.evaluate("document.body.dataset.status") == "hand-over":
        page.click("#continue")
    if page.is_visible("#stop"):
        page.click("#stop")
    page.wait_for_selector("#download:not([hidden])")
    assert "to act" not in page.inner_text("#table")  # a stopped (or finished) game has nobody to act
    with page.expect_download() as info:
        page.click("#download")
    path = info.value.path()
    record = load_record(path)
    assert replay(record) == record
    hand = record["hands"][0]
    assert len(hand["tricks"]) == 16 and hand["scores"] is not None
    mine = [card for trick in hand["tricks"] for i, card in enumerate(trick["cards"]) if (trick["leader"] + i) % 3 == 1]
    discards = hand["discards"] if hand["dealer"] == 1 else []
    assert clicked == discards + mine  # exactly the cards clicked, in order
    saved = os.listdir(records)
    assert len(saved) == 1 and load_record(records / saved[0]) == record
    assert not errors, errors
    page.close()


def test_the_new_game_form_keeps_one_line_at_1280_px_with_four_agents(browser, server):
    """Four players, or watching (one field per seat): the form's fields, Pace the last, stay on one line."""
    base, _records, _store = server
    page = browser.new_page(viewport={"width": 1280, "height": 800}, bypass_csp=True)  # lets waits evaluate
    page.goto(base + "/")
    page.wait_for_function("document.querySelectorAll('#agent-kinds option').length > 0")
    for rules, seat in [("standard", "0"), ("four-5-3-2-2", "0"), ("standard", "watch"), ("four-5-3-2-2", "watch")]:
        page.select_option("select[name=rules]", rules)
        page.select_option("select[name=seat]", seat)
        tops = page.locator("#new-game > label:not([hidden]), #new-game > button").evaluate_all(
            "els => els.map(e => Math.round(e.getBoundingClientRect().top))"
        )
        assert max(tops) - min(tops) <= 4, (rules, seat, tops)  # one line (4 px: the checkbox's label)
    page.close()


def test_replay_viewer_in_the_browser_steps_through_a_record(browser, server, tmp_path):
    base, _records, _store = server
    from agents import act, make_agent
    from sm_env.core.game import Game
    from sm_env.core.knowledge import player_view
    from sm_env.records import save_record

    game = Game(seed=8, max_hands=2)
    agents = [make_agent("heuristic", seed=s) for s in range(3)]
    while not game.is_over:
        game.apply(act(agents[game.current_player], player_view(game, game.current_player)))
    path = tmp_path / "game.json"
    save_record(game, path)
    from sm_web.replays import Timeline

    timeline = Timeline(load_record(path))
    starts = timeline.hand_starts
    page = browser.new_page(viewport={"width": 1100, "height": 950}, bypass_csp=True)  # lets waits evaluate
    page.goto(base + "/replay")
    page.set_input_files("#file", str(path))
    page.wait_for_function("document.body.dataset.step === '0'")
    for _ in range(5):
        page.click("#forward")
    page.wait_for_function("document.body.dataset.step === '5'")
    assert page.locator("#table .seat .hand .card, #table .seat .cards .card:not(.back)").count() > 40
    page.click("#back")
    page.wait_for_function("document.body.dataset.step === '4'")
    page.fill("#analyse input[name=samples]", "4")
    page.click("#analyse-hand")  # hand 1 scored by pimc: the per-seat table, and the cost of the move in view
    page.wait_for_function("document.body.dataset.analysis === '1'", timeout=30000)
    assert page.locator("#analysis-table tr[data-seat]").count() == 3
    assert "cost" in page.inner_text("#move-cost") and "4 samples per decision" in page.inner_text("#analysis-note")
    page.select_option("#view", "0")
    page.wait_for_function("document.querySelectorAll('#table .card.back').length > 0")
    if len(starts) > 1:  # at the start of hand 2 the caption tells its deal, not hand 1's last trick
        page.click("#next-hand")
        page.wait_for_function(f"document.body.dataset.step === '{starts[1]}'")
        assert page.inner_text("#event").startswith("The deal of hand 2.")
    page.click("#last")
    page.wait_for_function(f"document.body.dataset.step === '{len(timeline)}'")
    assert "Game over" in page.inner_text("#event")
    page.close()


def test_serve_watch_opens_the_page_on_a_watched_game_and_view_shows_a_stored_analysis(browser, tmp_path):
    """serve --watch (Config.watch): the page opens on a game of those agents, every hand shown; view --analysis
    (Config.preload_analysis): the viewer opens with the file's table, flags and costs, searching nothing."""
    from agents import act, make_agent
    from agents.analysis import analyse, move_text
    from sm_env.core.game import Game
    from sm_env.core.knowledge import player_view
    from sm_env.records import game_record

    watch = ("random", "heuristic", "random")
    with _serving(create_app(Config(pace=0.1, records_dir=None, watch=watch, seed=7))) as base:
        page = browser.new_page(bypass_csp=True)
        page.goto(base + "/")
        page.wait_for_function("Number(document.body.dataset.updates || 0) > 3")  # agents' moves arrive unasked
        assert "You are watching" in page.inner_text("#prompt")
        assert page.input_value("#new-game select[name=seat]") == "watch"
        assert [page.input_value(f"#new-game input[name=opp{i}]") for i in (1, 2, 3)] == list(watch)
        # serve --seed (Config.seed): the form starts with it and the watched game is dealt from it
        assert page.input_value("#new-game input[name=seed]") == "7"
        assert page.inner_text("#seed-note") == "seed 7"
        # serve --pace 0.1: the Pace menu shows that pace (an entry of its own), not "normal"
        assert page.input_value("#pace") == "0.1"
        assert page.evaluate("document.querySelector('#pace').selectedOptions[0].textContent") == "0.1 s"
        page.close()

    game = Game(seed=8, max_hands=2)
    agents = [make_agent("heuristic", seed=s) for s in range(3)]
    while not game.is_over:
        game.apply(act(agents[game.current_player], player_view(game, game.current_player)))
    record = game_record(game)
    analysis = analyse(record, samples=3, seed=2, threshold=0.1)
    flagged = [d for d in analysis["decisions"] if d["flagged"]]
    assert flagged
    config = Config(pace=0, records_dir=None, preload=record, preload_analysis=analysis, preload_name="game.json")
    with _serving(create_app(config)) as base:
        page = browser.new_page(bypass_csp=True)
        page.goto(base + "/replay")
        page.wait_for_function(f"document.body.dataset.analysis === '{len(record['hands'])}'")
        assert page.locator("#analysis-table tr[data-seat]").count() == 3
        assert page.locator("#analysis-table tr.flagged").count() == len(flagged)
        note = page.inner_text("#analysis-note")
        assert "3 samples per decision, seed 2" in note and "come from the analysis file" in note
        assert page.input_value("#analyse input[name=threshold]") == "0.1"
        page.locator("#analysis-table tr.flagged a").first.click()  # jumps to the flagged move: its cost shown
        page.wait_for_function(f"document.body.dataset.step === '{flagged[0]['step']}'")
        first = flagged[0]
        cost = page.inner_text("#move-cost")  # the move in words by its decision type (agents.analysis.move_text)
        assert "flagged" in cost and f"player_{first['seat']} {move_text(first['phase'], first['played'])}" in cost
        # the file picker names the record given on the command line (not the browser's "No file chosen")
        assert page.inner_text("#file-name") == "showing game.json (given on the command line)"
        page.close()


def _seed_and_seat(rules: str) -> tuple[int, int]:
    """A seed and the human's seat for which the human makes the new decision of ``rules`` in hand 1."""
    from sm_env.core.game import Game

    if rules == "woburn-auction":
        return 5, 1  # everyone bids
    for seed in range(100):
        game = Game(rules, seed=seed, max_hands=100)
        if rules == "calls":  # the dealer makes the call
            return seed, game.dealer
        if game.dealer == 3:  # four players: the human sits at seat 3 and deals
            return seed, 3
    raise AssertionError("no seed")


@pytest.mark.parametrize("rules", ["woburn-auction", "calls", "four-5-3-2-2"])
def test_play_a_hand_of_the_auction_the_calls_and_four_players_by_clicking(browser, server, rules):
    """The rule set is chosen on the page; the human bids, calls or sits at a fourth seat, clicking the buttons
    and cards the page offers; the page never shows a card its seat may not know; the hand ends."""
    base, _records, store = server
    seed, seat = _seed_and_seat(rules)
    page = browser.new_page(viewport={"width": 1100, "height": 1100}, bypass_csp=True)  # lets waits evaluate
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.goto(base + "/")
    page.wait_for_function("document.querySelectorAll('#agent-kinds option').length > 0")
    page.select_option("select[name=rules]", rules)
    four = rules.startswith("four")
    assert page.is_visible("input[name=opp3]") == four  # a fourth seat needs a third opponent
    page.select_option("select[name=seat]", str(seat))
    page.fill("input[name=seed]", str(seed))
    page.select_option("#pace", "0")
    page.click("#deal")
    clicked_labels: list[str] = []
    drawn = set()
    for _ in range(200):
        page.wait_for_function(STATUS_READY, timeout=15000)
        status = page.evaluate("document.body.dataset.status")
        if status == "hand-over" and page.inner_text("#hand-over-title").startswith("Deal"):  # a deal passed out
            page.click("#continue")
            continue
        if status != "your-turn":
            break
        (session,) = store.sessions()
        game = session.played.game
        shown = cards_in(page.content())
        assert shown <= known_cards(game, seat), sorted(shown - known_cards(game, seat))
        drawn.update(s for s in ("#auction", "#calls", ".seat-across") if page.locator(f"#table {s}").count())
        assert page.locator("#table .seat").count() == (4 if four else 3)
        updates = page.evaluate("Number(document.body.dataset.updates || 0)")
        buttons = page.locator("#choices button")
        if buttons.count():
            labels = buttons.evaluate_all("els => els.map(e => e.textContent)")
            if "Pass" in labels:  # the auction: bid the lowest bid offered once, then pass
                target = labels[1] if not any(label.startswith("Bid") for label in clicked_labels) else "Pass"
            elif "call no trump (NT)" in labels:
                target = "call no trump (NT)"
            else:
                target = labels[0]
            assert "action" not in target and target.strip()  # plain words on every button
            clicked_labels.append(target)
            buttons.nth(labels.index(target)).click()
        else:
            page.locator("#my-hand button.card:not([disabled])").first.click()
        page.wait_for_function(f"Number(document.body.dataset.updates) > {updates}")
    page.wait_for_function(STATUS_READY, timeout=15000)
    assert page.is_visible("#hand-over") and "is over" in page.inner_text("#hand-over-title")
    assert "quota" in page.inner_text("#hand-over-body")
    (session,) = store.sessions()
    log = session.played.game.history[0 if rules != "woburn-auction" else -2]
    if rules == "woburn-auction":
        assert any(label.startswith("Bid") for label in clicked_labels) and "#auction" in drawn
        assert any(seat_ == seat and bid is not None for seat_, bid in session.played.game.auction_bids)
    elif rules == "calls":
        assert "call no trump (NT)" in clicked_labels and "#calls" in drawn and log.call == 4
    else:
        assert ".seat-across" in drawn and log.dealer == 3 and len(log.tricks) == 12
        assert clicked_labels[0].endswith("clubs") and len(log.discards) == 4  # trump, then 4 discards clicked
    # the replay viewer steps through the game's record, as every hand or as the human's seat saw it
    page.click("#continue")
    page.click("#stop")
    try:
        page.wait_for_selector("#watch:not([hidden])")
    except Exception as err:  # once (a 2-worker suite run, 2026-12-07) the button did not show: say what the page said
        shown = page.evaluate("[document.body.dataset.status, document.getElementById('error').textContent]")
        (session,) = store.sessions()
        raise AssertionError(
            f"no #watch after #stop: page status and error {shown}, game stopped "
            f"{session.played.stopped}, finished {session.played.finished}; {err}"
        ) from err
    page.click("#watch")
    page.wait_for_url("**/replay?from=game")  # the new page is loaded: waits no longer run in the old one
    page.wait_for_function("document.body.dataset.step === '0'")
    assert page.is_enabled("#view option[value='3']") == four
    page.select_option("#view", str(seat))
    told = []
    for step in range(1, 4):
        page.click("#forward")
        page.wait_for_function(f"document.body.dataset.step === '{step}'")
        told.append(page.inner_text("#event"))
    assert page.locator("#table .seat").count() == (4 if four else 3)
    assert all(text.startswith("Hand 1: ") for text in told), told
    words = {"woburn-auction": " bid ", "calls": " called no trump (NT)", "four-5-3-2-2": " named clubs trump"}[rules]
    assert any(words in text for text in told), told
    assert not errors, errors
    page.close()
