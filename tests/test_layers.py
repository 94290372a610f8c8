"""The layers of ``mt_eval``: no import cycle, no import from a higher layer (README, *Architecture*).

Each module belongs to the component named by the longest entry of `LAYERS` that is the module or a package
above it; the layers are listed lowest first. An import — at the top of a module or inside a function — may
go to its own component, to a lower layer, or to another component of its own layer as long as the
components of a layer import each other without a cycle. Imports under ``if TYPE_CHECKING:`` count too: an
annotation that needs a higher layer is a dependency on it. The import graph is grimp's (import-linter's engine).
"""

from __future__ import annotations

import re
from collections import defaultdict
from pathlib import Path

import grimp
import pytest

README = Path(__file__).parent.parent / "README.md"

LAYERS: dict[str, list[str]] = {
    # what every part uses: errors and problems, strict JSON, packaged files, locks, child processes
    "foundation": ["mt_eval._version", "mt_eval.errors", "mt_eval.lazy", "mt_eval.problems", "mt_eval.js_text",
                   "mt_eval.json_input", "mt_eval.field_words", "mt_eval.strict", "mt_eval.value_words",
                   "mt_eval.resources", "mt_eval.licenses", "mt_eval.code_hash", "mt_eval.locks",
                   "mt_eval.child_process", "mt_eval.child_stderr", "mt_eval.child_spawn",
                   "mt_eval.child_detached",
                   "mt_eval.loop_watchdog", "mt_eval.progress", "mt_eval.concurrency", "mt_eval.durations",
                   "mt_eval.process_state", "mt_eval.process_exit", "mt_eval.child_policy", "mt_eval.process_memory",
                   "mt_eval.event_loop", "mt_eval.deadlines", "mt_eval.lone_surrogates", "mt_eval.interrupts",
                   "mt_eval.control_chars", "mt_eval.atomic_files", "mt_eval.background_threads",
                   "mt_eval.signal_arrivals"],
    # the formats: what a method, its plugin, a corpus and a result are, and the rules they follow
    "contract": ["mt_eval.records", "mt_eval.decisions.records", "mt_eval.decisions.answers", "mt_eval.results",
                 "mt_eval.unmatched_results",
                 "mt_eval.manifest", "mt_eval.dependency_classes", "mt_eval.method_card", "mt_eval.method_protocol",
                 "mt_eval.hookspecs", "mt_eval.extensions", "mt_eval.gold", "mt_eval.corpus",
                 "mt_eval.node_contract", "mt_eval.pairs", "mt_eval.champollion.languages"],
    # running a method wherever it lives: in this process, behind the bridge, as a translator program
    "runtime": ["mt_eval.plugin_import", "mt_eval.cached_bytecode", "mt_eval.guarded_calls", "mt_eval.bridge",
                "mt_eval.adapters", "mt_eval.loader", "mt_eval.pins", "mt_eval.method_start"],
    # what keeps a run fair: the static scan, the sandbox, the LLM gateway, eligibility, contamination
    "safeguards": ["mt_eval.scan", "mt_eval.sandbox", "mt_eval.gateway", "mt_eval.eligibility",
                   "mt_eval.contamination"],
    # what the commands do
    "workflows": ["mt_eval.validate", "mt_eval.champollion", "mt_eval.harness", "mt_eval.decisions",
                  "mt_eval.leaderboard", "mt_eval.scaffold", "mt_eval.scaffold_answers", "mt_eval.scaffold_files",
                  "mt_eval.schemas"],
    # the command line: arguments → typed requests → workflows; output and exit statuses
    "cli": ["mt_eval.cli"],
    # the package's public names, exported lazily
    "facade": ["mt_eval"],
}
RANK = {component: rank for rank, components in enumerate(LAYERS.values()) for component in components}
LAYER_OF = {component: layer for layer, components in LAYERS.items() for component in components}


def component_of(module: str) -> str | None:
    """The most specific component holding ``module`` (the root package is a component of its own)."""
    if module == "mt_eval":
        return "mt_eval"
    parts = module.split(".")
    for end in range(len(parts), 1, -1):
        name = ".".join(parts[:end])
        if name in RANK and name != "mt_eval":
            return name
    return None


def import_edges() -> list[tuple[str, str, int]]:
    """(importer, imported, line) for every import between modules of mt_eval, TYPE_CHECKING ones included."""
    graph = grimp.build_graph("mt_eval", cache_dir=None)
    edges = []
    for importer in graph.modules:
        for imported in graph.find_modules_directly_imported_by(importer):
            for detail in graph.get_import_details(importer=importer, imported=imported):
                edges.append((importer, imported, detail["line_number"]))
    return sorted(edges)


def upward_imports(edges: list[tuple[str, str, int]]) -> list[str]:
    """Each import from a lower layer into a higher one, as ``importer:line → imported (layer → layer)``."""
    found = []
    for importer, imported, line in edges:
        low, high = component_of(importer), component_of(imported)
        if low is not None and high is not None and RANK[high] > RANK[low]:
            found.append(f"{importer}:{line} → {imported} ({LAYER_OF[low]} → {LAYER_OF[high]})")
    return found


def cycles(edges: list[tuple[str, str]]) -> list[list[str]]:
    """The strongly connected components of more than one node (Tarjan's algorithm, iterative)."""
    follows: dict[str, set[str]] = defaultdict(set)
    for a, b in edges:
        if a != b:
            follows[a].add(b)
            follows.setdefault(b, set())
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in sorted(follows):
        if root in index:
            continue
        work = [(root, iter(sorted(follows[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, successors = work[-1]
            for nxt in successors:
                if nxt not in index:
                    index[nxt] = low[nxt] = len(index)
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, iter(sorted(follows[nxt]))))
                    break
                if nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        found.append(sorted(component))
    return found


@pytest.fixture(scope="module")
def edges() -> list[tuple[str, str, int]]:
    return import_edges()


def test_every_module_belongs_to_a_layer(edges):
    modules = {m for a, b, _ in edges for m in (a, b)} | set(grimp.build_graph("mt_eval", cache_dir=None).modules)
    assert sorted(m for m in modules if component_of(m) is None) == []


def test_no_module_imports_from_a_higher_layer(edges):
    assert upward_imports(edges) == []


def test_no_import_cycle_between_modules(edges):
    assert cycles([(a, b) for a, b, _ in edges]) == []


def test_the_components_of_a_layer_import_each_other_without_a_cycle(edges):
    between = [(component_of(a), component_of(b)) for a, b, _ in edges]
    assert cycles([(a, b) for a, b in between if a is not None and b is not None]) == []


def test_the_readme_diagram_shows_every_layer_and_component():
    diagram = re.search(r"```mermaid\n(.*?)```", README.read_text(encoding="utf-8"), re.S)
    assert diagram, "the README's architecture section has a Mermaid diagram of the layers"
    text = diagram.group(1)
    for layer, components in LAYERS.items():
        assert re.search(rf"\b{layer}\b", text), layer
        for component in components:
            name = component.removeprefix("mt_eval.") if component != "mt_eval" else "mt_eval"
            assert re.search(rf"(?<![\w.]){re.escape(name)}(?![\w])", text), f"{component} ({layer})"


def test_the_checks_find_an_upward_import_and_a_cycle():
    """The checks above can fail: an import from the contract into the harness, and a cycle."""
    made_up = [("mt_eval.records", "mt_eval.harness.session", 3), ("mt_eval.harness.session", "mt_eval.records", 9)]
    assert upward_imports(made_up) == ["mt_eval.records:3 → mt_eval.harness.session (contract → workflows)"]
    assert cycles([(a, b) for a, b, _ in made_up]) == [["mt_eval.harness.session", "mt_eval.records"]]
    assert cycles([("a", "b"), ("b", "c"), ("c", "a"), ("c", "d")]) == [["a", "b", "c"]]


def test_the_readme_tree_names_every_module():
    """The architecture section's tree of sdk/mt_eval/ names each module file (the commands' modules by their
    command's name); before, harness/verify_written.py and validate/start_limit.py were missing from it."""
    text = README.read_text(encoding="utf-8")
    tree = text[text.index("\nsdk/mt_eval/ "):text.index("\nbridge/schemas/ ")]
    listed = re.search(r"one module per command: ([a-z, ]+)", " ".join(tree.split()))
    assert listed, "the tree's cli/ entry lists its commands' modules"
    commands = [name.split()[0] for name in listed.group(1).split(",")]  # (the last one runs into the next line)
    package = Path(__file__).parent.parent / "sdk" / "mt_eval"
    unnamed = [str(module.relative_to(package)) for module in sorted(package.rglob("*.py"))
               if module.name not in ("__init__.py", "__main__.py")
               and not re.search(rf"\b{re.escape(module.name)}\b", tree)
               and not (module.parent.name == "cli" and module.stem in commands)]
    assert unnamed == []
