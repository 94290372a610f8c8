"""Language pairs as people type them, in the commands they type: 'eng>spa' quoted, eng:spa, eng-spa and
champollion's en:es; an unquoted > pointed out; a --pair contradicting the corpus refused unless confirmed; a
pair the method does not support named with the ones it does."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from gate_policies import LENIENT
from mt_eval.pairs import PairError, parse_pair, same_languages, supported_form

REPO = Path(__file__).parent.parent
LEXICON = str(REPO / "examples" / "lexicon-eng-spa")
DEMO = str(REPO / "examples" / "data" / "eng-spa-demo.json")  # declares eng>spa


def mt_eval(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "mt_eval.cli", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=120)


@pytest.mark.parametrize(("typed", "pair"), [
    ("eng>spa", "eng>spa"), ("eng:spa", "eng>spa"), ("eng-spa", "eng>spa"), (" eng -> spa ", "eng>spa"),
    ("eng→spa", "eng>spa"), ("ENG:SPA", "eng>spa"), ("en:es", "en>es"), ("en:pt-BR", "en>pt-BR"),
    ("pt-BR-es", "pt-BR>es"), ("en_GB:es", "en-GB>es")])
def test_every_spelling_is_read_as_source_and_target(typed, pair):
    assert parse_pair(typed) == pair


@pytest.mark.parametrize(("typed", "message"), [
    ("eng", "'eng' is not a language pair: write source and target, e.g. --pair 'eng>spa' (or --pair eng:spa)"),
    ("", "an empty pair"),
    ("eng>", "the target language is nothing"),
    ("en-gb-es", "'en-gb-es' can be read as 'en>gb-es' or 'en-gb>es': write it with > (quoted) or :"),
    ("English>Spanish", "the source language is 'English', not a language code such as eng or en")])
def test_what_is_not_a_pair_says_how_to_write_one(typed, message):
    with pytest.raises(PairError) as caught:
        parse_pair(typed)
    assert message in str(caught.value)


def test_iso_639_1_and_639_3_name_the_same_languages():
    assert same_languages("en>es", "eng>spa") and same_languages("en:es", "eng>spa")
    assert not same_languages("eng>spa", "spa>eng") and not same_languages("eng>spa", "eng>fra")
    assert supported_form("en>es", ["spa>eng", "eng>spa"]) == "eng>spa"
    assert supported_form("fra>deu", ["eng>spa"]) is None and supported_form("fra>deu", []) == "fra>deu"


@pytest.mark.parametrize("typed", ["eng:spa", "eng-spa", "en:es", "'eng>spa'"])
def test_mt_eval_run_takes_each_spelling(tmp_path, typed):
    done = subprocess.run(f"{sys.executable} -m mt_eval.cli run --method {LEXICON} --corpus {DEMO} --pair {typed} "
                          f"--out run --no-contamination-check --quiet", shell=True, cwd=tmp_path,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    card = json.loads((tmp_path / "run" / "card.json").read_text(encoding="utf-8"))
    assert card["corpus"]["pair"] == "eng>spa"


def test_an_unquoted_pair_is_pointed_out(tmp_path):
    done = subprocess.run(f"{sys.executable} -m mt_eval.cli run --method {LEXICON} --corpus {DEMO} --pair eng>spa",
                          shell=True, cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert done.returncode == 2
    assert "usage: mt-eval run" in done.stderr
    assert ("the shell read the unquoted > as a redirection: this command's output is going into a file named spa; "
            "quote the pair, --pair 'eng>spa', and remove the file spa") in done.stderr
    assert (tmp_path / "spa").exists()


def test_a_pair_contradicting_the_corpus_is_refused_unless_confirmed(tmp_path):
    refused = mt_eval("run", "--method", LEXICON, "--corpus", DEMO, "--pair", "spa:eng", "--out", str(tmp_path / "r"))
    assert refused.returncode == 1
    assert ("the corpus declares the pair 'eng>spa', but --pair says 'spa>eng'; leave out --pair to use 'eng>spa', "
            "or correct --pair; if the file is really meant this way, add --accept-doubt pair-mismatch") \
        in refused.stderr
    assert not (tmp_path / "r").exists()
    unsupported = mt_eval("run", "--method", LEXICON, "--corpus", DEMO, "--pair", "spa:eng", "--accept-doubt",
                          "pair-mismatch", "--out", str(tmp_path / "r"))
    assert unsupported.returncode == 1
    assert ("lexicon-eng-spa supports 'eng>spa', not 'spa>eng': choose one with --pair (e.g. --pair 'eng>spa') or "
            "use a corpus in a supported pair") in unsupported.stderr
    assert "supports any" not in unsupported.stderr


def test_a_confirmed_contradiction_is_recorded_in_the_card(tmp_path):
    plugin = tmp_path / "any-pair"
    plugin.mkdir()
    (plugin / "method.json").write_text(json.dumps({"name": "Any", "entry_point": "pipeline:Echo",
                                                    "dependency_class": "S", "dependencies": []}), encoding="utf-8")
    (plugin / "pipeline.py").write_text("class Echo:\n    async def translate(self, entries, config):\n"
                                        "        return [{'id': e['id'], 'predicted': e['source']} for e in entries]\n",
                                        encoding="utf-8")
    done = mt_eval("run", "--method", str(plugin), "--corpus", DEMO, "--pair", "fra-deu", "--accept-doubt",
                   "pair-mismatch", "--out", str(tmp_path / "run"), "--no-contamination-check", *LENIENT)
    assert done.returncode == 0, done.stderr
    card = json.loads((tmp_path / "run" / "card.json").read_text(encoding="utf-8"))
    assert card["corpus"]["pair"] == "fra>deu"
    assert "pair-mismatch" in card["corpus"]["reading"]["accepted_doubts"]


def test_no_pair_anywhere_says_so_without_blaming_the_method(tmp_path):
    plugin = tmp_path / "any-pair"
    plugin.mkdir()
    (plugin / "method.json").write_text(json.dumps({"name": "Any", "entry_point": "pipeline:Echo"}), encoding="utf-8")
    (plugin / "pipeline.py").write_text("class Echo:\n    async def translate(self, entries, config):\n"
                                        "        return []\n", encoding="utf-8")
    data = tmp_path / "c.jsonl"
    data.write_text('{"id": "1", "source": "Hello", "reference": "Hola"}\n', encoding="utf-8")
    done = mt_eval("run", "--method", str(plugin), "--corpus", str(data), "--out", str(tmp_path / "run"))
    assert done.returncode == 1
    assert ("no language pair: the corpus does not declare one and the method lists no supported_pairs; give one, "
            "e.g. --pair 'eng>spa' (or --pair eng:spa)") in done.stderr


def test_translate_corpus_show_and_leaderboard_take_the_same_spellings(tmp_path):
    translated = mt_eval("translate", LEXICON, "--pair", "en:es", "Good morning, my friend.")
    assert translated.returncode == 0 and translated.stdout.strip(), translated.stderr
    shown = mt_eval("corpus", "show", DEMO, "--pair", "eng-spa")
    assert shown.returncode == 0, shown.stderr
    board = mt_eval("leaderboard", "--db", str(tmp_path / "none.db"), "--pair", "eng")
    assert board.returncode == 2 and "'eng' is not a language pair" in board.stderr


def test_helps_quote_every_pair():
    for command in (["run"], ["translate"], ["corpus", "show"], ["leaderboard"]):
        text = mt_eval(*command, "--help").stdout
        assert "'SRC>TGT'" in text, command
        assert "--pair eng>" not in text and "--pair SRC>TGT" not in text, command
