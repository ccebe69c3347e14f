"""Researcher-written Markdown (introduction, instructions, consent, thank-you) as safe HTML.

The texts come from ``experiment.toml``, but they are shown to every participant, so they are
rendered as if anyone had written them:

- **no raw HTML**: Markdown's HTML blocks and inline HTML are switched off, so ``<script>``
  or ``<b>`` are shown as the characters typed (and ``a < b`` inside a code span stays as
  written);
- **links** may point to ``http``, ``https`` and ``mailto`` addresses and to anchors of the page
  (``#...``); any other scheme (``javascript:``, ``data:``, ``vbscript:``, ``file:``...), however
  it is spelled (upper case, entities, spaces or control characters inside), loses its link
  and keeps its text;
- **images** may only be inline raster images (``data:image/png``, ``jpeg``, ``gif`` or
  ``webp`` in base64): the pages load nothing from another server (the Content-Security-Policy
  would block it, and fetching an image from elsewhere would tell that server who takes part),
  and a raster image cannot run script (an SVG can, so it is refused). Any other image is
  replaced by its alternative text;
- **no line swallows others**: only the Markdown extensions whose syntax cannot silently
  consume the lines after a malformed one are on (tables, fenced code, definition lists, sane
  lists). Abbreviations (an empty ``*[x]:`` ate the next line), footnotes (``[^1]:`` moved the
  rest of the paragraph to the end of the page) and attribute lists (``{: onclick=...}``
  added arbitrary attributes) are off; such lines are shown as typed.

Examples
--------
>>> str(render_markdown("Read [the guide](https://example.org), not [this](javascript:x)"))
'<p>Read <a href="https://example.org" rel="noreferrer">the guide</a>, not <span>this</span></p>'
"""

from __future__ import annotations

import html
import re
import xml.etree.ElementTree as ET

import markdown as md
from markdown.treeprocessors import Treeprocessor
from markdown.util import AMP_SUBSTITUTE
from markupsafe import Markup

LINK_SCHEMES = frozenset({"http", "https", "mailto"})
IMAGE_DATA = re.compile(r"data:image/(?:png|jpeg|gif|webp);base64,[A-Za-z0-9+/=\s]*", re.I)
EXTENSIONS = ("tables", "fenced_code", "def_list", "sane_lists")
_SCHEME = re.compile(r"([A-Za-z][A-Za-z0-9+.\-]*):")
# what browsers drop from a URL before reading it (WHATWG URL: leading/trailing C0 controls and
# spaces, and every tab and newline anywhere)
_STRIPPED = re.compile(r"[\t\n\r]")


def _browser_view(url: str) -> str | None:
    """The URL as a browser would read it from the attribute, or ``None`` when the entities
    in it would decode differently a second time (refused rather than guessed)."""
    once = html.unescape(url.replace(AMP_SUBSTITUTE, "&"))  # automail's entities
    if html.unescape(once) != once:
        return None
    return _STRIPPED.sub("", once).strip("\x00\x01\x02\x03\x04\x05\x06\x07\x08\x0b\x0c\x0e"
                                         "\x0f\x10\x11\x12\x13\x14\x15\x16\x17\x18\x19\x1a"
                                         "\x1b\x1c\x1d\x1e\x1f ")


def safe_link(url: str) -> str | None:
    """``url`` (as written) if a link may point there: http, https, mailto or an anchor of
    the page; else ``None``.

    Examples
    --------
    >>> safe_link("https://example.org/a?b=1"), safe_link("#top")
    ('https://example.org/a?b=1', '#top')
    >>> safe_link(" JaVa&#115;cript:alert(1)"), safe_link("java\\tscript:x"), safe_link("x.html")
    (None, None, None)
    """
    seen = _browser_view(url)
    if seen is None:
        return None
    if seen.startswith("#"):
        return seen
    m = _SCHEME.match(seen)
    if m is None or m.group(1).lower() not in LINK_SCHEMES:
        return None
    return seen


def safe_image(src: str) -> str | None:
    """``src`` if it is an inline raster image (``data:image/png|jpeg|gif|webp;base64``),
    else ``None`` (see the module docstring for why).

    Examples
    --------
    >>> safe_image("data:image/png;base64,iVBORw0KGgo=")
    'data:image/png;base64,iVBORw0KGgo='
    >>> safe_image("data:image/svg+xml;base64,PHN2Zz4="), safe_image("https://x.org/a.png")
    (None, None)
    """
    seen = _browser_view(src)
    if seen is None or not IMAGE_DATA.fullmatch(seen):
        return None
    return seen


def _unwrap(parent: ET.Element, child: ET.Element, text: str | None) -> None:
    """Replace ``child`` by a ``<span>`` holding its text and children (its tail kept)."""
    span = ET.Element("span")
    span.text = text
    span.extend(list(child))
    span.tail = child.tail
    parent[list(parent).index(child)] = span


class _SafeUrls(Treeprocessor):
    """Drop every link and image whose address is not allowed (their text stays)."""

    def run(self, root: ET.Element) -> None:
        parents = {c: p for p in root.iter() for c in p}
        for el in list(root.iter()):
            if el.tag == "a":
                href = safe_link(el.get("href", ""))
                if href is None:
                    _unwrap(parents[el], el, el.text)
                else:
                    el.set("href", href)
                    el.set("rel", "noreferrer")
            elif el.tag == "img":
                src = safe_image(el.get("src", ""))
                if src is None:
                    _unwrap(parents[el], el, el.get("alt") or "")
                else:
                    el.set("src", src)


def _converter() -> md.Markdown:
    conv = md.Markdown(extensions=list(EXTENSIONS))
    conv.preprocessors.deregister("html_block")  # raw HTML is text, not markup
    conv.inlinePatterns.deregister("html")
    conv.treeprocessors.register(_SafeUrls(conv), "nlgeval_safe_urls", 1)
    return conv


def render_markdown(text: str) -> Markup:
    """Researcher-written Markdown as HTML that can carry no markup, script or outside
    resource of its own (see the module docstring for what is allowed).

    Examples
    --------
    >>> str(render_markdown("Please **judge** <script>"))
    '<p>Please <strong>judge</strong> &lt;script&gt;</p>'
    >>> str(render_markdown("Compare `a < b`"))
    '<p>Compare <code>a &lt; b</code></p>'
    """
    return Markup(_converter().convert(text))
