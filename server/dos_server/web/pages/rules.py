"""The players' rules page: ``docs/rules.md`` (or its translation, ``rules.<language>.md``) in
the reader's language, as HTML, every section and numbered paragraph with its own anchor.

The documents are the ones ``dos-client rules`` prints: package data of ``dos_client``
(``dos_client/data/rules.md``, ``rules.lo.md``, ...), read here as files, never by importing the
client. Each section ``## 5.`` is ``id="rule-5"`` and each paragraph ``5.3`` is
``id="rule-5.3"`` in every language, so the rule an error names (``rule="5.3"``) opens at
``/rules#rule-5.3`` (:func:`rule_url`) whatever language the reader reads.

The text is converted by markdown-it in its CommonMark preset with HTML off: whatever the
document holds is shown as text, never as markup. The documents do not change while the
server runs, so each is converted once; markdown-it is imported then, not with the app (most
web workers never render the rules).
"""

from __future__ import annotations

import importlib.util
import re
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING

from flask import render_template, url_for
from flask_babel import get_locale

from dos_server.i18n import DEFAULT_LANGUAGE
from dos_server.web.blueprint import bp
from dos_server.web.forms import Page

if TYPE_CHECKING:
    from markdown_it.token import Token

_SECTION = re.compile(r"(\d+)\.(?= |$)")  # "## 5. Calling DOS": section 5
_PARAGRAPH = re.compile(r"(\d+\.\d+)(?= )")  # "5.3 Calling DOS when ...": paragraph 5.3
# The documents hang a paragraph's lines, and its list, four spaces in (for a terminal);
# for CommonMark that would make the list part of the paragraph's text.
_HANGING = re.compile(r"^ {4}", re.M)


def rule_anchor(section: str) -> str:
    """The element id of a section or paragraph on the rules page: ``rule-3.7``, ``rule-5``."""
    return f"rule-{section.strip().rstrip('.')}"


@bp.app_template_global()
def rule_url(section: str) -> str:
    """The link that opens the rules page at ``section`` (``"3.7"``, ``"5"``), in the reader's
    language: for the rule an error names."""
    return url_for("web.rules", _anchor=rule_anchor(section))


def rules_folder() -> Path:
    """Where the rules documents are: ``dos_client``'s package data (located, not imported)."""
    spec = importlib.util.find_spec("dos_client")
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError("the dos_client package, which ships the rules documents, is missing")
    return Path(next(iter(spec.submodule_search_locations))) / "data"


def rules_document(language: str) -> tuple[Path, str]:
    """The rules document for ``language`` and the language it is written in: its
    translation when there is one, else the English one."""
    folder = rules_folder()
    if language != DEFAULT_LANGUAGE:
        translated = folder / f"rules.{language}.md"
        if translated.is_file():
            return translated, language
    return folder / "rules.md", DEFAULT_LANGUAGE


def render_rules(text: str) -> str:
    """A rules document as HTML: CommonMark with HTML off (the document's ``<`` is text),
    each ``## N.`` heading and ``N.M`` paragraph with its anchor and its number a link to it."""
    from markdown_it import MarkdownIt

    markdown = MarkdownIt("commonmark", {"html": False})
    tokens = markdown.parse(_HANGING.sub("", text))
    for index, token in enumerate(tokens[:-1]):
        inline = tokens[index + 1]
        if token.level != 0 or inline.type != "inline":
            continue
        if token.type == "heading_open" and token.tag == "h2":
            found = _SECTION.match(inline.content)
        elif token.type == "paragraph_open":
            found = _PARAGRAPH.match(inline.content)
        else:
            continue
        if found:
            token.attrSet("id", rule_anchor(found.group(1)))
            _link_the_number(inline, found.group(0), rule_anchor(found.group(1)))
    return str(markdown.renderer.render(tokens, markdown.options, {}))


def _link_the_number(inline: Token, number: str, anchor: str) -> None:
    """Make the leading ``number`` of an inline token a link to its own ``anchor``."""
    from markdown_it.token import Token

    children = inline.children or []
    if not children or children[0].type != "text" or not children[0].content.startswith(number):
        return
    first = children[0]
    link = Token("link_open", "a", 1, attrs={"href": f"#{anchor}", "class": "rule-number"})
    rest = Token("text", "", 0, content=first.content[len(number):])
    inline.children = [link, Token("text", "", 0, content=number), Token("link_close", "a", -1),
                       rest, *children[1:]]


@lru_cache(maxsize=8)
def _rendered(path: Path) -> str:
    return render_rules(path.read_text(encoding="utf-8"))


def rules_html(language: str) -> tuple[str, str]:
    """The rules page's document as HTML for ``language``, and the language it is in."""
    path, written_in = rules_document(language)
    return _rendered(path), written_in


@bp.get("/rules")
def rules() -> Page:
    document, language = rules_html(str(get_locale() or DEFAULT_LANGUAGE))
    return render_template("rules.html", document=document, document_language=language)
