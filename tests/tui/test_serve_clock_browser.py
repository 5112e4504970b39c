"""The clocks of issue 28 in a real headless Chromium, through ``okgin serve``: the
low-time warning (deliverable 3) and the advice window's countdown (deliverable 4) are
seen where a person playing in the browser sees them.

One Chromium serves the whole module (test_serve_browser.py's flags, and its way of
reading the screen: xterm's buffer, through the page's terminal caught before the page's
own scripts run). Every wait is a webdriver wait on what the screen shows; nothing sleeps.

- **Low time**: a real ``okgin referee`` on loopback whose tables give 12 s a move (a
  seat out of time gets the default move, so the game goes on), a real ``okgin bot
  simple`` at its table, and ``okgin serve -- tui`` joining that table as ann. The
  human does not move: under 10 s left the hand's frame turns heavy and red (the colour
  of the cell, as xterm drew it) and a toast says "Less than 10 s left to move!".
- **Advice countdown**: ``okgin serve -- play --variant box`` with a 60 s advice window,
  on a seed whose first hand ann sits out: the captain's hand is titled "waits N s for
  your advice", N goes down, and a suggestion (a move key) ends the wait.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
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

from okgin.launch import endpoint_from_line, okgin_argv, referee_argv  # noqa: E402

from .test_serve_browser import CATCH_TERMINAL, CHROMEDRIVER, CHROMIUM, CHROMIUM_FLAGS, READ_SCREEN, needs_chromium  # noqa: E402

pytestmark = needs_chromium

ROOT = Path(__file__).resolve().parents[2]
WAIT_S = 90  # an upper bound for failures only; never asserted on
NAME = "ann"
MOVE_MS = 12000  # under 30 s from the start (the frame is yellow at once), under 10 s two seconds in
BOX_SITTER_FIRST = "2"  # this seed's role draw puts ann out of the first hand (test_box_human.py)


def child_env() -> dict[str, str]:
    return dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))


def stop(proc: subprocess.Popen[Any]) -> None:
    """End a process this module started: SIGTERM, then SIGKILL if it lingers."""
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(timeout=WAIT_S)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(timeout=WAIT_S)


def serve(tmp_path: Path, *command: str) -> tuple[subprocess.Popen[str], str]:
    """``okgin serve --port 0 -- COMMAND`` and the URL it prints first."""
    with open(tmp_path / "serve.err", "w") as err:  # kept for a failure's post-mortem
        proc = subprocess.Popen([*okgin_argv("serve"), "--host", "127.0.0.1", "--port", "0", "--grace", "2", "--", *command],
                                stdout=subprocess.PIPE, stderr=err, stdin=subprocess.DEVNULL, text=True, cwd=tmp_path,
                                env=child_env(), start_new_session=True)
    try:
        url = bounded.readline(proc.stdout, WAIT_S, "okgin serve").strip()  # type: ignore[arg-type]
    except BaseException:
        stop(proc)
        raise
    assert url.startswith("http://127.0.0.1:"), url
    return proc, url


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """One headless Chromium for the module (starting one costs seconds)."""
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in CHROMIUM_FLAGS:
        options.add_argument(flag)
    options.add_argument("--user-data-dir=" + tempfile.mkdtemp(prefix="chromium-", dir=tmp_path_factory.mktemp("chromium")))
    driver = webdriver.Chrome(options=options, service=Service(CHROMEDRIVER))
    try:
        driver.set_page_load_timeout(WAIT_S)
        driver.set_script_timeout(WAIT_S)
        driver.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": CATCH_TERMINAL})
        yield driver
    finally:
        driver.quit()


class Page:
    """The served page in the shared browser, read through xterm's buffer."""

    def __init__(self, driver: Any, url: str) -> None:
        self.driver = driver
        self.wait = WebDriverWait(driver, WAIT_S, poll_frequency=0.1)
        driver.get(url)
        self.until(lambda: bool(driver.find_elements(By.CSS_SELECTOR, "body.-first-byte")), "the page connected")

    def screen(self) -> str:
        return self.driver.execute_script(READ_SCREEN) or ""

    def until(self, cond: Any, what: str) -> None:
        try:
            self.wait.until(lambda _d: cond())
        except TimeoutException:
            pytest.fail(f"not seen: {what}; the screen was:\n{self.screen()}")

    def press(self, keys: str) -> None:
        ActionChains(self.driver).click(self.driver.find_element(By.CSS_SELECTOR, "#terminal")).send_keys(keys).perform()

    def leave(self) -> None:
        """Close the game: the page goes away, so the server ends its process."""
        self.driver.get("about:blank")


@pytest.fixture
def timed_table(tmp_path: Path) -> Iterator[str]:
    """A real referee whose table "clock" gives 12 s a move (the default move after it),
    with a real simple bot sitting there; yields the referee's endpoint."""
    ref = subprocess.Popen(referee_argv(tmp_path / "journals", "--table", "clock", "--seed", "3", "--move-ms", str(MOVE_MS),
                                        "--timeout-policy", "default_move"),
                           stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL, text=True,
                           env=child_env())
    bot: subprocess.Popen[str] | None = None
    try:
        endpoint = endpoint_from_line(bounded.readline(ref.stdout, WAIT_S, "okgin referee"))  # type: ignore[arg-type]
        assert endpoint is not None
        bot = subprocess.Popen([*okgin_argv("bot", "simple", "--connect", endpoint), "--table", "clock", "--games", "0", "-q"],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL, env=child_env())
        yield endpoint
    finally:
        if bot is not None:
            stop(bot)
        stop(ref)


def hand_frame(screen: str) -> tuple[int, str]:
    """The row of the hand's frame's top line (which carries its title), and that line."""
    for y, line in enumerate(screen.splitlines()):
        if "Your hand" in line:
            return y, line
    return -1, ""


# The colour of one cell's character, as xterm drew it: [red, green, blue], or null when
# it is not a 24-bit colour.
FOREGROUND = """
const term = window.__okginTerminalOwner.terminal, line = term.buffer.active.getLine(term.buffer.active.viewportY + arguments[0]);
const cell = line && line.getCell(arguments[1]);
if (!cell || !cell.isFgRGB()) return null;
const c = cell.getFgColor();
return [(c >> 16) & 255, (c >> 8) & 255, c & 255];
"""


def test_the_low_time_warning_in_the_browser(browser: Any, timed_table: str, tmp_path: Path) -> None:
    proc, url = serve(tmp_path, "tui", "--connect", timed_table, "--table", "clock", "--name", NAME)
    try:
        page = Page(browser, url)
        # ann's move, with its time in the hand's title.
        page.until(lambda: "your time" in hand_frame(page.screen())[1], "ann's turn with a clock")
        # Under 10 s: a toast says so, and the hand's frame is heavy and red. The toast goes
        # after 4 s; a move ann lets run out gets the default move, so a toast missed on a
        # loaded machine comes again at her next move.
        toast = []

        def warned() -> bool:
            screen = page.screen()
            if "Less than 10 s left to move!" in screen:
                toast.append(screen)
            y, frame = hand_frame(screen)
            if "┏" not in frame or not re.search(r"your time 0:0\d", frame):
                return False
            rgb = browser.execute_script(FOREGROUND, y, frame.index("┏"))
            return bool(toast) and rgb is not None and rgb[0] > 0x90 and rgb[1] < 0x70  # Textual's $error, #ba3c5b
        page.until(warned, "the low-time toast and the hand's heavy red frame")
        page.leave()
    finally:
        stop(proc)


def advice_wait(screen: str) -> int | None:
    m = re.search(r"waits (\d+) s for your advice", screen)
    return int(m.group(1)) if m else None


def test_the_advice_countdown_in_the_browser(browser: Any, tmp_path: Path) -> None:
    proc, url = serve(tmp_path, "play", "--variant", "box", "--bot", "random", "--seed", BOX_SITTER_FIRST, "--name", NAME,
                      "--advice-window", "60", "--pace", "0")
    try:
        page = Page(browser, url)
        # ann sits out; her captain's move waits for her advice, counted down in the title.
        page.until(lambda: advice_wait(page.screen()) is not None, "the advice window's countdown")
        first = advice_wait(page.screen())
        assert first is not None and first <= 60
        page.until(lambda: (advice_wait(page.screen()) or 99) < first, "the countdown going down")
        # A suggestion ends the wait: the captain passes as suggested (the house's captain
        # follows a legal suggestion) long before the window's end, and the countdown of its
        # next move, if any, starts afresh.
        screen = page.screen()
        assert "Suggest Pass (p)" in screen
        captain = re.search(r"(\S+)'s hand \(your captain\)", screen)
        assert captain is not None
        before = advice_wait(screen) or 0
        page.press("p")
        page.until(lambda: f"{captain[1]} passed the upcard" in page.screen(), "the captain passing as suggested")
        page.until(lambda: (advice_wait(page.screen()) or 99) > before, "the wait ended by the advice")
        page.leave()
    finally:
        stop(proc)
