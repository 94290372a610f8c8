"""A corpus whose name gives no format — a pipe (``--corpus <(zcat dev.jsonl.gz)``), a FIFO, a file without
extension — is read once, its format recognised from its content: ``[`` a JSON list, ``{`` JSON lines (or one
upstream object), anything else TSV. Before, each was refused for its name."""

from __future__ import annotations

import gzip
import hashlib
import json
import os
import re
import shlex
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path

import msgspec
import pytest

from gate_policies import LENIENT
from mt_eval.cli import main
from mt_eval.corpus import CorpusError, CorpusSpec, load_corpus
from mt_eval.harness.runcard import RunCard
from test_corpus import refusal, write

REPO = Path(__file__).parent.parent
DEMO = REPO / "examples" / "data" / "eng-spa-demo.json"
CAREFUL = Path(__file__).parent / "fixtures" / "contamination" / "careful-eng-spa"
SCRIPTED = str(Path(__file__).parent / "fixtures" / "methods")  # copies the source
TEXTS = [("Good morning.", "Buenos días."), ("Thank you.", "Gracias."), ("Good night.", "Buenas noches.")]
TSV = "".join(f"{source}\t{reference}\n" for source, reference in TEXTS)
JSONL = "".join(json.dumps({"source": source, "reference": reference}) + "\n" for source, reference in TEXTS)
JSON_LIST = json.dumps([{"source": source, "reference": reference} for source, reference in TEXTS], indent=2)
UPSTREAM = json.dumps({"language_pair": {"source": "eng", "target": "spa"},
                       "entries": [{"id": str(n), "source": s, "reference": r} for n, (s, r) in enumerate(TEXTS, 1)]})

pytestmark = pytest.mark.skipif(os.name != "posix", reason="FIFOs")


@contextmanager
def fifo_holding(tmp_path: Path, data: bytes, name: str = "corpus") -> Iterator[Path]:
    """A FIFO that a thread writes ``data`` into once (a pipe can be read only once), removed afterwards."""
    path = tmp_path / name
    os.mkfifo(path)

    def write_once() -> None:
        with suppress(BrokenPipeError):  # (closed unread when the test failed)
            path.write_bytes(data)

    writer = threading.Thread(target=write_once, daemon=True)
    writer.start()
    try:
        yield path
    finally:
        if writer.is_alive():  # never opened for reading: open it, so that the writer ends
            reader = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
            writer.join(10)
            os.close(reader)
        writer.join(10)
        path.unlink()


def entries(path: Path) -> list[tuple[str, str]]:
    return [(entry["source"], entry["reference"]) for entry in load_corpus(CorpusSpec(path=path)).entries]


@pytest.mark.parametrize(("content", "kind"), [(TSV, "tsv"), (JSONL, "jsonl"), (JSON_LIST, "json"),
                                               (UPSTREAM, "json"), ("\n  \n" + JSONL, "jsonl")],
                         ids=["tsv", "jsonl", "json-list", "upstream-json", "jsonl-after-blank-lines"])
def test_a_file_without_extension_is_read_as_its_content_says(tmp_path: Path, content: str, kind: str):
    path = write(tmp_path, "corpus", content)
    corpus = load_corpus(CorpusSpec(path=path))
    assert corpus.format == kind and [(e["source"], e["reference"]) for e in corpus.entries] == TEXTS
    assert corpus.sha256 == hashlib.sha256(path.read_bytes()).hexdigest()
    assert entries(write(tmp_path, "corpus.gz", gzip.compress(content.encode()))) == TEXTS


def test_a_fifo_is_read_once_whatever_its_name_and_gzip_is_recognised_by_its_bytes(tmp_path: Path):
    with fifo_holding(tmp_path, JSONL.encode()) as path:
        assert entries(path) == TEXTS
    with fifo_holding(tmp_path, gzip.compress(TSV.encode()), "piped.data") as path:  # (no format in its name)
        assert entries(path) == TEXTS


def test_content_that_is_no_format_says_what_was_expected(tmp_path: Path):
    message = str(refusal(write(tmp_path, "corpus", "\n \n\t\n")))
    assert message == (f"corpus {tmp_path / 'corpus'}: holds only blank lines: no corpus format could be "
                       "recognised; give a corpus: a JSON list of entries (its first character [), JSON lines (one "
                       "entry object per line, the first character {) or TSV (source<TAB>reference per line)")
    assert "is empty (0 bytes)" in str(refusal(write(tmp_path, "nothing", b"")))
    with pytest.raises(CorpusError, match="--columns names the columns of a TSV corpus, and this one holds JSON "
                                          "lines; leave --columns out"):
        load_corpus(CorpusSpec(path=write(tmp_path, "corpus", JSONL), columns=["source", "reference"]))
    with pytest.raises(CorpusError, match="line 1 holds a carriage return"):  # (TSV is read line by line)
        load_corpus(CorpusSpec(path=write(tmp_path, "corpus", "Hi\rthere\tHola\nBye\tAdiós\n")))
    assert "unsupported format" in str(refusal(write(tmp_path, "dev.csv", TSV)))  # (its name says what it is)


def test_contamination_reads_a_corpus_from_a_fifo(tmp_path: Path, capsys):
    with fifo_holding(tmp_path, DEMO.read_bytes()) as path:
        assert main(["contamination", "--method", str(CAREFUL), "--corpus", str(path), "--quiet"]) == 0
    out = capsys.readouterr().out
    assert "against corpus (36 entries)\nCLEAN: no corpus text found" in out


def test_contamination_reads_a_corpus_given_by_process_substitution(tmp_path: Path):
    compressed = write(tmp_path, "test.jsonl.gz", gzip.compress(b"".join(
        msgspec.json.encode(entry) + b"\n" for entry in json.loads(DEMO.read_text())["entries"])))
    command = (f"{shlex.quote(sys.executable)} -m mt_eval.cli contamination --method {shlex.quote(str(CAREFUL))} "
               f"--corpus <(zcat {shlex.quote(str(compressed))}) --quiet")
    shown = subprocess.run(["bash", "-c", command], capture_output=True, text=True, timeout=120, cwd=REPO)
    assert shown.returncode == 0, shown.stderr
    assert "(36 entries)\nCLEAN: no corpus text found" in shown.stdout


def run(tmp_path: Path, corpus: Path, out: str) -> RunCard:
    assert main(["run", "--method", SCRIPTED, "--pair", "eng>spa", "--out", str(tmp_path / out), "--resamples", "50",
                 "--quiet", *LENIENT, "--corpus", str(corpus)]) == 0
    return msgspec.json.decode((tmp_path / out / "card.json").read_bytes(), type=RunCard)


def test_run_reads_a_corpus_from_a_fifo_and_from_a_file_without_extension(tmp_path: Path, capsys):
    with fifo_holding(tmp_path, UPSTREAM.encode()) as path:
        card = run(tmp_path, path, "piped")
    assert [(r.id, r.predicted) for r in card.results] == [("1", "Good morning."), ("2", "Thank you."),
                                                           ("3", "Good night.")]
    assert card.metrics is not None and card.corpus.sha256 == hashlib.sha256(UPSTREAM.encode()).hexdigest()
    card = run(tmp_path, write(tmp_path, "dev", TSV), "unnamed")
    assert card.corpus.entries == 3 and card.metrics is not None
    assert card.corpus.reading is not None and card.corpus.reading.columns == ["source", "reference"]
    capsys.readouterr()
    assert main(["run", "--method", SCRIPTED, "--pair", "eng>spa", "--out", str(tmp_path / "blank"),
                 "--corpus", str(write(tmp_path, "blank-lines", "\n\n"))]) == 1
    assert "holds only blank lines: no corpus format could be recognised" in capsys.readouterr().err


def translated(tmp_path: Path, data: bytes, *options: str) -> subprocess.CompletedProcess[str]:
    """``mt-eval translate --file FIFO --json`` (the method copies each source), a thread writing ``data`` once."""
    with fifo_holding(tmp_path, data) as path:
        return subprocess.run([sys.executable, "-m", "mt_eval.cli", "translate", SCRIPTED, "--pair", "eng>spa",
                               "--file", str(path), "--json", *options], capture_output=True, text=True, timeout=120)


def shown(done: subprocess.CompletedProcess[str]) -> list[tuple[str, str]]:
    assert done.returncode == 0, done.stderr
    return [(result["id"], result["predicted"]) for result in map(json.loads, done.stdout.splitlines())]


WITH_IDS = "".join(json.dumps({"id": f"k{n}", "source": source}) + "\n" for n, (source, _) in enumerate(TEXTS))


@pytest.mark.parametrize("content", [WITH_IDS.encode(), gzip.compress(WITH_IDS.encode())], ids=["jsonl", "gzip"])
def test_translate_reads_a_corpus_from_a_fifo_as_run_does(tmp_path: Path, content: bytes):
    """Before: a pipe (`--file <(zcat dev.jsonl.gz)`) was read as text, each JSON line translated as a sentence."""
    assert shown(translated(tmp_path, content)) == [("k0", "Good morning."), ("k1", "Thank you."),
                                                    ("k2", "Good night.")]


def test_translate_reads_upstream_json_from_a_fifo_and_from_standard_input(tmp_path: Path):
    expected = [("1", "Good morning."), ("2", "Thank you."), ("3", "Good night.")]
    assert shown(translated(tmp_path, UPSTREAM.encode())) == expected
    dash = subprocess.run([sys.executable, "-m", "mt_eval.cli", "translate", SCRIPTED, "--pair", "eng>spa", "--file",
                           "-", "--json"], input=JSON_LIST, capture_output=True, text=True, timeout=120)
    assert shown(dash) == expected


def test_translate_reads_text_from_a_fifo_as_text_and_a_tsv_one_with_its_columns(tmp_path: Path):
    assert shown(translated(tmp_path, b"Hello.\n\n  [not JSON] is text too\n")) == [
        ("1", "Hello."), ("2", ""), ("3", "  [not JSON] is text too")]
    refused = translated(tmp_path, TSV.encode())  # (TSV cannot be told from text holding TABs)
    assert refused.returncode == 2 and refused.stdout == ""
    assert ("hold TAB-separated columns" in refused.stderr and "a TSV corpus from a pipe is read with mt-eval run's "
            "rules when named .tsv: save it as FILE.tsv and give --file FILE.tsv (or give its --columns)"
            in refused.stderr), refused.stderr
    assert shown(translated(tmp_path, TSV.encode(), "--columns", "source,reference")) == [
        ("1", "Good morning."), ("2", "Thank you."), ("3", "Good night.")]
    assert [predicted for _, predicted in shown(translated(tmp_path, TSV.encode(), "--accept-doubt",
                                                           "tabs-in-parallel-text"))] == TSV.splitlines()
    stray = translated(tmp_path, b"Hi\rthere\nBye\n")  # (text is read line by line, as from a file)
    assert stray.returncode == 2 and "line 1 holds a carriage return (CR) that does not end it" in stray.stderr


def test_contamination_reads_a_tsv_corpus_from_a_fifo_with_its_columns(tmp_path: Path, capsys):
    """Before: --columns was given only to a corpus named .tsv, so a piped one was refused for its column of ids."""
    entries = [e for e in json.loads(DEMO.read_text(encoding="utf-8"))["entries"] if e.get("reference")]
    three = "".join(f"{n}\t{e['source']}\t{e['reference']}\n" for n, e in enumerate(entries, start=1))
    with fifo_holding(tmp_path, three.encode()) as path:
        assert main(["contamination", "--method", str(CAREFUL), "--corpus", str(path), "--quiet",
                     "--columns", "id,source,reference"]) == 0
    assert f"against corpus ({len(entries)} entries)\nCLEAN: no corpus text found" in capsys.readouterr().out


def substituted(tmp_path: Path, corpus: Path, *options: str) -> subprocess.CompletedProcess[str]:
    """``mt-eval run --corpus <(cat CORPUS)`` in bash, in ``tmp_path`` (its run directory its default one)."""
    command = (f"{shlex.quote(sys.executable)} -m mt_eval.cli run --method {shlex.quote(SCRIPTED)} --pair 'eng>spa' "
               f"--resamples 50 --latency-sample 0 --no-contamination-check "
               f"{shlex.join(LENIENT)} --corpus <(cat {shlex.quote(str(corpus))}) {shlex.join(options)}")
    return subprocess.run(["bash", "-c", command], capture_output=True, text=True, timeout=120, cwd=tmp_path)


def test_a_corpus_given_by_process_substitution_is_named_by_its_path_and_its_run_directory_by_its_content(
        tmp_path: Path):
    """Before: /dev/fd/63 was named "63" — in the messages, the card and the run directory (runs/METHOD__63, the
    same for every piped corpus)."""
    done = substituted(tmp_path, write(tmp_path, "dev.jsonl", JSONL))
    assert done.returncode == 0, done.stderr
    piped = re.match(r"corpus (/dev/fd/\d+): JSONL; ", done.stderr)
    assert piped is not None, done.stderr
    assert f"scripted on {piped[1]} (eng>spa): 3 entries, 0 errors" in done.stdout
    digest = hashlib.sha256(JSONL.encode()).hexdigest()
    (directory,) = (tmp_path / "runs").iterdir()
    assert directory.name.endswith(f"__piped-{digest[:12]}")
    card = msgspec.json.decode((directory / "card.json").read_bytes(), type=RunCard)
    assert card.corpus.name == piped[1] and card.corpus.path == piped[1]


def test_a_piped_corpus_s_conversion_hint_names_no_file_after_its_descriptor(tmp_path: Path):
    """Before: ``iconv -f utf-16le -t utf-8 63 > 63.utf8``, a file 63 that is not there."""
    done = substituted(tmp_path, write(tmp_path, "dev.jsonl", JSONL.encode("utf-16-le")))
    assert done.returncode == 1 and re.search(
        r"corpus (/dev/fd/\d+): holds NUL bytes \(the first at line 1\), which no text has: it looks like UTF-16 "
        r"without its byte-order mark; convert it to UTF-8, e.g. \(the command writing \1\) \| "
        r"iconv -f utf-16le -t utf-8 > corpus\.utf8$", done.stderr.strip()), done.stderr


def test_a_corpus_on_standard_input_is_named_so_and_a_piped_source_file_is_pointed_to_corpus():
    """Before: "the lines of stdin hold TAB-separated columns …; give a TSV corpus with --corpus stdin (name it
    .tsv)", a file that is not there."""
    done = subprocess.run([sys.executable, "-m", "mt_eval.cli", "run", "--method", SCRIPTED, "--pair", "eng>spa",
                           "--source-file", "/dev/stdin", "--quiet"], input=TSV, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 1 and done.stderr.startswith(
        "mt-eval run: corpus /dev/stdin: the lines of standard input hold TAB-separated columns (e.g. "
        "'Good morning.\\tBuenos días.'): as parallel text, each whole line would be one source; give the pipe with "
        "--corpus instead of --source-file (it is read by its content: TSV)"), done.stderr


def test_a_dash_is_standard_input_for_every_corpus_option(tmp_path: Path):
    """Before: ``--corpus -`` looked for a file named "-" (``mt-eval translate --file -`` read standard input)."""
    def cli(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "mt_eval.cli", *args], input=JSONL, capture_output=True,
                              text=True, timeout=120, cwd=tmp_path)

    ran = cli("run", "--method", SCRIPTED, "--pair", "eng>spa", "--corpus", "-", "--resamples", "50",
              "--latency-sample", "0", "--no-contamination-check", *LENIENT)
    assert ran.returncode == 0, ran.stderr
    assert "scripted on standard input (eng>spa): 3 entries, 0 errors" in ran.stdout
    shown = cli("corpus", "show", "-", "--json")
    assert shown.returncode == 0 and json.loads(shown.stdout)["entries"] == 3, shown.stderr
    checked = cli("contamination", "--against", "-", "--corpus", str(DEMO), "--json")
    assert checked.returncode == 0 and json.loads(checked.stdout)["status"] == "clean", checked.stderr
    (tmp_path / "-").write_text(JSONL)  # a file named - is ./-
    named = cli("corpus", "show", "./-", "--json")
    assert named.returncode == 0 and json.loads(named.stdout)["entries"] == 3, named.stderr


def test_a_corpus_on_standard_input_is_named_so_in_its_errors_and_by_corpus_show():
    """Before: "corpus /dev/stdin: 1 entry of 2 has no reference …", and show headed its facts "/dev/stdin"."""
    def show(text: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "mt_eval.cli", "corpus", "show", "-"], input=text,
                              capture_output=True, text=True, timeout=120)

    refused = show("source\treference\nHello.\tHola.\nGood night.\n")
    assert refused.returncode == 1 and refused.stderr.startswith(
        "mt-eval corpus show: corpus standard input: 1 entry of 2 has no reference (line 3)"), refused.stderr
    shown = show("source\treference\nHello.\tHola.\n")
    assert shown.returncode == 0 and shown.stdout.startswith("standard input\n  format "), shown.stdout


def test_a_file_named_dash_given_as_dot_slash_dash_is_that_file_not_standard_input(tmp_path: Path):
    """Before: ``translate --file ./-`` read standard input instead of the file, and ``corpus show ./-`` and a run
    named the file "standard input" (``Path("./-")`` is spelled ``-``), the run directory ``…__piped-…``."""
    (tmp_path / "-").write_text(JSONL)

    def cli(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "mt_eval.cli", *args], input="Something else.\n",
                              capture_output=True, text=True, timeout=120, cwd=tmp_path)

    translated_file = cli("translate", SCRIPTED, "--pair", "eng>spa", "--file", "./-")
    assert translated_file.returncode == 0, translated_file.stderr
    assert translated_file.stdout.splitlines() == [source for source, _ in TEXTS]  # (the method copies each source)
    shown = cli("corpus", "show", "./-")
    assert shown.returncode == 0 and not shown.stdout.startswith("standard input"), shown.stdout
    ran = cli("run", "--method", SCRIPTED, "--pair", "eng>spa", "--corpus", "./-", "--resamples", "50",
              "--latency-sample", "0", "--no-contamination-check", "--quiet", *LENIENT)
    assert ran.returncode == 0, ran.stderr
    assert "on standard input" not in ran.stdout and "piped-" not in ran.stdout, ran.stdout


def test_verify_gate_and_compare_read_a_piped_corpus_once_for_every_card(tmp_path: Path):
    """Before: with two cards and --corpus -, the second card's corpus was the pipe's empty rest ("standard input:
    is empty (0 bytes)"), and compare read it a third time. The two runs record the corpus by different paths."""
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text(JSONL, encoding="utf-8")
    for out, given in (("a", str(corpus)), ("b", os.path.relpath(corpus))):
        assert main(["run", "--method", SCRIPTED, "--pair", "eng>spa", "--corpus", given, "--out", str(tmp_path / out),
                     "--resamples", "50", "--latency-sample", "0", "--no-contamination-check", "--quiet",
                     *LENIENT]) == 0
    cards = [str(tmp_path / "a" / "card.json"), str(tmp_path / "b" / "card.json")]
    for command in (["verify", *cards, "--quiet"], ["gate", *cards, *LENIENT[:2]], ["compare", *cards]):
        done = subprocess.run([sys.executable, "-m", "mt_eval.cli", *command, "--corpus", "-"], input=JSONL,
                              capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, (command[0], done.stdout, done.stderr)
        assert "is empty" not in done.stdout + done.stderr


def test_a_run_on_standard_input_says_to_give_the_corpus_and_verifies_with_it(tmp_path: Path):
    """The run's next commands name no file for a corpus read from standard input: they ask for it (``--corpus
    FILE``). Before, they did not, and the card, given the file, did not verify when the corpus names itself as its
    file is named ("eng-spa-demo" in eng-spa-demo.json): its name was taken for the file's, read again as
    "standard input"."""
    ran = subprocess.run([sys.executable, "-m", "mt_eval.cli", "run", "--method", str(REPO / "examples" /
                          "lexicon-eng-spa"), "--corpus", "-", "--out", "run", "--resamples", "50"],
                         input=DEMO.read_text(), capture_output=True, text=True, timeout=180, cwd=tmp_path)
    assert ran.returncode == 0, ran.stderr
    nexts = ran.stderr.splitlines()[ran.stderr.splitlines().index("next:") + 1:]
    commands = [line.partition("   # ")[0].split() for line in nexts[:2]]
    assert [command[-3:] for command in commands] == [["run/card.json", "--corpus", "FILE"]] * 2
    assert nexts[2:] == ["  (FILE: the corpus file the run read from standard input)"]
    assert main(["verify", str(tmp_path / "run" / "card.json"), "--corpus", str(DEMO)]) == 0


def test_parallel_text_on_standard_input_and_its_next_commands(tmp_path: Path):
    """``--source-file -`` is standard input, as ``--corpus -`` is (before: a file named "-", not found), not for both
    files at once; the run's next commands ask for the file it read from standard input, and name the other."""
    (tmp_path / "ref.txt").write_text("".join(f"{reference}\n" for _, reference in TEXTS))
    sources = "".join(f"{source}\n" for source, _ in TEXTS)

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "mt_eval.cli", "run", "--method", SCRIPTED, "--pair", "eng>spa",
                               "--resamples", "50", "--latency-sample", "0", "--no-contamination-check", *LENIENT,
                               *args], input=sources, capture_output=True, text=True, timeout=120, cwd=tmp_path)

    both = run("--source-file", "-", "--reference-file", "-")
    assert both.returncode == 2 and "standard input is --source-file's already" in both.stderr, both.stderr
    ran = run("--source-file", "-", "--reference-file", "ref.txt", "--out", "run")
    assert ran.returncode == 0, ran.stderr
    nexts = ran.stderr.splitlines()[ran.stderr.splitlines().index("next:") + 1:]
    assert nexts[0].partition("   # ")[0].split()[-5:] == ["run/card.json", "--source-file", "SRC", "--reference-file",
                                                          "ref.txt"]
    assert nexts[-1] == "  (SRC: the source file the run read from standard input)"


def test_parallel_text_from_a_pipe_is_recognised_as_gzip_by_its_bytes_as_a_corpus_from_a_pipe_is(tmp_path: Path):
    """Before: ``--source-file <(cat dev.eng.gz)`` and ``--source-file - < dev.eng.gz`` were refused as
    gzip-compressed, while ``--corpus`` and ``translate --file`` read such a pipe; a named file that holds gzip
    without saying so is still refused, with the name to give it."""
    sources, references = ("".join(f"{pair[side]}\n" for pair in TEXTS).encode() for side in (0, 1))
    (tmp_path / "references").write_bytes(gzip.compress(references))  # (no extension: read by its bytes too)
    with fifo_holding(tmp_path, gzip.compress(sources), "dev.eng") as path:
        corpus = load_corpus(CorpusSpec(source_file=path, reference_file=tmp_path / "references"))
    assert [(entry["source"], entry["reference"]) for entry in corpus.entries] == TEXTS
    shown = subprocess.run([sys.executable, "-m", "mt_eval.cli", "corpus", "show", "--source-file", "-", "--json"],
                           input=gzip.compress(sources), capture_output=True, timeout=120)
    assert shown.returncode == 0 and json.loads(shown.stdout)["entries"] == 3, shown.stderr
    (tmp_path / "dev.spa").write_bytes(gzip.compress(references))
    with pytest.raises(CorpusError) as refused:
        load_corpus(CorpusSpec(source_file=tmp_path / "references", reference_file=tmp_path / "dev.spa"))
    assert "dev.spa: is gzip-compressed (its first bytes say so), not text; name it dev.spa.gz" in str(refused.value)
