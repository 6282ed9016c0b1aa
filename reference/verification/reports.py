"""Writing a report (``verify``'s, ``verify --mutants``'s) as JSON: checked before any work, written
atomically after it.  No torch: ``verify --mutants`` writes its report without it."""

from __future__ import annotations

from formal.guards.files import destination, json_text, write_text

__all__ = ["check_destination", "write_json"]


def check_destination(path) -> str:
    """The folder ``path`` would be written in; a ConfigError, before any work, if it cannot be written
    (see :func:`formal.guards.files.destination`)."""
    return destination(path, what="JSON report")


def write_json(report, path) -> None:
    """Write a report (anything with ``as_json()``) as JSON atomically: a temporary file beside ``path``,
    then one rename."""
    write_text(path, json_text(report.as_json()), what="JSON report")
