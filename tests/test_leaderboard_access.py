"""The leaderboard's pages for a reader with a screen reader, the keyboard only, a narrow window or no script:
landmarks, table captions and header scopes, ranks and ties explained in words, sorting by a button, filters
shown only where they work, and detail pages that fit a 320-pixel window."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest

from leaderboard_support import db_fixture, publish_all  # noqa: F401 (db)
from mt_eval.cli import main
from test_leaderboard_browser import FLAGS, chromium


class Outline(HTMLParser):
    """The elements of a page as (tag, attributes, the open elements' tags), and its text."""

    def __init__(self, text: str) -> None:
        super().__init__()
        self.open: list[str] = []
        self.elements: list[tuple[str, dict[str, str | None], tuple[str, ...]]] = []
        self.text: list[str] = []
        self.feed(text)

    def handle_starttag(self, tag, attrs):
        self.elements.append((tag, dict(attrs), tuple(self.open)))
        if tag not in {"meta", "br", "input", "option"}:
            self.open.append(tag)

    def handle_endtag(self, tag):
        if tag in self.open:
            del self.open[len(self.open) - 1 - self.open[::-1].index(tag):]

    def handle_data(self, data):
        self.text.append(data)

    def tags(self, name: str) -> list[tuple[dict[str, str | None], tuple[str, ...]]]:
        return [(attrs, within) for tag, attrs, within in self.elements if tag == name]


@pytest.fixture
def site(cards, tmp_path: Path, db: str) -> Path:
    publish_all(db, [cards.card("alpha", quality=0.8), cards.card("beta", quality=0.78),
                     cards.card("gamma", quality=0.2)], tmp_path)
    assert main(["leaderboard", "--db", db, "--out", str(tmp_path / "site"), "--quiet"]) == 0
    return tmp_path / "site"


def test_the_pages_have_landmarks_table_captions_and_header_scopes(site: Path):
    """Before, neither page had a main landmark, no table had a caption nor its headers a scope, and the sort
    arrows and filters showed on a page whose script did not run (where they do nothing)."""
    index = Outline((site / "index.html").read_text(encoding="utf-8"))
    detail = Outline(next((site / "cards").glob("*.html")).read_text(encoding="utf-8"))
    for outline in (index, detail):
        assert outline.tags("html")[0][0]["lang"] == "en" and len(outline.tags("main")) == 1
        assert [within for _, within in outline.tags("h1")] == [("html", "body", "header")] if outline is index \
            else [("html", "body", "main")]
        tables = outline.tags("table")
        assert tables and all("div" in within for _, within in tables)  # (each in its own scrolling box)
        assert len(outline.tags("caption")) == len(tables)
        assert all(attrs.get("scope") == "col" for attrs, within in outline.tags("th") if "thead" in within)
    assert detail.tags("nav") and all("main" in within for _, within in detail.tags("table"))
    [filters] = [attrs for attrs, _ in index.tags("div") if attrs.get("class") == "filters"]
    assert "hidden" in filters
    assert [attrs.get("role") for attrs, _ in index.tags("span") if attrs.get("class") == "muted"] == ["status"]


def test_a_tie_and_a_rank_are_explained_in_words_not_only_in_a_tooltip(site: Path):
    """Before, "tie" said what it meant only in a title (a tooltip: no keyboard, touch or screen reader user reads
    it), and what a rank counts was nowhere on the page; an unstated open source was a bare "?"."""
    from mt_eval.leaderboard.html import open_source

    text = "".join(Outline((site / "index.html").read_text(encoding="utf-8")).text)
    assert "tie: 95% interval overlaps 1 other row" in text
    assert "Rank: 1 + the number of rows whose 95% interval lies wholly above the row's" in text
    assert "n (scored entries)" in text
    assert open_source({"open_source": None}) == '<span class="unk">not stated</span>'


@contextmanager
def a_page(**context: Any) -> Iterator[Any]:
    """A page of a fresh chromium (``context``: its context's options, e.g. a viewport or no script)."""
    sync_api = pytest.importorskip("playwright.sync_api")
    with sync_api.sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=chromium(), args=FLAGS)
        try:
            yield launched.new_context(**context).new_page()
        finally:
            launched.close()


def test_sorting_is_a_button_the_keyboard_reaches_and_presses(site: Path):
    """Before, a sortable header was a focusable cell that only Enter sorted (not Space) and that a screen reader
    did not name as something to press."""
    with a_page() as page:
        page.goto((site / "index.html").as_uri())
        assert page.is_visible(".filters")
        for _ in range(5):  # pair, corpus, class, search; then the first header's button
            page.keyboard.press("Tab")
        assert page.evaluate("document.activeElement.tagName + ' ' + document.activeElement.textContent") == \
            "BUTTON Rank"
        page.keyboard.press("Tab")
        page.keyboard.press("Space")
        assert page.get_attribute("th[data-sort=name]", "aria-sort") == "ascending"
        page.keyboard.press("Enter")
        assert page.get_attribute("th[data-sort=name]", "aria-sort") == "descending"
        names = page.eval_on_selector_all("tbody tr td:nth-child(2) b", "cells => cells.map(c => c.textContent)")
        assert names == ["Gamma", "Beta", "Alpha"]


def test_without_script_the_rows_show_and_the_filters_that_would_do_nothing_do_not(site: Path):
    with a_page(java_script_enabled=False) as page:
        page.goto((site / "index.html").as_uri())
        assert not page.is_visible(".filters") and not page.is_visible("select")
        assert page.locator("tbody tr").count() == 3 and page.locator("a[href^='cards/']").count() == 3


def test_a_detail_page_fits_a_320_pixel_window(site: Path):
    """Before, a detail page's tables (scores, entries) made the whole page scroll sideways on a phone."""
    with a_page(viewport={"width": 320, "height": 640}) as page:
        for url in ((site / "index.html").as_uri(), next((site / "cards").glob("*.html")).as_uri()):
            page.goto(url)
            assert page.evaluate("document.documentElement.scrollWidth") <= 320, url
