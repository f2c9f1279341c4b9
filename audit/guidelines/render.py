"""Guidelines Markdown to HTML, safely: markdown-it-py with raw HTML disabled (a <script> in the text comes
out as text) and its link validation (javascript:, vbscript:, file: and most data: links are not made)."""

from functools import lru_cache

from django.utils.safestring import mark_safe
from markdown_it import MarkdownIt

_md = MarkdownIt("commonmark", {"html": False, "linkify": False, "typographer": False}).enable("table")


@lru_cache(maxsize=32)  # pure, and guidelines are versioned: a page would re-render the same text (~1 ms a KB)
def render_markdown(text):
    return mark_safe(_md.render(text or ""))  # noqa: S308 - markdown-it escapes everything but its own tags
