"""The TUI's screens: table, hand summary, game over, help, advice note, lobby."""
