"""BLEU and TER tokenized for the target language: Chinese and Japanese, written without spaces, had scored BLEU 0
and TER 100 for every system (one token per sentence); a card verifies and compares as its signatures record."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import pytest
from sacrebleu.metrics.bleu import BLEU
from sacrebleu.metrics.ter import TER

from gate_policies import LENIENT
from mt_eval.cli import main
from mt_eval.harness.compare import CompareError, _metrics_as_scored
from mt_eval.harness.metric_settings import (
    MetricSetupError,
    bleu_tokenizer,
    make_metrics,
    metrics_recorded,
    recorded_settings,
    tokenizer_fallback,
)
from mt_eval.harness.verify import verify_card

ROWS = [("The cat is on the table.", "猫在桌子上。", "猫在桌上。"),
        ("I do not know what to do.", "我不知道该怎么办。", "我不知道怎么办。"),
        ("Good morning, friend.", "早上好，朋友。", "朋友，早上好。"),
        ("The house is big.", "房子很大。", "这房子很大。")]


def echoing(make_plugin, corpus: Path, rows: list[tuple[str, str, str]]) -> tuple[Path, Path]:
    """A plugin answering each entry of ``rows`` (source, reference, predicted) with its prediction, and the corpus
    of those rows written to ``corpus``."""
    table = {str(i): predicted for i, (_, _, predicted) in enumerate(rows, start=1)}
    plugin = make_plugin(files={"pipeline.py": f"""
        class EchoMethod:
            async def translate(self, entries, config):
                table = {table!r}
                return [{{"id": e["id"], "predicted": table[e["id"]]}} for e in entries]
        """})
    corpus.write_text("".join(json.dumps({"id": str(i), "source": s, "reference": r}, ensure_ascii=False) + "\n"
                              for i, (s, r, _) in enumerate(rows, start=1)), encoding="utf-8")
    return plugin, corpus


def test_a_chinese_target_is_scored_as_sacrebleu_scores_it_given_the_language(make_plugin, tmp_path: Path, capsys):
    plugin, corpus = echoing(make_plugin, tmp_path / "zh.jsonl", ROWS)
    assert main(["run", "--method", str(plugin), "--corpus", str(corpus), "--pair", "eng>zho", "--out",
                 str(tmp_path / "run"), "--latency-sample", "0", "--resamples", "100", "--quiet", *LENIENT]) == 0
    card = json.loads((tmp_path / "run" / "card.json").read_text())
    stated = {m["name"]: m for m in card["metrics"]["metrics"]}
    hypotheses, references = [p for _, _, p in ROWS], [[r for _, r, _ in ROWS]]
    assert stated["BLEU"]["score"] == round(BLEU(trg_lang="zh").corpus_score(hypotheses, references).score, 4) > 50
    assert stated["TER"]["score"] == round(TER(normalized=True, asian_support=True)
                                           .corpus_score(hypotheses, references).score, 4) < 20
    assert "tok:zh" in stated["BLEU"]["signature"] and "asian:yes" in stated["TER"]["signature"]
    assert verify_card(tmp_path / "run" / "card.json").ok


@pytest.mark.parametrize(("target", "tokenizer"), [("spa", "13a"), ("zho", "zh"), ("zh-Hant", "zh"), ("cmn", "zh"),
                                                   ("chi", "zh"), ("lzh", "zh"), ("yue", "zh"), (None, "13a")])
def test_the_tokenizer_follows_the_target_language(target: str | None, tokenizer: str):
    assert bleu_tokenizer(target) == tokenizer
    assert make_metrics(target)["BLEU"].tokenizer.signature() == tokenizer


def test_japanese_without_mecab_is_scored_by_character_and_korean_as_spaced_text():
    assert bleu_tokenizer("jpn") in ("ja-mecab", "char") and bleu_tokenizer("kor") in ("ko-mecab", "13a")
    assert make_metrics("jpn")["TER"].asian_support and not make_metrics("spa")["TER"].asian_support


def test_a_card_is_scored_again_as_its_signatures_record_it():
    """A card scored with 13a on a Chinese target (before) still verifies as it was scored; a MeCab tokenizer is
    recorded with its versions."""
    old = {"BLEU": "nrefs:1|case:mixed|eff:no|tok:13a|smooth:exp|version:2.6.0",
           "TER": "nrefs:1|case:lc|tok:tercom|norm:no|punct:yes|asian:no|version:2.6.0"}
    assert recorded_settings(old) == ("13a", False)
    assert recorded_settings({"BLEU": "nrefs:1|tok:ja-mecab-0.996-IPA|version:2.6.0", "TER": "asian:yes"}) == (
        "ja-mecab", True)
    metrics = metrics_recorded(old)
    assert metrics["BLEU"].tokenizer.signature() == "13a" and not metrics["TER"].asian_support


def test_compare_refuses_cards_whose_metrics_were_set_up_differently():
    def card(tok: str, asian: str) -> SimpleNamespace:
        return SimpleNamespace(metrics=SimpleNamespace(metrics=[
            SimpleNamespace(name="BLEU", signature=f"nrefs:1|tok:{tok}|version:2.6.0"),
            SimpleNamespace(name="TER", signature=f"nrefs:1|asian:{asian}|version:2.6.0")]))

    assert _metrics_as_scored(card("zh", "yes"), card("zh", "yes"))["BLEU"].tokenizer.signature() == "zh"
    unscored = SimpleNamespace(metrics=None, corpus=SimpleNamespace(pair="eng>zho"))  # (as its pair would score it)
    assert _metrics_as_scored(unscored, unscored)["BLEU"].tokenizer.signature() == "zh"  # type: ignore[arg-type]
    with pytest.raises(CompareError, match=r"set up differently \(A: BLEU tok:13a, TER asian:no; B: BLEU tok:zh, TER "
                                           r"asian:yes\)"):
        _metrics_as_scored(card("13a", "no"), card("zh", "yes"))  # type: ignore[arg-type]


@pytest.mark.skipif(bleu_tokenizer("jpn") == "ja-mecab", reason="MeCab is installed here")
def test_a_card_whose_tokenizer_is_not_installed_or_not_known_is_a_finding_not_a_traceback(make_plugin, tmp_path,
                                                                                             capsys):
    """Before, `verify` and `compare` of a ja-mecab card ended in sacrebleu's RuntimeError where MeCab is missing,
    and a card naming an unknown tokenizer in a KeyError."""
    from mt_eval.harness import verify

    with pytest.raises(MetricSetupError, match=r"tokenized with ja-mecab, which is not installed here: pip install "
                                               r"'sacrebleu\[ja\]' to recompute it"):
        metrics_recorded({"BLEU": "nrefs:1|tok:ja-mecab-0.996-IPA|version:2.6.0", "TER": "asian:yes"})
    with pytest.raises(MetricSetupError, match="names the tokenizer 'bogus', which sacrebleu does not know"):
        metrics_recorded({"BLEU": "nrefs:1|tok:bogus|version:2.6.0"})
    test_a_chinese_target_is_scored_as_sacrebleu_scores_it_given_the_language(make_plugin, tmp_path, capsys)
    path = tmp_path / "run" / "card.json"
    data = json.loads(path.read_text())
    for metric in data["metrics"]["metrics"]:
        metric["signature"] = metric["signature"].replace("tok:zh", "tok:ja-mecab-0.996-IPA")
    data["content_sha256"] = verify.canonical_sha256(data)
    path.write_text(json.dumps(data, ensure_ascii=False))
    capsys.readouterr()
    assert main(["verify", str(path)]) == 1
    assert "its metrics cannot be recomputed here: its BLEU was tokenized with ja-mecab" in capsys.readouterr().out
    assert main(["compare", str(path), str(path)]) != 0
    assert "the cards' metrics cannot be recomputed here" in capsys.readouterr().err


@pytest.mark.skipif(bleu_tokenizer("jpn") == "ja-mecab", reason="MeCab is installed here")
def test_a_japanese_run_without_mecab_says_why_bleu_is_not_tokenized_as_sacrebleu_would(make_plugin, tmp_path: Path,
                                                                                       capsys):
    """Before, the stand-in tokenizer showed only in the card's signature (tok:char): nothing said that sacrebleu
    would have used ja-mecab, nor what to install for it."""
    plugin = make_plugin(files={"pipeline.py": """
        class EchoMethod:
            async def translate(self, entries, config):
                return [{"id": e["id"], "predicted": "本を読むのが好きです。"} for e in entries]
        """})
    corpus = tmp_path / "ja.jsonl"
    corpus.write_text("".join(json.dumps({"id": str(i), "source": s, "reference": r}, ensure_ascii=False) + "\n"
                              for i, (s, r) in enumerate([("I like books.", "私は本が好きです。"),
                                                          ("It is fine today.", "今日は晴れです。")], start=1)),
                      encoding="utf-8")
    assert main(["run", "--method", str(plugin), "--corpus", str(corpus), "--pair", "eng>jpn", "--out",
                 str(tmp_path / "run"), "--latency-sample", "0", "--resamples", "100", *LENIENT]) == 0
    assert ("warning: BLEU tokenized with char, not ja-mecab as sacrebleu tokenizes Japanese: MeCab or its dictionary "
            "is not installed here (pip install 'sacrebleu[ja]'") in capsys.readouterr().err
    card = json.loads((tmp_path / "run" / "card.json").read_text())
    assert "tok:char" in {m["name"]: m for m in card["metrics"]["metrics"]}["BLEU"]["signature"]


@pytest.mark.parametrize("target", ["spa", "zho", None])
def test_a_target_tokenized_as_sacrebleu_would_has_no_fallback_to_say(target: str | None):
    assert tokenizer_fallback(make_metrics(target)) is None


THAI = [("I like to read books.", "ฉันชอบอ่านหนังสือ", "ฉันชอบอ่านหนังสือมาก"),
        ("It is sunny today.", "วันนี้แดดออก", "วันนี้อากาศแจ่มใส")]


def test_a_thai_run_says_bleu_and_ter_say_little_and_chrf_is_the_one_to_read(make_plugin, tmp_path: Path, capsys):
    """Before, a target written without spaces that sacrebleu has no tokenizer for scored BLEU ~0 and TER ~100
    whatever the translation (a sentence is one word to them), and nothing said so."""
    plugin, corpus = echoing(make_plugin, tmp_path / "th.jsonl", THAI)

    def scored(out: str, *more: str) -> str:
        assert main(["run", "--method", str(plugin), "--corpus", str(corpus), "--pair", "eng>tha", "--out",
                     str(tmp_path / out), "--latency-sample", "0", "--resamples", "100", *more, *LENIENT]) == 0
        return capsys.readouterr().err

    said = [line for line in scored("run").splitlines() if "Thai" in line]
    assert said == ["warning: Thai is written without spaces between words and sacrebleu picks no tokenizer for it: "
                    "BLEU and TER count each space-separated chunk (often a whole sentence) as a word, so they say "
                    "little here; read chrF++, which counts characters"]
    card = json.loads((tmp_path / "run" / "card.json").read_text())
    stated = {m["name"]: m["score"] for m in card["metrics"]["metrics"]}
    assert stated["BLEU"] == 0 and stated["TER"] == 100 and stated["chrF++"] > 50  # (what the warning is about)
    assert "Thai" not in (tmp_path / "run" / "card.json").read_text()
    assert "warning" not in scored("quiet", "--quiet")


@pytest.mark.parametrize(("target", "language"), [("tha", "Thai"), ("th", "Thai"), ("tha_Thai", "Thai"),
                                                  ("lao", "Lao"), ("khm", "Khmer"), ("km", "Khmer"),
                                                  ("mya", "Burmese"), ("my-MM", "Burmese"), ("bur", "Burmese"),
                                                  ("bod", "Tibetan"), ("dzo", "Dzongkha")])
def test_the_scripts_without_spaces_or_a_tokenizer_are_named(target: str, language: str):
    said = tokenizer_fallback(make_metrics(target))
    assert said is not None and said.startswith(f"{language} is written without spaces")
    assert make_metrics(target)["BLEU"].tokenizer.signature() == "13a"  # (as before: the card is scored the same)
