"""``mt-eval validate``'s import step inside the sandbox: the plugin's code runs confined (no network, its
directory read-only, a private /tmp), so validating an untrusted plugin executes nothing on the host.

A Python entry is imported by ``mt-eval validate --json --no-scan --no-sandbox`` run inside the sandbox, whose
problems come back as they are (its other entry points are started there too); a Node entry or a command is
started as a bridge guest there by `mt_eval.validate.entry_points` and must answer ``initialize`` (its card is checked
like any other).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import msgspec

from mt_eval.problems import Problem
from mt_eval.sandbox import SandboxUnavailable, plugin_sandbox
from mt_eval.sandbox.policy import CONFINED

if TYPE_CHECKING:
    from mt_eval.loader import PluginSource

IMPORT_TIMEOUT_S = 120.0  # the sandbox started and the Python entry imported and built there: at least this
GUEST_STEPS = 4  # steps after it, each --timeout (or --start-timeout when longer): its other entries started, the
# probes, the two entries compared
NO_SANDBOX_HINT = ("install bubblewrap (apt-get install bubblewrap); or give --no-sandbox to import it on this host "
                   "(only for code you trust), or --no-import to check its files only")


class _Report(msgspec.Struct):
    problems: list[Problem] = msgspec.field(default_factory=list)


class _Document(msgspec.Struct):
    plugins: list[_Report]


def sandboxed_import(source: PluginSource, *, timeout_s: float = 10.0, start_timeout_s: float = 30.0
                     ) -> tuple[str | None, list[Problem]]:
    """Import (or start) the plugin's entry in the sandbox: the sandbox tool used, and the problems found."""
    try:
        sandbox = plugin_sandbox(source, network="none")
    except SandboxUnavailable as exc:
        return None, [Problem(file=source.manifest_file, path="$", code="sandbox", hint=NO_SANDBOX_HINT,
                              message=f"the plugin's code was not run: {exc}")]
    tool = f"{sandbox.tool.name} {sandbox.tool.version}"
    if source.runtime == "python":
        return tool, _python_import(source, sandbox, timeout_s, start_timeout_s)
    from mt_eval.validate.entry_points import check_entry_points

    return tool, check_entry_points(source, None, timeout_s=timeout_s, start_timeout_s=start_timeout_s,
                                    sandbox=sandbox)


def import_limit_s(timeout_s: float, start_timeout_s: float = 30.0) -> float:
    """How long the sandboxed validation of a Python entry may take, all told (the import itself is held to
    ``start_timeout_s`` in there): the sandbox's start and the import get `IMPORT_TIMEOUT_S`, or ``start_timeout_s``
    when longer, then each of `GUEST_STEPS` gets ``timeout_s``, or ``start_timeout_s`` when longer."""
    return max(IMPORT_TIMEOUT_S, start_timeout_s) + GUEST_STEPS * max(timeout_s, start_timeout_s)


def _python_import(source: PluginSource, sandbox: object, timeout_s: float, start_timeout_s: float) -> list[Problem]:
    inside = str(source.directory.resolve())
    argv = sandbox.wrap([sys.executable, "-I", "-m", "mt_eval.cli", "validate", "--json", "--no-scan",  # type: ignore[attr-defined]
                         "--no-sandbox", "--timeout", str(timeout_s), "--start-timeout", str(start_timeout_s), inside])
    limit = import_limit_s(timeout_s, start_timeout_s)
    try:
        done = subprocess.run(argv, capture_output=True, timeout=limit, stdin=subprocess.DEVNULL)
        report = msgspec.json.decode(done.stdout, type=_Document).plugins[0]
    except subprocess.TimeoutExpired:
        return [Problem(file=source.manifest_file, path="$.entry_point", code="entry-point",
                        message=f"validating the entry point in the sandbox took over {limit:g} s: the sandbox's "
                                f"start and the import get {max(IMPORT_TIMEOUT_S, start_timeout_s):g} s, then each of "
                                f"{GUEST_STEPS} steps (the probes among them) {max(timeout_s, start_timeout_s):g} s",
                        hint="do not do long work at import time or in the constructor; if it needs it (loading a "
                             "model), give a longer --start-timeout (and --timeout for the probes)")]
    except (msgspec.DecodeError, msgspec.ValidationError, IndexError):
        tail = " / ".join(done.stderr.decode("utf-8", "replace").strip().splitlines()[-5:]) or (
            f"it wrote {done.stdout[:120].decode('utf-8', 'replace')!r} where its report was expected"
            if done.stdout.strip() else "no report and nothing on stderr")
        return [Problem(file=source.manifest_file, path="$.entry_point", code="entry-point",
                        message=f"importing the entry point in the sandbox failed (exit {done.returncode}): {tail}",
                        hint="run `mt-eval validate --no-sandbox` on a copy you trust to see the full error")]
    for line in done.stderr.decode("utf-8", "replace").splitlines():  # (what was done so the import went on)
        if line.startswith("mt-eval: warning: "):
            print(as_given(line, inside, source.directory), file=sys.stderr, flush=True)
    return [msgspec.structs.replace(p, file=as_given(p.file, inside, source.directory),
                                    message=as_given(p.message, inside, source.directory),
                                    hint=as_given(hint, inside, source.directory) if (hint := _confined(p)) else hint)
            for p in report.problems]


def as_given(text: str, inside: str, directory: Path) -> str:
    """``text`` with the plugin's absolute path ``inside`` written as the host names the plugin (``directory``), so
    the sandbox's ``/abs/plugin/method.json`` is the host's own ``method.json`` for ``mt-eval validate .`` (the
    same problem found on both sides is then said once)."""
    return text.replace(inside + os.sep, "" if str(directory) == "." else str(directory) + os.sep).replace(
        inside, str(directory))


def _confined(problem: Problem) -> str | None:
    """A failed import's fix, saying what the sandbox forbids: an error met only there (a write beside the
    code, a download at import) was sent to the host's ``python FILE``, where it does not happen."""
    if problem.code != "entry-point" or problem.severity != "error" or "SyntaxError" in problem.message:
        return problem.hint  # (a syntax error is the code's own, wherever it is imported: as Node's says)
    return f"{problem.hint}; {CONFINED}" if problem.hint else CONFINED
