"""The TUI's widgets. Each draws a part of the :class:`~clients.tui.model.TableState`."""
