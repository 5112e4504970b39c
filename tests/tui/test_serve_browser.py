"""``okgin serve`` in a real headless Chromium (issue 17 item 5).

The server runs as a subprocess on 127.0.0.1 with a free port (its first stdout line is
the URL); Debian's ``chromium`` and ``chromium-driver``, driven by selenium, open the
page; the test waits until a hand of 10 cards is drawn, presses ``p`` (pass the upcard)
and checks that the referee received the move (its journal, written by ``--journal-dir``,
has the human's pass) and that the screen moved on. A screenshot is kept. Closing the
tab ends the game's process; stopping the server ends the server.

How the screen is read: textual-serve draws the terminal with xterm.js on a canvas (its
WebGL or canvas renderer), so the DOM holds no text. The page keeps its terminal in a
local variable; a script installed before the page's own (Chrome DevTools
``Page.addScriptToEvaluateOnNewDocument``) catches the object that owns it when its
constructor assigns ``websocket_url`` (a setter on ``Object.prototype``, removed for that
object at once), and the test reads the rows through xterm's buffer API
(``terminal.buffer.active.getLine(y).translateToString()``).

Chromium's flags: the machine's network is closed and Chromium's background networking
would hang it; ``--host-resolver-rules`` makes the page's one outside link (a web font)
fail at once instead of waiting for DNS.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import bounded
import pytest

pytest.importorskip("textual_serve", reason="textual-serve is not installed (pip install -e '.[test]')")
webdriver = pytest.importorskip("selenium.webdriver", reason="selenium is not installed (pip install -e '.[test]')")

from selenium.common.exceptions import TimeoutException  # noqa: E402
from selenium.webdriver.common.action_chains import ActionChains  # noqa: E402
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.support.ui import WebDriverWait  # noqa: E402

from okgin import env  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
CHROMEDRIVER = shutil.which("chromedriver")
needs_chromium = pytest.mark.skipif(
    CHROMIUM is None or CHROMEDRIVER is None,
    reason="Debian's chromium and chromium-driver are not installed (apt-get install chromium chromium-driver; .ci/run does)",
)

WAIT_S = 60  # an upper bound for failures only; never asserted on
NAME = "ann"
CHROMIUM_FLAGS = [
    "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
    "--disable-dev-shm-usage", "--window-size=1280,900",
    "--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE 127.0.0.1",
]

# Catches the page's terminal owner (see the module's docstring).
CATCH_TERMINAL = """
Object.defineProperty(Object.prototype, 'websocket_url', {configurable: true, set(value) {
  Object.defineProperty(this, 'websocket_url', {value: value, writable: true, configurable: true, enumerable: true});
  window.__okginTerminalOwner = this;
}});
"""
READ_SCREEN = """
const owner = window.__okginTerminalOwner;
if (!owner || !owner.terminal) return null;
const term = owner.terminal, buffer = term.buffer.active, rows = [];
for (let y = 0; y < term.rows; y++) {
  const line = buffer.getLine(buffer.viewportY + y);
  rows.push(line ? line.translateToString(true) : '');
}
return rows.join('\\n');
"""


def children_of(pid: int) -> set[int]:
    """The pids whose parent is ``pid`` (Linux /proc), to see the server's game processes."""
    found = set()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        fields = stat.rsplit(")", 1)[-1].split()
        if len(fields) > 1 and fields[1] == str(pid) and fields[0] != "Z":
            found.add(int(entry.name))
    return found


def cards_in_hand(screen: str) -> int:
    """How many cards the "Your hand" panel draws: the card tops on its first card row."""
    lines = screen.splitlines()
    for i, line in enumerate(lines):
        if "Your hand" in line:
            for row in lines[i + 1:i + 4]:
                inner = row.split("│")[1] if row.count("│") >= 2 else row
                if "╭" in inner:
                    return inner.count("╭")
    return 0


def human_actions(journal_dir: Path) -> list[dict[str, Any]]:
    """The actions the referee journalled for the human (a torn last line is left out)."""
    out: list[dict[str, Any]] = []
    for path in journal_dir.glob("*.jsonl"):
        seat = None
        for line in path.read_text(encoding="utf-8").split("\n"):
            try:
                entry = json.loads(line)
            except ValueError:
                continue
            if entry.get("t") == "start":
                seat = entry["players"].index(NAME)
            elif entry.get("t") == "action" and entry.get("seat") == seat:
                out.append(entry["action"])
    return out


@pytest.fixture
def server(tmp_path: Path) -> Iterator[tuple[subprocess.Popen[str], str, Path]]:
    """``okgin serve --port 0`` playing seed 3 against the simple bot, with a journal."""
    journal_dir = tmp_path / "journals"
    journal_dir.mkdir()
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    proc = subprocess.Popen(
        [sys.executable, "-m", "okgin", "serve", "--host", "127.0.0.1", "--port", "0", "--grace", "5", "--",
         "play", "--bot", "simple", "--seed", "3", "--name", NAME, "--journal-dir", str(journal_dir)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=tmp_path, env=env, start_new_session=True)
    try:
        url = bounded.readline(proc.stdout, WAIT_S, "okgin serve").strip()  # type: ignore[arg-type]
        assert url.startswith("http://127.0.0.1:"), url
        yield proc, url, journal_dir
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
        try:
            proc.communicate(timeout=WAIT_S)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.communicate(timeout=WAIT_S)


@pytest.fixture
def browser(tmp_path: Path) -> Iterator[Any]:
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in CHROMIUM_FLAGS:
        options.add_argument(flag)
    options.add_argument("--user-data-dir=" + tempfile.mkdtemp(prefix="chromium-", dir=tmp_path))
    driver = webdriver.Chrome(options=options, service=Service(CHROMEDRIVER))
    try:
        driver.set_page_load_timeout(WAIT_S)
        driver.set_script_timeout(WAIT_S)
        yield driver
    finally:
        driver.quit()


@needs_chromium
def test_a_hand_played_in_chromium(server: tuple[subprocess.Popen[str], str, Path], browser: Any, tmp_path: Path,
                                   record_property: Any) -> None:
    proc, url, journal_dir = server
    artifacts = Path(env.get("OKGIN_TEST_ARTIFACTS") or tmp_path)  # CI may collect them from a fixed place
    artifacts.mkdir(parents=True, exist_ok=True)
    wait = WebDriverWait(browser, WAIT_S)

    def screen() -> str:
        return browser.execute_script(READ_SCREEN) or ""

    def keep_screenshot(label: str) -> None:
        shot = artifacts / f"okgin-serve-chromium-{label}.png"
        browser.save_screenshot(str(shot))
        record_property(f"screenshot_{label}", str(shot))
        print(f"screenshot: {shot}")

    first_tab = browser.current_window_handle
    browser.switch_to.new_window("tab")
    # Installed in this tab (DevTools scripts are per page), before the page's own scripts.
    browser.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": CATCH_TERMINAL})
    browser.get(url)
    try:
        # The page loads and its terminal connects to the game's process.
        wait.until(lambda d: d.find_element(By.CSS_SELECTOR, "body.-first-byte"))
        # A hand of 10 cards is drawn, and it is the human's turn to take or pass the upcard.
        wait.until(lambda d: cards_in_hand(screen()) == 10 and "pass (p)" in screen())
        before = screen()
        keep_screenshot("dealt")
        # A key press: pass the upcard. The referee receives it (its journal) and the table moves on.
        ActionChains(browser).click(browser.find_element(By.CSS_SELECTOR, "#terminal")).send_keys("p").perform()
        wait.until(lambda d: {"kind": "pass"} in human_actions(journal_dir))
        wait.until(lambda d: screen() != before and "pass (p)" not in screen())
        assert cards_in_hand(screen()) == 10
    except TimeoutException:
        keep_screenshot("failed")
        pytest.fail(f"the browser did not show what was expected; the screen was:\n{screen()}")
    keep_screenshot("passed")

    # Closing the tab ends the game's process.
    games = children_of(proc.pid)
    assert games, "the server should be running a process for the open tab"
    browser.close()
    browser.switch_to.window(first_tab)
    try:
        WebDriverWait(browser, WAIT_S).until(lambda d: not (games & children_of(proc.pid)))
    except TimeoutException:
        pytest.fail(f"the game's processes {sorted(games & children_of(proc.pid))} outlived their tab")
    # Stopping the server ends it.
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=WAIT_S) == 0


def _alive(pids: set[int]) -> set[int]:
    """Those of ``pids`` still running (not gone, not a zombie)."""
    out = set()
    for pid in pids:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[-1].split()[0]
        except OSError:
            continue
        if state != "Z":
            out.add(pid)
    return out


async def _open_session(url: str) -> Any:
    """A websocket session as the page opens it (same origin), with its first output read."""
    import aiohttp

    session = aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=WAIT_S))
    ws = await session.ws_connect(url.replace("http://", "ws://") + "/ws?width=80&height=24", headers={"Origin": url})
    await ws.send_str(json.dumps(["resize", {"width": 80, "height": 24}]))
    first = await ws.receive(timeout=WAIT_S)
    assert first.type.name == "BINARY", first
    return session, ws


async def _until(predicate: Any, what: str) -> None:
    import asyncio

    async with asyncio.timeout(WAIT_S):
        while not predicate():
            await asyncio.sleep(0.05)  # polling a condition under a deadline, not a fixed wait
    assert predicate(), what


@pytest.mark.parametrize("stop", ["SIGTERM", "SIGKILL"])
async def test_stopping_the_server_ends_its_games(server: tuple[subprocess.Popen[str], str, Path], stop: str) -> None:
    """SIGTERM: the server quits every open tab's game, then exits 0. SIGKILL (nothing runs
    in the server any more): each game is told by Linux (PR_SET_PDEATHSIG) and quits."""
    proc, url, _ = server
    session, ws = await _open_session(url)
    try:
        games = children_of(proc.pid)
        assert games
        proc.send_signal(getattr(signal, stop))
        assert proc.wait(timeout=WAIT_S) == (0 if stop == "SIGTERM" else -signal.SIGKILL)
        await _until(lambda: not _alive(games), f"games {sorted(_alive(games))} outlived their server")
    finally:
        await ws.close()
        await session.close()


async def test_only_loopback_names_and_the_servers_own_page(server: tuple[subprocess.Popen[str], str, Path]) -> None:
    """A page that rebinds its domain to 127.0.0.1 (another Host) or another site open in the
    browser (another Origin on the websocket) is refused; the server's own page is not."""
    import aiohttp

    _, url, _ = server
    async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=WAIT_S)) as session:
        async with session.get(url) as r:
            assert r.status == 200
        async with session.get(url, headers={"Host": "evil.example"}) as r:
            assert r.status == 403
        with pytest.raises(aiohttp.WSServerHandshakeError) as refused:
            await session.ws_connect(url.replace("http://", "ws://") + "/ws", headers={"Origin": "http://evil.example"})
        assert refused.value.status == 403


def _journal_lines(journal_dir: Path, kind: str) -> list[dict[str, Any]]:
    out = []
    for path in journal_dir.glob("*.jsonl"):
        for line in path.read_text(encoding="utf-8").split("\n"):
            try:
                entry = json.loads(line)
            except ValueError:
                continue
            if entry.get("t") == kind:
                out.append(entry)
    return out


@needs_chromium
def test_q_in_the_browser_says_what_leaving_does_and_resigns(server: tuple[subprocess.Popen[str], str, Path],
                                                              browser: Any) -> None:
    """Issue 28 item 1: ``q`` at ``okgin serve``'s game (okgin play in the page) offers
    resign / new game / quit, with no word of a held seat or a command to run again;
    ``r`` resigns, and the referee journals it."""
    _proc, url, journal_dir = server
    wait = WebDriverWait(browser, WAIT_S)

    def screen() -> str:
        return browser.execute_script(READ_SCREEN) or ""

    browser.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": CATCH_TERMINAL})
    browser.get(url)
    try:
        wait.until(lambda d: d.find_element(By.CSS_SELECTOR, "body.-first-byte"))
        wait.until(lambda d: cards_in_hand(screen()) == 10 and "pass (p)" in screen())
        ActionChains(browser).click(browser.find_element(By.CSS_SELECTOR, "#terminal")).send_keys("q").perform()
        wait.until(lambda d: "Resign this game" in screen() and "New game" in screen())
        text = screen()
        assert "holds your seat" not in text and "okgin tui" not in text
        ActionChains(browser).send_keys("r").perform()
        wait.until(lambda d: any(e.get("reason") == "resigned" for e in _journal_lines(journal_dir, "resign")))
        wait.until(lambda d: "Game over" in screen())
    except TimeoutException:
        pytest.fail(f"the browser did not show what was expected; the screen was:\n{screen()}")



BACKGROUNDS = """
const term = window.__okginTerminalOwner.terminal, line = term.buffer.active.getLine(term.buffer.active.viewportY + arguments[0]);
return arguments[1].map(x => line.getCell(x).getBgColor() + '/' + line.getCell(x).getBgColorMode());
"""
CELL_AT = """
const owner = window.__okginTerminalOwner, term = owner.terminal;
const screen = term.element.querySelector('.xterm-screen').getBoundingClientRect();
return {x: screen.left + (arguments[0] + 0.5) * screen.width / term.cols,
        y: screen.top + (arguments[1] + 0.5) * screen.height / term.rows};
"""


@needs_chromium
def test_a_double_click_on_the_hand_leaves_no_selection(server: tuple[subprocess.Popen[str], str, Path],
                                                          browser: Any) -> None:
    """Issue 28 item 6: after a double click on the hand (a discard, in the game) no blue
    block stays over it. It was Textual's own text selection (a double click selects the
    widget's text), drawn by the app into the terminal: the hand's cells under the click
    took the selection's background while the rest of the hand's panel kept its own."""
    _proc, url, _journal_dir = server
    wait = WebDriverWait(browser, WAIT_S)

    def screen() -> str:
        return browser.execute_script(READ_SCREEN) or ""

    browser.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": CATCH_TERMINAL})
    browser.get(url)
    try:
        wait.until(lambda d: d.find_element(By.CSS_SELECTOR, "body.-first-byte"))
        wait.until(lambda d: cards_in_hand(screen()) == 10 and "pass (p)" in screen())
        lines = screen().splitlines()
        row = next(i for i, line in enumerate(lines) if "Your hand" in line) + 2
        first, last = lines[row].index("╭"), lines[row].rindex("│") - 1  # a card's corner; the panel's inside
        before = browser.execute_script(BACKGROUNDS, row, [first, last])
        assert before[0] == before[1], before
        point = browser.execute_script(CELL_AT, first + 2, row + 1)
        # The double click, where the person's mouse does it: on a card of the hand.
        browser.execute_cdp_cmd("Input.dispatchMouseEvent", {"type": "mouseMoved", "x": point["x"], "y": point["y"]})
        for count in (1, 2):
            for kind in ("mousePressed", "mouseReleased"):
                browser.execute_cdp_cmd("Input.dispatchMouseEvent", {
                    "type": kind, "x": point["x"], "y": point["y"], "button": "left", "clickCount": count})
        # A key after the click: once the app has answered it (the sort's note), it has
        # handled the double click before it, and drawn what that did.
        ActionChains(browser).send_keys("o").perform()
        wait.until(lambda d: "sorted" in screen() or "order" in screen())
    except TimeoutException:
        pytest.fail(f"the browser did not show what was expected; the screen was:\n{screen()}")
    after = browser.execute_script(BACKGROUNDS, row, [first + 8, last])
    assert after[0] == after[1] == before[1], (before, after)
