"""`mt-eval leaderboard`: options that would be ignored are refused, a reader that goes away ends it as every
command ends, a board of some rows says so, a name's right-to-left override stays inside the name, and no escape
sequence a publisher wrote is printed with a page."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from leaderboard_support import db_fixture, publish_all  # noqa: F401 (db)
from mt_eval.cli import main


@pytest.mark.parametrize(("options", "said"), [
    (["--out", "SITE", "--json"], "argument --out: not allowed with --json: the site holds the board as index.html"),
    (["--out", "SITE", "--format", "html"], "argument --out: not allowed with --format html"),
    (["--out", "  "], "argument --out: is blank: give the directory to write the site into"),
    (["--force"], "argument --force: does nothing without --out DIR"),
    (["--port", "9000"], "argument --port: is the port of mt-eval leaderboard serve: add serve"),
    (["--title", "Team board"], "argument --title: titles the HTML pages, and the table has no title: add --format "
                                "html, --out DIR or serve, or leave --title out"),
    (["--title", "Team board", "--format", "table"], "argument --title: titles the HTML pages, and the table has no "
                                                     "title"),
    (["--title", "Team board", "--json"], "argument --title: titles the HTML pages, and JSON has no title"),
])
def test_options_that_would_be_ignored_are_refused(cards, tmp_path: Path, db: str, capsys, options: list[str],
                                                   said: str):
    """Before, each was ignored: `--out site --json` wrote the site and printed a line of text where a script read
    JSON, `--out "  "` printed the table (exit 0, no site; `--out ""` is refused as any empty path is), `--title`
    printed the table or the JSON without it."""
    publish_all(db, [cards.card("alpha")], tmp_path)
    site = tmp_path / "site"
    options = [str(site) if option == "SITE" else option for option in options]
    assert main(["leaderboard", "--db", db, *options]) == 2
    out, err = capsys.readouterr()
    assert out == "" and said in err and "usage: mt-eval leaderboard" in err
    assert not site.exists()


@pytest.mark.parametrize(("word", "said"), [
    ("server", "argument serve: got 'server': did you mean serve?"),
    ("board.db", "argument serve: got 'board.db': the only word it takes is serve; name a store with --db URL, the "
                 "directory of a site to write with --out DIR"),
    ("postgresql://board:s3cret@db.example.org/lb", "argument serve: got 'postgresql://board:***@db.example.org/lb'"),
])
def test_a_word_other_than_serve_says_what_was_meant(tmp_path: Path, capsys, word: str, said: str):
    """Before: `argument action: invalid choice: 'board.db' (choose from 'serve')`, naming an internal name and not
    the option a store (given as `mt-eval publish` takes its cards) is named with."""
    with pytest.raises(SystemExit) as stopped:
        main(["leaderboard", word, "--db", str(tmp_path / "board.db")])
    out, err = capsys.readouterr()
    assert (stopped.value.code, out) == (2, "") and said in err and "usage: mt-eval leaderboard" in err
    assert "s3cret" not in err and not (tmp_path / "board.db").exists()


@pytest.mark.parametrize(("options", "said"), [
    (["--out", "SITE"], "argument --out: not allowed with serve, which answers from the live store"),
    (["--json"], "argument --json: not allowed with serve, which serves every format"),
])
def test_serve_refuses_the_options_it_would_ignore(cards, tmp_path: Path, db: str, options: list[str], said: str):
    """Before, `serve --out site` served the board (and wrote no site) until it was stopped."""
    publish_all(db, [cards.card("alpha")], tmp_path)
    site = tmp_path / "site"
    options = [str(site) if option == "SITE" else option for option in options]
    done = subprocess.run([sys.executable, "-m", "mt_eval.cli", "leaderboard", "serve", "--port", "0", "--db", db,
                           *options], capture_output=True, text=True, timeout=60)
    assert (done.returncode, done.stdout) == (2, "") and said in done.stderr
    assert not site.exists()


def test_the_options_that_go_together_still_do(cards, tmp_path: Path, db: str, capsys):
    publish_all(db, [cards.card("alpha")], tmp_path)
    assert main(["leaderboard", "--db", db, "--out", str(tmp_path / "site"), "--force", "--quiet"]) == 0
    assert main(["leaderboard", "--db", db, "--format", "table"]) == 0
    assert main(["leaderboard", "--db", db, "--json"]) == 0
    assert '"cards": 1' in capsys.readouterr().out
    assert main(["leaderboard", "--db", db, "--format", "html", "--title", "Team & board"]) == 0
    assert "<title>Team &amp; board</title>" in capsys.readouterr().out
    assert main(["leaderboard", "--db", db, "--format", "html"]) == 0
    assert "<title>mt-eval leaderboard</title>" in capsys.readouterr().out


def test_a_board_whose_reader_went_away_ends_with_141_and_nothing_said(cards, tmp_path: Path, db: str):
    """Before: `mt-eval leaderboard | head -1` exited 1 with nothing said (rich's own handling of the closed pipe),
    the status of a store that cannot be read, where every other command stops with 141."""
    publish_all(db, [cards.card(f"m{i}", variant=i) for i in range(3)], tmp_path)
    read, write = os.pipe()
    os.close(read)  # (the reader is gone before anything is written)
    done = subprocess.run([sys.executable, "-m", "mt_eval.cli", "leaderboard", "--db", db], stdout=write,
                          stderr=subprocess.PIPE, text=True, timeout=60)
    os.close(write)
    assert (done.returncode, done.stderr) == (141, "")


def test_a_filtered_page_says_which_cards_it_shows_and_that_none_match(cards, tmp_path: Path, db: str, capsys):
    """Before, the page of a filter that matched nothing said no run card was published yet."""
    publish_all(db, [cards.card("alpha")], tmp_path)
    assert main(["leaderboard", "--db", db, "--format", "html", "--corpus", "nosuch"]) == 0
    page = capsys.readouterr().out
    assert "No run cards match <code>--corpus nosuch</code>" in page and "published yet" not in page
    assert main(["leaderboard", "--db", db, "--format", "html", "--class", "pipeline"]) == 0
    page = capsys.readouterr().out
    assert "only the run cards matching <code>--class pipeline</code>" in page and "No run cards" not in page
    assert main(["leaderboard", "--db", db, "--format", "html"]) == 0
    assert "only the run cards matching" not in capsys.readouterr().out


def test_an_empty_store_says_no_card_is_published_yet_and_a_filter_on_it_that_none_match(tmp_path: Path, capsys):
    """Before, the table of a store without cards said "No run cards match", no filter given, where its page said
    none was published yet."""
    from mt_eval.leaderboard.store import open_store

    db = str(tmp_path / "empty.db")
    open_store(db).close()  # (a store made, its cards not yet published)
    assert main(["leaderboard", "--db", db]) == 0
    assert capsys.readouterr().out == "No run cards are published yet: mt-eval publish runs/NAME/card.json\n"
    assert main(["leaderboard", "--db", db, "--class", "A2"]) == 0
    assert capsys.readouterr().out == ("No run cards match --class A2: the store holds none yet (mt-eval publish "
                                       "runs/NAME/card.json).\n")  # (before, as if the filter were at fault)


def test_class_x_is_refused_as_never_shown_not_as_no_class(tmp_path: Path, db: str, capsys):
    """Before, `--class X` was "not a class", though X is one: the class the board never shows."""
    assert main(["leaderboard", "--db", db, "--class", "X"]) == 2
    assert capsys.readouterr().err.startswith("mt-eval leaderboard: --class X: class X methods never appear on the "
                                              "board; choose from raw-llm, ")


def test_a_store_of_class_x_cards_alone_does_not_say_none_is_published(cards, tmp_path: Path, db: str, capsys):
    """Before, its table and its page said no run card was published yet, beside the count of the hidden ones."""
    publish_all(db, [cards.card("secret-weights", dependency_class="X")], tmp_path)
    assert main(["leaderboard", "--db", db]) == 0
    assert capsys.readouterr().out == ("No run cards to show.\n1 class X run card(s) not shown: class X methods never "
                                       "appear.\n")
    assert main(["leaderboard", "--db", db, "--format", "html"]) == 0
    page = capsys.readouterr().out
    assert "(1 hidden)" in page and "<p>No run cards to show.</p>" in page and "published yet" not in page


def test_the_filters_are_echoed_as_typed_again_quoted_in_one_form_and_escaped_on_the_page(cards, tmp_path: Path,
                                                                                          db: str, capsys):
    """Before: `--pair en>es` unquoted (typed again, the shell took > for a redirection), and the table of a filtered
    board did not say it was filtered."""
    publish_all(db, [cards.card("alpha", method_class="pipeline")], tmp_path)
    for spelling in ("en:es", "en>es", "EN-es"):
        assert main(["leaderboard", "--db", db, "--pair", spelling, "--class", "pipeline"]) == 0
        table = capsys.readouterr().out
        assert table.startswith("Only the run cards matching --pair 'en>es' --class pipeline.\n") and "Alpha" in table
        assert main(["leaderboard", "--db", db, "--format", "html", "--pair", spelling]) == 0
        assert "only the run cards matching <code>--pair &#x27;en&gt;es&#x27;</code>" in capsys.readouterr().out
    assert main(["leaderboard", "--db", db, "--pair", "en:es", "--corpus", "WMT 24 <b>"]) == 0
    assert capsys.readouterr().out.startswith("No run cards match --pair 'en>es' --corpus 'WMT 24 <b>'; the store "
                                              "holds 1 (corpora: synthetic; pairs: eng>spa)")
    assert main(["leaderboard", "--db", db, "--format", "html", "--corpus", "WMT 24 <b>"]) == 0
    assert "No run cards match <code>--corpus &#x27;WMT 24 &lt;b&gt;&#x27;</code>." in capsys.readouterr().out
    assert main(["leaderboard", "--db", db]) == 0
    assert "Only the run cards matching" not in capsys.readouterr().out


def test_a_right_to_left_override_in_a_name_turns_only_the_name_around(cards, tmp_path: Path, db: str, capsys):
    """Before, a method named with U+202E turned around what followed it: the class badges beside it on the page
    (`pipeline · S` read `S · enilepip`), the rest of the title, and on a terminal the table's borders."""
    publish_all(db, [cards.card("evil", method_card={"name": "Evil \u202e"})], tmp_path)
    assert main(["leaderboard", "--db", db, "--format", "html"]) == 0
    page = capsys.readouterr().out
    assert "<b><bdi>Evil \u202e</bdi></b> <span class=b>pipeline</span>" in page
    assert "<h2><bdi>synthetic</bdi>" in page
    site = tmp_path / "site"
    assert main(["leaderboard", "--db", db, "--out", str(site)]) == 0
    detail = next((site / "cards").glob("*.html")).read_text(encoding="utf-8")
    assert "<title>\u2068Evil \u202e\u2069 — \u2068synthetic\u2069</title>" in detail
    assert "<h1><bdi>Evil \u202e</bdi></h1>" in detail
    capsys.readouterr()
    assert main(["leaderboard", "--db", db]) == 0
    out = capsys.readouterr().out
    assert "Evil \\u202e" in out and "\u202e" not in out


def test_an_escape_sequence_in_a_method_card_reaches_no_terminal_through_the_page(cards, tmp_path: Path, db: str,
                                                                                   capsys):
    """A page printed on a terminal (--format html) carried a publisher's ESC and BEL as they were: a name or a
    description could set the terminal's title or write its clipboard. They are character references now, which a
    browser reads back as the characters."""
    osc = "\x1b]52;c;ZWNobyBwd25lZA==\x07"  # (OSC 52: write the clipboard)
    publish_all(db, [cards.card("evil", method_card={"name": f"Evil{osc}", "description": f"about{osc}",
                                                     "tools_used": [f"tool{osc}"]})], tmp_path)
    assert main(["leaderboard", "--db", db, "--format", "html"]) == 0
    page = capsys.readouterr().out
    assert "\x1b" not in page and "\x07" not in page
    assert "<bdi>Evil&#x1b;]52;c;ZWNobyBwd25lZA==&#x7;</bdi>" in page and "tool&#x1b;]52" in page
    site = tmp_path / "site"
    assert main(["leaderboard", "--db", db, "--out", str(site)]) == 0
    detail = next((site / "cards").glob("*.html")).read_text(encoding="utf-8")
    assert "\x1b" not in detail and "<dd>about&#x1b;]52;c;ZWNobyBwd25lZA==&#x7;</dd>" in detail


@pytest.mark.parametrize("url", ["javascript:alert(document.domain)", " JavaScript:alert(1)", "data:text/html,<b>x</b>",
                                 "//evil.example/x"])
def test_an_open_source_address_that_is_no_web_address_is_not_linked(url: str):
    """Before, a store written before such addresses were refused (or edited by hand) made the board's "open" a
    link that ran a script when clicked; now only an http(s) address is a link, another is shown as its title."""
    from mt_eval.leaderboard.html import escape, open_source

    cell = open_source({"open_source": True, "open_source_url": url})
    assert "href" not in cell and cell == f'<span class="yes" title="{escape(url)}">open</span>'
    linked = open_source({"open_source": True, "open_source_url": "https://example.org/code", "method_name": "Lex"})
    assert linked == '<a class="yes" href="https://example.org/code">open<span class=vh>: the code of Lex</span></a>'


@pytest.mark.parametrize(("option", "what"), [("--hardware", "the text its label must contain (A100)"),
                                              ("--corpus", "a corpus's name or a prefix of its sha256")])
@pytest.mark.parametrize("blank", ["", "  "])
def test_a_blank_hardware_or_corpus_is_refused(db: str, capsys, option: str, what: str, blank: str):
    """Before, `--hardware "$GPU"` with GPU unset was a condition every row met (and "  " one none did: "hardware
    is not   "), and a blank --corpus a filter no row matched, each with exit 0."""
    with pytest.raises(SystemExit) as exited:
        main(["leaderboard", "--db", db, option, blank])
    assert exited.value.code == 2
    assert (f"argument {option}: {blank!r} is blank (a variable meant to hold it that is unset or empty?): give "
            f"{what}, or leave the option out") in capsys.readouterr().err
