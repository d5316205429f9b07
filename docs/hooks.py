"""MkDocs hooks of the documentation site (mkdocs.yml ``hooks:``; not a page: ``exclude_docs`` leaves it out).

- Heading ids never start with a digit (``## 1. Players`` gets ``section-1-players``): the theme's scrollspy looks
  each id of the page's table of contents up as a CSS selector, and ``#1-players`` is not one (the page's script
  stops there, with an error in the console).
- The reST roles of the docstrings (``:func:`name```, ``:class:`~pkg.Name```, ``:mod:``, ``:data:``, ``:meth:``,
  ``:attr:``, ...), which the API reference renders as Markdown, become inline code; a dotted name links to its
  entry of the API reference when it has one (an optional cross-reference of mkdocs-autorefs: no link, no
  warning, when it has none).
- Every table sits in a ``table-scroll`` block (css/extra.css) that scrolls sideways, so that a wide table stays
  within the page's column.
"""

from __future__ import annotations

import re

from markdown.extensions.toc import slugify

ROLE = re.compile(r":(?:py:)?(?:mod|func|class|data|meth|attr|exc|obj|const):<code>([^<]*)</code>")
TITLED = re.compile(r"(?P<title>.*?)\s*&lt;(?P<target>[^&]+)&gt;")
DOTTED = re.compile(r"\w+(?:\.\w+)+")
TABLE = re.compile(r"<table(?=[\s>])")


def heading_slug(value: str, separator: str) -> str:
    """Markdown's own slug of a heading, with ``section`` in front where it would start with a digit."""
    slug = slugify(value, separator)
    return f"section{separator}{slug}" if slug[:1].isdigit() else slug


def role_html(match: re.Match) -> str:
    """One role (its ``<code>`` as Markdown rendered it) as inline code, cross-referenced where dotted."""
    text = match[1].strip()
    titled = TITLED.fullmatch(text)  # :func:`title <target>`
    if titled:
        title, target = titled["title"], titled["target"].strip()
    else:
        target = text.lstrip("~.")
        title = target.rsplit(".", 1)[-1] if text.startswith("~") else target  # ~pkg.Name shows Name
    code = f"<code>{title}</code>"
    target = target.strip(".")
    if not DOTTED.fullmatch(target):  # a bare name could match a heading of any page: code only
        return code
    return f'<autoref identifier="{target}" optional>{code}</autoref>'


def on_config(config):
    config.mdx_configs.setdefault("toc", {})["slugify"] = heading_slug
    return config


def on_page_content(html_text: str, **kwargs) -> str:
    html_text = ROLE.sub(role_html, html_text)
    html_text = TABLE.sub('<div class="table-scroll"><table', html_text)
    return html_text.replace("</table>", "</table></div>")
