"""The arena's web pages in headless Chromium (Debian's chromium and chromium-driver, driven
by selenium): live leaderboard updates while real bots finish games at a real arena, a
player's chart, the viewer stepped through a whole game with the keyboard, no card of a
game in progress in the page, and the README's screenshot. One browser for the module;
every wait is a WebDriverWait on the page's own state (never a sleep). Screenshots are kept
in the test's temporary directory."""

from __future__ import annotations

import os
import re
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import zmq

pytest.importorskip("starlette", reason="the web needs okgin[arena-web]")
pytest.importorskip("selenium.webdriver", reason="selenium is not installed (pip install -e '.[test]')")

from arenakit import FAST_RULES, ArenaProcess, Client, add_accounts, arena_hello, take_seats
from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import WebDriverWait
from webkit import CHROMEDRIVER, CHROMIUM, WebThread, chromium, seeded_store

from arena.keys import write_key_file
from okgin.launch import okgin_argv

pytestmark = pytest.mark.skipif(CHROMIUM is None or CHROMEDRIVER is None, reason=(
    "Debian's chromium and chromium-driver are not installed (apt-get install chromium chromium-driver; .ci/run does)"))

ROOT = Path(__file__).resolve().parents[2]
README_SHOT = ROOT / "docs" / "img" / "leaderboard.png"
WAIT_S = 120  # an upper bound for failures only; never asserted on
CARD = re.compile(r'"[A2-9TJQK][cdhs]"')


@pytest.fixture(scope="module")
def shots(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("screenshots")


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    with chromium(tmp_path_factory.mktemp("chromium")) as driver:
        yield driver


@pytest.fixture(scope="module")
def arena(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[ArenaProcess, dict[str, str], Path]]:
    tmp = tmp_path_factory.mktemp("arena-web")
    state = tmp / "arena"
    keys = add_accounts(state, "rand-a", "rand-b")
    keys.update(add_accounts(state, "hum-a", "hum-b", kind="human"))
    proc = ArenaProcess(state, web=True, toml=f"show_up_ms = 20000\nweb_poll_ms = 100\n[rules]\n{FAST_RULES}")
    try:
        yield proc, keys, tmp
    finally:
        assert proc.stop() == 0, proc.stderr()


@pytest.fixture(scope="module")
def seeded() -> Iterator[WebThread]:
    store = seeded_store()
    web = WebThread(store)
    try:
        yield web
    finally:
        web.stop()
        store.close()


def wait(driver: Any, what: str, cond: Any) -> Any:
    return WebDriverWait(driver, WAIT_S, poll_frequency=0.1).until(cond, message=what)


def games_of(driver: Any, account: str) -> int:
    """The games column of ``account``'s row (0 without one), read in one script: the stream
    may replace the table between two selenium calls."""
    text = driver.execute_script(
        "const c = document.querySelector(`#board-oklahoma tr[data-account='${arguments[0]}'] td.games`);"
        "return c ? c.textContent : '0';", account)
    return int(text)


def test_the_leaderboard_updates_while_games_finish(browser, arena, shots) -> None:  # type: ignore[no-untyped-def]
    proc, keys, tmp = arena
    browser.get(proc.web + "leaderboard/oklahoma")
    wait(browser, "the event stream opened", lambda d: d.execute_script("return document.body.dataset.liveOpen") == "1")
    assert games_of(browser, "rand-a") == 0
    browser.execute_script("window.okginSamePage = 1")  # gone if the page were loaded again
    bots = []
    try:
        for account in ("rand-a", "rand-b"):
            key_file = write_key_file(tmp / f"{account}.key", keys[account])
            bots.append(subprocess.Popen(
                okgin_argv("bot", "random", "--arena", proc.endpoint, "--account", account, "--key-file", str(key_file),
                           "--games", "2"), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                stdin=subprocess.DEVNULL))
        wait(browser, "the first game on the board", lambda d: games_of(d, "rand-a") >= 1)
        browser.save_screenshot(str(shots / "leaderboard-after-one-game.png"))
        wait(browser, "the second game on the board", lambda d: games_of(d, "rand-a") == 2 and games_of(d, "rand-b") == 2)
        browser.save_screenshot(str(shots / "leaderboard-after-two-games.png"))
        for p in bots:
            out, err = p.communicate(timeout=WAIT_S)
            assert p.returncode == 0, (out, err)
    finally:
        for p in bots:
            if p.poll() is None:
                p.kill()
                p.wait(10)
    assert browser.execute_script("return window.okginSamePage") == 1  # updated in place, by the stream
    assert int(browser.execute_script("return document.body.dataset.updates")) >= 2


def answer_prompts(seats: dict[str, Client], moves: int) -> None:
    """The seats answer ``moves`` prompts between them (the first legal move each time),
    whichever seat is prompted; each seat says it is alive meanwhile."""
    poller = zmq.Poller()
    by_sock = {}
    for c in seats.values():
        poller.register(c.sock, zmq.POLLIN)
        by_sock[c.sock] = c
    done = idle = 0
    while done < moves:
        ready = dict(poller.poll(500))
        if not ready:
            idle += 1
            assert idle < 240, "no prompt within 2 minutes"
            for c in seats.values():
                c.send({"type": "heartbeat"})
            continue
        for sock in ready:
            c = by_sock[sock]
            m = c.recv()
            assert m["type"] != "game_end", "the game ended early"
            if m["type"] == "prompt":
                c.send({"type": "act", "table": m["table"], "seq": m["seq"], "action": m["legal"][0]})
                done += 1


def test_no_card_of_a_running_game_is_in_the_page(browser, arena, shots) -> None:  # type: ignore[no-untyped-def]
    proc, keys, _ = arena
    lobby = {a: Client(proc.endpoint, validate="sample") for a in ("hum-a", "hum-b")}
    try:
        for a, c in lobby.items():
            assert arena_hello(c, a, keys[a])["type"] == "welcome"
            c.request({"type": "seek", "variant": "oklahoma", "rated": False}, "sought")
        ready = {a: c.wait_for(lambda m: m["type"] == "game_ready") for a, c in lobby.items()}
        game = ready["hum-a"]["game"]
        seats = take_seats(ready)
        try:
            answer_prompts(seats, 4)  # the first hand is under way
            browser.get(proc.web + f"game/{game}")
            wait(browser, "the game's page", lambda d: d.find_element(By.ID, "game-status").text.startswith("In progress"))
            source = browser.page_source
            assert 'id="steps"' not in source and not CARD.search(source), source
            browser.save_screenshot(str(shots / "game-in-progress.png"))
            browser.get(proc.web + "live")
            wait(browser, "the live list", lambda d: d.find_elements(By.CSS_SELECTOR, f'#playing tr[data-game="{game}"]'))
            seats["hum-a"].request({"type": "resign", "table": ready["hum-a"]["table"]}, "ok")
            for c in seats.values():
                c.wait_for(lambda m: m["type"] == "game_end")
        finally:
            for c in seats.values():
                c.close()
        # recorded: it leaves the live list (the lobby connections' game_over is not awaited: they
        # sent no heartbeat while the seats played, and a loaded machine may have timed them out)
        wait(browser, "the game leaves the live list",
             lambda d: not d.find_elements(By.CSS_SELECTOR, f'#playing tr[data-game="{game}"]'))
        browser.get(proc.web + f"game/{game}")
        wait(browser, "the viewer", lambda d: d.find_element(By.ID, "viewer").get_attribute("data-steps"))
        assert CARD.search(browser.page_source)  # the hand ended (the game did): its cards are public now
    finally:
        for c in lobby.values():
            c.close()


def test_a_player_page_draws_its_chart(browser, seeded, shots) -> None:  # type: ignore[no-untyped-def]
    browser.get(seeded.url + "player/ann")
    canvas = wait(browser, "the chart drawn", lambda d: d.find_element(By.CSS_SELECTOR, "#chart-oklahoma[data-drawn]"))
    assert int(canvas.get_attribute("data-drawn")) >= 5  # one point per rated game
    inked = browser.execute_script("""
        const c = document.getElementById('chart-oklahoma'), px = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
        let n = 0; for (let i = 3; i < px.length; i += 4) if (px[i] > 0) n++; return n;""")
    assert inked > 2000, inked  # a line, its band, its grid: thousands of pixels, not an empty canvas
    browser.save_screenshot(str(shots / "player.png"))


def press(driver: Any, key: str, times: int = 1) -> None:
    chain = ActionChains(driver)
    for _ in range(times):
        chain.send_keys(key)
    chain.perform()


def test_the_viewer_steps_through_a_whole_game_with_the_keyboard(browser, seeded, shots) -> None:  # type: ignore[no-untyped-def]
    browser.get(seeded.url + "game/ok07")  # two hands, about 230 steps
    viewer = wait(browser, "the viewer", lambda d: d.find_element(By.CSS_SELECTOR, "#viewer[data-steps]"))
    kinds = browser.execute_script("return JSON.parse(document.getElementById('steps').textContent).map(s => s.type)")
    n = int(viewer.get_attribute("data-steps"))
    assert n == len(kinds) > 20 and kinds[0] == "deal" and kinds[-1] == "game_end" and "hand_end" in kinds

    def step() -> int:
        return int(viewer.get_attribute("data-step"))

    assert step() == 1
    texts = set()
    at = 1
    while at < n:  # every step, by the right arrow, in batches of keys
        k = min(60, n - at)
        press(browser, Keys.ARROW_RIGHT, k)
        at += k
        wait(browser, f"step {at}", lambda d, at=at: step() == at)
        texts.add(browser.find_element(By.ID, "step-text").text)
    assert viewer.get_attribute("data-kind") == "game_end" and len(texts) > 3
    assert "final:" in browser.find_element(By.ID, "result").text
    press(browser, Keys.ARROW_RIGHT)  # past the end: stays
    press(browser, Keys.HOME)
    wait(browser, "Home", lambda d: step() == 1)
    press(browser, Keys.ARROW_LEFT)  # before the start: stays
    press(browser, Keys.END)
    wait(browser, "End", lambda d: step() == n)
    press(browser, Keys.ARROW_LEFT)
    wait(browser, "one back", lambda d: step() == n - 1)
    press(browser, Keys.HOME)
    first_end = kinds.index("hand_end") + 1
    press(browser, Keys.ARROW_RIGHT, first_end - 1)
    wait(browser, "the first hand's end", lambda d: step() == first_end)
    result = browser.find_element(By.ID, "result").text
    assert "scores:" in result and ("deadwood" in result or "drawn" in result), result  # melds, layoffs, the score
    browser.save_screenshot(str(shots / "viewer-hand-end.png"))


def test_the_readme_screenshot_is_the_leaderboard_of_today(browser, seeded, shots) -> None:  # type: ignore[no-untyped-def]
    """docs/img/leaderboard.png (shown in the README) is taken again of the known store's
    leaderboard and rewritten when the page looks different (OKGIN_KEEP_SCREENSHOT=1 keeps it)."""
    browser.set_window_size(1000, 560)
    try:
        browser.get(seeded.url + "leaderboard/oklahoma")
        wait(browser, "the board", lambda d: d.find_elements(By.CSS_SELECTOR, '#board-oklahoma tr[data-account]'))
        wait(browser, "the stream open (its mark drawn green)",
             lambda d: d.execute_script("return document.body.dataset.liveOpen") == "1")
        png = browser.get_screenshot_as_png()
    finally:
        browser.set_window_size(1200, 900)
    (shots / "leaderboard.png").write_bytes(png)
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    if os.environ.get("OKGIN_KEEP_SCREENSHOT") != "1" and (not README_SHOT.exists() or README_SHOT.read_bytes() != png):
        README_SHOT.parent.mkdir(parents=True, exist_ok=True)
        README_SHOT.write_bytes(png)
    assert "docs/img/leaderboard.png" in (ROOT / "README.md").read_text()
