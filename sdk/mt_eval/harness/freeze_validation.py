"""Validating a freeze manifest, fail-closed: every problem at once — unknown fields and wrong types, missing
digests of a frozen manifest, an inconsistent hardware label or latency definition, and every digest that no
longer matches what it digests: the method's files, this SDK's code, the corpus's files, and what the corpus
gives, read again as frozen (its entries counted and selected, their labels digested), so an edited count,
subset or label digest is named too, as is a pair no run of that corpus and method takes."""

from __future__ import annotations

import hashlib
import stat
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import msgspec

from mt_eval.harness.freeze import (
    COLD_DEFINITION,
    HOT_DEFINITION,
    FreezeManifest,
    label_digests,
    missing_digests,
    sdk_facts,
)
from mt_eval.problems import Problem
from mt_eval.strict import StrictStruct

if TYPE_CHECKING:
    from mt_eval.corpus.model import Corpus


class _Selection(StrictStruct, kw_only=True):
    """``corpus.selection`` as `mt_eval.corpus.selection.select` records it (what a hand edit is checked against)."""

    ids: list[str | int] | None = None
    ranges: list[str] | None = None
    segment: list[str] | None = None
    limit: Annotated[int, msgspec.Meta(ge=1)] | None = None


def validate_freeze(path: str | Path, *, check_files: bool = True) -> tuple[FreezeManifest | None, list[Problem]]:
    """The manifest in ``path`` and every problem with it (module docstring); fail-closed."""
    manifest, problems, _ = validated_freeze(path, check_files=check_files)
    return manifest, problems


def validated_freeze(path: str | Path, *, check_files: bool = True, run_corpus: Corpus | None = None
                     ) -> tuple[FreezeManifest | None, list[Problem], str | None]:
    """As `validate_freeze`, with the SHA-256 of the very bytes validated (None when none could be read): what a
    run records of the manifest that held it, read once. ``run_corpus``: the corpus the run read, whose entries
    and labels the run compares with the freeze's itself (they are not read again here)."""
    from mt_eval.strict import decode_json, decode_value

    path = Path(path)
    file = str(path)
    if not _regular_or_missing(path):  # (a pipe: its bytes would be gone for the run that follows, or it hangs)
        return None, [Problem(file=file, path="$", code="io", message="is not a regular file (a pipe, socket or "
                              "device): a manifest is read again by the run it holds, which records its SHA-256",
                              hint="give the manifest file mt-eval freeze init wrote")], None
    try:
        raw = path.read_bytes()
    except OSError as exc:
        return None, [Problem(file=file, path="$", message=f"cannot read file: {exc.strerror or exc}", code="io")], None
    digest = hashlib.sha256(raw).hexdigest()
    manifest, problems = decode_json(raw, FreezeManifest, file=file)
    if manifest is None:
        return None, problems, digest
    _, selection = decode_value(manifest.corpus.selection or {}, _Selection, file=file)
    if selection:  # (its options could not be shown, nor the entries selected again)
        return None, problems + [msgspec.structs.replace(p, path="$.corpus.selection" + p.path[1:])
                                 for p in selection], digest
    problems += [Problem(file=file, path=where, code="not-finite", message=f"{number} is not a number a run takes "
                         "(JSON has no infinity or NaN; a number too large to hold is read as infinity)",
                         hint="write the value mt-eval freeze init wrote, or run freeze init again")
                 for where, number in _not_finite(msgspec.to_builtins(manifest), "$")]
    from mt_eval.corpus.doubts import DOUBTS

    problems += [Problem(file=file, path=f"$.corpus.accepted_doubts[{i}]", code="invalid",
                         message=f"no doubt is called {code!r}: no run could accept it",
                         hint=f"give the code a refusal names, one of {', '.join(DOUBTS)}")
                 for i, code in enumerate(manifest.corpus.accepted_doubts or []) if code not in DOUBTS]
    if manifest.status == "frozen":
        problems += [Problem(file=file, path=where, code="missing", message="missing: a frozen manifest needs it",
                             hint=hint) for where, hint in missing_digests(manifest)]
    from mt_eval.harness.environment import hardware_label

    hw = manifest.hardware
    label = hardware_label(hw.cpu_model, hw.cpu_count, hw.memory_gib, hw.gpus)
    if hw.label != label:
        problems.append(Problem(file=file, path="$.hardware.label", code="inconsistent",
                                message=f"{hw.label!r} is not the label of the hardware it lists ({label!r})",
                                hint="write the label mt-eval freeze init derives, or run freeze init again"))
    for where, stated, defined in (("$.latency.cold", manifest.latency.cold, COLD_DEFINITION),
                                   ("$.latency.hot", manifest.latency.hot, HOT_DEFINITION)):
        if stated != defined:
            problems.append(Problem(file=file, path=where, code="inconsistent",
                                    message="not the latency this SDK measures", hint=f"write {defined!r}"))
    unusable = _unusable_paths(file, manifest)
    problems += unusable
    if check_files and not unusable:
        problems += _file_problems(path, manifest, run_corpus)
    return manifest, problems, digest


def _regular_or_missing(path: Path) -> bool:
    """Whether ``path`` is a file, a directory or nothing (`decode_json_file` says why those cannot be read)."""
    try:
        mode = path.stat().st_mode
    except (OSError, ValueError):
        return True
    return stat.S_ISREG(mode) or stat.S_ISDIR(mode)


def _not_regular(file: str, where: str, recorded: Path) -> Problem:
    """A path the manifest records that names a pipe, socket or device, which is not read: it would wait for a
    writer, or never end."""
    return Problem(file=file, path=where, code="missing-file",
                   message=f"{recorded} is not a regular file (a pipe, socket or device): it is not read",
                   hint="restore the frozen file there, or give its path, relative to the manifest or absolute")


def _unusable_paths(file: str, manifest: FreezeManifest) -> list[Problem]:
    """Each recorded path no file can have (a NUL character in it): its files are not looked for."""
    recorded = {"$.method.path": manifest.method.path, "$.corpus.path": manifest.corpus.path,
                "$.corpus.reference_path": manifest.corpus.reference_path,
                "$.scoring.policy_path": None if manifest.scoring is None else manifest.scoring.policy_path}
    return [Problem(file=file, path=where, code="invalid", message="holds a NUL character, which no path can",
                    hint="write the path mt-eval freeze init wrote (relative to the manifest, or absolute)")
            for where, value in recorded.items() if value is not None and "\0" in value]


def _not_finite(value: Any, where: str) -> list[tuple[str, float]]:
    """Each infinite or NaN number in ``value`` with its JSON path."""
    import math

    if isinstance(value, float):
        return [] if math.isfinite(value) else [(where, value)]
    if isinstance(value, dict):
        return [found for key, item in value.items() for found in _not_finite(item, f"{where}.{key}")]
    if isinstance(value, list):
        return [found for index, item in enumerate(value) for found in _not_finite(item, f"{where}[{index}]")]
    return []


def _file_problems(path: Path, manifest: FreezeManifest, run_corpus: Corpus | None) -> list[Problem]:
    """Digests recomputed from the files the manifest names (paths relative to the manifest's directory), and
    the pair checked against the corpus (``run_corpus`` when it is the frozen one) and the method."""
    from mt_eval.code_hash import code_sha256
    from mt_eval.loader import read_plugin

    file = str(path)
    problems: list[Problem] = []
    method_dir = _beside(path, manifest.method.path)
    try:
        source, _ = read_plugin(method_dir)
        unread = None
    except OSError as exc:  # (a path too long for the system)
        source, unread = None, f"cannot read {method_dir}: {exc.strerror or exc}"
    supported = None if source is None else list(source.manifest.supported_pairs)
    if source is None:
        problems.append(Problem(file=file, path="$.method.path", code="missing-file",
                                message=unread or f"{method_dir} is not a method plugin directory",
                                hint="give the method's directory, relative to the manifest or absolute"))
    else:
        if source.method_id != manifest.method.method_id:
            problems.append(Problem(file=file, path="$.method.method_id", code="inconsistent",
                                    message=f"the plugin in {method_dir} is {source.method_id!r}, not the frozen "
                                            f"{manifest.method.method_id!r}",
                                    hint="give the frozen method's directory as $.method.path, or freeze again"))
        actual = code_sha256(source.directory)  # (method.path may name its method.json)
        if manifest.method.code_sha256 and actual != manifest.method.code_sha256:
            problems.append(Problem(file=file, path="$.method.code_sha256", code="inconsistent",
                                    message=f"the method's files hash to {actual[:16]}…, not "
                                            f"{manifest.method.code_sha256[:16]}…: they changed since the freeze",
                                    hint="restore the frozen code, or freeze again"))
    digests = []
    read = [("$.corpus.path", _beside(path, manifest.corpus.path))]
    if manifest.corpus.reference_path is not None:
        read.append(("$.corpus.reference_path", _beside(path, manifest.corpus.reference_path)))
    for where, corpus_path in read:
        try:
            if not _regular_or_missing(corpus_path):  # (a pipe would wait for a writer, /dev/zero never end)
                problems.append(_not_regular(file, where, corpus_path))
                continue
            digests.append(hashlib.sha256(corpus_path.read_bytes()).hexdigest())
        except OSError as exc:
            problems.append(Problem(file=file, path=where, code="missing-file",
                                    message=f"cannot read {corpus_path}: {exc.strerror or exc}",
                                    hint="restore the frozen file there, or give its path, relative to the manifest "
                                         "or absolute"))
    if len(digests) == len(read) and manifest.corpus.sha256:
        from mt_eval.corpus.parallel import parallel_sha256

        actual_corpus = digests[0] if len(digests) == 1 else parallel_sha256(*digests)
        named = " and ".join(str(corpus_path) for _, corpus_path in read)
        if actual_corpus != manifest.corpus.sha256:
            problems.append(Problem(file=file, path="$.corpus.sha256", code="inconsistent",
                                    message=f"{named} hash{'es' if len(read) == 1 else ''} to {actual_corpus[:16]}…, "
                                            f"not {manifest.corpus.sha256[:16]}…: the corpus changed since the freeze",
                                    hint="restore the frozen corpus, or freeze again"))
        elif run_corpus is None:
            problems += corpus_problems(file, manifest, [corpus_path for _, corpus_path in read], supported)
        elif run_corpus.sha256 == manifest.corpus.sha256:  # (another corpus: the run names that difference)
            problems += pair_problems(file, manifest, run_corpus.pair, supported)
    problems += _sdk_problems(file, manifest)
    problems += _policy_problems(path, manifest)
    return problems


def _policy_problems(path: Path, manifest: FreezeManifest) -> list[Problem]:
    """The gate policy the freeze names (its file, or the shipped one) against the thresholds it froze."""
    from mt_eval.harness.policy import PolicyError, load_policy

    scoring = manifest.scoring
    if scoring is None:
        return []
    policy_file = None if scoring.policy_path is None else _beside(path, scoring.policy_path)
    if policy_file is not None and not _regular_or_missing(policy_file):
        return [_not_regular(str(path), "$.scoring.policy_path", policy_file)]
    try:
        actual = load_policy(policy_file).sha256
    except PolicyError as exc:
        hint = ("restore the frozen policy file there, or give its path, relative to the manifest or absolute"
                if policy_file is not None and not policy_file.is_file() else
                "restore the frozen policy, or freeze again")
        return [Problem(file=str(path), path="$.scoring.policy_path", code="missing-file",
                        message=f"the gate policy cannot be read: {exc}", hint=hint)]
    if actual == scoring.policy_sha256:
        return []
    named = f"the policy {policy_file}" if policy_file else "this SDK's shipped policy"
    return [Problem(file=str(path), path="$.scoring.policy_sha256", code="inconsistent",
                    message=f"{named} has thresholds hashing to {actual[:16]}…, not {scoring.policy_sha256[:16]}…: "
                            "the policy changed since the freeze", hint="restore the frozen policy, or freeze again")]


def _sdk_problems(file: str, manifest: FreezeManifest) -> list[Problem]:
    """The frozen SDK's code hash against this SDK's: a run here would differ from the freeze."""
    frozen = manifest.sdk.code_sha256
    here = sdk_facts()
    if not frozen or here.code_sha256 == frozen:
        return []
    return [Problem(file=file, path="$.sdk.code_sha256", code="inconsistent",
                    message=f"this SDK ({here.version}) hashes to {(here.code_sha256 or '')[:16]}…, not "
                            f"{frozen[:16]}…: the freeze was made with another SDK ({manifest.sdk.version})",
                    hint="validate and run with the SDK the freeze names, or freeze again")]


def _beside(manifest_path: Path, recorded: str) -> Path:
    path = Path(recorded)
    return path if path.is_absolute() else manifest_path.parent / path


def corpus_problems(file: str, manifest: FreezeManifest, paths: list[Path], supported: list[str] | None = None
                    ) -> list[Problem]:
    """``paths``: the corpus file, or the source and reference files of parallel text (already found to have
    the frozen sha256). Its doubts were settled when it was frozen: they are not raised again. ``supported``:
    the method's supported pairs (None: the method could not be read), which the pair is checked against."""
    from mt_eval.corpus.doubts import DOUBTS
    from mt_eval.corpus.reader import CorpusSpec, load_corpus
    from mt_eval.corpus.selection import request_from_facts, select
    frozen = manifest.corpus
    try:
        parallel = frozen.format == "parallel"
        spec = CorpusSpec(path=None if parallel else paths[0], source_file=paths[0] if parallel else None,
                          reference_file=paths[1] if parallel and len(paths) > 1 else None, columns=frozen.columns,
                          accept=list(DOUBTS))
        corpus = load_corpus(spec)
        selection = select(corpus, request_from_facts(frozen.selection or {}))
    except (ValueError, OSError) as exc:
        return [Problem(file=file, path="$.corpus", code="inconsistent",
                        message=f"the corpus cannot be read as the freeze records: {exc}",
                        hint="restore the frozen corpus, or freeze again")]
    if frozen.format is not None and corpus.format != frozen.format:  # (its counts would differ only because of it)
        return [Problem(file=file, path="$.corpus.format", code="inconsistent",
                        message=f"the corpus is read as {corpus.format}, not {frozen.format}",
                        hint="restore the value mt-eval freeze init wrote, or freeze again")]
    entries = selection.entries
    found = {"$.corpus.entries_in_corpus": len(corpus.entries), "$.corpus.entries_selected": len(entries),
             "$.corpus.subset_sha256": (selection.facts or {}).get("subset_sha256")}
    labels = label_digests(entries)
    found["$.labels.references_sha256"] = labels.references_sha256
    found["$.labels.families_sha256"] = labels.families_sha256
    recorded = {"$.corpus.entries_in_corpus": frozen.entries_in_corpus,
                "$.corpus.entries_selected": frozen.entries_selected, "$.corpus.subset_sha256": frozen.subset_sha256,
                "$.labels.references_sha256": manifest.labels.references_sha256,
                "$.labels.families_sha256": manifest.labels.families_sha256}
    differ = [Problem(file=file, path=where, code="inconsistent",
                      message=f"the corpus gives {_shown(found[where])}, not {_shown(value)}",
                      hint="restore the value mt-eval freeze init wrote, or freeze again")
              for where, value in recorded.items() if found[where] != value]
    if differ and parallel:  # (a JSON, JSONL or TSV file frozen as parallel text: its format is what is wrong)
        return _not_parallel(file, paths[0]) or differ
    return differ + pair_problems(file, manifest, corpus.pair, supported)


def pair_problems(file: str, manifest: FreezeManifest, declared: str | None, supported: list[str] | None
                  ) -> list[Problem]:
    """``$.corpus.pair`` when no run takes it: one in other languages than the corpus ``declared`` (unless the
    freeze accepted that doubt), or one the method does not list in its ``supported`` pairs (None: unknown).
    A run's --pair is refused, or differs from it, whatever it gives."""
    from mt_eval.pairs import quoted, same_languages

    pair = manifest.corpus.pair
    accepted = manifest.corpus.accepted_doubts or []
    other_languages = declared is not None and not same_languages(pair, declared) and "pair-mismatch" not in accepted
    unsupported = supported is not None and bool(supported) and pair not in supported
    if not other_languages and not unsupported:
        return []
    corpus_says = f"the corpus declares '{declared}'" if declared else "the corpus declares no pair"
    method_says = ("the method's supported pairs are unknown" if supported is None else
                   f"the method {manifest.method.method_id} supports {quoted(supported) if supported else 'any pair'}")
    return [Problem(file=file, path="$.corpus.pair", code="inconsistent",
                    message=f"'{pair}' is a pair no run of this corpus and method takes: {corpus_says}, and "
                            f"{method_says}",
                    hint="run mt-eval freeze init again, which writes the pair a run takes (leave out --pair for "
                         "the corpus's, or give one in its languages that the method supports)")]


def _not_parallel(file: str, path: Path) -> list[Problem]:
    """A corpus frozen as parallel text whose counts differ, when its name says it is a JSON, JSONL or TSV file
    (read line by line, such a file gives other counts): the format is named, not each count it changes."""
    from mt_eval.corpus.files import corpus_format
    from mt_eval.corpus.model import FORMAT_NAMES, CorpusError

    try:
        kind = corpus_format(path)
    except CorpusError:  # (a .txt file: parallel text indeed)
        return []
    if kind is None:  # (a name without extension: nothing says it is not parallel text)
        return []
    return [Problem(file=file, path="$.corpus.format", code="inconsistent",
                    message=f"the corpus {path.name} is a {FORMAT_NAMES[kind]} file, not parallel text: read one "
                            "sentence per line, its entries and labels differ from the freeze's",
                    hint=f'give "format": "{kind}" (what mt-eval freeze init wrote for it), or freeze again')]


def _shown(value: object) -> str:
    if isinstance(value, str) and len(value) == 64:
        return value[:16] + "…"
    return "null" if value is None else str(value)
