"""Help: the rules in short and every key, so nobody needs to read anything else.

Rich's Markdown in a Static rather than Textual's Markdown widget: the text is static,
and it opens instantly.
"""

from __future__ import annotations

from rich.markdown import Markdown
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Footer, Static

HELP = """\
## What to do

The line under your hand always says what to do now; the footer lists the keys that
work now, and the buttons above it do the same with the mouse.

| key | move |
|---|---|
| **←/→** or **h/l** | choose a card in your hand (or click it) |
| **t** / **p** | take the upcard / pass it (first turn of a hand) |
| **s** / **d** | draw from the stock / take the top of the discard pile |
| **Enter** (or **x**) | discard the chosen card (or double-click it) |
| **k** | knock, throwing the chosen card face down |
| **g** | big gin (when that rule is on) |
| **o** | sort the hand: by suit, by rank, melds first, or your own order |
| **Shift+←/→** | move the chosen card (your own order) |
| **i** / **a** / **f** / **T** | hints on/off · ASCII cards · four-colour deck · next colour theme |
| **m** | (sitting out, Gin in the Box) write a note to your captain |
| **u** | (`okgin play`) take back a discard in the 2 s before it is sent |
| **r** / **v** | rematch when the game is over / show the revealed deal seed |
| **S** | your statistics: games and hands won per opponent, gins, undercuts |
| **Ctrl+T** | (network game) your session token: it *is* your seat, keep it secret |
| **?** | this help · **q** (or **Ctrl+C**) quit |

Mouse: click a card to choose it, double-click to discard it; double-click the stock or
the discard pile to draw from it; click the buttons.

Network game: if your terminal closes or crashes, the referee holds your seat for a while
(**q** asks first and says how long); run the same `okgin tui` command again, or
`okgin tui --resume`, to take it back.

Time: `okgin play` has no clock. A table you create from `okgin tui` gives each player
10 minutes a game plus 5 s a move; your time shows above your hand, whose frame turns
yellow under 30 s and red under 10 s (with the bell). If your connection drops there,
your clock stops until you are back; a referee outage never costs you time. In Gin in
the Box, when you sit out, your captain's move may wait a few seconds for your advice
(counted down above the hand); advice after it moved gets "your captain already played".

`okgin play` (against the bots): the game runs on your computer and ends when you leave,
so **q** offers to **r**esign this game, deal a **n**ew one, or **q**uit.

## Oklahoma Gin (2 players)

- **Goal**: form your 10 cards into **melds**: *sets* (3 or 4 of a rank) and *runs*
  (3+ in a row in one suit; the ace is low only, Q-K-A is not a run). Cards in no meld
  are **deadwood**: A = 1, 2-10 their value, J Q K = 10. The table shows your deadwood
  and marks your melds with brackets.
- **Deal**: 10 cards each; the next card is the **upcard**. Its value is this hand's
  **knock limit** (10, J, Q, K give 10; an ace gives 1).
- **First turn**: the non-dealer may take the upcard or pass; then the dealer. If both
  pass, the non-dealer draws from the stock.
- **A turn**: draw (stock or discard pile), then discard one card, or **knock**. A card
  just taken from the discard pile may not be thrown back at once.
- **Knocking**: when your deadwood after throwing one card face down is at most the
  knock limit, you may knock. Both hands are laid out; the defender may **lay off**
  deadwood on the knocker's melds.
- **Scoring**: gin (deadwood 0) scores 25 + the defender's deadwood. A knock scores the
  difference of deadwood. If the defender has as little or less, it **undercuts** and
  scores 10 + the difference.
- **Drawn hand**: when only 2 cards remain in the stock, the hand ends with no score.
- The winner of a hand deals the next. First to **100** wins the game.

## Gin in the Box (3 players)

One player is **in the box** and plays every hand alone against the **captain**; the
third **sits out**, sees the captain's hand and may advise it (the captain decides).
The knock limit is always 10. The winner of a hand scores for itself. First to 100 wins.

```text
 ┌─────────┐   plays    ┌─────────┐   advises   ┌──────────┐
 │ THE BOX │ ◀────────▶ │ CAPTAIN │ ◀────────── │ SITS OUT │
 └─────────┘            └─────────┘             └──────────┘
 box wins:   stays in     sits out next           captains next
 box loses:  sits out     goes in the box         captains next
```

- **Draw for roles**: at the start everyone draws a card (king high, ace low). The
  highest goes in the box, the next captains, the lowest sits out; ties draw again. The
  log shows the draw through the first hand.
- **After each hand** the roles move as the picture shows (a drawn hand changes
  nothing); the hand's summary says who plays what next.
- **Sitting out**: you see your captain's hand; press a move key to suggest that move,
  or **m** to write a note. The captain is free to ignore you.

## House rules

{house_rules}

Press **Esc** or **?** to go back to the table.
"""


def house_rules_help() -> str:
    """How to set the rule options, one line per preset and per house rule.

    Written from :data:`okgin.rules.PRESETS` and :data:`okgin.rules.HOUSE_RULES`, the
    same tables ``okgin play``'s flags and the lobby's check boxes are made from, so the
    help cannot name an option that does not exist or miss one that was added."""
    from okgin.rules import HOUSE_RULES, PRESETS

    lines = [
        "Rules are chosen when a game starts, never during it: on the command line of `okgin play`",
        "(and of `okgin tui --connect`, for a quick match or a table it makes), or in the lobby's",
        "new-game screen (`okgin tui`): **Preset** beside the game, one check box per house rule, any",
        "other option as `NAME=VALUE` in the **Rules** field. The table shows the knock limit and a",
        "doubled hand as they come.",
        "",
        "Presets (`okgin play --preset NAME`):",
        "",
    ]
    lines += [f"- **{p.name}**: {p.summary}" for p in PRESETS.values()]
    lines += ["", "House rules, one flag each (they add to a preset):", ""]
    lines += [f"- `--{flag.replace('_', '-')}`: {line}" for flag, (_opts, line) in HOUSE_RULES.items()]
    lines += ["", "Any other option: `--rule NAME=VALUE` (repeatable); `okgin rules` lists them all."]
    return "\n".join(lines)


class HelpScreen(ModalScreen[None]):
    BINDINGS = [Binding("escape,question_mark,q,f1", "close", "Back")]

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Static("okgin — help  (↑/↓ PgUp/PgDn scroll, Esc back)", classes="dialog-title")
            with VerticalScroll(id="help-body"):
                yield Static(Markdown(HELP.replace("{house_rules}", house_rules_help())), id="help-text")
        yield Footer()

    def on_mount(self) -> None:
        self.query_one("#help-body").focus()

    def action_close(self) -> None:
        self.dismiss(None)
