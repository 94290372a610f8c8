"""What a run checks of a loaded method before it calls it, and what its card says of the method: its pins
(`mt_eval.pins`), the method card it runs under — merged from the plugin's files (or ``--method-card``) and what
the method reports when it runs, a guest's card arriving with its answer to ``initialize`` — under ``--isolate``
the hooks that cannot run, and the card's ``method`` record. ``mt-eval run``, ``decide run`` and ``grade`` all
take the card and the record from here, so every runtime gets the same card; and the runtime the record says of a run
resumed in another one (`ran_rows_in`, `recorded_runtime`)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import msgspec

from mt_eval.harness.run_directory import RunError, write_json
from mt_eval.pins import PinCheck, check_pins, refusals

if TYPE_CHECKING:
    from mt_eval.harness.runcard import MethodFacts
    from mt_eval.loader import LoadedMethod
    from mt_eval.records import RunConfig


def checked_pins(loaded: LoadedMethod) -> list[PinCheck]:
    """Every pin the run can check; a mismatch or a missing artifact refuses the run."""
    pins = check_pins(loaded.source)
    if refused := refusals(pins):
        raise RunError(f"{loaded.method_id}: pinned dependencies differ from what this run would use:\n"
                       + "\n".join(f"  {check.problem()}" for check in refused))
    return pins


def say_isolated_hooks_do_not_run(loaded: LoadedMethod) -> None:
    """Under --isolate the plugin's code runs only in its own process, so hooks in it cannot run here: say so."""
    from mt_eval.extensions import declared_hooks
    from mt_eval.loader import entry_module_file

    file = entry_module_file(loaded.source)
    hooks = declared_hooks(file) if file is not None else []
    if hooks:
        print(f"mt-eval run: warning: --isolate: the hooks in {file} ({', '.join(hooks)}) do not run: the plugin's "
              "code runs only in its own process. Run without --isolate to run them, or move them into a module "
              "given with --extension", file=sys.stderr)


def card_file(card_path: str | Path | None) -> tuple[str, Any] | None:
    """``--method-card``: the card to use instead of the plugin's method_card.json, read now."""
    if card_path is None:
        return None
    from mt_eval.strict import parse_json

    path = Path(card_path)
    try:
        data, problems = parse_json(path.read_bytes(), file=str(path))
    except OSError as exc:
        raise RunError(f"--method-card {path}: cannot read it: {exc.strerror or exc}") from exc
    if data is None:
        raise RunError("the method card is not valid:\n" + "\n".join(p.render() for p in problems))
    return str(path), data


async def merged_card(loaded: LoadedMethod, given: tuple[str, Any] | None, config: RunConfig) -> dict[str, Any]:
    """The run's method card: the plugin's files (or --method-card) and what the method reports when it runs; a
    guest is started first, so that the card it sends at initialize is part of it."""
    from mt_eval.bridge.messages import BridgeError
    from mt_eval.bridge.method import per_entry_error
    from mt_eval.loader import method_card_of

    start = getattr(loaded.method, "start", None)
    if callable(start):
        try:
            await start(config)
        except BridgeError as exc:
            raise RunError(f"{loaded.method_id}: the method's process could not start: {per_entry_error(exc)}") from exc
    card, problems = method_card_of(loaded.source, loaded.method, card_file=given)
    errors = [p for p in problems if p.severity == "error"]
    if card is None or errors:
        raise RunError("the method card is not valid:\n" + "\n".join(p.render() for p in errors))
    return msgspec.to_builtins(card)  # type: ignore[no-any-return]


def method_facts(loaded: LoadedMethod, card: dict[str, Any], *, runtime: str, code_sha256: str,
                 champollion: dict[str, Any] | None = None) -> MethodFacts:
    """The card's ``method`` record: identity, the merged method card, the derived class with each contribution,
    how it ran, its code's hash and git state, and how often its guest restarted."""
    from mt_eval.code_hash import git_state
    from mt_eval.harness.runcard import DependencyContribution, MethodFacts

    derivation = loaded.source.derivation
    commit, dirty = git_state(loaded.directory)
    return MethodFacts(
        method_id=loaded.method_id, name=loaded.manifest.name, method_class=loaded.manifest.method_class, card=card,
        dependency_class=derivation.dependency_class,
        contributions=[DependencyContribution(path=c.path, id=c.dependency_id, dependency_class=c.dependency_class,
                                              reason=c.reason) for c in derivation.contributions],
        runtime=runtime, code_sha256=code_sha256, git_commit=commit, git_dirty=dirty,
        guest_restarts=getattr(loaded.method, "restarts", None), champollion=champollion)


class NotedSessions(Protocol):
    """What `ran_rows_in` and `recorded_runtime` read of a run's run.json (`mt_eval.harness.session.RunState`)."""

    sessions: int
    runtimes: list[str] | None


def ran_rows_in(out: Path, state: NotedSessions, runtime: str) -> None:
    """Note in ``out``'s run.json (``state``) that this session runs rows in ``runtime``: written before any row
    runs, so that a session stopped midway counts. The sessions of a run started before runs noted theirs count as
    having run in the plugin's own runtime: nothing says they were isolated."""
    state.runtimes = [*_runtimes_of_sessions(state, runtime), runtime]
    write_json(out / "run.json", state)


def recorded_runtime(state: NotedSessions, runtime: str) -> str:
    """The runtime a run's card records: the one every session that ran rows ran them in (``runtime``, this
    session's, when none did); when they differ, the plugin's own (``"python"`` of ``"python (isolated)"``): a card
    never says a run was isolated when some of its rows were not."""
    ran = set(_runtimes_of_sessions(state, runtime))
    return runtime if not ran else ran.pop() if len(ran) == 1 else _own(runtime)


def _runtimes_of_sessions(state: NotedSessions, runtime: str) -> list[str]:
    return list(state.runtimes) if state.runtimes is not None else [_own(runtime)] * (state.sessions - 1)


def _own(runtime: str) -> str:
    """The plugin's own runtime, of the label a run records (`mt_eval.loader.runtime_label`, sandboxed or not)."""
    return runtime.partition(" (")[0]
