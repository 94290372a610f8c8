"""The Apertium example: its predictions are exactly what `apertium -u` prints for each text on its own.

These tests need Debian's `apertium` and `apertium-eng-spa` (CI installs them); without them they skip.
"""

from __future__ import annotations

import asyncio
import importlib.util
import json
import random
import shutil
import subprocess
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from apertium_available import apertium_missing
from mt_eval.cli import main
from mt_eval.loader import load_method
from mt_eval.records import RunConfig

REPO = Path(__file__).parent.parent
EXAMPLE = REPO / "examples" / "apertium-eng-spa"
DEMO = REPO / "examples" / "data" / "eng-spa-demo.json"
MISSING = apertium_missing()
pytestmark = pytest.mark.skipif(MISSING is not None, reason=MISSING or "")

DEMO_ENTRIES = json.loads(DEMO.read_text(encoding="utf-8"))["entries"]
TRANSLATED = [e for e in DEMO_ENTRIES if e.get("family") != "negative"]  # the scored entries and the canaries
TRICKY = [
    "Line one\nline two.", "Two\n\nparagraphs here", "CRLF\r\nline\r\n\r\nend", "tab\there", "Tilde ~ here",
    '"Quoted," she said. \'Single\' too!', "Unknown words: flibbertigibbet zorgle.",
    "Brackets [like this] and <tags> and {braces} and back\\slash and a/b and @user and $5 and ^caret.",
    " ", "\n", "\n\n\n", "trailing space ", " leading", "Multiple   spaces   here.", "NUL\0inside",
    "The U.S.A. is big. Dr. Smith arrived at 5 p.m. yesterday.", "Is it 3.14 or 2,718?", "Email me at a@b.com!",
    "C:\\path\\to\\file", "¿Qué?", "emoji 🙂 and ZWJ 👩‍💻 text", "Ellipsis... and -- dashes — and «guillemets».",
    # "included" makes apertium-tagger 3.8 change its state; the next text must not notice
    "The man included.", "and `show c'", "included", "The hypothetical commands `show w' and `show c' should show "
    "the appropriate parts of the General Public License.",
    "However, it does not include the work's System Libraries, or general-purpose tools or generally available "
    "free programs which are used unmodified in performing those activities but which are not part of the work.",
    "Each contributor grants you a non-exclusive, worldwide, royalty-free patent license under the contributor's "
    "essential patent claims, to make, use, sell, offer for sale, import and otherwise run, modify and propagate "
    "the contents of its contributor version.",
    "A separable portion of the object code, whose source code is excluded from the Corresponding Source as a "
    "System Library, need not be included in conveying the object code work.",
    "The quick brown fox jumps over the lazy dog. " * 40,
]
ENG = [e["source"] for e in TRANSLATED] + TRICKY
SPA = [e["reference"] for e in TRANSLATED] + ["Hola\nmundo.", "¿Dónde está la biblioteca?", "Él incluyó la casa."]


def apertium(mode: str, text: str, *flags: str) -> str:
    """What `apertium [flags] MODE` prints for ``text`` alone: the reference."""
    done = subprocess.run(["apertium", *flags, mode], input=text.encode("utf-8"), capture_output=True, timeout=60,
                          check=True)
    return done.stdout.decode("utf-8")


def references(mode: str, texts: list[str], *flags: str) -> list[str]:
    with ThreadPoolExecutor(max_workers=4) as pool:
        return list(pool.map(lambda text: apertium(mode, text, *flags), texts))


@pytest.fixture(scope="module")
def eng_spa() -> list[str]:
    return references("eng-spa", ENG, "-u")


def config(source: str = "eng", target: str = "spa", **params: Any) -> RunConfig:
    return RunConfig(source_lang=source, target_lang=target, params={"check_pins": False, **params})


async def predictions(texts: list[str], run_config: RunConfig, *, batches: int = 1) -> list[str | None]:
    method = load_method(EXAMPLE).method
    entries = [{"id": str(i), "source": text} for i, text in enumerate(texts)]
    size = max(1, -(-len(entries) // batches))
    try:
        done = await asyncio.gather(*(method.translate(entries[i:i + size], run_config)
                                      for i in range(0, len(entries), size)))
    finally:
        await method.aclose()  # type: ignore[attr-defined]
    results = [result for batch in done for result in batch]
    assert [r.get("error") for r in results] == [None] * len(results)
    return [r["predicted"] for r in results]


async def test_eng_spa_predictions_equal_apertium_on_each_text(eng_spa: list[str]):
    assert await predictions(ENG, config()) == eng_spa


async def test_an_empty_or_wordless_source_and_an_unsupported_pair_are_abstained_on():
    method = load_method(EXAMPLE).method
    entries = [{"id": "empty", "source": ""}, {"id": "garbled", "source": "\ufffd\ufffd\u0007 \ufffd"},
               {"id": "spaces", "source": "  "}, {"id": "word", "source": "Hello."}]
    try:
        results = await method.translate(entries, config())
        german = await method.translate([{"id": "de", "source": "Hello."}], config("eng", "deu"))
    finally:
        await method.aclose()  # type: ignore[attr-defined]
    assert [(r["id"], r.get("abstained", False)) for r in results] == [
        ("empty", True), ("garbled", True), ("spaces", False), ("word", False)]
    assert results[0]["abstain_reason"] == "the source is empty, or has no letter or digit: nothing to translate"
    assert results[2]["predicted"] == "  " and results[3]["predicted"] == "Hola."
    assert german == [{"id": "de", "abstained": True, "abstain_reason": "unsupported pair eng>deu: this method "
                                                                         "translates eng>spa and spa>eng"}]


async def test_the_order_and_batching_of_texts_change_nothing(eng_spa: list[str]):
    order = list(range(len(ENG)))
    random.Random(7).shuffle(order)
    shuffled = await predictions([ENG[i] for i in order], config(), batches=9)
    assert shuffled == [eng_spa[i] for i in order]


async def test_spa_eng_predictions_equal_apertium():
    assert await predictions(SPA, config("spa", "eng")) == references("spa-eng", SPA, "-u")


async def test_mark_unknown_marks_unknown_words_like_apertium_without_u():
    texts = ["Unknown words: flibbertigibbet zorgle.", "The cat is happy."]
    assert await predictions(texts, config(mark_unknown=True)) == references("eng-spa", texts)


def test_mt_eval_run_over_the_demo_corpus_predicts_what_apertium_prints(tmp_path: Path, eng_spa: list[str]):
    out = tmp_path / "run"
    code = main(["run", "--method", str(EXAMPLE), "--corpus", str(DEMO), "--out", str(out), "--quiet",
                 "--resamples", "100", "--concurrency", "8", "--batch-size", "3"])
    assert code == 0
    card = json.loads((out / "card.json").read_text(encoding="utf-8"))
    assert card["errors"] == 0 and card["method"]["dependency_class"] == "O"
    translated = {e["id"] for e in TRANSLATED}
    assert [r["predicted"] for r in card["results"] if r["id"] in translated] == eng_spa[:len(TRANSLATED)]
    assert [(n["id"], n["outcome"]) for n in card["families"]["negatives"]] == [
        ("negative-01", "abstained"), ("negative-02", "abstained"), ("negative-03", "abstained")]
    assert card["gate"]["passed"] is True
    assert card["metrics"]["metrics"][0]["name"] == "chrF++" and card["metrics"]["metrics"][0]["score"] > 30


async def test_a_pin_that_differs_from_the_installed_package_is_refused(tmp_path: Path):
    if shutil.which("dpkg-query") is None:
        pytest.skip("dpkg-query is not available: the pins cannot be checked on this system")
    plugin = tmp_path / "apertium-eng-spa"
    shutil.copytree(EXAMPLE, plugin, ignore=shutil.ignore_patterns("__pycache__"))
    manifest = json.loads((plugin / "method.json").read_text(encoding="utf-8"))
    manifest["dependencies"][0]["pin"] = "0.0.1-1"
    (plugin / "method.json").write_text(json.dumps(manifest), encoding="utf-8")
    method = load_method(plugin).method
    installed = subprocess.run(["dpkg-query", "-W", "-f", "${Version}", "apertium-eng-spa"], capture_output=True,
                               text=True, check=True).stdout
    run_config = RunConfig(source_lang="eng", target_lang="spa")
    (result,) = await method.translate([{"id": "1", "source": "Hello."}], run_config)
    assert result["predicted"] is None
    assert result["error"] == (f"apertium-eng-spa {installed} is installed but method.json pins 0.0.1-1: install "
                               "the pinned version, or review the new one and update the pin")


async def test_other_pairs_are_abstained_on_and_a_missing_data_directory_fails_each_entry(tmp_path: Path):
    method = load_method(EXAMPLE).method
    entries = [{"id": "1", "source": "Hello."}, {"id": "2", "source": "Bye."}]
    wrong_pair = await method.translate(entries, config("eng", "fra"))
    assert [r["abstain_reason"] for r in wrong_pair] == [
        "unsupported pair eng>fra: this method translates eng>spa and spa>eng"] * 2
    no_data = await method.translate(entries, config(apertium_datadir=str(tmp_path)))
    assert no_data[0]["error"].startswith(f"no Apertium mode {tmp_path}/modes/eng-spa.mode: install")


# ---- the deformatter and reformatter against apertium-destxt and apertium-retxt ----------------------


def _example_module(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"apertium_example_{name}", EXAMPLE / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


PIECES = [*"ab .,;!?'\"*#", *"[]\\/@<>^${}", "\n", "\r", "\t", "\0", "\n\n", "\r\n\r\n", "  ", "~", "é", "日", "🙂",
          "\u00a0", "\x0b", "\x0c", ".[]", "[\\@"]


def _random_texts(seed: int, count: int) -> list[str]:
    rng = random.Random(seed)
    return ["".join(rng.choice(PIECES) for _ in range(rng.randint(0, 24))) for _ in range(count)]


def _run(program: str, text: str) -> str:
    return subprocess.run([program], input=text.encode("utf-8"), capture_output=True, timeout=30,
                          check=True).stdout.decode("utf-8")


def test_deformat_does_what_apertium_destxt_does():
    deformat = _example_module("txt_format").deformat
    texts = _random_texts(1, 800) + TRICKY
    with ThreadPoolExecutor(max_workers=4) as pool:
        real = list(pool.map(lambda text: _run("apertium-destxt", text), texts))
    assert [deformat(text) for text in texts] == real


def test_reformat_does_what_apertium_retxt_does():
    reformat = _example_module("txt_format").reformat
    texts = [t for t in _random_texts(2, 850) if "[@" not in t]  # "[@…]" makes apertium-retxt read a file
    with ThreadPoolExecutor(max_workers=4) as pool:
        real = list(pool.map(lambda text: _run("apertium-retxt", text), texts))
    assert [reformat(text) for text in texts] == real


async def test_served_over_the_bridge_its_programs_end_with_the_guest(eng_spa: list[str]):
    from mt_eval.bridge.method import BridgeMethod
    from mt_eval.bridge.runtimes import python_command

    guest = BridgeMethod(python_command(EXAMPLE), label="apertium-eng-spa")
    try:
        results = await guest.translate([{"id": "1", "source": ENG[0]}], config())
        assert results[0]["predicted"] == eng_spa[0]
        pid = guest._connection.pid if guest._connection is not None else None
        assert pid is not None
        stages = _processes(lambda fields: fields[1] == str(pid))  # its children: the stages, own groups
        assert len(stages) == 3
        programs = _processes(lambda fields: fields[2] in {str(stage) for stage in stages})
    finally:
        await guest.aclose()
    assert [p for p in programs if _processes(lambda fields, p=p: fields[-1] == str(p))] == []


def _processes(keep: Any) -> list[int]:
    """Running processes (not zombies) whose /proc stat fields after the name satisfy ``keep``."""
    found = []
    for entry in Path("/proc").iterdir():
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if fields[0] not in ("Z", "X") and keep([*fields, entry.name]):
            found.append(int(entry.name))
    return found
