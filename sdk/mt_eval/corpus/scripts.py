"""Which writing system a text is in, and which one a language code expects.

Enough to catch a corpus read the wrong way round (Cyrillic sources for an ``eng>rus`` pair) or the
wrong file given; it cannot tell two languages of one script apart. A code's script subtag wins
(``eng_Latn``, ``sr-Cyrl``, ``zh-Hant``); a language written in several scripts (Serbian) has no
expectation and is never doubted.
"""

from __future__ import annotations

import re

SCRIPT_RANGES = {
    "Latin": "A-Za-z\u00c0-\u00d6\u00d8-\u00f6\u00f8-\u024f\u1e00-\u1eff",
    "Cyrillic": "\u0400-\u052f",
    "Greek": "\u0370-\u03ff\u1f00-\u1fff",
    "Armenian": "\u0530-\u058f",
    "Hebrew": "\u0590-\u05ff",
    "Arabic": "\u0600-\u06ff\u0750-\u077f\u08a0-\u08ff\ufb50-\ufdff\ufe70-\ufeff",
    "Devanagari": "\u0900-\u097f",
    "Bengali": "\u0980-\u09ff",
    "Gurmukhi": "\u0a00-\u0a7f",
    "Gujarati": "\u0a80-\u0aff",
    "Tamil": "\u0b80-\u0bff",
    "Telugu": "\u0c00-\u0c7f",
    "Kannada": "\u0c80-\u0cff",
    "Malayalam": "\u0d00-\u0d7f",
    "Sinhala": "\u0d80-\u0dff",
    "Thai": "\u0e00-\u0e7f",
    "Lao": "\u0e80-\u0eff",
    "Tibetan": "\u0f00-\u0fff",
    "Myanmar": "\u1000-\u109f",
    "Georgian": "\u10a0-\u10ff",
    "Hangul": "\u1100-\u11ff\u3130-\u318f\uac00-\ud7af",
    "Ethiopic": "\u1200-\u137f",
    "Khmer": "\u1780-\u17ff",
    "Kana": "\u3040-\u30ff",
    "Han": "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff",
}
_PATTERNS = {name: re.compile(f"[{ranges}]") for name, ranges in SCRIPT_RANGES.items()}
_LETTER = re.compile(r"[^\W\d_]")

_ISO15924 = {"latn": "Latin", "cyrl": "Cyrillic", "grek": "Greek", "armn": "Armenian", "hebr": "Hebrew",
             "arab": "Arabic", "deva": "Devanagari", "beng": "Bengali", "guru": "Gurmukhi", "gujr": "Gujarati",
             "taml": "Tamil", "telu": "Telugu", "knda": "Kannada", "mlym": "Malayalam", "sinh": "Sinhala",
             "thai": "Thai", "laoo": "Lao", "tibt": "Tibetan", "mymr": "Myanmar", "geor": "Georgian",
             "hang": "Hangul", "kore": "Hangul", "ethi": "Ethiopic", "khmr": "Khmer", "hans": "Han", "hant": "Han",
             "hani": "Han", "jpan": "Han"}
_LANGUAGES = {
    "Latin": "en eng es spa fr fra fre de deu ger it ita pt por nl nld dut pl pol ro ron rum cs ces cze sk slk "
             "slo sl slv hr hrv bs bos sv swe da dan no nor nb nob nn nno fi fin et est lv lav lt lit hu hun tr tur "
             "vi vie id ind ms msa zsm may tl tgl fil ca cat gl glg eu eus baq ga gle cy cym wel is isl ice mt mlt "
             "sq sqi alb sw swa swh af afr so som ha hau yo yor ig ibo zu zul xh xho eo epo la lat lb ltz tk tuk "
             "qu que ht hat",
    "Cyrillic": "ru rus uk ukr be bel bg bul mk mkd mac kk kaz ky kir tg tgk mn mon khk ba bak tt tat",
    "Greek": "el ell gre",
    "Armenian": "hy hye arm",
    "Hebrew": "he heb yi yid",
    "Arabic": "ar ara arb fa fas per pes prs ur urd ps pus pbt ug uig sd snd ckb",
    "Devanagari": "hi hin mr mar ne nep npi sa san mai",
    "Bengali": "bn ben as asm",
    "Gurmukhi": "pa pan",
    "Gujarati": "gu guj",
    "Tamil": "ta tam",
    "Telugu": "te tel",
    "Kannada": "kn kan",
    "Malayalam": "ml mal",
    "Sinhala": "si sin",
    "Thai": "th tha",
    "Lao": "lo lao",
    "Tibetan": "bo bod tib",
    "Myanmar": "my mya bur",
    "Georgian": "ka kat geo",
    "Hangul": "ko kor",
    "Ethiopic": "am amh ti tir",
    "Khmer": "km khm",
    "Han": "zh zho chi cmn yue wuu ja jpn",
}
_SCRIPT_OF_LANGUAGE = {code: script for script, codes in _LANGUAGES.items() for code in codes.split()}
_ALSO = {"Han": {"ja", "jpn"}, "Hangul": {"ko", "kor"}}  # Japanese also uses Kana; Korean text may hold Han


def expected_scripts(code: str) -> set[str]:
    """The scripts a language code's text is written in; empty when unknown or several."""
    parts = [part for part in re.split(r"[-_]", code.lower()) if part]
    if not parts:
        return set()
    for part in parts[1:]:
        if len(part) == 4 and part in _ISO15924:
            written = _ISO15924[part]
            return {"Han", "Kana"} if part == "jpan" else {written, "Han"} if written == "Hangul" else {written}
    language = parts[0]
    if language in _ALSO["Han"]:
        return {"Han", "Kana"}
    if language in _ALSO["Hangul"]:
        return {"Hangul", "Han"}
    script = _SCRIPT_OF_LANGUAGE.get(language)
    return set() if script is None else {script}


def script_shares(text: str) -> tuple[int, dict[str, float]]:
    """The number of letters in ``text`` and the share of them in each script that has any."""
    letters = len(_LETTER.findall(text))
    if not letters:
        return 0, {}
    shares = {}
    for name, pattern in _PATTERNS.items():
        count = len(pattern.findall(text))
        if count:
            shares[name] = count / letters
    return letters, shares


def dominant_script(shares: dict[str, float]) -> str | None:
    return max(shares, key=lambda name: shares[name]) if shares else None
