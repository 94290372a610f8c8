"""A fix says what to do: a field's description is context for it, never the fix itself; a constraint's hint is
shown with the value it refuses (the gate policy, the run card, and the documents the Node package also reads, which
it words alike)."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path
from typing import Annotated, Any

import msgspec
import msgspec.inspect as mi
import pytest

from mt_eval.field_words import described
from mt_eval.harness.policy import PolicyError, load_policy
from mt_eval.manifest import Manifest
from mt_eval.schemas import schema_types
from mt_eval.strict import StrictStruct, decode_value

NODE_LIB = Path(__file__).parent.parent / "bridge" / "node" / "lib"


def policy_problems(tmp_path: Path, text: str) -> dict[str, tuple[str, str | None]]:
    path = tmp_path / "policy.json"
    path.write_text(text)
    with pytest.raises(PolicyError) as caught:
        load_policy(path)
    return {p.path: (p.message, p.hint) for p in caught.value.problems}


def test_a_policy_threshold_of_the_wrong_type_is_fixed_by_an_instruction(tmp_path: Path):
    """It said "fix: Scored entries the headline needs (its denominator).", which is what the field is."""
    found = policy_problems(tmp_path, '{"min_scored": "many", "name": 5, "required_covariates": "model"}')
    assert found["$.min_scored"] == ('expected an integer, got the string "many"', 'give "min_scored" as an integer, '
                                     'e.g. "min_scored": 1 (Scored entries the headline needs (its denominator).)')
    assert found["$.name"][1] == 'give "name" as a string, in double quotes'
    assert found["$.required_covariates"][1] == 'wrap it in brackets: ["model"]'


def test_a_policy_number_out_of_range_says_the_range_and_the_fields_hint(tmp_path: Path):
    """It said "must be >= 1, got 0" and no fix; a rate's hint was added by the policy's reader alone."""
    found = policy_problems(tmp_path, '{"min_scored": 0, "min_canaries": -1, "max_abstention_rate": 2}')
    assert found["$.min_scored"] == ("must be >= 1, got 0", "give an integer of at least 1 (Scored entries the "
                                     "headline needs (its denominator).)")
    assert found["$.min_canaries"][1].startswith("give an integer of at least 0 (Canary entries the run must have")
    assert found["$.max_abstention_rate"] == ("must be <= 1, got 2",
                                              "write the rate as a fraction from 0 to 1: 0.95 for 95%")


class Note(StrictStruct, kw_only=True):
    title: Annotated[str, described(max_length=5, hint="keep the title short: the list shows 5 characters")]
    body: Annotated[str, msgspec.Meta(max_length=3, description="What the note says.")] = ""
    tags: Annotated[list[str], msgspec.Meta(max_length=1)] = msgspec.field(default_factory=list)
    level: Annotated[float, msgspec.Meta(gt=0, le=2, description="How loud it is.")] = 1


def test_a_constraints_hint_is_shown_with_the_value_it_refuses():
    """A string past its maxLength, a number out of range: no fix at all, though the schema has a hint."""
    _, problems = decode_value({"title": "far too long", "body": "long", "tags": ["a", "b"], "level": 3}, Note,
                               file="note.json")
    assert {p.path: (p.message, p.hint) for p in problems} == {
        "$.title": ("allows at most 5 characters, got 12", "keep the title short: the list shows 5 characters"),
        "$.body": ("allows at most 3 characters, got 4", "shorten it to at most 3 characters (What the note says.)"),
        "$.tags": ("allows at most 1 items, got 2", "shorten it to at most 1 items"),
        "$.level": ("must be <= 2, got 3", "give a number greater than 0 and at most 2 (How loud it is.)")}
    _, problems = decode_value({"title": "t", "level": "loud"}, Note, file="note.json")
    assert [p.hint for p in problems] == ['give "level" as a number, e.g. "level": 1 (How loud it is.)']


def test_a_document_the_node_package_also_reads_is_fixed_by_instructions():
    """method.json's "name": 3 said "fix: What people call the method.", the field's description."""
    _, problems = decode_value({"name": 3, "entry_point": "p:M"}, Manifest, file="method.json")
    assert [(p.path, p.hint) for p in problems if p.severity == "error"] == [
        ("$.name", 'give "name" as a string, in double quotes (What people call the method.)')]


def wrong_everywhere(t: mi.Type, wrong: Any, depth: int = 0) -> Any:
    """A document of the type ``t`` with ``wrong`` for each value that is not an object or a list of them."""
    while isinstance(t, mi.Metadata):
        t = t.type
    nested = (mi.StructType, mi.ListType, mi.DictType)
    if depth > 4:
        return wrong
    if isinstance(t, mi.StructType):
        return {f.encode_name: wrong_everywhere(f.type, wrong, depth + 1) for f in t.fields}
    if isinstance(t, mi.ListType):
        item = t.item_type.type if isinstance(t.item_type, mi.Metadata) else t.item_type
        return [wrong_everywhere(item, wrong, depth + 1)] if isinstance(item, (*nested, mi.UnionType)) else wrong
    if isinstance(t, mi.DictType):
        return {"k": wrong_everywhere(t.value_type, wrong, depth + 1)}
    if isinstance(t, mi.UnionType):
        inner = [x for x in t.types if isinstance(x.type if isinstance(x, mi.Metadata) else x, nested)]
        return wrong_everywhere(inner[0], wrong, depth) if inner else wrong
    return wrong


NODE_DECODE = """
import { decodeValue } from %s;
const documents = JSON.parse(process.argv[1]);
const said = documents.map(([stem, data]) => decodeValue(data, stem, { file: 'f' }).problems
  .map((p) => [p.path, p.severity, p.code, p.message, p.hint]));
process.stdout.write(JSON.stringify(said));
"""


@pytest.mark.skipif(shutil.which("node") is None, reason="needs node")
def test_both_runtimes_word_every_document_the_node_package_reads_alike():
    """Every document the Node package decodes (bridge/node/lib/contract/decode.js), wrong in every value, gets
    the same problems with the same fixes from both runtimes."""
    code = "".join(p.read_text() for p in NODE_LIB.rglob("*.js") if "generated" not in p.parts)
    stems = sorted(set(re.findall(r"(?:decodeValue|completeConfig)\([^,]+, '([a-z-]+)'", code)))
    types = schema_types()
    assert "method" in stems and "champollion-config" in stems
    values = (3.5, "x", -1, 0, [], "", {}, [7], True, None, ["x"], 2**60, "true", "3", [""])
    documents = [[stem, wrong_everywhere(mi.type_info(types[stem]), wrong)] for stem in stems for wrong in values]
    decode = NODE_DECODE % json.dumps((NODE_LIB / "contract" / "decode.js").as_uri())
    node = subprocess.run(["node", "--input-type=module", "-e", decode, json.dumps(documents)], capture_output=True,
                          text=True, check=True, timeout=60)
    python = [[[p.path, p.severity, p.code, p.message, p.hint] for p in decode_value(data, types[stem], file="f")[1]]
              for stem, data in documents]
    assert [said for said in python if said] and python == json.loads(node.stdout)
