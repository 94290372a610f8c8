"""The fairness side of one ``mt-eval run``: the static scan, the sandbox, the LLM gateway, the denied
attempts, the substitutability replay and the eligibility the card states.

``--sandbox`` runs the method as a bridge guest in the sandbox (Python methods too) with the network its
class allows (`mt_eval.sandbox.network_for_class`). ``--official`` marks a run meant for publishing: it is
always sandboxed, refuses to start when the static scan finds an undeclared dependency, and an A1 method
must name a gateway policy with a second model to replay a sample with. An A1 method in the sandbox
reaches its model only through a gateway the run starts on a Unix socket, given to it as
``RunConfig.base_url``; ``--gateway-policy`` without ``--sandbox`` serves the same gateway on loopback.
"""

from __future__ import annotations

import contextlib
import random
import shutil
import socket
import tempfile
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import msgspec

from mt_eval.eligibility import Eligibility, Substitution, decide
from mt_eval.gateway.audit import AuditLog, GatewayFacts
from mt_eval.gateway.policy import GatewayPolicy
from mt_eval.guarded_calls import CallFailed, backstop_for, guarded_translate
from mt_eval.loader import PluginSource, read_plugin
from mt_eval.records import RunConfig, TranslationResult
from mt_eval.results import ResultNotes, error_result, results_for
from mt_eval.sandbox import Network, Sandbox, SandboxFacts, SandboxUnavailable, network_for_class, plugin_sandbox
from mt_eval.sandbox.denials import DenialLog
from mt_eval.sandbox.isolation import GATEWAY_SOCKET
from mt_eval.sandbox.policy import DeniedAttempt, attempts_denied
from mt_eval.scan import ScanReport, scan_plugin, scan_problems

TYPE_CHECKING = False
if TYPE_CHECKING:
    from mt_eval.harness.request import RunRequest

GATEWAY_LOG = "gateway.jsonl"
DENIED_LOG = "sandbox-denied.jsonl"


class FairnessError(Exception):
    """The run cannot be fair as asked; the message says why and how to fix it."""


@dataclass
class FairRun:
    """What one run does for fairness, prepared before the method is loaded."""

    source: PluginSource | None
    official: bool = False
    scan: ScanReport | None = None
    network: Network | None = None
    sandbox: Sandbox | None = None
    policy: GatewayPolicy | None = None
    policy_path: Path | None = None
    model: str | None = None
    substitution_sample: int = 5
    out: Path | None = None
    denials: DenialLog = field(default_factory=DenialLog)
    substitution: Substitution | None = None
    _gateway: Any = None
    _gateway_directory: Path | None = None
    _listener: socket.socket | None = None

    @property
    def gateway_url(self) -> str | None:
        if self.policy is None:
            return None
        if self.sandbox is not None:
            return self.sandbox.policy.gateway_url
        assert self._listener is not None
        host, port = self._listener.getsockname()[:2]
        return f"http://{host}:{port}/v1"

    def state(self) -> dict[str, Any]:
        """What a resumed run must keep the same (recorded in run.json)."""
        return {"official": self.official, "sandbox": self.network if self.sandbox is not None else None,
                "read_only": self.sandbox.policy.extra_read_only if self.sandbox is not None else [],
                "gateway_policy_sha256": _sha256(self.policy_path) if self.policy_path else None}

    def close_unused(self) -> None:
        """Release what `prepare` set up, for a run that will not start."""
        if self._gateway_directory is not None:
            shutil.rmtree(self._gateway_directory, ignore_errors=True)
        if self._listener is not None:
            self._listener.close()

    def adjust_config(self, config: RunConfig) -> RunConfig:
        """The RunConfig with the gateway's URL and the allowlisted model, when the run has a gateway."""
        if self.policy is None:
            return config
        return msgspec.structs.replace(config, base_url=self.gateway_url, model=self.model)

    @contextlib.asynccontextmanager
    async def running(self, label: str) -> AsyncIterator[None]:
        """The gateway (if any) serving and the guest's stderr watched while the method runs."""
        from mt_eval.gateway.server import Gateway, GatewayThread

        assert self.out is not None
        if self.sandbox is not None:
            self.denials.watch(label)
        try:
            if self.policy is not None:
                self._gateway = GatewayThread(Gateway(self.policy, AuditLog(self.out / GATEWAY_LOG)))
                if self._gateway_directory is not None:
                    # (the sandbox's user may differ from ours: its private directory guards it)
                    self._gateway.start(unix=self._gateway_directory / GATEWAY_SOCKET, unix_mode=0o666)
                else:
                    self._gateway.start(sock=self._listener)
            yield
        finally:
            self.denials.stop()
            try:
                if self._gateway is not None:
                    self._gateway.stop()  # (raises when its audit log could not be written whole)
            finally:
                if self._gateway_directory is not None:
                    shutil.rmtree(self._gateway_directory, ignore_errors=True)
                if self.sandbox is not None:
                    with (self.out / DENIED_LOG).open("ab") as log:
                        for attempt in self.denials.attempts:
                            log.write(msgspec.json.encode(attempt) + b"\n")

    async def replay_with_substitute(self, method: Any, scored: Callable[[], Sequence[dict[str, Any]]],
                                     config: RunConfig, seed: int | None,
                                     view: Callable[[list[dict[str, Any]]], list[dict[str, Any]]], *,
                                     timeout_s: float | None = None, directory: Path | None = None) -> None:
        """An A1 claim tested: a sample of the ``scored()`` entries (as ``view`` hands them to the method)
        translated again with the policy's second model, in one call under the run's deadline (``timeout_s``
        per entry): a method that fails, hangs or ends the process there fails the replay, not the run."""
        model = self.policy.substitute_model if self.policy is not None else None
        if model is None or self.network != "gateway":
            return
        entries = scored()
        if not entries:
            return
        sample = view(random.Random(seed).sample(entries, min(self.substitution_sample, len(entries))))
        try:
            raw = await _replayed(method, sample, msgspec.structs.replace(config, model=model), timeout_s,
                                  directory)
        except CallFailed as failure:
            results = [error_result(str(e["id"]), failure.message) for e in sample]
        else:
            results, _unknown = results_for(sample, raw, label="the method", notes=ResultNotes())
        errors = [r.error for r in results if r.error is not None]
        completed = sum(1 for r in results if r.error is None and r.predicted is not None)
        self.substitution = Substitution(model=model, entries=[str(e["id"]) for e in sample], completed=completed,
                                         failed=len(sample) - completed, example_error=errors[0] if errors else None)

    def card_fields(self, results: Iterable[TranslationResult], complete: bool) -> dict[str, Any]:
        """The card's static_scan, sandbox, gateway and eligibility."""
        gateway = self._gateway_facts()
        denied = self._denied(results)
        sandbox = None
        if self.sandbox is not None:
            sandbox = SandboxFacts(tool=self.sandbox.tool.name, version=self.sandbox.tool.version,
                                   policy=self.sandbox.policy, denied=denied)
        eligibility: Eligibility = decide(
            dependency_class=self.source.derivation.dependency_class if self.source else None,
            sandboxed=self.sandbox is not None, through_gateway=self.policy is not None and self.sandbox is not None,
            scan=self.scan, denied=denied, substitution=self.substitution, complete=complete, official=self.official)
        return {"static_scan": self.scan, "sandbox": sandbox, "gateway": gateway, "eligibility": eligibility}

    def _gateway_facts(self) -> GatewayFacts | None:
        if self.policy is None or self.out is None or not (self.out / GATEWAY_LOG).exists():
            return None
        log = AuditLog(self.out / GATEWAY_LOG)
        log.close()
        return log.facts(self.policy_path, self.policy.token_budget)

    def _denied(self, results: Iterable[TranslationResult]) -> list[DeniedAttempt]:
        if self.sandbox is None or self.out is None:
            return []
        seen = DenialLog()
        path = self.out / DENIED_LOG
        if path.exists():
            for line in path.read_bytes().splitlines():
                with contextlib.suppress(msgspec.DecodeError):
                    old = msgspec.json.decode(line, type=DeniedAttempt)
                    seen.add(old.kind, old.detail, source=old.source, example_id=old.example_id, count=old.count)
        seen.add_results((r.id, r.error) for r in results)
        if self.out is not None and (self.out / GATEWAY_LOG).exists():
            log = AuditLog(self.out / GATEWAY_LOG)
            log.close()
            for reason, count in log.refusals.items():
                seen.add("gateway", reason, source="gateway", count=count)
        return seen.attempts


async def _replayed(method: Any, sample: list[dict[str, Any]], config: RunConfig, timeout_s: float | None,
                    directory: Path | None) -> object:
    """The replay's call, as the run's calls are made: under ``timeout_s`` per entry, and for a method in this
    process, with the event loop watched — one that blocks it (a synchronous call in ``translate``) is
    interrupted, and fails the replay (`CallFailed`)."""
    from mt_eval.harness.outcome import EXIT_ERROR
    from mt_eval.loop_watchdog import LoopWatchdog, find_blocked

    backstop_s = None if timeout_s is None else backstop_for(method, timeout_s, len(sample))

    def call() -> Awaitable[object]:
        return guarded_translate(method, sample, config, timeout_s=timeout_s, directory=directory,
                                 backstop_s=backstop_s)

    if timeout_s is None or getattr(method, "enforces_deadlines", False):
        return await call()
    limit = max(timeout_s * len(sample), 0.5)
    try:
        with LoopWatchdog(limit, hard_limit_s=max(5.0, limit), hard_exit_code=EXIT_ERROR,
                          hard_message="mt-eval run: the method blocked the event loop in the substitution replay "
                                       "and could not be interrupted; the results are saved (results.jsonl), the "
                                       "card is not written"):
            return await call()
    except BaseException as error:
        blocked = find_blocked(error)
        if blocked is None:
            raise
        raise CallFailed(f"the method blocked the event loop for {blocked.seconds:.1f} s inside translate() (a "
                         "synchronous call in an async method)") from None


def _sha256(path: Path) -> str:
    import hashlib

    return hashlib.sha256(path.read_bytes()).hexdigest()


def prepare(request: RunRequest) -> FairRun:
    """Scan the plugin and set up its sandbox and gateway as ``request`` asks; raises `FairnessError`."""
    source, _problems = read_plugin(request.method)
    asked = request.fairness
    official = asked.official
    fair = FairRun(source=source, official=official, substitution_sample=asked.substitution_sample)
    if source is None:
        return fair  # loading the plugin reports what is wrong with its files
    fair.scan = scan_plugin(source.directory, source.manifest.dependencies)
    dependency_class = source.derivation.dependency_class
    if official:
        if dependency_class is None:
            raise FairnessError("an official run needs a declared dependency class: give method.json its "
                                '"dependencies" and "dependency_class"')
        if source.manifest.dependency_class is None:  # (validate warns of it; an official run is fail-closed)
            raise FairnessError("an official run needs a declared dependency class: give method.json "
                                f'"dependency_class": "{dependency_class}" (what its dependencies make it)')
        if fair.scan.errors:
            listing = "\n".join(p.render() for p in scan_problems(source.directory, fair.scan,
                                                                  declared=source.manifest.dependencies is not None))
            raise FairnessError(f"an official run needs a clean static scan; it found {fair.scan.errors} error(s):\n"
                                f"{listing}")
    sandboxed = official or asked.sandbox
    if sandboxed:
        _refuse_exposed_corpus(asked.sandbox_ro, request)
        _refuse_exposed_runs(asked.sandbox_ro, request.directory.out)
    fair.network = network_for_class(dependency_class)
    _prepare_gateway(fair, request, sandboxed)
    if sandboxed:
        if fair.network == "gateway" and fair.policy is None:
            raise FairnessError("an A1 method reaches its model only through the LLM gateway in a sandboxed run: "
                                "give --gateway-policy FILE (see `mt-eval gateway --help`)")
        try:
            fair.sandbox = plugin_sandbox(source, network=fair.network, extra_read_only=asked.sandbox_ro,
                                          gateway_directory=fair._gateway_directory,
                                          hidden=[str(path) for path in _corpus_files(request)])
        except SandboxUnavailable as exc:
            fair.close_unused()
            raise FairnessError(f"{exc}. The method was not run: a sandboxed run never falls back to running "
                                "unconfined (run without --sandbox/--official to evaluate it unconfined)") from exc
        _say_copies_not_shown(source, fair.sandbox.view.read_only)
    return fair


def _say_copies_not_shown(source: PluginSource, shown: Sequence[str]) -> None:
    """Warn of each pinned copy of a mirrored dependency that the sandbox does not show (``shown``: what it shows
    read-only, the plugin, its runtime, /usr and each ``--sandbox-ro``): the method cannot read it there (it would
    fail with "No such file or directory", saying nothing of why)."""
    import sys

    from mt_eval.control_chars import escaped_for_terminal
    from mt_eval.pins import pinned_copies

    for dep_id, path in pinned_copies(source):
        where = path.resolve()
        if not any(where.is_relative_to(directory) for directory in shown):
            print(escaped_for_terminal(f"mt-eval run: warning: the mirrored dependency {dep_id!r} is at {path}, "
                                       "outside the plugin, where the sandbox does not show it: give --sandbox-ro "
                                       f"{path} to let the method read it"), file=sys.stderr)


def _refuse_exposed_corpus(exposed: Sequence[str], request: RunRequest) -> None:
    """A ``--sandbox-ro`` path may not hold the corpus: the method would read the references it is scored on."""
    corpus_files = _corpus_files(request)
    for path in exposed:
        shown = Path(path).resolve()
        held = next((f for f in corpus_files if f == shown or f.is_relative_to(shown)), None)
        if held is not None:
            raise FairnessError(f"--sandbox-ro {path} holds the corpus ({held}): the method would read the references "
                                "it is scored on. Expose the artifact alone (its own file or directory), or keep the "
                                "corpus elsewhere")


def _refuse_exposed_runs(exposed: Sequence[str], out: Path | None) -> None:
    """A ``--sandbox-ro`` path may not hold an earlier run (its directory, or a run card), nor this run's own
    directory (``out``; None: under ``runs/`` here): the method would read a card (the canaries' references, which
    entries are canaries and negative controls) and results."""
    from mt_eval.sandbox.view import earlier_runs

    own = (out or Path("runs")).resolve()
    for path in exposed:
        if own.is_relative_to(Path(path).resolve()):
            where = f"this run's directory {out}" if out is not None else \
                "this run's directory (runs/ here, the default)"
            raise FairnessError(f"--sandbox-ro {path} holds {where}: the method would read its results and card as "
                                "they are written. Give --out a directory outside it, or expose the artifact alone")
        found = earlier_runs(str(Path(path).resolve()))
        if found:
            first = Path(found[0])
            held = f"the run directory {first.parent}" if (first.parent / "run.json").is_file() else \
                f"the run card {first}"
            more = f" (and {len(found) - 1} more file(s) of runs)" if len(found) > 1 else ""
            raise FairnessError(f"--sandbox-ro {path} holds {held}{more}: the method would read an earlier run's "
                                "card and results (the canaries' references, which entries are canaries and "
                                "negative controls). Expose the artifact alone (its own file or directory), or keep "
                                "run directories (--out) and cards elsewhere")


def _corpus_files(request: RunRequest) -> list[Path]:
    """The files the run reads its corpus from (resolved): the sandbox locks them wherever the method could
    otherwise read them (a corpus kept in the plugin directory)."""
    spec = request.corpus
    return [p.resolve() for p in (spec.path, spec.source_file, spec.reference_file) if p is not None]


def _prepare_gateway(fair: FairRun, request: RunRequest, sandboxed: bool) -> None:
    from mt_eval.gateway.policy import read_policy
    from mt_eval.problems import ProblemsError

    path = request.fairness.gateway_policy
    if path is None:
        return
    if request.settings.base_url:
        raise FairnessError("--base-url and --gateway-policy exclude each other: with a gateway the method reaches "
                            "its model at the URL the run gives it")
    if sandboxed and fair.network == "none":  # (the card would name the gateway's model, which it never reached)
        declared = fair.source.derivation.dependency_class if fair.source is not None else None
        how = "--official" if fair.official else "--sandbox"
        raise FairnessError(f"--gateway-policy {path} serves an LLM gateway, and the method's dependency class is "
                            f"{declared or 'undeclared'}, which has no network under {how}: it could not reach the "
                            "gateway, the card would name a model it never used, and no substitution replay is made "
                            "(that tests an A1 method): leave --gateway-policy out (and --substitution-sample), or "
                            'declare the method\'s served model in method.json ("dependency_class": "A1")')
    try:
        fair.policy = read_policy(Path(path))
    except ProblemsError as exc:
        raise FairnessError(str(exc)) from exc
    fair.policy_path = Path(path)
    fair.model = request.settings.model or fair.policy.models[0].id
    if fair.policy.route(fair.model) is None:
        raise FairnessError(f"--model {fair.model} is not on the gateway policy's allowlist "
                            f"({', '.join(r.id for r in fair.policy.models)})")
    if fair.official and fair.network == "gateway" and fair.policy.substitute_model is None:
        raise FairnessError("an official A1 run tests substitutability: list a second model in the gateway policy")
    if sandboxed and fair.network == "gateway":
        fair._gateway_directory = Path(tempfile.mkdtemp(prefix="mt-eval-gateway-"))
    else:
        fair._listener = socket.create_server(("127.0.0.1", 0))


def describe_outcome(eligibility: Eligibility | None, sandbox: SandboxFacts | None) -> list[str]:
    """Summary lines for the end of a run: the verdict and what the sandbox denied."""
    lines = []
    if eligibility is not None:
        verdict = "eligible" if eligibility.eligible else "not eligible"
        flags = f" [{', '.join(eligibility.flags)}]" if eligibility.flags else ""
        lines.append(f"  {verdict}{flags}: {eligibility.reasons[0]}" + (
            f" (+{len(eligibility.reasons) - 1} more in the card)" if len(eligibility.reasons) > 1 else ""))
    if sandbox is not None and sandbox.denied:
        shown = "; ".join(f"{a.kind} {a.detail} ×{a.count}" for a in attempts_denied(sandbox.denied)[:3])
        lines.append(f"  sandbox ({sandbox.tool}) denied: {shown}")
    return lines
