"""`mt-eval freeze validate` reads the frozen corpus again: a manifest whose entry counts, selection or label
digests were edited is refused (before, only the files' own hashes were checked and it said "valid and frozen"),
as is one made by another SDK; and `freeze show` prints a command whose --param and --columns read back as
frozen."""

from __future__ import annotations

import json
import os
import shlex
import shutil
from pathlib import Path

import pytest

from mt_eval.cli import main
from rigor_support import SCRIPTED, family_corpus, honest


@pytest.fixture
def plugin(tmp_path: Path) -> Path:
    copy = tmp_path / "method"
    shutil.copytree(SCRIPTED, copy, ignore=shutil.ignore_patterns("__pycache__"))
    return copy


def init(tmp_path: Path, plugin: Path, corpus: Path, *more: str) -> Path:
    out = tmp_path / "freeze.json"
    assert main(["freeze", "init", "--method", str(plugin), "--corpus", str(corpus), "--out", str(out), *honest(),
                 "--force", "--resamples", "20", *more]) == 0
    return out


def valid_and_shown(frozen: Path, capsys, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The words of the run command `freeze show` prints for a manifest that validates (from its directory)."""
    assert main(["freeze", "validate", str(frozen)]) == 0
    monkeypatch.chdir(frozen.parent)
    capsys.readouterr()
    assert main(["freeze", "show", frozen.name]) == 0
    return shlex.split(capsys.readouterr().out.split("run it with:\n  ", 1)[1])


def edited(path: Path, section: str, key: str, value: object) -> Path:
    manifest = json.loads(path.read_text())
    manifest[section][key] = value
    out = path.with_name(f"edited-{key}.json")
    out.write_text(json.dumps(manifest))
    return out


@pytest.mark.parametrize(("section", "key", "value", "says"), [
    ("labels", "references_sha256", "0" * 64, "$.labels.references_sha256: the corpus gives "),
    ("labels", "families_sha256", "1" * 64, "$.labels.families_sha256: the corpus gives "),
    ("corpus", "entries_in_corpus", 99, "$.corpus.entries_in_corpus: the corpus gives 34, not 99"),
    ("corpus", "entries_selected", 3, "$.corpus.entries_selected: the corpus gives 4, not 3"),
    ("corpus", "subset_sha256", "2" * 64, "$.corpus.subset_sha256: the corpus gives "),
    ("sdk", "code_sha256", "3" * 64, "$.sdk.code_sha256: this SDK ("),
])
def test_an_edited_count_or_digest_does_not_validate(tmp_path: Path, plugin: Path, capsys, section: str, key: str,
                                                     value: object, says: str):
    corpus = family_corpus(tmp_path / "corpus.json")
    frozen = init(tmp_path, plugin, corpus, "--limit", "4")
    assert main(["freeze", "validate", str(frozen)]) == 0
    capsys.readouterr()
    assert main(["freeze", "validate", str(edited(frozen, section, key, value))]) == 1
    out = capsys.readouterr().out
    assert "not valid (1 problem)" in out and says in out


def test_a_tsv_frozen_with_columns_validates_and_its_command_reads_it_so(tmp_path: Path, plugin: Path, capsys,
                                                                        monkeypatch: pytest.MonkeyPatch):
    corpus = tmp_path / "corpus.tsv"
    corpus.write_text("".join(f"Hola {i}.\tHello {i}.\te{i}\n" for i in range(6)), encoding="utf-8")
    frozen = init(tmp_path, plugin, corpus, "--columns", "reference,source,id", "--pair", "eng>spa",
                  "--corpus-source", "tests", "--corpus-license", "CC0-1.0")
    assert json.loads(frozen.read_text())["corpus"]["columns"] == ["reference", "source", "id"]
    words = valid_and_shown(frozen, capsys, monkeypatch)
    assert words[words.index("--columns") + 1] == "reference,source,id"


@pytest.mark.parametrize("value", ["5", "true", "null", "NaN", "hello world", "$HOME", 5, [1, "a"]])
def test_freeze_show_gives_each_param_as_it_reads_back(tmp_path: Path, plugin: Path, capsys, value: object,
                                                       monkeypatch: pytest.MonkeyPatch):
    """Before: a text "5" was shown --param n=5, which reads back as the number 5, so the run it printed was
    refused (and the refusal's hint said the same)."""
    from mt_eval.cli.method_params import method_params

    corpus = family_corpus(tmp_path / "corpus.json")
    frozen = init(tmp_path, plugin, corpus, "--param", f"n={json.dumps(value)}")
    monkeypatch.chdir(tmp_path)
    capsys.readouterr()
    assert main(["freeze", "show", frozen.name]) == 0
    words = shlex.split(capsys.readouterr().out.split("run it with:\n  ", 1)[1])
    given = [word for at, word in enumerate(words) if words[at - 1] == "--param" and word.startswith("n=")]
    assert method_params(given) == {"n": value}
    assert main([*words[1:], "--out", str(tmp_path / "run"), "--quiet"]) in (0, 5)


def test_a_run_that_differs_in_a_param_is_told_the_option_that_reads_back(tmp_path: Path, plugin: Path, capsys):
    import msgspec

    from mt_eval.harness.freeze import FreezeManifest, differences

    corpus = family_corpus(tmp_path / "corpus.json")
    frozen = msgspec.json.decode(init(tmp_path, plugin, corpus, "--param", 'n="5"').read_bytes(), type=FreezeManifest)
    params = {**frozen.config.params, "n": 5}
    actual = msgspec.structs.replace(frozen, config=msgspec.structs.replace(frozen.config, params=params))
    assert differences(frozen, actual) == ["config.params.n: the freeze says '5', this run has 5 (give --param "
                                           "'n=\"5\"')"]
    actual = msgspec.structs.replace(frozen, config=msgspec.structs.replace(frozen.config, model="other"))
    frozen = msgspec.structs.replace(frozen, config=msgspec.structs.replace(frozen.config, model="a $HOME (x)"))
    assert differences(frozen, actual) == ["config.model: the freeze says 'a $HOME (x)', this run has 'other' "
                                           "(give --model 'a $HOME (x)')"]


def test_the_scoring_and_the_gate_policy_are_frozen_too(tmp_path: Path, plugin: Path, capsys):
    """Before: a frozen run took any --resamples, --bootstrap and --policy, and its card still said frozen."""
    from rigor_support import run

    corpus = family_corpus(tmp_path / "corpus.json")
    strict = tmp_path / "policy.json"
    strict.write_text(json.dumps({"name": "ours", "min_canaries": 2, "min_negatives": 2}))
    frozen = init(tmp_path, plugin, corpus, "--policy", str(strict))
    scoring = json.loads(frozen.read_text())["scoring"]
    assert (scoring["resamples"], scoring["bootstrap"], scoring["policy_path"]) == (20, "fast", "policy.json")
    code, _ = run(tmp_path / "run", corpus, *honest(), "--freeze", str(frozen), "--bootstrap", "upstream",
                  method=plugin)
    err = capsys.readouterr().err
    assert code == 1 and "scoring.resamples: the freeze says 20, this run has 100 (give --resamples 20)" in err
    assert "scoring.bootstrap: the freeze says 'fast', this run has 'upstream' (give --bootstrap fast)" in err
    assert "scoring.policy_sha256: the freeze says" in err and f"(give --policy {os.path.relpath(strict)})" in err
    strict.write_text(json.dumps({"name": "ours", "min_canaries": 2, "min_negatives": 1}))
    assert main(["freeze", "validate", str(frozen)]) == 1
    assert "$.scoring.policy_sha256: the policy" in capsys.readouterr().out


@pytest.mark.parametrize(("section", "key"), [(None, "scoring"), ("corpus", "accepted_doubts")])
def test_a_frozen_manifest_without_its_scoring_or_accepted_doubts_holds_no_run(
        tmp_path: Path, plugin: Path, capsys, section: str | None, key: str):
    """Before: deleting `scoring` (or `corpus.accepted_doubts`) by hand left a manifest "valid and frozen", and
    a run held to it took any policy and resamples (or let any doubt through) and its card said frozen. A
    manifest of this SDK always has them (one of another SDK fails on its code hash)."""
    from rigor_support import run

    corpus = family_corpus(tmp_path / "corpus.json")
    lax = tmp_path / "lax.json"
    lax.write_text(json.dumps({"name": "lax", "min_canaries": 0, "min_negatives": 0}))
    manifest = json.loads(init(tmp_path, plugin, corpus).read_text())
    del (manifest if section is None else manifest[section])[key]
    stripped = tmp_path / "stripped.json"
    stripped.write_text(json.dumps(manifest))
    capsys.readouterr()
    assert main(["freeze", "validate", str(stripped)]) == 1
    out = capsys.readouterr().out
    where = f"$.{key}" if section is None else f"$.{section}.{key}"
    assert "not valid (1 problem)" in out and f"{stripped} {where}: missing: a frozen manifest needs it" in out
    assert "run mt-eval freeze init again" in out
    differing = ["--policy", str(lax)] if key == "scoring" else ["--accept-doubt", "reference-equals-source"]
    code, card = run(tmp_path / "run", corpus, *honest(), "--freeze", str(stripped), *differing, method=plugin)
    err = capsys.readouterr().err
    assert code == 1 and card is None and f"--freeze {stripped} does not validate" in err and where in err


def test_a_doubt_accepted_at_freeze_is_frozen_shown_and_held_to(tmp_path: Path, plugin: Path, capsys,
                                                                monkeypatch: pytest.MonkeyPatch):
    """Before: the manifest did not say that a doubt was let through, so `freeze show` printed a run command that
    refused the corpus."""
    corpus = tmp_path / "corpus.tsv"
    corpus.write_text("".join(f"Hello {i}.\tHello {i}.\te{i}\n" for i in range(6)), encoding="utf-8")
    frozen = init(tmp_path, plugin, corpus, "--columns", "source,reference,id", "--pair", "eng>spa",
                  "--corpus-source", "tests", "--corpus-license", "CC0-1.0",
                  "--accept-doubt", "reference-equals-source")
    assert json.loads(frozen.read_text())["corpus"]["accepted_doubts"] == ["reference-equals-source"]
    words = valid_and_shown(frozen, capsys, monkeypatch)
    assert words[words.index("--accept-doubt") + 1] == "reference-equals-source"
    import msgspec

    from mt_eval.harness.freeze import FreezeManifest, differences

    manifest = msgspec.json.decode(frozen.read_bytes(), type=FreezeManifest)
    other = msgspec.structs.replace(manifest, corpus=msgspec.structs.replace(manifest.corpus, accepted_doubts=[]))
    assert differences(manifest, other) == [
        "corpus.accepted_doubts: the freeze says ['reference-equals-source'], this run has [] (give --accept-doubt "
        "reference-equals-source)"]
    older = msgspec.structs.replace(manifest, corpus=msgspec.structs.replace(manifest.corpus, accepted_doubts=None))
    assert differences(older, manifest) == []  # (written before it was recorded: not held to it)


def test_a_run_records_the_sha256_of_the_manifest_it_validated(tmp_path: Path, plugin: Path, capsys,
                                                                monkeypatch: pytest.MonkeyPatch):
    """The manifest is read once: before, it was read again to hash it for the card, so a manifest changed in
    between (or a pipe, empty the second time) was recorded as bytes the run was never held to."""
    import hashlib

    import mt_eval.harness.freeze as freeze

    frozen = init(tmp_path, plugin, family_corpus(tmp_path / "corpus.json"))
    validated = frozen.read_bytes()
    words = valid_and_shown(frozen, capsys, monkeypatch)
    differences = freeze.differences

    def edited_meanwhile(*args, **kwargs):  # (as the run compares itself with the manifest, it is edited on disk)
        frozen.write_bytes(validated.replace(b'"status":', b'"status" :', 1))
        return differences(*args, **kwargs)

    monkeypatch.setattr(freeze, "differences", edited_meanwhile)
    assert main([*words[1:], "--out", str(tmp_path / "run"), "--quiet"]) == 0, capsys.readouterr().err
    card = json.loads((tmp_path / "run" / "card.json").read_text())
    assert frozen.read_bytes() != validated
    assert card["freeze"]["sha256"] == hashlib.sha256(validated).hexdigest()


@pytest.mark.parametrize(("supported", "says"), [
    (None, "the corpus declares 'eng>spa', and the method scripted supports any pair"),
    (["eng>spa", "spa>eng"], "the corpus declares 'eng>spa', and the method scripted supports 'eng>spa', 'spa>eng'"),
])
def test_a_pair_the_corpus_and_method_do_not_take_does_not_validate(tmp_path: Path, plugin: Path, capsys,
                                                                     supported: list[str] | None, says: str):
    """Before: a manifest whose pair was edited to one the corpus does not declare validated, and the run it held
    asked for --pair 'eng>fra', which it then refused as a pair mismatch: no run could follow it."""
    from rigor_support import run

    if supported is not None:
        manifest = json.loads((plugin / "method.json").read_text())
        (plugin / "method.json").write_text(json.dumps({**manifest, "supported_pairs": supported}))
    corpus = family_corpus(tmp_path / "corpus.json")
    pair_edited = edited(init(tmp_path, plugin, corpus), "corpus", "pair", "eng>fra")
    capsys.readouterr()
    assert main(["freeze", "validate", str(pair_edited)]) == 1
    out = capsys.readouterr().out
    assert "not valid (1 problem)" in out
    assert f"{pair_edited} $.corpus.pair: 'eng>fra' is a pair no run of this corpus and method takes: {says}" in out
    assert "fix: run mt-eval freeze init again" in out
    for given in ([], ["--pair", "eng>fra"]):  # (as the freeze says, or as a run refused without it is told)
        code, card = run(tmp_path / "run", corpus, *honest(), "--freeze", str(pair_edited), *given, method=plugin)
        err = capsys.readouterr().err
        assert (code, card) == (1, None) and f"--freeze {pair_edited} does not validate (1 problem)" in err
        assert f"$.corpus.pair: 'eng>fra' is a pair no run of this corpus and method takes: {says}" in err
        assert "run mt-eval freeze init again" in err and "give --pair" not in err and "mismatch" not in err


def test_a_pair_frozen_with_its_mismatch_accepted_still_validates(tmp_path: Path, plugin: Path, capsys,
                                                                    monkeypatch: pytest.MonkeyPatch):
    corpus = family_corpus(tmp_path / "corpus.json")
    frozen = init(tmp_path, plugin, corpus, "--pair", "eng>fra", "--accept-doubt", "pair-mismatch")
    assert json.loads(frozen.read_text())["corpus"]["pair"] == "eng>fra"
    words = valid_and_shown(frozen, capsys, monkeypatch)
    assert main([*words[1:], "--out", str(tmp_path / "run"), "--quiet"]) == 0, capsys.readouterr().err
