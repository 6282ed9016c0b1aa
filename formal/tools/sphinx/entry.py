"""The base of the ``formal`` directives: an entry documents one object, with a target for links, index
entries, and a warning (an error under ``-W``) in place of a body it cannot build."""

from __future__ import annotations

from docutils import nodes
from docutils.parsers.rst import directives
from sphinx import addnodes
from sphinx.util import logging
from sphinx.util.docutils import SphinxDirective
from sphinx.util.nodes import make_id

__all__ = ["Entry"]

logger = logging.getLogger(__name__)


class Entry(SphinxDirective):
    """A directive that documents one object: a target, index entries, and its body."""

    has_content = False
    required_arguments = 1
    kind = ""
    option_spec = {"noindex": directives.flag}

    def target(self, name: str, index: list) -> list:
        """A target for links to this entry, and its index entries (none with ``:noindex:``: the same
        object shown a second time)."""
        if "noindex" in self.options:
            return []
        anchor = make_id(self.env, self.state.document, f"formal-{self.kind}", name)
        target = nodes.target("", "", ids=[anchor])
        self.state.document.note_explicit_target(target)
        self.env.get_domain("formal").note_object(self.kind, name, anchor, self.env.docname)
        entries = [("single", text, anchor, "", None) for text in index]
        return [addnodes.index(entries=entries), target]

    def fail(self, message: str) -> list:
        logger.warning(message, location=self.get_location())
        return [nodes.paragraph(text=f"[{message}]")]
