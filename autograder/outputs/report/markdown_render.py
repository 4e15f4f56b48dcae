"""The results' texts are Markdown: boards in fenced code blocks, `code`, **bold**, lists. Rendered here.

A student's returned value or exception message is inside that Markdown, so only what the grader's texts
use is switched on (markdown-it-py's "zero" preset plus fences, lists, code spans, emphasis and line
breaks). Raw HTML, links, images, autolinks, entities and backslash escapes stay off: `<script>` and
`[x](javascript:...)` show as the text they are, and nothing on a page can fetch from the network.
"""

from functools import lru_cache

from markdown_it import MarkdownIt
from markdown_it.rules_inline import StateInline
from markupsafe import Markup

_UNDERSCORE = "_"


def _underscores_as_text(state: StateInline, silent: bool) -> bool:
    """`_` never emphasises: Python names (__init__, _cache_) in a message must show as they are."""
    if state.src[state.pos] != _UNDERSCORE:
        return False
    end = state.pos
    while end < state.posMax and state.src[end] == _UNDERSCORE:
        end += 1
    if not silent:
        state.pending += state.src[state.pos : end]
    state.pos = end
    return True


def _parser() -> MarkdownIt:
    parser = MarkdownIt("zero", {"html": False}).enable(["fence", "list", "backticks", "emphasis", "newline"])
    parser.inline.ruler.before("emphasis", "underscores_as_text", _underscores_as_text)
    return parser


_MARKDOWN = _parser()


@lru_cache(maxsize=4096)  # many students get the same texts (the hints, "is not written yet")
def markdown(text: str) -> Markup:
    """Blocks of HTML (<p>, <pre><code>, <ul>) for a Markdown text; every character of the text is escaped."""
    return Markup(_MARKDOWN.render(text or "").strip())


@lru_cache(maxsize=256)
def markdown_inline(text: str) -> Markup:
    """One line's inline HTML (`code`, **bold**), no paragraph around it: for a list item."""
    return Markup(_MARKDOWN.renderInline(text or ""))
