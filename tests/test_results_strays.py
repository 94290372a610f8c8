"""Results that match no entry: the warning names what came back (the first item that is no object, in
`mt_eval.value_words`'s words, a string cut short) and what a method returns instead, in the same words in
process, through a guest and in the Node package; and a run says it once, not again for the retry of a call."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from mt_eval.results import ResultNotes, compact_returned, parse_returned, results_for
from mt_eval.unmatched_results import strays_dropped

NODE = shutil.which("node")
UNMATCHED_JS = Path(__file__).parent.parent / "bridge" / "node" / "lib" / "unmatched.js"
ENTRIES = [{"id": "1", "source": "Good morning."}, {"id": "2", "source": "Thank you."}]
EXPECTED = 'they were dropped (a result is {"id": entry["id"], "predicted": TEXT}, one per entry)'
LONG = "Buenos días, mi amigo: 😀 una frase que sigue y sigue sin parar"
RETURNED = {  # what a method returned → what the warning says of it
    "strings": (["Buenos días.", "Gracias."], '2 items that are not an object, e.g. the string "Buenos días."'),
    "long": ([LONG], f'1 item that is not an object: the string {json.dumps(LONG[:37] + "...", ensure_ascii=False)}'),
    "number": ([5], "1 item that is not an object: the number 5"),
    "boolean": ([True], "1 item that is not an object: true"),
    "null": ([None], "1 item that is not an object: null"),
    "list": ([["Buenos días."]], "1 item that is not an object: an array"),
    "mixed": ([{"id": 1, "predicted": "x"}, "Gracias."], 'ids 1; 1 item that is not an object: the string "Gracias."'),
}
JSON_RETURNED = {kind: returned for kind, (returned, _) in RETURNED.items()}


def said_in_process(returned: list[object]) -> str:
    _, unknown = results_for(ENTRIES, returned, label="the method", notes=ResultNotes())
    return strays_dropped(unknown)


def said_through_a_guest(returned: list[object]) -> str:
    """As a Python guest sends the results (`compact_returned`) and its host reads them."""
    sent = parse_returned(compact_returned(returned, notes=ResultNotes()))
    return said_in_process(sent)


@pytest.mark.parametrize("kind", sorted(RETURNED))
def test_the_warning_names_what_came_back_and_what_is_expected(kind: str):
    """Before: "(2 items that are not an object); they were dropped (a result's id is its entry's id, a string)"."""
    returned, words = RETURNED[kind]
    said = said_in_process(returned)
    assert said == f"the method returned results that match no entry it was sent ({words}); {EXPECTED}"
    assert said_through_a_guest(returned) == said


def test_values_json_cannot_carry_are_said_as_a_guest_sends_them():
    """A tuple is sent as a list, an object or NaN as null: the host in the process says them alike."""
    for returned, words in (((("a",)), "an array"), (object(), "null"), (float("nan"), "null")):
        assert said_in_process([returned]) == said_through_a_guest([returned])
        assert f"1 item that is not an object: {words})" in said_in_process([returned])


@pytest.mark.skipif(NODE is None, reason="node is not installed")
def test_the_node_package_says_it_in_the_same_words():
    """straysDropped of what a Node method returned, and of what a Node guest sends for it (strayStandIn)."""
    script = ("const { straysDropped, strayStandIn } = await import(process.argv[1]);"
              "const cases = JSON.parse(process.argv[2]); const out = {};"
              "for (const [kind, items] of Object.entries(cases)) out[kind] = "
              "[straysDropped(items), straysDropped(items.map(strayStandIn))];"
              "process.stdout.write(JSON.stringify(out));")
    done = subprocess.run([NODE, "--input-type=module", "-e", script, UNMATCHED_JS.as_uri(),
                           json.dumps(JSON_RETURNED)], capture_output=True, text=True, timeout=60, check=True)
    said = json.loads(done.stdout)
    for kind, returned in JSON_RETURNED.items():
        assert said[kind] == [said_in_process(returned)] * 2, kind


def test_a_warning_said_already_is_not_said_again():
    notes = ResultNotes()
    first = notes.stray_warning(["x"])
    assert first is not None and notes.stray_warning(["x"]) is None
    assert notes.stray_warning(["y"]) is not None  # (another call's strays: said, up to three calls)


STRINGS_METHOD = """\
class Strings:
    async def translate(self, entries, config):
        return ["ES " + e["source"] for e in entries]
"""


@pytest.mark.parametrize("isolate", [False, True], ids=["in-process", "isolated"])
def test_a_run_says_the_warning_once_not_again_for_the_retry(make_plugin, tmp_path: Path, isolate: bool):
    """Before: said twice. Not for the latency calls (their strays are kept unsaid), but for the retry of the
    failed entries, which the method answered the same way."""
    plugin = make_plugin({"name": "Strings", "entry_point": "pipeline:Strings", "supported_pairs": ["eng>spa"],
                          "dependency_class": "S", "dependencies": []}, {"pipeline.py": STRINGS_METHOD})
    corpus = tmp_path / "c.jsonl"
    corpus.write_text("".join(json.dumps({"id": f"e{i}", "source": f"Sentence {i}.", "reference": "x"}) + "\n"
                              for i in range(3)), encoding="utf-8")
    done = subprocess.run([sys.executable, "-m", "mt_eval.cli", "run", "--method", str(plugin), "--corpus",
                           str(corpus), "--pair", "eng:spa", "--out", str(tmp_path / "run"), "--no-contamination-check",
                           *(["--isolate"] if isolate else [])], capture_output=True, text=True, timeout=120)
    warned = [line for line in done.stderr.splitlines() if "match no entry it was sent" in line]
    assert warned == ['the method returned results that match no entry it was sent (3 items that are not an object, '
                      f'e.g. the string "ES Sentence 0."); {EXPECTED}'], done.stderr
