"""The static leaderboard in a real headless Chromium (the system's, driven by Playwright): sorting, filtering
by class, a detail page, no class X method, the A2 row flagged; a screenshot is saved in the test's directory."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from mt_eval.cli import main
from mt_eval.leaderboard.publish import prepare
from mt_eval.leaderboard.store import open_store
from mt_eval.leaderboard.synthetic import write_card

FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync"]


def chromium() -> str:
    """The system Chromium (Debian: apt-get install chromium); $MT_EVAL_CHROMIUM names another."""
    found = os.environ.get("MT_EVAL_CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser")
    if found:
        return found
    reason = "Chromium is not installed (Debian: apt-get install chromium)"
    if os.environ.get("MT_EVAL_REQUIRE_CHROMIUM"):
        pytest.fail(reason)
    pytest.skip(reason)


@pytest.fixture
def site(cards, tmp_path: Path) -> Path:
    published = [
        cards.card("glossary-best", quality=1.0, extra={"status": "complete"}),
        cards.card("rules-middle", quality=0.5),
        cards.card("chat-llm", quality=0.7, method_class="raw-llm", dependency_class="A1"),
        cards.card("paid-api", quality=0.9, method_class="api", dependency_class="A2"),
        cards.card("secret-weights", quality=0.95, dependency_class="X"),
    ]
    paths = [write_card(card, tmp_path / "cards" / f"{i}.json") for i, card in enumerate(published)]
    db = str(tmp_path / "board.db")
    with open_store(db) as store:
        store.publish([prepare(p, no_input=True).record for p in paths], "2026-01-01T00:00:00+00:00")
    assert main(["leaderboard", "--db", db, "--out", str(tmp_path / "site"), "--quiet"]) == 0
    return tmp_path / "site" / "index.html"


def visible_names(page) -> list[str]:
    return page.eval_on_selector_all("section.group tbody tr:not([hidden]) td:nth-child(2) b",
                                      "cells => cells.map(c => c.textContent)")


def test_the_leaderboard_in_a_real_browser(site: Path, tmp_path: Path):
    sync_api = pytest.importorskip("playwright.sync_api")
    executable = chromium()
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=executable, args=FLAGS)
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            page.goto(site.as_uri())
            text = page.inner_text("body")
            assert "Secret Weights" not in text and "1 hidden" in text  # class X never appears
            api_row = page.locator("tr", has_text="Paid Api")
            assert "external dependency" in api_row.inner_text()
            assert "not eligible" in api_row.inner_text()
            assert sorted(visible_names(page)) == ["Chat Llm", "Glossary Best", "Paid Api", "Rules Middle"]

            page.click("th[data-sort=name]")
            assert visible_names(page) == ["Chat Llm", "Glossary Best", "Paid Api", "Rules Middle"]
            page.click("th[data-sort=name]")
            assert visible_names(page) == ["Rules Middle", "Paid Api", "Glossary Best", "Chat Llm"]
            assert page.get_attribute("th[data-sort=name]", "aria-sort") == "descending"
            page.click("th[data-sort=score]")
            scores = page.eval_on_selector_all("section.group tbody tr", "rows => rows.map(r => +r.dataset.score)")
            assert scores == sorted(scores)

            page.select_option("select[data-filter=class]", "raw-llm")
            assert visible_names(page) == ["Chat Llm"]
            page.select_option("select[data-filter=class]", "A2")
            assert visible_names(page) == ["Paid Api"]
            assert page.inner_text("#shown") == "1"
            page.select_option("select[data-filter=class]", "")
            assert len(visible_names(page)) == 4
            page.select_option("select[data-filter=pair]", "eng>spa")
            assert len(visible_names(page)) == 4
            page.fill("#search", "glossary best")
            assert visible_names(page) == ["Glossary Best"]
            page.fill("#search", "")

            screenshot = tmp_path / "leaderboard.png"
            page.screenshot(path=str(screenshot), full_page=True)
            assert screenshot.stat().st_size > 10_000
            print(f"\nleaderboard screenshot: {screenshot}")

            page.click("text=Glossary Best")
            assert page.url.endswith(".html") and "/cards/" in page.url
            assert page.inner_text("h1") == "Glossary Best"
            body = page.inner_text("body")
            assert "chrF++" in body and "unknown (not recorded by this run)" in body
            page.screenshot(path=str(tmp_path / "detail.png"), full_page=True)
            page.click("text=← leaderboard")
            assert page.url == site.as_uri()
        finally:
            browser.close()


def test_a_long_unbroken_name_wraps_within_the_page(cards, tmp_path: Path):
    """A method name, tool or URL without a space (a publisher's to choose) is broken to fit: the board keeps its
    score and eligibility columns on screen, and a detail page does not scroll sideways."""
    sync_api = pytest.importorskip("playwright.sync_api")
    executable = chromium()
    long_word = "W" * 300
    card = cards.card("long-name", method_card={"name": f"Long {long_word}", "tools_used": [long_word]})
    path = write_card(card, tmp_path / "cards" / "long.json")
    db = str(tmp_path / "board.db")
    with open_store(db) as store:
        store.publish([prepare(path, no_input=True).record], "2026-01-01T00:00:00+00:00")
    assert main(["leaderboard", "--db", db, "--out", str(tmp_path / "site"), "--quiet"]) == 0
    detail = next((tmp_path / "site" / "cards").glob("*.html"))
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=executable, args=FLAGS)
        try:
            page = browser.new_page(viewport={"width": 1024, "height": 768})
            for url in ((tmp_path / "site" / "index.html").as_uri(), detail.as_uri()):
                page.goto(url)
                assert page.evaluate("document.documentElement.scrollWidth") <= 1024, url
            page.goto((tmp_path / "site" / "index.html").as_uri())
            score = page.locator("section.group tbody tr td.n", has_text="[").first.bounding_box()
            assert score is not None and score["x"] + score["width"] <= 1024
        finally:
            browser.close()


def test_a_filter_in_the_address_that_no_row_has_shows_no_row(site: Path):
    """Before, `index.html?class=human` on a board without such a method left the class filter blank and showed
    every row: a shared link to one class read as if all the rows were of it."""
    sync_api = pytest.importorskip("playwright.sync_api")
    executable = chromium()
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=executable, args=FLAGS)
        try:
            page = browser.new_page()
            page.goto(site.as_uri() + "?class=human")
            assert visible_names(page) == [] and page.inner_text("#shown") == "0"
            assert page.eval_on_selector("select[data-filter=class]", "s => s.value") == "human"
            page.select_option("select[data-filter=class]", "")
            assert len(visible_names(page)) == 4
        finally:
            browser.close()


def test_a_board_of_many_corpora_keeps_its_page_within_the_window(tmp_path: Path):
    """The table across corpora has a column for each: before, eight corpora made the whole page scroll sideways;
    now that table scrolls in its own box, and its corpus headers wrap."""
    from mt_eval.leaderboard.synthetic import CardFactory, write_corpus

    sync_api = pytest.importorskip("playwright.sync_api")
    executable = chromium()
    paths = []
    for number in range(8):
        factory = CardFactory(write_corpus(tmp_path / f"corpus-{number}.json", name=f"corpus-with-a-long-name-{number}",
                                           seed=number), resamples=20)
        paths += [write_card(factory.card(method, quality=quality), tmp_path / "cards" / f"{method}-{number}.json")
                  for method, quality in (("alpha", 0.8), ("beta", 0.4))]
    db = str(tmp_path / "board.db")
    with open_store(db) as store:
        store.publish([prepare(p, no_input=True).record for p in paths], "2026-01-01T00:00:00+00:00")
    assert main(["leaderboard", "--db", db, "--out", str(tmp_path / "site"), "--quiet"]) == 0
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=executable, args=FLAGS)
        try:
            page = browser.new_page(viewport={"width": 1024, "height": 768})
            page.goto((tmp_path / "site" / "index.html").as_uri())
            assert "Across corpora" in page.inner_text("body")
            assert page.evaluate("document.documentElement.scrollWidth") <= 1024
        finally:
            browser.close()


@pytest.mark.parametrize("width", [600, 400])
def test_the_ranking_tables_scroll_in_their_own_box_on_a_narrow_window(site: Path, width: int):
    """A phone (400 px) or a narrow window (600 px): before, each group's table, whose score and date columns do not
    wrap, made the whole page scroll sideways; now each table scrolls in its own box, and the page fits."""
    sync_api = pytest.importorskip("playwright.sync_api")
    executable = chromium()
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=executable, args=FLAGS)
        try:
            page = browser.new_page(viewport={"width": width, "height": 800})
            page.goto(site.as_uri())
            assert page.evaluate("document.documentElement.scrollWidth") <= width
            boxes = page.eval_on_selector_all("section.group table", "tables => tables.map(t => "
                                              "getComputedStyle(t.parentElement).overflowX)")
            assert boxes and set(boxes) == {"auto"}
        finally:
            browser.close()
