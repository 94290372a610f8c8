"""An Apertium mode as null-flush stages for `mt_eval.adapters.ProcessTranslator`.

``apertium-wblank-mode -z MODE`` prints the pipeline that ``apertium -z`` runs for a mode: every program
with its null-flush flag, so each answers a NUL-terminated record as soon as it has read it and then
waits for the next one. The programs run as three stages:

1. the programs before the tagger, as one shell pipeline;
2. the tagger alone, started with ``-d`` and replaced by a fresh one after any record for which it reports
   "A new ambiguity class was found". Apertium 3.8's HMM tagger then overwrites its open class
   (``find_similar_ambiguity_class`` in tagger_utils.cc assigns through a reference to it), which changes
   how every later unknown word is tagged. ``apertium`` started afresh for each text never carries that
   over, so without the restart a text's translation would depend on the texts translated before it.
   The tagger starts in a few milliseconds and about one text in fifty needs it;
3. the programs after the tagger, as one shell pipeline.

``$1`` in a mode is the generator's flag (``-n`` without unknown-word marks, as ``apertium -u``; ``-g``
with them) and ``$2`` the tagger's (empty unless ambiguity is shown).
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
from pathlib import Path

from mt_eval.adapters import Stage

TAGGER = "apertium-tagger"
TAGGER_STATE_CHANGED = "new ambiguity class"


class ModeError(Exception):
    """The mode cannot be run; the message says what is missing and how to get it."""


def mode_file(pair: str, datadir: str | os.PathLike[str]) -> Path:
    path = Path(datadir) / "modes" / f"{pair}.mode"
    if not path.is_file():
        raise ModeError(f"no Apertium mode {path}: install the language data (Debian: apt-get install "
                        "apertium-eng-spa), or give its data directory as params.apertium_datadir")
    return path


def null_flush_pipeline(mode: Path) -> str:
    """The mode's pipeline with every program in null-flush mode, as ``apertium -z`` would run it."""
    program = shutil.which("apertium-wblank-mode")
    if program is None:
        raise ModeError("apertium-wblank-mode not found: install Apertium 3.8 or later (Debian: apt-get install "
                        "apertium)")
    done = subprocess.run([program, "-z", str(mode)], capture_output=True, text=True, timeout=30, check=False)
    if done.returncode != 0 or not done.stdout.strip():
        raise ModeError(f"apertium-wblank-mode -z {mode} failed: {done.stderr.strip() or done.returncode}")
    return done.stdout.strip()


def commands(pipeline: str, *, mark_unknown: bool = False) -> list[list[str]]:
    """The pipeline's programs as argv lists, with the mode's ``$1`` and ``$2`` filled in."""
    lexer = shlex.shlex(pipeline, posix=True, punctuation_chars="|")
    lexer.whitespace_split = True
    values = {"$1": ["-g" if mark_unknown else "-n"], "$2": []}
    found: list[list[str]] = [[]]
    for token in lexer:
        if token == "|":
            found.append([])
        elif token in values:
            found[-1].extend(values[token])
        elif "$" in token or token in ("&&", "||", ";", "&", "<", ">"):
            raise ModeError(f"the mode pipeline uses {token!r}, which this method cannot run: {pipeline}")
        else:
            found[-1].append(token)
    if any(not argv for argv in found):
        raise ModeError(f"the mode pipeline has an empty step: {pipeline}")
    return found


def _segment(argvs: list[list[str]], label: str) -> Stage:
    if len(argvs) == 1:
        return Stage(tuple(argvs[0]), label=label)
    script = "set -o pipefail; " + " | ".join(shlex.join(argv) for argv in argvs)
    return Stage(("bash", "-c", script, "apertium-mode"), label=label)


def stages(argvs: list[list[str]], pair: str) -> list[Stage]:
    """The programs as stages: before the tagger, the tagger (restarted when its state changes), after it."""
    names = [os.path.basename(argv[0]) for argv in argvs]
    if TAGGER not in names:
        return [_segment(argvs, f"{pair} pipeline")]
    at = names.index(TAGGER)
    tagger = [argvs[at][0], "-d", *argvs[at][1:]]  # -d: it reports on stderr when its state changes
    found = [Stage(tuple(tagger), restart_when=re.escape(TAGGER_STATE_CHANGED), label=f"{pair} {TAGGER}")]
    if at > 0:
        found.insert(0, _segment(argvs[:at], f"{pair} {names[0]}…{names[at - 1]}"))
    if at + 1 < len(argvs):
        found.append(_segment(argvs[at + 1:], f"{pair} {names[at + 1]}…{names[-1]}"))
    return found


def mode_stages(pair: str, datadir: str | os.PathLike[str], *, mark_unknown: bool = False) -> list[Stage]:
    """Stages that translate ``pair`` (e.g. "eng-spa") record by record, exactly as ``apertium`` does."""
    return stages(commands(null_flush_pipeline(mode_file(pair, datadir)), mark_unknown=mark_unknown), pair)
