"""Connect / lobby: where to play (referee endpoint, name) and how to sit down.

Four ways in, one button each: the quick-match queue for a variant and rules; a named
table (created by the first player to join it); a new table with a time control
(created through the protocol's admin request, then joined); or watching a table. The
table list comes from the referee (``list_tables``) over a short connection, refreshed
on demand, and a table picked in it fills the table name. The rules are a preset
(:data:`okgin.rules.PRESETS`), the house rules ticked one by one (one line each,
:data:`okgin.rules.HOUSE_RULES`), then any ``NAME=VALUE`` typed, in that order.
"""

from __future__ import annotations

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.widgets import Button, Checkbox, Footer, Input, Label, OptionList, Select, Static
from textual.widgets.option_list import Option

from clients.sdk import RefereeError, SDKError
from clients.sdk import Timeout as SDKTimeout
from okgin import RuleError, RuleSet
from okgin.endpoint import EndpointError, parse_endpoint
from okgin.rules import HOUSE_RULES, PRESETS, preset

from ..net import list_tables
from ..seating import Seating
from .base import OkginScreen


def parse_rules(text: str, variant: str, preset_name: str | None = None, house: tuple[str, ...] = ()) -> dict:
    """A preset, then the house rules named in ``house`` (keys of HOUSE_RULES), then
    ``knock_limit=10 gin_bonus=20`` typed -> the partial rules map, only what differs
    from the variant's defaults (raises RuleError), as ``okgin play`` combines them."""
    parts = [p for p in text.replace(",", " ").split() if p]
    rules = preset(preset_name).apply(variant) if preset_name else RuleSet(variant=variant)
    for flag in house:
        opts = dict(HOUSE_RULES[flag][0])
        if variant == "box":
            opts.pop("knock_limit", None)  # docs/rules.md §4: the box game knocks at 10 anyway
        rules = rules.with_options(**opts)
    full = rules.with_assignments(parts)
    defaults = RuleSet(variant=variant).to_dict()
    return {k: v for k, v in full.to_dict().items() if defaults.get(k) != v and k != "variant"}


class LobbyScreen(OkginScreen[None]):
    BINDINGS = [
        Binding("ctrl+r", "refresh", "Refresh tables"),
        Binding("escape", "app.quit", "Quit"),
    ]

    def __init__(self, endpoint: str = "tcp://127.0.0.1:7117", name: str = "", table: str = "", refresh: bool = True) -> None:
        super().__init__()
        self.refresh_on_mount = refresh  # off in snapshot tests: they never open a socket
        self.endpoint = endpoint
        self.player_name = name
        self.table_name = table

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Static("okgin — join a game", classes="dialog-title")
            with Horizontal(classes="row"):
                yield Label("Referee")
                yield Input(self.endpoint, id="endpoint", placeholder="tcp://HOST:PORT", compact=True)
            with Horizontal(classes="row"):
                yield Label("Your name")
                yield Input(self.player_name, id="name", max_length=40, placeholder="how others see you", compact=True)
            with Horizontal(classes="row"):
                yield Label("Game")
                yield Select([("Oklahoma Gin (2 players)", "oklahoma"), ("Gin in the Box (3 players)", "box")],
                             value="oklahoma", allow_blank=False, id="variant", compact=True)
                yield Select([(name, name) for name in PRESETS], prompt="preset: none", id="preset", compact=True)
            with Vertical(id="house-rules"):
                for flag, (_opts, line) in HOUSE_RULES.items():
                    yield Checkbox(line, id=f"house-{flag}", compact=True)
            with Horizontal(classes="row"):
                yield Label("Rules")
                yield Input("", id="rules", placeholder="optional, e.g. knock_limit=10 undercut_bonus=25", compact=True)
            with Horizontal(classes="row"):
                yield Label("Table")
                yield Input(self.table_name, id="tablename", placeholder="a table name (join, create, watch)", compact=True)
            with Horizontal(classes="row"):
                yield Label("Time (s)")
                yield Input("", id="move", placeholder="per move (new table)", type="integer", compact=True)
                yield Input("", id="bank", placeholder="per game (new table)", type="integer", compact=True)
            with Horizontal(classes="dialog-buttons"):
                yield Button("Quick match", id="quick", variant="primary", compact=True)
                yield Button("Join table", id="join", compact=True)
                yield Button("Create table", id="create", compact=True)
                yield Button("Watch", id="watch", compact=True)
            yield Static("", id="lobby-status")
            with VerticalScroll(id="tables-box"):
                yield OptionList(id="tables")
        yield Footer()

    def on_mount(self) -> None:
        for inp in self.query(Input):
            inp.cursor_blink = getattr(self.app, "cursor_blink", True)
        self.query_one("#name", Input).focus()
        if self.refresh_on_mount:
            self.action_refresh()
        else:
            self._status("Ctrl+R lists the referee's tables.")

    def _status(self, text: str) -> None:
        self.query_one("#lobby-status", Static).update(text)

    def _value(self, ident: str) -> str:
        return self.query_one(f"#{ident}", Input).value.strip()

    def action_refresh(self) -> None:
        try:
            endpoint = parse_endpoint(self._value("endpoint") or self.endpoint)
        except EndpointError as e:
            self._status(f"The referee's address: {e}")
            return
        self._fetch_tables(endpoint)

    @work(exclusive=True, group="lobby", exit_on_error=False)
    async def _fetch_tables(self, endpoint: str) -> None:
        """The table list, over a short connection on this app's loop."""
        self._status(f"Asking {endpoint} for its tables…")
        try:
            tables = await list_tables(endpoint, self._value("name") or "okgin-tui")
        except (SDKTimeout, TimeoutError):
            self._status(f"No referee answers at {endpoint}. Is it running? (Ctrl+R retries)")
            return
        except RefereeError as e:
            self._status(f"{endpoint}: {e.message}")
            return
        except (SDKError, ValueError) as e:
            self._status(f"{endpoint}: {e}")
            return
        ol = self.query_one("#tables", OptionList)
        ol.clear_options()
        for t in tables:
            players = ", ".join(p or "·" for p in t.get("players", []))
            label = f"{t.get('table')}: {t.get('variant')} · {t.get('status')} · {players}"
            ol.add_option(Option(label, id=str(t.get("table"))))
        self._status(
            f"{len(tables)} table{'s' if len(tables) != 1 else ''} at {endpoint}. Pick one to fill the table name."
            if tables
            else f"Connected to {endpoint}: no tables yet. Quick match or create one."
        )

    @on(OptionList.OptionSelected, "#tables")
    def _pick(self, event: OptionList.OptionSelected) -> None:
        if event.option.id:
            self.query_one("#tablename", Input).value = event.option.id

    def on_button_pressed(self, event: Button.Pressed) -> None:
        mode = event.button.id or "quick"
        endpoint = self._value("endpoint")
        name = self._value("name") or "player"
        variant = str(self.query_one("#variant", Select).value)
        table = self._value("tablename") or None
        try:
            endpoint = parse_endpoint(endpoint)  # HOST:PORT welcome, like the command line's
        except EndpointError as e:
            self._status(f"The referee's address: {e}")
            return
        try:
            choice = self.query_one("#preset", Select).value
            house = tuple(flag for flag in HOUSE_RULES if self.query_one(f"#house-{flag}", Checkbox).value)
            rules = parse_rules(self._value("rules"), variant, str(choice) if isinstance(choice, str) else None, house)
        except RuleError as e:
            self._status(f"Rules: {e}")
            return
        if mode in ("join", "watch") and not table:
            self._status("Type the table's name (or pick one in the list).")
            return
        clock = None
        if mode == "create":
            move, bank = self._value("move"), self._value("bank")
            clock = {}
            if move:
                clock["move_ms"] = int(move) * 1000
            if bank:
                clock["bank_ms"] = int(bank) * 1000
        seating = Seating(mode=mode, variant=variant, rules=rules, table=table, clock=clock or None)
        self.okgin_app.join_game(endpoint, name, seating)
