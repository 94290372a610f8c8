"""`mt-eval contamination`, `mt-eval validate --corpus`, the run card's record and the policy, as users meet them."""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
from pathlib import Path

import msgspec
import pytest

from gate_policies import LENIENT
from mt_eval.cli import main
from mt_eval.cli.contamination import EPILOG
from mt_eval.contamination.policy import require_clean
from mt_eval.contamination.record import ContaminationRecord
from mt_eval.harness.runcard import RunCard

REPO = Path(__file__).parent.parent
DEMO = REPO / "examples" / "data" / "eng-spa-demo.json"
FIXTURES = Path(__file__).parent / "fixtures" / "contamination"
MEMORIZER, CAREFUL = FIXTURES / "memorizer-eng-spa", FIXTURES / "careful-eng-spa"


def mt_eval(*args: str, cwd: Path = REPO) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "mt_eval.cli", *args], capture_output=True, text=True, timeout=120,
                          cwd=cwd)


def test_a_contaminated_plugin_is_caught_with_file_line_and_entry():
    shown = mt_eval("contamination", "--method", str(MEMORIZER), "--corpus", str(DEMO))
    assert shown.returncode == 1, shown.stderr
    lines = shown.stdout.splitlines()
    assert lines[1] == "CONTAMINATED: 8 hits on 4 corpus entries"
    assert '  glossary.tsv:3  demo-10 reference  exact, 6 of 6 words: "el maestro tiene un libro nuevo"' in lines
    assert '  pipeline.py:6  demo-12 source  exact, 8 of 8 words: "the student wants to speak with the teacher"' \
        in lines
    assert '  prompt.txt:5  demo-18 reference  exact, 6 of 6 words: "ellos comen pan y beben agua"' in lines
    assert "planted control: not run (the check has hits)" in lines
    assert "contamination: indexing 69 texts of 1 corpus file" in shown.stderr  # canaries and controls too


def test_a_clean_plugin_shows_its_planted_control_recall(tmp_path):
    shown = mt_eval("contamination", "--method", str(CAREFUL), "--corpus", str(DEMO), "--seed", "11",
                    "--report", str(tmp_path / "report.json"), "--quiet")
    assert shown.returncode == 0, shown.stdout + shown.stderr
    assert shown.stderr == ""
    assert "CLEAN: no corpus text found, and the planted control proves the check would have" in shown.stdout
    assert "planted control: 20 of 20 planted texts found (recall 1.00 ≥ floor 0.90), seed 11" in shown.stdout
    report = json.loads((tmp_path / "report.json").read_text())
    assert report["status"] == "clean" and report["control"]["seed"] == 11
    assert len(report["control"]["planted"]) == 20 and all(p["found"] for p in report["control"]["planted"])
    assert report["settings"]["ngram"] == 5 and report["settings"]["recall_floor"] == 0.9


def test_json_output_and_exit_status_of_unverified(tmp_path):
    bundle = tmp_path / "bundle"
    bundle.mkdir()
    (bundle / "escape").symlink_to(REPO)
    shown = mt_eval("contamination", "--method", str(bundle), "--corpus", str(DEMO), "--json", "--quiet")
    assert shown.returncode == 3
    report = json.loads(shown.stdout)
    assert report["status"] == "unverified" and report["findings"][0]["kind"] == "symlink-outside"


def test_against_compares_two_corpora(tmp_path):
    dev = tmp_path / "dev.tsv"
    dev.write_text("d1\tThe teacher has a new book.\tEl maestro tiene un libro nuevo.\nd2\tA different line.\tOtra.\n")
    refused = mt_eval("contamination", "--against", str(dev), "--corpus", str(DEMO), "--quiet")
    assert refused.returncode == 2 and "--accept-doubt first-column-ids" in refused.stderr  # the reader's doubt
    shown = mt_eval("contamination", "--against", str(dev), "--corpus", str(DEMO), "--quiet", "--columns",
                    "id,source,reference")
    assert shown.returncode == 1
    assert '  dev.tsv entry d1 (source)  demo-10 source  exact, 6 of 6 words: "the teacher has a new book"' \
        in shown.stdout.splitlines()


@pytest.mark.parametrize(("args", "message"), [
    (["--corpus", "x.json"], "give --method DIR (or --against FILE) and at least one --corpus FILE"),
    (["--method", "examples/lexicon-eng-spa"], "give --method DIR (or --against FILE)"),
    (["--method", "examples/lexicon-eng-spa", "--corpus", "missing.json"], "cannot read corpus"),
    (["--method", "nowhere", "--corpus", str(DEMO)], "nowhere is not a directory"),
    (["--method", "examples/lexicon-eng-spa", "--corpus", str(DEMO), "--near-duplicate", "2"],
     "--near-duplicate must be at most 1.0, got 2.0"),
    (["--method", "examples/lexicon-eng-spa", "--corpus", str(DEMO), "--recall-floor", "-0.5"],
     "--recall-floor must be at least 0.0, got -0.5"),
    (["--method", "examples/lexicon-eng-spa", "--corpus", str(DEMO), "--ngram", "1"],
     "--ngram must be at least 2, got 1"),
])
def test_bad_arguments_say_what_to_fix(args, message):
    shown = mt_eval("contamination", *args)
    assert shown.returncode == 2 and message in shown.stderr


@pytest.mark.parametrize(("where", "message"), [
    ("missing/report.json", "there is no directory"),
    (".", "is a directory: give a file, e.g. --report"),
])
def test_a_report_path_that_cannot_be_written_is_refused_before_the_check(tmp_path, where, message):
    shown = mt_eval("contamination", "--method", str(MEMORIZER), "--corpus", str(DEMO), "--report",
                    str(tmp_path / where))
    assert shown.returncode == 2 and message in shown.stderr, shown.stderr
    assert "indexing" not in shown.stderr and shown.stdout == ""  # refused before any work
    assert "Traceback" not in shown.stderr


def test_a_report_that_is_one_of_the_inputs_is_refused_and_the_corpus_kept(tmp_path):
    """Before, ``--report corp.json`` wrote the report over the corpus it had just checked, with exit status 0."""
    corpus = tmp_path / "corp.json"
    corpus.write_bytes(DEMO.read_bytes())
    shown = mt_eval("contamination", "--method", "examples/lexicon-eng-spa", "--corpus", str(corpus), "--report",
                    str(corpus), "--quiet")
    assert shown.returncode == 2, shown.stderr
    assert f"--report {corpus} is {corpus}, which the check reads: writing the report there would replace it" in \
        shown.stderr
    assert corpus.read_bytes() == DEMO.read_bytes()
    both = mt_eval("contamination", "--method", "examples/lexicon-eng-spa", "--against", str(DEMO), "--corpus",
                   str(DEMO))
    assert both.returncode == 2 and "give --method DIR or --against FILE, not both" in both.stderr


def test_a_report_that_fails_to_write_keeps_the_verdict_on_screen():
    shown = mt_eval("contamination", "--method", str(MEMORIZER), "--corpus", str(DEMO), "--report", "/dev/full",
                    "--quiet")
    assert shown.returncode == 2 and "Traceback" not in shown.stderr
    assert "CONTAMINATED: 8 hits on 4 corpus entries" in shown.stdout
    assert ("the check ran (contaminated), but its report could not be written to /dev/full: No space left on "
            "device") in shown.stderr


def test_max_sizes_accept_units():
    shown = mt_eval("contamination", "--method", "examples/lexicon-eng-spa", "--corpus", str(DEMO), "--quiet",
                    "--max-file-size", "1k", "--plant", "0")
    assert shown.returncode == 3
    assert "over the 1,024-byte limit (--max-file-size): not read  [not checked]" in shown.stdout
    assert mt_eval("contamination", "--method", ".", "--corpus", str(DEMO), "--max-file-size", "lots").returncode == 2


def test_help_examples_run_when_pasted():
    commands = [line.strip() for line in EPILOG.splitlines() if line.strip().startswith("mt-eval contamination")]
    first = shlex.split(commands[0])
    assert first[:2] == ["mt-eval", "contamination"]
    shown = mt_eval(*first[1:], "--quiet")
    assert shown.returncode == 0, shown.stdout  # the lexicon example is clean against the demo corpus
    assert "mt-eval contamination --method" in mt_eval("contamination", "--help").stdout


def test_validate_with_corpus_fails_a_contaminated_plugin(tmp_path):
    shown = mt_eval("validate", str(MEMORIZER), str(CAREFUL), "--corpus", str(DEMO))
    assert shown.returncode == 1
    assert "contamination check: CONTAMINATED, 8 hits (first: glossary.tsv:3 demo-10 source, exact;" in shown.stdout
    assert "the bundle contains evaluation data: glossary.tsv:3 has eng-spa-demo.json demo-10 (source, exact)" \
        in shown.stdout
    assert "contamination check: clean (planted control 20 of 20, recall 1.00 ≥ floor 0.90, seed 12345)" \
        in shown.stdout
    assert "1 of 2 plugins valid; 1 error, 0 warnings" in shown.stdout
    as_json = json.loads(mt_eval("validate", "--json", str(CAREFUL), "--corpus", str(DEMO)).stdout)
    assert as_json["ok"] is True and as_json["plugins"][0]["contamination"]["status"] == "clean"
    assert "contamination check" not in mt_eval("validate", str(CAREFUL)).stdout  # only with --corpus


def test_validate_strict_fails_an_unverified_check(tmp_path):
    plugin = tmp_path / "plugin"
    plugin.mkdir()
    for name in ("method.json", "pipeline.py", "glossary.tsv"):
        (plugin / name).write_bytes((CAREFUL / name).read_bytes())
    (plugin / ".git").mkdir()  # (a link the method never reads: in a plugin proper, the static scan refuses it)
    (plugin / ".git" / "escape").symlink_to(REPO / "examples")
    assert mt_eval("validate", str(plugin), "--corpus", str(DEMO)).returncode == 0
    strict = mt_eval("validate", "--strict", str(plugin), "--corpus", str(DEMO))
    assert strict.returncode == 1 and "warning:" in strict.stdout and "unverified" in strict.stdout
    assert mt_eval("validate", str(plugin), "--corpus", "missing.json").returncode == 1


def run_card(tmp_path: Path, *args: str, out: str = "run", status: int = 0) -> RunCard:
    assert main(["run", "--out", str(tmp_path / out), "--quiet", "--resamples", "100", "--corpus", str(DEMO),
                 *LENIENT, *args]) == status
    return msgspec.json.decode((tmp_path / out / "card.json").read_bytes(), type=RunCard)


def test_run_records_the_check_in_the_card(tmp_path, capsys):
    judged = tmp_path / "judged.json"  # (the lenient policy, judging the bundle as the shipped one does)
    judged.write_text(json.dumps({**json.loads(Path(LENIENT[1]).read_text()), "contamination": "not-contaminated"}))
    card = run_card(tmp_path, "--method", str(MEMORIZER), "--policy", str(judged), status=5)  # (no headline)
    record = card.contamination
    assert record is not None and record.status == "contaminated" and record.hits_total == 8
    assert card.gate is not None and card.gate.failures == [
        "contamination: the bundle contains evaluation data (8 hits on 4 corpus entries)"]
    assert (record.hits[0].file, record.hits[0].line, record.hits[0].entry_id) == ("glossary.tsv", 3, "demo-10")
    clean = run_card(tmp_path, "--method", str(CAREFUL), out="clean").contamination
    assert clean is not None and clean.status == "clean" and clean.recall == 1.0 and clean.seed == 12345
    assert len(clean.planted) == 20 and clean.recall_floor == 0.9
    skipped = run_card(tmp_path, "--method", str(CAREFUL), "--no-contamination-check", out="skipped").contamination
    assert skipped == ContaminationRecord(status="not-run", reasons=["skipped with --no-contamination-check"])


def test_run_prints_the_verdict_and_resume_reuses_it(tmp_path, capsys):
    out = tmp_path / "run"
    assert main(["run", "--method", str(CAREFUL), "--corpus", str(DEMO), "--out", str(out), "--resamples", "50",
                 *LENIENT]) == 0
    assert "contamination check: clean (planted control 20 of 20, recall 1.00" in capsys.readouterr().err
    saved = json.loads((out / "contamination.json").read_text())
    saved["record"]["reasons"] = ["kept from the first session"]
    (out / "contamination.json").write_text(json.dumps(saved))
    (out / "card.json").unlink()  # (the run as if stopped before its card: a complete run's resume changes nothing)
    assert main(["run", "--method", str(CAREFUL), "--corpus", str(DEMO), "--out", str(out), "--resume",
                 "--quiet", *LENIENT]) == 0
    card = msgspec.json.decode((out / "card.json").read_bytes(), type=RunCard)
    assert card.contamination is not None and card.contamination.reasons == ["kept from the first session"]


def test_cards_written_before_the_check_still_decode(tmp_path):
    card = msgspec.to_builtins(run_card(tmp_path, "--method", str(CAREFUL), "--no-contamination-check"))
    del card["contamination"]
    assert msgspec.convert(card, RunCard).contamination is None


@pytest.mark.parametrize(("record", "policy", "passed"), [
    ({"status": "clean", "recall": 1.0, "recall_floor": 0.9}, "verified-clean", True),
    ({"status": "clean", "recall": 0.5, "recall_floor": 0.9}, "verified-clean", False),
    ({"status": "unverified", "reasons": ["recall 0.5"]}, "verified-clean", False),
    ({"status": "unverified", "reasons": ["recall 0.5"]}, "not-contaminated", True),
    ({"status": "contaminated", "reasons": ["2 hits"]}, "not-contaminated", False),
    ({"status": "not-run", "reasons": ["skipped"]}, "verified-clean", False),
    (None, "not-contaminated", False),
    (None, "off", True),
    (ContaminationRecord(status="clean", recall=0.95, recall_floor=0.9), "verified-clean", True),
])
def test_policy_for_gates_and_publishing(record, policy, passed):
    result = require_clean(record, policy)
    assert result.passed is passed and (result.reasons == []) is passed
    with pytest.raises(ValueError, match="unknown contamination policy"):
        require_clean(record, "lenient")


def test_parallel_text_corpora_are_read_as_mt_eval_run_reads_them(tmp_path):
    (tmp_path / "test.en").write_text("The lighthouse keeper counts every ship that passes at night.\nHello.\n")
    (tmp_path / "test.es").write_text("El farero cuenta cada barco que pasa de noche.\nHola.\n")
    bundle = tmp_path / "bundle"
    bundle.mkdir()
    (bundle / "notes.md").write_text("# Notes\n\nel farero cuenta cada barco que pasa de noche\n")
    shown = mt_eval("contamination", "--method", str(bundle), "--source-file", str(tmp_path / "test.en"),
                    "--reference-file", str(tmp_path / "test.es"), "--quiet")
    assert shown.returncode == 1, shown.stderr
    assert '  notes.md:3  1 reference  exact, 9 of 9 words: "el farero cuenta cada barco que pasa de noche"' \
        in shown.stdout.splitlines()


def test_a_file_whose_name_is_not_utf8_is_named_with_its_escapes_not_a_traceback(tmp_path):
    """Its name is shown (and written as JSON) with the byte escaped; the check, --json and a run all complete."""
    import os
    import shutil

    bundle = tmp_path / "plugin"
    shutil.copytree(REPO / "examples" / "lexicon-eng-spa", bundle)
    with open(os.path.join(os.fsencode(bundle), b"notes-\xff.txt"), "w") as notes:
        notes.write("the student wants to speak with the teacher\n")  # a sentence of the demo corpus
    shown = mt_eval("contamination", "--method", str(bundle), "--corpus", str(DEMO), "--quiet")
    assert shown.returncode == 1 and "Traceback" not in shown.stderr, shown.stderr
    assert "notes-\\udcff.txt:1  demo-12 source  exact" in shown.stdout
    as_json = mt_eval("contamination", "--method", str(bundle), "--corpus", str(DEMO), "--quiet", "--json")
    assert as_json.returncode == 1 and "notes-\\\\udcff.txt" in as_json.stdout
    ran = mt_eval("run", "--method", str(bundle), "--corpus", str(DEMO), "--out", str(tmp_path / "run"), "--quiet",
                  "--resamples", "20", *LENIENT)
    assert (tmp_path / "run" / "card.json").exists(), ran.stderr


def test_the_command_a_contaminated_run_suggests_reads_its_corpus_as_the_run_did(tmp_path):
    """Before, a parallel-text run (or one with --columns) suggested `--corpus FILE`, which refuses that file."""
    entries = [e for e in json.loads(DEMO.read_text(encoding="utf-8"))["entries"] if e.get("reference")]
    (tmp_path / "par.en").write_text("".join(e["source"] + "\n" for e in entries), encoding="utf-8")
    (tmp_path / "par.es").write_text("".join(e["reference"] + "\n" for e in entries), encoding="utf-8")
    (tmp_path / "three.tsv").write_text("".join(f"{e['id']}\t{e['source']}\t{e['reference']}\n" for e in entries),
                                        encoding="utf-8")
    for reading in (["--source-file", "par.en", "--reference-file", "par.es"],
                    ["--corpus", "three.tsv", "--columns", "id,source,reference"]):
        done = mt_eval("run", "--method", str(MEMORIZER), *reading, "--pair", "eng>spa", "--out", "run", "--force",
                       *LENIENT, cwd=tmp_path)
        suggested = next(line for line in done.stderr.splitlines() if "CONTAMINATED" in line)
        command = shlex.split(suggested[suggested.index("mt-eval contamination"):suggested.index(" lists them all")])
        assert command[4:] == reading
        again = mt_eval(*command[1:], "--quiet", cwd=tmp_path)
        assert again.returncode == 1 and "CONTAMINATED: 8 hits on 4 corpus entries" in again.stdout, again.stderr
