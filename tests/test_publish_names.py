"""Names as a board shows them: printed as written, never obeyed (rich markup, terminal escapes), refused alike on
every backend when they hold a control character; and ``--fail-fast`` run again after a fix carries on."""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path

from mt_eval.cli import main
from mt_eval.harness import verify
from mt_eval.leaderboard.store import open_store
from mt_eval.leaderboard.synthetic import CardFactory, write_card, write_corpus


def resealed(path: Path, change) -> Path:
    data = json.loads(path.read_text())
    change(data)
    data["content_sha256"] = verify.canonical_sha256(data)
    path.write_text(json.dumps(data))
    return path


def test_a_corpus_name_with_a_control_character_is_refused_when_read(tmp_path: Path, capsys):
    """Before, ESC sequences in a dataset's name reached the terminal from `run`, `publish` and `leaderboard`."""
    corpus = write_corpus(tmp_path / "corpus.json", name="news\x1b]0;pwned\x07\x1b[31mRED")
    assert main(["corpus", "show", str(corpus)]) != 0
    err = capsys.readouterr().err
    assert "$.dataset.name: the corpus's name 'news\\x1b]0;pwned\\x07\\x1b[31mRED' holds the control character " \
           "U+001B" in err and "write it without control characters" in err and "\x1b" not in err


def test_a_sealed_card_whose_names_hold_control_characters_is_refused_alone_on_both_backends(
        cards, tmp_path: Path, store_url: str, capsys):
    """Before, on PostgreSQL a NUL in the corpus name failed the whole batch, blaming the store; SQLite stored it."""
    good = [write_card(cards.card(f"m-{i}", quality=0.5, run_id=f"run-{i}"), tmp_path / f"r{i}" / "card.json")
            for i in range(2)]
    nul = resealed(write_card(cards.card("m-nul", quality=0.5, run_id="run-nul"), tmp_path / "nul" / "card.json"),
                   lambda data: data["corpus"].update(name="syn\x00thetic"))
    assert main(["publish", str(good[0]), str(nul), str(good[1]), "--db", store_url, "--no-input"]) == 1
    err = capsys.readouterr().err
    assert f"{nul}: its corpus_name holds the control character U+0000 ('syn\\x00thetic'), which a board cannot " \
           "show; remove it from the corpus's name" in err
    with open_store(store_url) as store:
        assert sorted(r["run_id"] for r in store.rows()) == ["run-0", "run-1"]


def test_the_text_board_prints_names_with_brackets_as_written(tmp_path: Path, capsys, monkeypatch):
    """Before, rich read them as markup: `[/x]` ended `mt-eval leaderboard` in a MarkupError, `[test]` vanished."""
    factory = CardFactory(write_corpus(tmp_path / "corpus.json", name="news[test] <b>"), resamples=100)
    db = str(tmp_path / "board.db")
    for index, name in enumerate(["Lexicon [/x] v2", "[bold red]styled[/]"]):
        card = write_card(factory.card(f"m-{index}", quality=0.5 + index / 4, run_id=f"run-{index}"),
                          tmp_path / f"r{index}" / "card.json")
        resealed(card, lambda data, name=name: data["method"]["card"].update(name=name))
        assert main(["publish", str(card), "--db", db, "--no-input"]) == 0, capsys.readouterr().err
    capsys.readouterr()
    monkeypatch.setenv("COLUMNS", "200")  # (no cell wrapped)
    assert main(["leaderboard", "--db", db]) == 0
    out = capsys.readouterr().out
    assert "news[test] <b>" in out and "Lexicon [/x] v2" in out and "[bold red]styled[/]" in out


def test_fail_fast_run_again_after_the_fix_carries_on_past_the_cards_stored(cards, tmp_path: Path, capsys):
    """Before, the first card, stored by the first run, stopped every later one: the advice never worked."""
    paths = [write_card(cards.card(f"m-{i}", quality=0.5, run_id=f"run-{i}"), tmp_path / f"r{i}" / "card.json")
             for i in range(6)]
    original = paths[3].read_text()
    tampered = json.loads(original)
    tampered["results"][0]["predicted"] = "edited"
    paths[3].write_text(json.dumps(tampered))
    db = str(tmp_path / "board.db")
    assert main(["publish", *map(str, paths), "--db", db, "--no-input", "--fail-fast"]) == 1
    assert "stopped at" in capsys.readouterr().err
    paths[3].write_text(original)
    assert main(["publish", *map(str, paths), "--db", db, "--no-input", "--fail-fast", "--json"]) == 1
    assert [c["status"] for c in json.loads(capsys.readouterr().out)] == ["duplicate"] * 3 + ["published"] * 3
    with open_store(db) as store:
        assert store.count() == 6


def test_the_text_board_shows_a_control_character_stored_earlier_as_its_escape(cards, tmp_path: Path, capsys,
                                                                                 monkeypatch):
    """A store written before such names were refused: the terminal is not told to act on them."""
    import sqlite3

    db = str(tmp_path / "board.db")
    card = write_card(cards.card("m-0", quality=0.5, run_id="run-0"), tmp_path / "r" / "card.json")
    assert main(["publish", str(card), "--db", db, "--no-input"]) == 0
    with sqlite3.connect(db) as connection:
        connection.execute("UPDATE cards SET row_json = json_set(row_json, '$.corpus_name', ?)", ("x\x1b[31mRED",))
    capsys.readouterr()
    monkeypatch.setenv("COLUMNS", "200")
    assert main(["leaderboard", "--db", db]) == 0
    out = capsys.readouterr().out
    assert "x\\x1b[31mRED (eng>spa)" in out and "\x1b" not in out


def test_characters_that_turn_text_around_are_shown_escaped_and_stored_as_written(tmp_path: Path, capsys):
    """Before, publish printed a corpus's name holding U+202E raw: the terminal showed the rest of its line turned
    around ('news‮exe.gpj' read as 'newsjpg.exe'); the table of the board escaped it already."""
    factory = CardFactory(write_corpus(tmp_path / "corpus.json", name="news\u202egpj.exe"), resamples=100)
    paths = [write_card(factory.card(f"m-{i}", quality=0.5, run_id=f"run-{i}"), tmp_path / f"r{i}" / "card.json")
             for i in range(2)]
    db = str(tmp_path / "board.db")
    assert main(["publish", str(paths[0]), "--db", db, "--no-input"]) == 0
    out = capsys.readouterr().out
    assert "published #1 m-0 on news\\u202egpj.exe (eng>spa)" in out and "\u202e" not in out
    assert main(["publish", str(paths[1]), "--db", db, "--no-input", "--json"]) == 0
    out = capsys.readouterr().out
    assert "\u202e" not in out and "on news\\\\u202egpj.exe" not in out  # (JSON's escape: read back as U+202E)
    assert json.loads(out)[0]["message"].startswith("published #2 m-1 on news\u202egpj.exe (eng>spa)")
    assert main(["leaderboard", "--db", db, "--corpus", "other"]) == 0
    out = capsys.readouterr().out
    assert "(corpora: news\\u202egpj.exe;" in out and "\u202e" not in out
    assert main(["leaderboard", "--db", db, "--json"]) == 0
    out = capsys.readouterr().out
    assert "\u202e" not in out and json.loads(out)["groups"][0]["corpus_name"] == "news\u202egpj.exe"
    with open_store(db) as store:
        assert {row["corpus_name"] for row in store.rows()} == {"news\u202egpj.exe"}


def test_a_refusal_and_the_wizard_show_a_cards_invisible_characters_escaped(cards, tmp_path: Path, capsys,
                                                                            monkeypatch):
    """Before, the reason a card was refused quoted its method_id raw, and the wizard offered its method's name
    raw as the answer to keep; Enter keeps the name as it is written."""
    odd = write_card(cards.card("m\u202e-0", run_id="run-odd"), tmp_path / "odd" / "card.json")
    db = str(tmp_path / "board.db")
    assert main(["publish", str(odd), "--db", db, "--no-input"]) == 1
    err = capsys.readouterr().err
    assert '"m\\u202e-0" is not kebab-case' in err and "\u202e" not in err
    unseen = ["\u2066", "\u202e", "\u2069", "\u200b", "\ufeff", "\U000e0041"]  # (isolate, override, ZWSP, BOM, tag)
    named = {"name": "Lexicon {}{}gpj.exe{} {}{}{}".format(*unseen)}
    bare = write_card(cards.card("bare", bare=True, method_card=named, run_id="run-bare"), tmp_path / "r" / "card.json")
    monkeypatch.setattr(sys, "stdin", io.StringIO("\n".join(["", "A glossary", "llm", "none", "no", "MIT"]) + "\n"))
    assert main(["publish", str(bare), "--db", db]) == 0
    err = capsys.readouterr().err
    assert "Method name [Lexicon \\u2066\\u202egpj.exe\\u2069 \\u200b\\ufeff\\U000e0041]: " in err
    assert not set(err) & set(unseen)
    with open_store(db) as store:
        assert [row["method_name"] for row in store.rows()] == [named["name"]]


def test_the_joiners_that_write_words_and_emoji_are_shown_as_they_are():
    """What is escaped for a terminal is what is not seen; the joiners of Persian words and emoji are kept."""
    from mt_eval.control_chars import escaped_for_terminal

    assert escaped_for_terminal("می\u200cخواهم 👩\u200d💻\n") == "می\u200cخواهم 👩\u200d💻\n"
    assert escaped_for_terminal("soft\u00adhyphen\u2028line\x1b[0m") == "soft\\xadhyphen\\u2028line\\x1b[0m"


def test_the_node_kit_escapes_every_character_python_escapes_and_no_other():
    """The Node kit holds its own copy of `mt_eval.control_chars.INVISIBLE` (bridge/node/lib/champollion/report.js):
    every code point goes through both sides' escaping, for a terminal and in JSON, so that a character added to
    one list and not the other is named here."""
    import shutil
    import subprocess

    import pytest

    from mt_eval.cli.json_output import unseen_escaped
    from mt_eval.control_chars import escaped_for_terminal

    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed")
    report = Path(__file__).parent.parent / "bridge" / "node" / "lib" / "champollion" / "report.js"
    script = (f"import {{ escapedForTerminal, unseenEscaped }} from {json.dumps(report.as_uri())};\n"
              "const shown = { terminal: [], json: [] };\n"
              "for (let code = 0; code <= 0x10ffff; code += code === 0xd7ff ? 0x801 : 1) {\n"
              "  const text = String.fromCodePoint(code);\n"
              "  for (const [side, escape] of [['terminal', escapedForTerminal], ['json', unseenEscaped]]) {\n"
              "    if (escape(text) !== text) shown[side].push([code, escape(text)]);\n"
              "  }\n"
              "}\n"
              "process.stdout.write(JSON.stringify(shown));\n")
    done = subprocess.run([node, "--input-type=module", "-e", script], capture_output=True, text=True, timeout=120,
                          check=True)
    every = [chr(code) for code in range(0x110000) if not 0xD800 <= code <= 0xDFFF]  # (no surrogates: no text)
    python = {side: [[ord(text), escaped] for text in every if (escaped := escape(text)) != text]
              for side, escape in (("terminal", escaped_for_terminal), ("json", unseen_escaped))}
    node_kit = json.loads(done.stdout)
    for side in ("terminal", "json"):
        only_python = [f"U+{code:04X}" for code, escaped in python[side] if [code, escaped] not in node_kit[side]]
        only_node = [f"U+{code:04X}" for code, escaped in node_kit[side] if [code, escaped] not in python[side]]
        assert (only_python, only_node) == ([], []), f"{side}: escaped differently by Python / by Node"
    assert len(python["terminal"]) > 190 and ord("\u202e") in {code for code, _ in python["json"]}


def test_a_line_break_in_a_cards_path_is_shown_escaped_on_the_line_that_names_it(cards, tmp_path: Path, capsys,
                                                                                 monkeypatch):
    """Before, a card's path with a line break in it (ESC was escaped) cut the line that names it in two."""
    monkeypatch.chdir(tmp_path)
    card = write_card(cards.card("alpha"), Path("run\nA") / "card.json")
    db = str(tmp_path / "board.db")
    assert main(["publish", str(card), "--db", db, "--no-input"]) == 0
    capsys.readouterr()
    assert main(["publish", str(card), "missing\nB.json", "--db", db, "--no-input"]) == 1
    err = capsys.readouterr().err
    assert "refused run\\nA/card.json: already published as #1 on " in err
    assert "mt-eval publish: missing\\nB.json: cannot read it: No such file or directory" in err
    assert "not published (each said above): run\\nA/card.json (duplicate), missing\\nB.json (refused)" in err
    assert "run\nA" not in err and "missing\nB" not in err
    assert main(["publish", "missing\nB.json", str(card), "--db", db, "--no-input", "--fail-fast"]) == 1
    err = capsys.readouterr().err
    assert "mt-eval publish: stopped at missing\\nB.json (--fail-fast)" in err and "missing\nB" not in err
    assert main(["leaderboard", "--db", db, "--out", "site\nC", "--quiet"]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"wrote {tmp_path}/site\\nC/index.html (1 run card, 1 detail page); open ")
    assert out.count("\n") == 1
