"""The freeze manifest: everything a scored run depends on, fixed before it runs.

``mt-eval freeze init`` writes one from the inputs a run would use: the SDK (version, git commit, SHA-256
of its code), the method (id, SHA-256 of its files), the corpus (SHA-256 with its source and licence, the
selection's own SHA-256), label digests (references; families and pass rules), the pair and model settings,
the budgets (batch size, concurrency, retries, retry budget, timeout), the latency definition (cold, hot,
untimed warm-ups, sample, repetitions) and the hardware label. ``status`` is ``frozen`` only when every
digest is there (and the corpus's source and licence); otherwise ``draft``, with what is missing listed.

A manifest is validated, fail-closed, by `freeze_validation`. ``mt-eval run --freeze FILE`` refuses to run a
manifest that does not validate, and refuses a run whose inputs differ from it, naming each difference
(`differences`).
"""

from __future__ import annotations

import hashlib
import os
import shlex
from collections.abc import Sequence
from pathlib import Path
from typing import Annotated, Any, Literal

import msgspec

from mt_eval.field_words import described
from mt_eval.harness.latency import MAX_REPETITIONS, MAX_WARMUP
from mt_eval.harness.metric_statistics import MAX_RESAMPLES, MIN_RESAMPLES
from mt_eval.js_text import SAFE_INTEGER, same_json
from mt_eval.manifest import LanguagePair
from mt_eval.strict import StrictStruct

FREEZE_VERSION = "freeze/1"
COLD_DEFINITION = "the method's load (and a guest's start) plus its first call, one entry, timed by the harness"
HOT_DEFINITION = ("after the untimed warm-up calls, each entry of the sample (the first scored entries in corpus "
                  "order) in a call of its own at concurrency 1, timed by the harness, the sample repeated")
Digest = Annotated[str, described(pattern=r"^[0-9a-f]{64}$", pattern_means="a SHA-256 in hex",
                                  hint="give the digest `mt-eval freeze init` wrote (64 lowercase hex digits)")]
Whole = Annotated[int, msgspec.Meta(ge=0)]
# When the manifest was written: an ISO 8601 date and time, as `mt-eval freeze init` writes it (seconds, with its
# offset); a manifest edited by hand may give more or less of it.
Timestamp = Annotated[str, described(pattern=r"^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}",
                                     pattern_means="an ISO 8601 date and time",
                                     hint='write it as `mt-eval freeze init` does, e.g. "2026-12-05T19:00:00+00:00"')]
CorpusFormat = Literal["json", "jsonl", "tsv", "parallel"]


class _Part(StrictStruct, kw_only=True, omit_defaults=False):
    """A section of the manifest (every field written, null included, so a reader sees what is missing)."""


class SdkFreeze(_Part, kw_only=True):
    version: str
    commit: str | None  # null when mt-eval does not run from a git checkout (an installed release)
    dirty: bool | None
    code_sha256: Digest | None


class MethodFreeze(_Part, kw_only=True):
    path: str
    method_id: str
    code_sha256: Digest | None


class CorpusFreeze(_Part, kw_only=True):
    path: str  # parallel text: the source file
    name: str
    sha256: Digest | None
    source: str | None
    license: str | None
    pair: LanguagePair
    entries_in_corpus: Whole
    entries_selected: Whole
    subset_sha256: Digest | None  # the selected entries' own digest (equal runs select equal entries)
    selection: dict[str, Any] | None = None  # --ids, --segment and --limit as the card's selection records them
    format: CorpusFormat | None = None  # how it was read (null: written before it was recorded)
    reference_path: str | None = None  # parallel text: the reference file, whose sha256 ``sha256`` covers too
    columns: list[str] | None = None  # a TSV read with --columns: its columns' fields (null: header or convention)
    accepted_doubts: list[str] | None = None  # what --accept-doubt let through (null: written before it was recorded)

    @property
    def selection_options(self) -> list[str]:
        """The ``mt-eval run`` options that select the same entries."""
        if not self.selection:
            return []
        from mt_eval.corpus.selection import id_options

        words = [word for ids in id_options(self.selection) for word in ("--ids", ids)]
        words += [word for segment in self.selection.get("segment") or [] for word in ("--segment", segment)]
        limit = self.selection.get("limit")
        return words + (["--limit", str(limit)] if limit is not None else [])


class LabelsFreeze(_Part, kw_only=True):
    references_sha256: Digest | None  # ids and references of the selected entries, in order
    families_sha256: Digest | None  # ids, families and pass rules of the selected entries, in order


class ConfigFreeze(_Part, kw_only=True):
    model: str | None
    temperature: Annotated[float, msgspec.Meta(ge=0, le=2)] | None  # as RunConfig allows
    max_tokens: Annotated[int, msgspec.Meta(ge=1)] | None
    seed: Annotated[int, msgspec.Meta(ge=0, le=SAFE_INTEGER)] | None  # as --seed allows
    params: dict[str, Any]


class BudgetsFreeze(_Part, kw_only=True):
    batch_size: Annotated[int, msgspec.Meta(ge=1)]
    concurrency: Annotated[int, msgspec.Meta(ge=1)]
    retries: Whole
    retry_budget: Whole
    timeout_s: Annotated[float, msgspec.Meta(gt=0)]


class LatencyFreeze(_Part, kw_only=True):
    cold: str
    hot: str
    warmup_calls: Annotated[int, msgspec.Meta(ge=0, le=MAX_WARMUP)]  # as the --latency-* options allow
    hot_sample: Whole
    repetitions: Annotated[int, msgspec.Meta(ge=1, le=MAX_REPETITIONS)]


class ScoringFreeze(_Part, kw_only=True):
    """How the run is scored and judged: the bootstrap's resamples and draws (they make the intervals), and the
    headline gate's policy (its thresholds' SHA-256; ``policy_path`` null: the shipped policy)."""

    resamples: Annotated[int, msgspec.Meta(ge=MIN_RESAMPLES, le=MAX_RESAMPLES)]  # as --resamples allows
    bootstrap: Literal["fast", "upstream"]
    policy_path: str | None
    policy_sha256: Digest


class HardwareFreeze(_Part, kw_only=True):
    label: str
    cpu_model: str
    cpu_count: Annotated[int, msgspec.Meta(ge=1)]
    memory_gib: float | None
    gpus: list[str]


class FreezeManifest(_Part, kw_only=True):
    """``freeze.json``: see the module docstring."""

    schema: str | None = msgspec.field(default=None, name="$schema")
    freeze_version: Literal["freeze/1"]
    status: Literal["draft", "frozen"]
    created_at: Timestamp
    sdk: SdkFreeze
    method: MethodFreeze
    corpus: CorpusFreeze
    labels: LabelsFreeze
    config: ConfigFreeze
    budgets: BudgetsFreeze
    latency: LatencyFreeze
    hardware: HardwareFreeze
    scoring: ScoringFreeze | None = None  # (null only in a draft: a frozen manifest needs it, `missing_digests`)


class FreezeReference(msgspec.Struct, kw_only=True):
    """What a run card records of the manifest it was held to."""

    path: str
    sha256: str  # of the manifest file's bytes
    status: str


def label_digests(entries: Sequence[dict[str, Any]]) -> LabelsFreeze:
    """The digests of the entries' references and families, in one pass (entries on disk are read once)."""
    from mt_eval.corpus.families import family_of

    references, families = hashlib.sha256(), hashlib.sha256()
    for e in entries:
        references.update(msgspec.json.encode([str(e["id"]), e.get("reference")]) + b"\n")
        families.update(msgspec.json.encode([str(e["id"]), family_of(e), e.get("pass_rule")]) + b"\n")
    return LabelsFreeze(references_sha256=references.hexdigest(), families_sha256=families.hexdigest())


def sdk_facts() -> SdkFreeze:
    from mt_eval._version import __version__
    from mt_eval.code_hash import code_sha256, git_state
    from mt_eval.resources import PACKAGE

    commit, dirty = git_state(PACKAGE)
    return SdkFreeze(version=__version__, commit=commit, dirty=dirty, code_sha256=code_sha256(PACKAGE))


def scoring_facts(resamples: int, bootstrap: str, policy_path: Path | None, policy: Any = None) -> ScoringFreeze:
    """The scoring a run with these options gets (``policy``: the `ResolvedPolicy` already loaded from
    ``policy_path``, else it is loaded)."""
    from mt_eval.harness.policy import load_policy

    resolved = policy if policy is not None else load_policy(policy_path)
    return ScoringFreeze(resamples=resamples, bootstrap=bootstrap,  # type: ignore[arg-type]
                         policy_path=None if policy_path is None else str(policy_path),
                         policy_sha256=resolved.sha256)


def hardware_facts() -> HardwareFreeze:
    from mt_eval.harness.environment import cpu_model, gpu_models, hardware_label, memory_gib

    cpu, count, memory, gpus = cpu_model(), os.cpu_count() or 1, memory_gib(), gpu_models()
    return HardwareFreeze(label=hardware_label(cpu, count, memory, gpus), cpu_model=cpu, cpu_count=count,
                          memory_gib=memory, gpus=gpus)


def build_manifest(*, method_dir: Path, method_id: str, corpus: Any, entries: Sequence[dict[str, Any]],
                   selection: dict[str, Any] | None, config: Any, settings: Any, plan: Any, created_at: str,
                   relative_to: Path | None = None, corpus_source: str | None = None,
                   corpus_license: str | None = None, scoring: ScoringFreeze | None = None) -> FreezeManifest:
    """The manifest of a run with these inputs; ``frozen`` when nothing is missing. Paths are written relative
    to ``relative_to`` (the manifest's directory) when given."""
    from mt_eval.code_hash import code_sha256

    dataset = corpus.dataset if isinstance(getattr(corpus, "dataset", None), dict) else {}
    source = corpus_source or next((str(dataset[k]) for k in ("source", "url", "homepage") if dataset.get(k)), None)
    manifest = FreezeManifest(
        freeze_version="freeze/1", status="draft", created_at=created_at, sdk=sdk_facts(),
        method=MethodFreeze(path=_relative(method_dir, relative_to), method_id=method_id,
                            code_sha256=code_sha256(method_dir)),
        corpus=CorpusFreeze(path=_relative(Path(corpus.path), relative_to), name=_file_name(corpus),
                            sha256=corpus.sha256, source=source, license=corpus_license or corpus.license,
                            pair=config.pair,
                            entries_in_corpus=len(entries) if selection is None else selection["entries_in_corpus"],
                            entries_selected=len(entries),
                            subset_sha256=None if selection is None else selection["subset_sha256"],
                            selection=None if selection is None else {
                                key: selection.get(key) for key in ("ids", "ranges", "segment", "limit")},
                            format=corpus.format, reference_path=_relative(reference, relative_to)
                            if (reference := _reference_file(corpus)) is not None else None,
                            columns=[column.key for column in corpus.columns]
                            if corpus.columns_from == "--columns" and corpus.columns else None,
                            accepted_doubts=list(corpus.accepted_doubts)),
        labels=label_digests(entries),
        config=ConfigFreeze(model=config.model, temperature=config.temperature, max_tokens=config.max_tokens,
                            seed=config.seed, params=dict(config.params)),
        budgets=BudgetsFreeze(batch_size=settings.batch_size, concurrency=settings.concurrency,
                              retries=settings.retries, retry_budget=settings.budget_for(len(entries)),
                              timeout_s=settings.timeout_s),
        latency=LatencyFreeze(cold=COLD_DEFINITION, hot=HOT_DEFINITION, warmup_calls=plan.warmup,
                              hot_sample=plan.sample, repetitions=plan.repetitions),
        hardware=hardware_facts(),
        scoring=None if scoring is None else msgspec.structs.replace(
            scoring, policy_path=None if scoring.policy_path is None else _relative(Path(scoring.policy_path),
                                                                                    relative_to)))
    if not missing_digests(manifest):
        manifest.status = "frozen"
    return manifest


def _file_name(corpus: Any) -> str:
    """The corpus's name as a run of the file the manifest records gives it: a file redirected to standard input is
    recorded as that file, and named after it too (not ``standard input``), unless its dataset names it."""
    from mt_eval.corpus.files import display_name, stream_name

    path = Path(corpus.path)
    if stream_name(path) is None or corpus.name != display_name(path) or not (resolved := path.resolve()).is_file():
        return str(corpus.name)
    return display_name(resolved)


def _reference_file(corpus: Any) -> Path | None:
    """Parallel text's reference file, if it has one."""
    return next((Path(f.path) for f in getattr(corpus, "files", ()) if f.role == "reference"), None)


def _relative(path: Path, base: Path | None) -> str:
    if base is None:
        return str(path)
    try:
        return os.path.relpath(path.resolve(), base.resolve())
    except ValueError:  # another drive (Windows)
        return str(path.resolve())


def missing_digests(manifest: FreezeManifest) -> list[tuple[str, str]]:
    """``(JSON path, why)`` for each digest (and the corpus's source and licence, the scoring and the doubts
    accepted) a frozen manifest needs."""
    required = {"$.sdk.code_sha256": manifest.sdk.code_sha256, "$.method.code_sha256": manifest.method.code_sha256,
                "$.corpus.sha256": manifest.corpus.sha256, "$.corpus.source": manifest.corpus.source,
                "$.corpus.license": manifest.corpus.license,
                "$.labels.references_sha256": manifest.labels.references_sha256,
                "$.labels.families_sha256": manifest.labels.families_sha256}
    if manifest.corpus.entries_selected != manifest.corpus.entries_in_corpus:
        required["$.corpus.subset_sha256"] = manifest.corpus.subset_sha256
    hints = {"$.corpus.source": "say where the corpus comes from: a \"source\" in its dataset, or freeze init "
                                "--corpus-source TEXT",
             "$.corpus.license": "give the corpus's licence: \"license\" in its dataset, or freeze init "
                                 "--corpus-license SPDX"}
    missing = [(path, hints.get(path, "recompute it with mt-eval freeze init")) for path, value in required.items()
               if not value]
    # What this SDK's freeze init always records (a manifest of another SDK fails on $.sdk.code_sha256): without
    # it, a run would not be held to its scoring and gate policy, or to the doubts it lets through.
    recorded = {"$.scoring": manifest.scoring, "$.corpus.accepted_doubts": manifest.corpus.accepted_doubts}
    return missing + [(path, "run mt-eval freeze init again, which records it (a frozen manifest without it would "
                             "hold a run to less than it says)") for path, value in recorded.items() if value is None]


# The run option that changes each frozen setting, for the message refusing a run that differs.
OPTIONS = {"config.model": "--model", "config.temperature": "--temperature", "config.max_tokens": "--max-tokens",
           "config.seed": "--seed", "corpus.pair": "--pair", "budgets.batch_size": "--batch-size",
           "budgets.concurrency": "--concurrency", "budgets.retries": "--retries",
           "budgets.retry_budget": "--retry-budget", "budgets.timeout_s": "--timeout",
           "latency.warmup_calls": "--latency-warmup", "latency.hot_sample": "--latency-sample",
           "latency.repetitions": "--latency-repetitions", "corpus.selection.limit": "--limit",
           "scoring.resamples": "--resamples", "scoring.bootstrap": "--bootstrap"}
# The settings a run leaves unset (null) when their option is not given: a freeze holding null is matched so.
_NONE_UNLESS_GIVEN = {"config.model", "config.temperature", "config.max_tokens", "corpus.selection.limit"}
# Where the files are and how they were read are not compared: what they hold is (the corpus's sha256).
_NOT_COMPARED = {"$schema", "status", "created_at", "method.path", "corpus.path", "corpus.reference_path",
                 "corpus.format", "sdk.dirty", "scoring.policy_path"}


def differences(frozen: FreezeManifest, actual: FreezeManifest, manifest_path: Path | None = None) -> list[str]:
    """One line per item in which the run (``actual``) differs from the frozen manifest (read from
    ``manifest_path``: the paths it records are relative to it)."""
    lines = []
    for key, want, got in _leaves(msgspec.to_builtins(frozen), msgspec.to_builtins(actual)):
        if key in _NOT_COMPARED or same_json(want, got) or (key.startswith("scoring") and frozen.scoring is None) or \
                (key == "corpus.accepted_doubts" and want is None):
            continue
        option = OPTIONS.get(key)
        fix = f" (give {option} {shlex.quote(str(want))})" if option and want is not None else \
            f" (leave out {option})" if key in _NONE_UNLESS_GIVEN and got is not None else ""
        if key == "scoring.policy_sha256" and frozen.scoring is not None:
            recorded = frozen.scoring.policy_path
            if recorded and manifest_path is not None and not Path(recorded).is_absolute():
                recorded = os.path.relpath(manifest_path.parent / recorded)
            fix = (f" (give --policy {shlex.quote(recorded)})" if recorded else
                   " (leave out --policy: the freeze holds the shipped policy)")
        if key == "corpus.accepted_doubts":
            fix = (f" (give {' '.join(f'--accept-doubt {code}' for code in want)})" if want else
                   " (leave out --accept-doubt: the freeze read the corpus without a doubt)")
        if key in ("sdk.version", "sdk.commit"):  # (its code the same: sdk.code_sha256 would have refused it first)
            where = f"git checkout {want} in mt-eval's checkout" if key == "sdk.commit" and want else \
                f"pip install mt-eval=={want}" if want else "an installed release"
            fix = (f" (run the mt-eval the freeze was made with: {where}; or, before the evaluation starts, freeze "
                   "again with this one)")
        if key.startswith("config.params.") and want is not None:
            fix = f" (give --param {shlex.quote(param_argument(key.removeprefix('config.params.'), want))})"
        lines.append(f"{key}: the freeze says {_shown(want)}, this run has {_shown(got)}{fix}")
    return lines


def _leaves(a: Any, b: Any, prefix: str = "") -> list[tuple[str, Any, Any]]:
    if isinstance(a, dict) and isinstance(b, dict):
        out = []
        for key in dict.fromkeys([*a, *b]):
            out += _leaves(a.get(key), b.get(key), f"{prefix}.{key}" if prefix else key)
        return out
    return [(prefix, a, b)]


def _shown(value: Any) -> str:
    if isinstance(value, str) and len(value) == 64 and all(c in "0123456789abcdef" for c in value):
        return value[:16] + "…"
    if isinstance(value, bool):
        return "true" if value else "false"  # (as --param and JSON write it)
    return "null" if value is None else repr(value) if isinstance(value, str) else str(value)


def param_argument(key: str, value: Any) -> str:
    """The ``KEY=VALUE`` of ``--param`` that reads back as ``value``: a text as it is, unless it would read as
    JSON (``"5"``, ``"true"``, ``"NaN"``), which is then quoted as JSON, as any other value is written."""
    import json

    if isinstance(value, str):
        try:
            json.loads(value)
        except ValueError:
            return f"{key}={value}"
    return f"{key}={json.dumps(value, ensure_ascii=False)}"
