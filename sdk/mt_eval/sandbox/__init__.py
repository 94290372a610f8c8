"""Layer 3 of the fairness checks, the sandbox: a method runs as a bridge guest in its own namespaces —
no network (or only the LLM gateway), its plugin and runtime read-only, a private ``/tmp``, every other
name of the host locked — under Debian's bubblewrap, or util-linux ``unshare`` where bubblewrap cannot run.

`plugin_sandbox` builds the confinement for a plugin (`Sandbox.wrap` turns a guest command into a
confined one); `SandboxUnavailable` says why a host cannot isolate. The pieces: `view` (what is
visible), `isolation` (the tools and their command lines), `launch` (the in-sandbox gateway forwarder),
`confine` and `unshare` (the fallback), `denials` (what was refused), `policy` (the card's record).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from mt_eval.sandbox.isolation import Sandbox, SandboxUnavailable, find_tool
from mt_eval.sandbox.policy import DeniedAttempt, Network, SandboxFacts, SandboxPolicy

if TYPE_CHECKING:
    from mt_eval.loader import PluginSource

__all__ = ["DeniedAttempt", "Network", "Sandbox", "SandboxFacts", "SandboxPolicy", "SandboxUnavailable",
           "find_tool", "network_for_class", "plugin_sandbox"]


def network_for_class(dependency_class: str | None) -> Network:
    """S, O and X (and an undeclared class) get no network; A1 only the gateway; A2 the host's network."""
    return {"A1": "gateway", "A2": "host"}.get(dependency_class or "", "none")  # type: ignore[return-value]


def plugin_sandbox(source: PluginSource, *, network: Network, extra_read_only: Sequence[str] = (),
                   gateway_directory: Path | None = None, hidden: Sequence[str] = ()) -> Sandbox:
    """The sandbox a plugin's guest runs in: its directory and the runtime it needs, read-only; ``hidden`` files
    (a run's corpus), the SDK's own copies of the demo corpus and the files of earlier runs kept in the plugin
    (`earlier_runs`: a run directory or card copied there) locked wherever they lie in them."""
    from mt_eval.bridge.runtimes import node_executable, node_guest_script
    from mt_eval.resources import generated_file, shipped_corpus_copies
    from mt_eval.sandbox.view import earlier_runs, node_runtime, python_runtime

    # mt-eval serve and the gateway forwarder, and the contract both runtimes read (schemas, licence table)
    runtime = [*python_runtime(), str(generated_file("licences.json").resolve().parent)]
    if source.manifest.node_entry:  # its Node entry runs there too (validate starts every entry point)
        runtime += [*node_runtime(node_executable()), str(node_guest_script().resolve().parent.parent)]
    return Sandbox.for_plugin(source.directory, runtime, network=network, extra_read_only=list(extra_read_only),
                              gateway_directory=gateway_directory,
                              hidden=[*hidden, *map(str, shipped_corpus_copies()),
                                      *earlier_runs(str(source.directory.resolve()))])
