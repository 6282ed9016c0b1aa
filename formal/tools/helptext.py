"""How every ``formal-transformers`` command writes its help: the help formatter (defaults shown as ``(default:
…)``, examples kept as written), the closing lines of each command's help (its examples and where the full
reference is), and the deprecated spellings of renamed options, which still work and say so on stderr.

This module imports only the standard library: the front door reads it for ``--help``.
"""

from __future__ import annotations

import argparse
import re
import sys
import textwrap

__all__ = ["Formatter", "epilog", "deprecated_alias", "for_docs", "DOCS_POINTER"]

#: Where the full reference of the commands is (the docs have no public host yet: the page, by name).
DOCS_POINTER = "Full reference: the command-line page (cli) of the package's docs."


class Formatter(argparse.HelpFormatter):
    """Wraps prose, keeps indented lines (the examples) as written, and ends the help of every option whose
    default means something with ``(default: VALUE)`` — unless its help already says its default, in the same
    form."""

    def _fill_text(self, text, width, indent):
        paragraphs = []
        for paragraph in text.split("\n\n"):
            if paragraph.startswith("  "):                   # examples: one command a line, as written
                paragraphs.append(textwrap.indent(paragraph, indent))
            else:
                paragraphs.append(textwrap.fill(" ".join(paragraph.split()), width, initial_indent=indent,
                                                subsequent_indent=indent))
        return "\n\n".join(paragraphs)

    def _get_help_string(self, action):
        text = action.help or ""
        if "(default" in text or _no_default(action.default):    # None, False, []: not given, off, none
            return text
        return f"{text} (default: %(default)s)"


def _no_default(value) -> bool:
    return value is None or value is False or value is argparse.SUPPRESS or (isinstance(value, (list, tuple))
                                                                             and not value)


def epilog(*examples: str) -> str:
    """The end of a command's help: its examples (one command line each, without the program's name) and
    where the full reference is."""
    lines = "\n".join(f"  formal-transformers {example}" for example in examples)
    return f"examples:\n\n{lines}\n\n{DOCS_POINTER}"


class _Deprecated(argparse.Action):
    """An old spelling of an option: stores (or appends) as the new one does, after a one-line note on
    stderr naming the new spelling."""

    def __init__(self, option_strings, dest, *, replacement: str, append: bool = False, **kwargs):
        super().__init__(option_strings, dest, **kwargs)
        self.replacement, self.append, self.said = replacement, append, False

    def __call__(self, parser, namespace, values, option_string=None):
        if not self.said:                                    # once, however often it is given
            self.said = True
            print(f"formal-transformers: note: {option_string} is deprecated; use {self.replacement}",
                  file=sys.stderr)
        if self.append:
            values = [*(getattr(namespace, self.dest, None) or []), values]
        setattr(namespace, self.dest, values)


def deprecated_alias(parser, old: str, new: argparse.Action) -> argparse.Action:
    """Add ``old`` to ``parser`` as a hidden spelling of the option ``new`` (an action ``add_argument``
    returned): the same destination, type and choices, a note on stderr when used."""
    return parser.add_argument(old, dest=new.dest, type=new.type, choices=new.choices, metavar=new.metavar,
                               default=argparse.SUPPRESS, help=argparse.SUPPRESS, action=_Deprecated,
                               replacement=new.option_strings[-1],
                               append=isinstance(new, argparse._AppendAction))


_FLAG = re.compile(r"(?<![\w`-])(--[a-z][a-z0-9-]*)")


def _literal(text: str) -> str:
    """Flags and `quoted` command lines as reStructuredText literals: the docs would otherwise typeset
    ``--json`` with an en dash."""
    parts = re.split(r"(``[^`]*``|`[^`]*`)", text)
    return "".join(part if part.startswith("``") else f"`{part}`" if part.startswith("`")
                   else _FLAG.sub(r"``\1``", part) for part in parts)


def for_docs(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """``parser`` (and its commands' parsers) with its texts as the docs' command-line page reads them
    (reStructuredText, through sphinx-argparse): flags as literals, each option's help with its default as
    ``--help`` shows it, and the examples as a literal block.  Changes ``parser`` in place and returns it."""
    formatter = Formatter(prog=parser.prog)
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in dict.fromkeys(action.choices.values()):
                for_docs(sub)
        elif action.help not in (None, argparse.SUPPRESS):
            action.help = _literal(formatter._expand_help(action)).replace("%", "%%")
    if parser.description:
        parser.description = _literal(parser.description)
    if parser.epilog and parser.epilog.startswith("examples:"):
        examples, _, pointer = parser.epilog.rpartition("\n\n")
        parser.epilog = "Examples::\n" + examples[len("examples:"):] + "\n\n" + _literal(pointer)
    return parser
