"""A fix says what to do: a field's description is context for it, never the fix itself; a constraint's hint is
shown with the value it refuses (the gate policy, the run card and every document only Python reads)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Annotated

import msgspec
import pytest

from mt_eval.field_words import described
from mt_eval.harness.policy import PolicyError, load_policy
from mt_eval.manifest import Manifest
from mt_eval.schemas import schema_types
from mt_eval.strict import NODE_WORDED, StrictStruct, decode_value

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


def test_documents_the_node_package_decodes_keep_its_words():
    """The Node package words the same problems (bridge/vectors/contract/ pins both): its documents keep its fixes
    until it words them as instructions too, so both runtimes still say the same."""
    code = "".join(p.read_text() for p in NODE_LIB.rglob("*.js") if "generated" not in p.parts)
    stems = set(re.findall(r"(?:decodeValue|completeConfig)\([^,]+, '([a-z-]+)'", code))
    types = schema_types()
    assert {f"{types[s].__module__}.{types[s].__qualname__}" for s in stems} == NODE_WORDED
    _, problems = decode_value({"name": 3, "entry_point": "p:M"}, Manifest, file="method.json")
    assert [(p.path, p.hint) for p in problems if p.severity == "error"] == [("$.name", "What people call the method.")]
