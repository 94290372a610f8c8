"""Freeze manifests: `mt-eval freeze init|validate|show`, fail-closed validation that lists every problem at
once, and `mt-eval run --freeze` refusing a run that differs, naming each difference."""

from __future__ import annotations

import json
import re
import shlex
import shutil
from pathlib import Path

import pytest

from mt_eval.cli import main
from rigor_support import SCRIPTED, family_corpus, honest, run


@pytest.fixture
def plugin(tmp_path: Path) -> Path:
    copy = tmp_path / "method"
    shutil.copytree(SCRIPTED, copy, ignore=shutil.ignore_patterns("__pycache__"))
    return copy


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    return family_corpus(tmp_path / "corpus.json")


def init(tmp_path: Path, plugin: Path, corpus: Path, *more: str, out: str = "freeze.json") -> int:
    return main(["freeze", "init", "--method", str(plugin), "--corpus", str(corpus), "--out", str(tmp_path / out),
                 *honest(), "--resamples", "100", *more])  # (as rigor_support.run scores)


def test_init_validate_show_and_a_run_held_to_the_manifest(tmp_path: Path, plugin: Path, corpus: Path, capsys,
                                                           monkeypatch: pytest.MonkeyPatch):
    assert init(tmp_path, plugin, corpus, "--batch-size", "4") == 0
    assert f"wrote {tmp_path / 'freeze.json'}: status frozen" in capsys.readouterr().out
    manifest = json.loads((tmp_path / "freeze.json").read_text())
    assert manifest["status"] == "frozen" and manifest["freeze_version"] == "freeze/1"
    assert manifest["method"] == {"path": "method", "method_id": "scripted",
                                  "code_sha256": manifest["method"]["code_sha256"]}
    assert manifest["corpus"]["source"] == "written for tests" and manifest["corpus"]["license"] == "CC0-1.0"
    assert manifest["budgets"] == {"batch_size": 4, "concurrency": 8, "retries": 1, "retry_budget": 10,
                                   "timeout_s": 120.0}
    assert (manifest["latency"]["warmup_calls"], manifest["latency"]["hot_sample"],
            manifest["latency"]["repetitions"]) == (3, 10, 3)
    assert manifest["hardware"]["label"] and len(manifest["sdk"]["code_sha256"]) == 64
    assert len(manifest["labels"]["references_sha256"]) == 64 and len(manifest["labels"]["families_sha256"]) == 64
    assert main(["freeze", "validate", str(tmp_path / "freeze.json")]) == 0
    assert "valid and frozen" in capsys.readouterr().out
    monkeypatch.chdir(tmp_path)
    assert main(["freeze", "show", "freeze.json"]) == 0
    shown = capsys.readouterr().out
    assert "status frozen" in shown and "  batch_size: 4" in shown
    command = shown.split("run it with:\n  ", 1)[1].strip()
    words = shlex.split(command)
    assert words[:6] == ["mt-eval", "run", "--method", "method", "--corpus", "corpus.json"]
    assert words[-2:] == ["--freeze", "freeze.json"]
    assert main([*words[1:], "--out", str(tmp_path / "run"), "--quiet"]) == 0
    card = json.loads((tmp_path / "run" / "card.json").read_text())
    assert card["freeze"]["status"] == "frozen" and len(card["freeze"]["sha256"]) == 64


def test_a_run_that_differs_from_the_frozen_manifest_is_refused_naming_each_difference(
        tmp_path: Path, plugin: Path, corpus: Path, capsys):
    assert init(tmp_path, plugin, corpus) == 0
    capsys.readouterr()
    freeze = str(tmp_path / "freeze.json")
    code, card = run(tmp_path / "run", corpus, *honest(), "--freeze", freeze, "--batch-size", "2",
                     "--latency-repetitions", "5", "--limit", "20", "--model", "m-2", method=plugin)
    err = capsys.readouterr().err
    assert code == 1 and card is None and not (tmp_path / "run" / "results.jsonl").exists()
    assert f"this run differs from the frozen manifest {freeze} in " in err and "nothing was run" in err
    for difference in ["budgets.batch_size: the freeze says 8, this run has 2 (give --batch-size 8)",
                       "latency.repetitions: the freeze says 3, this run has 5 (give --latency-repetitions 3)",
                       "corpus.entries_selected: the freeze says 34, this run has 20",
                       "config.model: the freeze says null, this run has 'm-2' (leave out --model)"]:
        assert difference in err, err
    (plugin / "behaviours.py").write_text((plugin / "behaviours.py").read_text() + "\n# changed after the freeze\n")
    code, _ = run(tmp_path / "run", corpus, *honest(), "--freeze", freeze, method=plugin)
    err = capsys.readouterr().err
    assert code == 1 and f"--freeze {freeze} does not validate" in err
    assert "$.method.code_sha256: the method's files hash to" in err and "they changed since the freeze" in err


def test_a_run_by_another_mt_eval_commit_is_told_how_to_run_the_frozen_one(tmp_path: Path, plugin: Path,
                                                                          corpus: Path, capsys):
    """Before: "sdk.commit: the freeze says 'abc…', this run has '…'", the one difference without a way forward."""
    assert init(tmp_path, plugin, corpus) == 0
    capsys.readouterr()
    path = tmp_path / "freeze.json"
    manifest = json.loads(path.read_text())
    manifest["sdk"]["commit"] = "0123456789abcdef0123456789abcdef01234567"
    path.write_text(json.dumps(manifest))
    code, _ = run(tmp_path / "run", corpus, *honest(), "--freeze", str(path), method=plugin)
    err = capsys.readouterr().err
    assert code == 1 and "sdk.commit: the freeze says '0123456789abcdef0123456789abcdef01234567', this run has " in err
    assert ("(run the mt-eval the freeze was made with: git checkout 0123456789abcdef0123456789abcdef01234567 in "
            "mt-eval's checkout; or, before the evaluation starts, freeze again with this one)") in err, err


def test_validate_lists_every_missing_or_inconsistent_item_at_once(tmp_path: Path, plugin: Path, corpus: Path,
                                                                   capsys):
    assert init(tmp_path, plugin, corpus) == 0
    path = tmp_path / "freeze.json"
    manifest = json.loads(path.read_text())
    manifest["labels"]["families_sha256"] = None
    manifest["corpus"]["license"] = None
    manifest["hardware"]["label"] = "a faster machine"
    manifest["latency"]["hot"] = "whatever the method reports"
    manifest["budgets"]["retries_per_entry"] = 3
    path.write_text(json.dumps(manifest))
    corpus.write_text(corpus.read_text().replace("Sentence number 1.", "Sentence number one."))
    capsys.readouterr()
    assert main(["freeze", "validate", str(path)]) == 1
    out = capsys.readouterr().out
    for where in ['$.budgets.retries_per_entry: unknown field "retries_per_entry"']:
        assert where in out
    assert main(["freeze", "validate", str(path), "--json"]) == 1
    report = json.loads(capsys.readouterr().out)
    assert report["valid"] is False and [p["path"] for p in report["problems"]] == ["$.budgets.retries_per_entry"]
    del manifest["budgets"]["retries_per_entry"]
    path.write_text(json.dumps(manifest))
    assert main(["freeze", "validate", str(path), "--json"]) == 1
    found = {p["path"]: p["message"] for p in json.loads(capsys.readouterr().out)["problems"]}
    assert set(found) == {"$.labels.families_sha256", "$.corpus.license", "$.hardware.label", "$.latency.hot",
                          "$.corpus.sha256"}
    assert found["$.corpus.license"] == "missing: a frozen manifest needs it"
    assert "the corpus changed since the freeze" in found["$.corpus.sha256"]


def test_a_manifest_that_cannot_be_complete_is_a_draft(tmp_path: Path, plugin: Path, capsys):
    corpus = family_corpus(tmp_path / "anonymous.json", dataset={"source": None, "license": None})
    assert init(tmp_path, plugin, corpus) == 1
    out = capsys.readouterr().out
    assert "status draft" in out and "missing $.corpus.source: say where the corpus comes from" in out
    assert "missing $.corpus.license" in out
    assert main(["freeze", "validate", str(tmp_path / "freeze.json")]) == 1
    assert "valid, but a draft, not frozen" in capsys.readouterr().out
    code, _ = run(tmp_path / "run", corpus, "--freeze", str(tmp_path / "freeze.json"), method=plugin)
    assert code == 1 and "only a frozen manifest can hold a run" in capsys.readouterr().err
    assert init(tmp_path, plugin, corpus, "--corpus-source", "our team", "--corpus-license", "CC-BY-4.0",
                out="given.json") == 0
    assert json.loads((tmp_path / "given.json").read_text())["corpus"]["license"] == "CC-BY-4.0"
    capsys.readouterr()
    # the source and licence the freeze gives hold the run (they differed from the corpus's none, for ever)
    code, card = run(tmp_path / "held", corpus, *honest(), "--freeze", str(tmp_path / "given.json"), method=plugin)
    assert code == 0 and card is not None and card.freeze is not None, capsys.readouterr().err
    assert init(tmp_path, plugin, corpus, out="given.json") == 1
    assert "exists: give --force" in capsys.readouterr().err


def test_a_selection_is_frozen_and_shown_as_the_options_that_select_it(tmp_path: Path, plugin: Path, corpus: Path,
                                                                       capsys):
    assert init(tmp_path, plugin, corpus, "--ids", "s02..s09", "--limit", "5") == 0
    manifest = json.loads((tmp_path / "freeze.json").read_text())
    assert manifest["corpus"]["entries_selected"] == 5 and manifest["corpus"]["entries_in_corpus"] == 34
    assert len(manifest["corpus"]["subset_sha256"]) == 64
    capsys.readouterr()
    assert main(["freeze", "show", str(tmp_path / "freeze.json")]) == 0
    assert "--ids s02..s09 --limit 5" in capsys.readouterr().out
    code, _ = run(tmp_path / "run", corpus, *honest(), "--ids", "s02..s09", "--limit", "6", "--freeze",
                  str(tmp_path / "freeze.json"), method=plugin)
    err = capsys.readouterr().err
    assert code == 1 and "corpus.selection.limit: the freeze says 5, this run has 6 (give --limit 5)" in err


def test_bad_manifest_files_are_named(tmp_path: Path, capsys):
    bad = tmp_path / "bad.json"
    bad.write_text('{"freeze_version": "freeze/2"}')
    assert main(["freeze", "validate", str(bad)]) == 1
    out = capsys.readouterr().out
    assert f"{bad} $.freeze_version" in out and f"{bad} $.sdk" in out
    assert main(["freeze", "show", str(tmp_path / "missing.json")]) == 1
    assert "is not a freeze manifest" in capsys.readouterr().err
    assert main(["freeze"]) == 2


@pytest.mark.parametrize(("section", "field", "value", "bound"), [
    ("config", "seed", -1, ">= 0"), ("latency", "repetitions", 0, ">= 1"),
    # beyond what --latency-warmup, --latency-repetitions and --resamples take: a run could never match it
    ("latency", "warmup_calls", 101, "<= 100"), ("latency", "repetitions", 101, "<= 100"),
    ("scoring", "resamples", 100_001, "<= 100000")])
def test_a_value_no_option_accepts_makes_a_manifest_invalid(tmp_path: Path, plugin: Path, corpus: Path, capsys,
                                                            section: str, field: str, value: int, bound: str):
    assert init(tmp_path, plugin, corpus) == 0
    path = tmp_path / "freeze.json"
    manifest = json.loads(path.read_text())
    manifest[section][field] = value
    path.write_text(json.dumps(manifest))
    capsys.readouterr()
    assert main(["freeze", "validate", str(path), "--json"]) == 1
    [problem] = json.loads(capsys.readouterr().out)["problems"]
    assert problem["path"] == f"$.{section}.{field}" and bound in problem["message"]


@pytest.mark.parametrize(("out", "message"), [
    ("adir", "--out {tmp}/adir is a directory: give the file to write, e.g. --out {tmp}/adir/freeze.json"),
    ("afile/x.json", "cannot write --out {tmp}/afile/x.json: {tmp}/afile is a file, not a directory"),
    pytest.param("/proc/x.json", "cannot write --out /proc/x.json: No such file or directory",
                 marks=pytest.mark.skipif(not Path("/proc/self").is_dir(), reason="Linux's /proc")),
])
def test_an_out_that_cannot_be_written_is_named_before_any_work(tmp_path: Path, plugin: Path, corpus: Path, capsys,
                                                                out: str, message: str):
    (tmp_path / "adir").mkdir()
    (tmp_path / "afile").write_text("mine")
    assert init(tmp_path, plugin, corpus, "--force", out=out) == 1
    err = capsys.readouterr().err
    assert err == f"mt-eval freeze init: {message.format(tmp=tmp_path)}\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["adir", "afile", "corpus.json", "method"]


@pytest.mark.parametrize("with_references", [True, False])
def test_parallel_text_is_frozen_as_its_files_and_shown_as_the_options_that_read_them(
        tmp_path: Path, plugin: Path, capsys, monkeypatch: pytest.MonkeyPatch, with_references: bool):
    monkeypatch.chdir(tmp_path)
    Path("src.txt").write_text("Hello.\nGood morning.\nThank you.\n")
    Path("ref.txt").write_text("Hola.\nBuenos días.\nGracias.\n")
    files = ["--source-file", "src.txt", *(["--reference-file", "ref.txt"] if with_references else [])]
    assert main(["freeze", "init", "--method", str(plugin), *files, "--pair", "eng>spa", "--corpus-source", "ours",
                 "--corpus-license", "CC0-1.0", "--resamples", "50"]) == 0
    corpus = json.loads(Path("freeze.json").read_text())["corpus"]
    assert (corpus["path"], corpus["format"]) == ("src.txt", "parallel")
    assert corpus["reference_path"] == ("ref.txt" if with_references else None)
    capsys.readouterr()
    assert main(["freeze", "validate", "freeze.json"]) == 0
    assert "valid and frozen" in capsys.readouterr().out
    assert main(["freeze", "show", "freeze.json"]) == 0
    words = shlex.split(capsys.readouterr().out.split("run it with:\n  ", 1)[1].strip())
    assert words[2:4 + len(files)] == ["--method", "method", *files]
    gated = 5 if with_references else 0  # with references, no canaries to pass the gate with
    assert main([*words[1:], "--out", "run", "--quiet"]) == gated
    assert json.loads(Path("run/card.json").read_text())["freeze"]["status"] == "frozen"
    if with_references:
        Path("ref.txt").write_text("Hola.\nBuenos días.\nMuchas gracias.\n")
        assert main(["freeze", "validate", "freeze.json"]) == 1
        assert "src.txt and ref.txt hash to" in capsys.readouterr().out
        Path("ref.txt").unlink()
        assert main(["freeze", "validate", "freeze.json"]) == 1
        assert "$.corpus.reference_path: cannot read ref.txt" in capsys.readouterr().out


@pytest.mark.parametrize(("edit", "where", "words"), [
    (lambda text: text.replace('"pair": "eng>spa"', '"pair": "nonsense"'), "$.corpus.pair",
     '"nonsense" is not a "source>target" language pair'),
    (lambda text: text.replace('"temperature": null', '"temperature": 1e999'), "$.config.temperature",
     "must be <= 2, got a number too large to hold: 1e999"),
    (lambda text: text.replace('"timeout_s": 120.0', '"timeout_s": 1e999'), "$.budgets.timeout_s",
     "inf is not a number a run takes"),
    (lambda text: text.replace('"seed": 12345', '"seed": 9007199254740993'), "$.config.seed", ""),
    # (both passed, and a run held to the manifest ran anyway)
    (lambda text: re.sub(r'"format": "[a-z]+"', '"format": "x"', text), "$.corpus.format", '"x" is not a valid'),
    (lambda text: re.sub(r'"created_at": "[^"]*"', '"created_at": "x"', text), "$.created_at",
     "an ISO 8601 date and time"),
    (lambda text: json.dumps({**json.loads(text), "corpus": {**json.loads(text)["corpus"], "sha256": "x"}}),
     "$.corpus.sha256", '"x" is not a SHA-256 in hex'),  # (it was "is not matching ^[0-9a-f]{64}$")
])
def test_a_pair_or_a_number_no_run_takes_makes_a_manifest_invalid(tmp_path: Path, plugin: Path, corpus: Path, capsys,
                                                                   edit, where: str, words: str):
    assert init(tmp_path, plugin, corpus) == 0
    path = tmp_path / "freeze.json"
    text = json.dumps(json.loads(path.read_text()))
    assert edit(text) != text
    path.write_text(edit(text))
    capsys.readouterr()
    assert main(["freeze", "validate", str(path), "--json"]) == 1
    [problem] = json.loads(capsys.readouterr().out)["problems"]
    assert problem["path"] == where and words in problem["message"]


@pytest.mark.parametrize(("given", "words"), [
    (["--seed", str(2 ** 53 + 1)], "argument --seed: must be from 0 to 9007199254740991, got 9007199254740993"),
    (["--param", "k=NaN"], "argument --param: 'k=NaN': NaN is not a JSON value"),
    (["--param", "k=-Infinity"], "argument --param: 'k=-Infinity': -Infinity is not a JSON value"),
    (["--param", "k=1", "--param", "j=0", "--param", "k=2"], "argument --param: k is given twice ('k=1', then "
                                                               "'k=2'): give each parameter once"),
    (["--max-tokens", "-5"], "argument --max-tokens: must be at least 1, got -5"),
    (["--temperature", "2.5"], "argument --temperature: must be a number from 0 to 2, got 2.5"),
])
def test_init_refuses_a_seed_or_param_that_could_not_be_read_back(tmp_path: Path, plugin: Path, corpus: Path, capsys,
                                                                  given: list[str], words: str):
    try:
        code = init(tmp_path, plugin, corpus, *given)
    except SystemExit as exc:  # argparse refuses a value of the wrong type
        code = exc.code
    assert code == 2
    assert words in capsys.readouterr().err and not (tmp_path / "freeze.json").exists()


def test_a_large_whole_param_is_frozen_as_every_runtime_reads_it(tmp_path: Path, plugin: Path, corpus: Path):
    assert init(tmp_path, plugin, corpus, "--param", "big=123456789012345678901", "--param", "whole=3.0") == 0
    params = json.loads((tmp_path / "freeze.json").read_text())["config"]["params"]
    assert params["big"] == 1.2345678901234568e20 and params["whole"] == 3
    assert main(["freeze", "validate", str(tmp_path / "freeze.json")]) == 0


def test_a_param_true_is_not_the_frozen_or_recorded_1(tmp_path: Path, plugin: Path, corpus: Path, capsys):
    """Python's True == 1 let --param beam=true pass a freeze of beam=1, and resume a run recorded with it: the method
    was given another value than the records say."""
    assert init(tmp_path, plugin, corpus, "--param", "beam=1") == 0
    capsys.readouterr()
    code, card = run(tmp_path / "run", corpus, *honest(), "--freeze", str(tmp_path / "freeze.json"), "--param",
                     "beam=true", method=plugin)
    assert code == 1 and card is None
    assert "config.params.beam: the freeze says 1, this run has true (give --param beam=1)" in capsys.readouterr().err
    code, card = run(tmp_path / "plain", corpus, *honest(), "--param", "beam=1", method=plugin)
    assert card is not None
    capsys.readouterr()
    code, _ = run(tmp_path / "plain", corpus, *honest(), "--param", "beam=true", "--resume", method=plugin)
    err = capsys.readouterr().err
    assert code == 1 and "cannot resume" in err and "the run configuration changed since the run started" in err, err


@pytest.mark.parametrize("out", ["corpus.json", "method/freeze.json", "method/method.json"])
def test_init_never_writes_the_manifest_over_or_among_what_it_freezes(tmp_path: Path, plugin: Path, corpus: Path,
                                                                      capsys, out: str):
    """Even with --force: over the corpus it would be lost, and in the method's folder the manifest would change the
    hash it records (so it would never validate, however often frozen again)."""
    before = {path: path.read_bytes() for path in [corpus, *sorted(plugin.rglob("*"))] if path.is_file()}
    assert init(tmp_path, plugin, corpus, "--force", out=out) == 1
    err = capsys.readouterr().err
    assert ("is the corpus file the manifest freezes" if out == "corpus.json" else
            "is inside the method's folder") in err
    assert {path: path.read_bytes() for path in [corpus, *sorted(plugin.rglob("*"))] if path.is_file()} == before


def test_init_without_a_corpus_or_with_a_pair_that_is_none_is_a_usage_error(tmp_path: Path, plugin: Path, corpus: Path,
                                                                             capsys):
    """Exit 2 with the usage, as `mt-eval run` says the same mistakes (before: exit 1, no usage)."""
    assert main(["freeze", "init", "--method", str(plugin), "--out", str(tmp_path / "f.json")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("usage: mt-eval freeze init") and "argument --corpus: is required" in err
    with pytest.raises(SystemExit) as parsed:  # (argparse's own: the option's type refuses it)
        init(tmp_path, plugin, corpus, "--pair", "xx")
    assert parsed.value.code == 2
    assert "error: argument --pair: 'xx' is not a language pair" in capsys.readouterr().err
    assert not (tmp_path / "f.json").exists() and not (tmp_path / "freeze.json").exists()


def test_init_refuses_a_piped_corpus_whose_file_could_not_be_read_again(tmp_path: Path, plugin: Path, corpus: Path,
                                                                        capsys):
    """A pipe's bytes are gone once read: a manifest naming /proc/N/fd/pipe:[…] as its corpus was written as frozen
    (exit 0), and it never validated, nor could a run be held to it."""
    import os

    read_end, write_end = os.pipe()
    os.write(write_end, corpus.read_bytes())
    os.close(write_end)
    try:
        assert init(tmp_path, plugin, Path(f"/dev/fd/{read_end}")) == 1
    finally:
        os.close(read_end)
    err = capsys.readouterr().err
    assert f"--corpus reads /dev/fd/{read_end}, a pipe" in err and "write it to a file" in err
    assert not (tmp_path / "freeze.json").exists()
    assert init(tmp_path, plugin, corpus) == 0  # (the file itself is frozen, as ever)
    assert main(["freeze", "validate", str(tmp_path / "freeze.json")]) == 0


def test_a_corpus_file_missing_from_its_path_is_said_with_the_fix(tmp_path: Path, plugin: Path, corpus: Path, capsys):
    """Every other problem of `freeze validate` had a "fix:" line; a corpus no longer at corpus.path had none."""
    assert init(tmp_path, plugin, corpus) == 0
    corpus.rename(tmp_path / "moved.json")
    capsys.readouterr()
    assert main(["freeze", "validate", str(tmp_path / "freeze.json")]) == 1
    assert (f"$.corpus.path: cannot read {corpus}: No such file or directory\n"
            "      fix: restore the frozen file there, or give its path, relative to the manifest or absolute\n"
            ) in capsys.readouterr().out


@pytest.mark.parametrize(("damage", "fix"), [
    ("moved", "restore the frozen policy file there, or give its path, relative to the manifest or absolute"),
    ("garbled", "restore the frozen policy, or freeze again"),
], ids=["moved", "garbled"])
def test_a_policy_file_that_cannot_be_read_is_said_with_the_fix(tmp_path: Path, plugin: Path, corpus: Path, capsys,
                                                                damage: str, fix: str):
    """A corpus file gone had a "fix:" line in `freeze validate`; a gate policy file gone (or garbled) had none."""
    policy = tmp_path / "policy.json"
    policy.write_bytes((Path(__file__).parent.parent / "examples" / "policies" / "no-abstention.json").read_bytes())
    assert init(tmp_path, plugin, corpus, "--policy", str(policy)) == 0
    if damage == "moved":
        policy.rename(tmp_path / "moved.json")
    else:
        policy.write_text("{", encoding="utf-8")
    capsys.readouterr()
    assert main(["freeze", "validate", str(tmp_path / "freeze.json")]) == 1
    out = capsys.readouterr().out
    assert "$.scoring.policy_path: the gate policy cannot be read: " in out
    assert f"      fix: {fix}\n" in out
