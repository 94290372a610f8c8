"""`mt-eval verify` (and publishing, which calls it) reads a card's corpus the way the run read it: the same
files, --columns and selection, integer ids matched by their text."""

from __future__ import annotations

import json
from pathlib import Path

from gate_policies import LENIENT
from mt_eval.cli import main
from mt_eval.harness.verify import canonical_sha256, verify_card

HERE = Path(__file__).parent
FIXTURES = HERE / "fixtures" / "corpora"
SCRIPTED = str(HERE / "fixtures" / "methods")  # copies the source


def run(tmp_path: Path, out: str, *args: str) -> Path:
    assert main(["run", "--method", SCRIPTED, "--pair", "eng>spa", "--out", str(tmp_path / out), "--resamples", "50",
                 "--quiet", *LENIENT, *args]) == 0
    return tmp_path / out / "card.json"


def test_cards_of_every_reading_verify_from_what_they_record(tmp_path: Path, capsys):
    cards = [
        run(tmp_path, "ints", "--corpus", str(FIXTURES / "upstream.json")),
        run(tmp_path, "selection", "--corpus", str(FIXTURES / "upstream.json"), "--ids", "2..10", "--limit", "9"),
        run(tmp_path, "segment", "--corpus", str(FIXTURES / "no-ids.jsonl"), "--segment", "greetings"),
        run(tmp_path, "parallel", "--source-file", str(FIXTURES / "parallel.eng"),
            "--reference-file", str(FIXTURES / "parallel.spa")),
        run(tmp_path, "columns", "--corpus", str(FIXTURES / "old-three-column.tsv"),
            "--columns", "id,source,reference"),
        run(tmp_path, "translate-only", "--corpus", str(FIXTURES / "reference-free.tsv")),
    ]
    for card in cards:
        verification = verify_card(card)
        assert verification.ok, (card, verification.problems)
    capsys.readouterr()
    assert main(["verify", *map(str, cards)]) == 0
    assert main(["verify", str(cards[3]), "--source-file", str(FIXTURES / "parallel.eng"),
                 "--reference-file", str(FIXTURES / "parallel.spa")]) == 0


def test_a_card_whose_selection_was_edited_does_not_verify(tmp_path: Path):
    card_path = run(tmp_path, "selection", "--corpus", str(FIXTURES / "upstream.json"), "--ids", "2,10")
    data = json.loads(card_path.read_text())
    data["selection"]["ids"] = [1, 2]  # claims other entries than it ran
    data["content_sha256"] = canonical_sha256(data)
    card_path.write_text(json.dumps(data))
    verification = verify_card(card_path)
    assert not verification.ok
    assert any(p.path == "$.selection.subset_sha256" for p in verification.problems), verification.problems
    data["selection"]["entries_selected"] = 3
    data["selection"].update(ids=[2, 10])
    data["content_sha256"] = canonical_sha256(data)
    card_path.write_text(json.dumps(data))
    assert any(p.path == "$.selection.entries_selected" for p in verify_card(card_path).problems)


def test_a_parallel_card_given_the_wrong_reference_file_does_not_verify(tmp_path: Path, capsys):
    card = run(tmp_path, "parallel", "--source-file", str(FIXTURES / "parallel.eng"),
               "--reference-file", str(FIXTURES / "parallel.spa"))
    capsys.readouterr()
    assert main(["verify", str(card), "--source-file", str(FIXTURES / "parallel.eng"),
                 "--reference-file", str(FIXTURES / "parallel-short.spa")]) == 1
    assert "has 4 lines but" in capsys.readouterr().out
    assert main(["verify", str(card), "--corpus", str(FIXTURES / "two-column.tsv")]) == 1
    assert "sha256 differs" in capsys.readouterr().out


def with_ids(tmp_path: Path, rows: list[tuple[str, str]], listed: str) -> tuple[Path, Path]:
    """A corpus of ``rows`` (id, source; the reference its upper case) and an ids file holding ``listed``."""
    corpus, ids = tmp_path / "odd-ids.jsonl", tmp_path / "ids.txt"
    corpus.write_text("".join(json.dumps({"id": i, "source": s, "reference": s.upper()}) + "\n" for i, s in rows))
    ids.write_text(listed)
    return corpus, ids


def test_a_selection_of_ids_with_commas_spaces_or_a_leading_at_verifies_and_compares(tmp_path: Path, capsys):
    """The run took `--ids 'a,b' --ids c`, `--ids @FILE` with " x" and an id "@home"; verify and compare
    re-selected with the ids joined by commas, split again ("no entry has the ids a, b") and refused the card."""
    corpus, listed = with_ids(tmp_path, [("a,b", "Good morning."), (" x", "Thank you."), ("@home", "Good night."),
                                         ("c", "See you."), ("d", "Bye.")], " x\n@home\n")
    cards = [run(tmp_path, "commas", "--corpus", str(corpus), "--ids", "a,b", "--ids", "c"),
             run(tmp_path, "listed", "--corpus", str(corpus), "--ids", f"@{listed}", "--ids", "d")]
    assert [json.loads(card.read_text())["selection"]["ids"] for card in cards] == [["a,b", "c"], [" x", "@home", "d"]]
    for card in cards:
        assert verify_card(card).ok, verify_card(card).problems
    again = run(tmp_path, "again", "--corpus", str(corpus), "--ids", "c", "--ids", "a,b")
    capsys.readouterr()
    assert main(["compare", str(cards[0]), str(again)]) == 0
    assert main(["compare", str(cards[0]), str(cards[1])]) != 0  # (different entries: said with options that work)
    shown = capsys.readouterr().err
    assert "(A: 2 of 5 entries: --ids c --ids a,b, " in shown
    assert "B: 3 of 5 entries: --ids ,@home,d --ids ' x', " in shown


def test_a_selection_is_made_again_from_its_exact_ids_whatever_they_hold(tmp_path: Path):
    """`--ids 1 --ids 2` on a corpus that also has the id "1,2": re-selected as the value "1,2", it chose that entry
    and the card did not verify; an id "@a,b" was read as a file to open."""
    corpus, listed = with_ids(tmp_path, [("1", "One."), ("2", "Two."), ("1,2", "One and two."), ("@a,b", "At."),
                                         ("x", "Ex.")], "@a,b\n")
    cards = [run(tmp_path, "joined", "--corpus", str(corpus), "--ids", "1", "--ids", "2"),
             run(tmp_path, "at", "--corpus", str(corpus), "--ids", f"@{listed}")]
    for card in cards:
        assert verify_card(card).ok, verify_card(card).problems


def test_an_integer_id_beyond_what_javascript_holds_exactly_is_recorded_as_its_text(tmp_path: Path):
    """Tweet ids: 1234567890123456789 read by JavaScript (the leaderboard's page, a Node reader of the card) is
    1234567890123456800, and two neighbours become one. Before, the card kept it as an integer."""
    corpus = tmp_path / "ids.jsonl"
    big, neighbour = 1234567890123456789, 1234567890123456790
    corpus.write_text("".join(json.dumps({"id": i, "source": f"Text {n}.", "reference": f"Texto {n}."}) + "\n"
                              for n, i in enumerate([7, big, neighbour, -big])))
    card_path = run(tmp_path, "big", "--corpus", str(corpus), "--ids", f"7,{big},{neighbour},{-big}")
    ids = [r["id"] for r in json.loads(card_path.read_text())["results"]]
    assert ids == [7, str(big), str(neighbour), str(-big)]  # (an id JavaScript holds exactly stays an integer)
    verification = verify_card(card_path)
    assert verification.ok, verification.problems
