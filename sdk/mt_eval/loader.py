"""Loading a method plugin from an explicit directory: nothing is discovered, nothing is guessed.

``load_method(path)`` reads and validates ``method.json``, imports the Python entry point in isolation
(`mt_eval.plugin_import`), builds the method (passing ``manifest`` and ``directory`` when its
constructor accepts them), checks it against `TranslationMethod`, merges its card (`mt_eval.method_card`),
and registers its module with a pluggy manager when one is given. Every problem is collected; a
`PluginLoadError` carries them all.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from contextvars import ContextVar
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any, Literal, Protocol

import msgspec

from mt_eval.manifest import Manifest, kebab_case
from mt_eval.method_card import CARD_FILE, MethodCard, merge_card, not_a_file, read_card_file
from mt_eval.method_protocol import TranslationMethod, protocol_deviations, where_protocols_are
from mt_eval.plugin_import import EntryPointError, describe_exception, describe_exit, import_entry_module, resolve_class
from mt_eval.problems import Problem, ProblemsError
from mt_eval.progress import still_working
from mt_eval.strict import decode_json_file

if TYPE_CHECKING:
    import pluggy

    from mt_eval.bridge.connection import HostOptions
    from mt_eval.bridge.method import BridgeMethod
    from mt_eval.dependency_classes import Derivation

MANIFEST_FILE = "method.json"
Runtime = Literal["python", "node", "command"]
GUEST_START_TIMEOUT: ContextVar[float | None] = ContextVar("start_timeout", default=None)  # see `bridge_method`


class Confinement(Protocol):
    """What runs a guest confined (`mt_eval.sandbox.Sandbox`): the command line that runs ``command`` inside it."""

    def wrap(self, command: list[str], cwd: str | None = None) -> list[str]: ...


class PluginLoadError(ProblemsError):
    """A plugin could not be loaded; ``problems`` lists every reason."""


@dataclass(frozen=True)
class PluginSource:
    """What a plugin's files declare, before any of its code runs."""

    directory: Path
    manifest: Manifest
    method_id: str
    card_data: dict[str, Any] | None

    @property
    def manifest_file(self) -> str:
        return str(self.directory / MANIFEST_FILE)

    @property
    def card_file(self) -> str:
        return str(self.directory / CARD_FILE)

    @property
    def runtime(self) -> Runtime:
        if self.manifest.entry_point:
            return "python"
        return "node" if self.manifest.node_entry else "command"

    @property
    def derivation(self) -> Derivation:
        return self.manifest.derivation()


@dataclass(frozen=True)
class LoadedMethod:
    """A ready-to-use method with everything known about it."""

    source: PluginSource
    method: TranslationMethod
    card: MethodCard
    module: ModuleType | None

    @property
    def method_id(self) -> str:
        return self.source.method_id

    @property
    def manifest(self) -> Manifest:
        return self.source.manifest

    @property
    def directory(self) -> Path:
        return self.source.directory


def plugin_directory(path: str | Path) -> Path:
    """The plugin directory for ``path`` (a directory, or its method.json)."""
    path = Path(path)
    return path.parent if path.name == MANIFEST_FILE and path.is_file() else path


def read_plugin(path: str | Path) -> tuple[PluginSource | None, list[Problem]]:
    """Read and validate a plugin's files without running its code."""
    directory = plugin_directory(path)
    manifest_path = directory / MANIFEST_FILE
    if not directory.is_dir():
        return None, [Problem(file=str(directory), path="$",
                              message="a file, not a directory" if directory.exists() else "no such directory",
                              hint="give the path of a method plugin directory (the folder holding method.json)",
                              code="io")]
    if not manifest_path.is_file():
        if unreadable := not_a_file(manifest_path):
            return None, [unreadable]
        return None, [Problem(file=str(manifest_path), path="$", message="missing: this is not a method plugin",
                              hint="a plugin directory holds method.json; `mt-eval new` creates one", code="io")]
    manifest, problems = decode_json_file(manifest_path, Manifest)
    card_data, card_problems = read_card_file(directory / CARD_FILE)
    problems.extend(card_problems)
    if manifest is None:
        return None, problems
    method_id = manifest.method_id or kebab_case(directory.resolve().name)
    source = PluginSource(directory=directory, manifest=manifest, method_id=method_id, card_data=card_data)
    problems.extend(_entry_file_problems(source))
    return source, problems


def _entry_file_problems(source: PluginSource) -> list[Problem]:
    problems: list[Problem] = []
    node_entry = source.manifest.node_entry
    if node_entry:
        file = (source.directory / node_entry).resolve()
        if not file.is_file():
            problems.append(Problem(file=source.manifest_file, path="$.node_entry",
                                    message=f'"{node_entry}" does not exist in the plugin directory',
                                    hint="create it, or correct the file name", code="missing-file"))
        elif not file.is_relative_to(source.directory.resolve()):
            problems.append(Problem(file=source.manifest_file, path="$.node_entry",
                                    message=f'"{node_entry}" resolves outside the plugin directory',
                                    hint="keep the plugin's code inside its directory", code="entry-escapes"))
    return problems


def command_argv(source: PluginSource) -> list[str]:
    """The plugin's ``command``, with a program shipped in the plugin directory given by its full path."""
    assert source.manifest.command is not None
    command = list(source.manifest.command)
    program = source.directory / command[0]
    if "/" in command[0] and not Path(command[0]).is_absolute() and program.is_file():
        command[0] = str(program.absolute())
    return command


def bridge_method(source: PluginSource, *, isolate: bool = False, sandbox: Confinement | None = None,
                  options: HostOptions | None = None) -> BridgeMethod:
    """The plugin as a guest behind the bridge (its Node entry, its command, or ``mt-eval serve``), in ``sandbox``
    when given; with no ``options``, `GUEST_START_TIMEOUT` holds (a guest still starting then is told of it)."""
    from mt_eval.bridge.connection import HostOptions
    from mt_eval.bridge.method import BridgeMethod
    from mt_eval.bridge.runtimes import node_command, python_command
    from mt_eval.bridge.start_failures import slow_start_fix

    if options is None and (start_s := GUEST_START_TIMEOUT.get()) is not None:
        options = HostOptions(start_timeout_s=start_s)
    cwd: Path | None = None
    manifest = source.manifest
    if source.runtime == "python" or (isolate and manifest.entry_point):
        command = python_command(source.directory, isolated=sandbox is not None)
    elif source.runtime == "node":
        command = node_command(source.directory, entry=manifest.node_entry, name=manifest.name,
                               method_id=source.method_id, implements=manifest.implements)
    else:
        command, cwd = command_argv(source), source.directory
    if sandbox is not None:
        command, cwd = sandbox.wrap(command, str(Path(cwd).resolve()) if cwd else None), None
    return BridgeMethod(command, cwd=cwd, label=source.method_id, options=options,
                        start_timeout_fix=slow_start_fix(manifest.entry_in_words()))


def runtime_label(source: PluginSource, *, isolate: bool) -> str:
    """The runtime a card records: the plugin's own, or "python (isolated)" when ``isolate`` runs its Python entry."""
    return "python (isolated)" if isolate and source.manifest.entry_point else source.runtime


def build_method(source: PluginSource, *, isolate: bool = False, sandbox: Confinement | None = None
                 ) -> tuple[object | None, ModuleType | None, list[Problem]]:
    """Construct the method: in-process for a Python entry, else through the bridge. Never raises for plugin
    faults; ``isolate`` runs even a Python entry in its own process, ``sandbox`` confines that process."""
    if isolate or sandbox is not None or source.runtime != "python":
        return bridge_method(source, isolate=isolate, sandbox=sandbox), None, []
    entry_point = source.manifest.entry_point

    def problem(message: str, hint: str | None, code: str) -> Problem:
        return Problem(file=source.manifest_file, path="$.entry_point", message=message, hint=hint, code=code)
    assert entry_point is not None
    module_name, _, class_name = entry_point.partition(":")
    notice = (f"{source.method_id}: still importing and building the method after {{seconds}} s (its code in "
              f"{source.directory}: a statement run at import or in __init__ may be waiting on something); Ctrl-C "
              "stops it")
    with still_working(notice):
        method, module, failure = _construct(source, module_name, class_name, problem)
    if failure is not None:
        return None, module, [failure]
    deviations = protocol_deviations(method, source.manifest.implements)
    hint = where_protocols_are(source.manifest.implements)
    if deviations and not inspect.isclass(getattr(module, class_name, None)):  # a factory function's result
        hint = "point entry_point at the method's class (or at a function that returns a method); " + hint
        deviations = [d._replace(text=f'"{class_name}" is no class, and what {class_name}() returned falls short: '
                                 f"{d.text}") for d in deviations]
    from mt_eval.bridge.slots import within_declared_concurrency as gated  # (its capabilities' calls at once)
    found = [problem(d.text, d.fix or hint, "protocol") for d in deviations]
    return (None if deviations else CalledAsAGuest(gated(method))), module, found


class CalledAsAGuest:
    """An in-process method as `load_method` hands it out, called as a guest is: what no guest takes (an id that is
    not a non-empty string or comes twice, a config without source_lang) is a `TypeError` in the bridge's words;
    entries lose their gold, a dict config becomes a RunConfig (a DecisionConfig), and ``aclose()`` is always there."""

    def __init__(self, method: Any) -> None:
        self._method = method

    def __getattr__(self, name: str) -> Any:
        found = getattr(self._method, name)
        if name not in ("translate", "decide") or not callable(found):
            return found
        from mt_eval.bridge.answers import DECIDE, entries_to_send, refuse_unshaped
        from mt_eval.bridge.guest_requests import config_refusal
        from mt_eval.decisions.records import DecisionConfig
        from mt_eval.records import RunConfig
        kind = DecisionConfig if name == "decide" else RunConfig

        async def as_a_guest_takes_them(items: Any, config: Any) -> Any:
            if kind is not RunConfig:
                refuse_unshaped(DECIDE, items)
            items = entries_to_send(items) if kind is RunConfig else items
            if not isinstance(config, msgspec.Struct):  # (a Struct is taken as it is, as a guest's host takes it)
                if problem := config_refusal(config, decides=kind is not RunConfig):
                    raise TypeError(problem)
                config = msgspec.convert(dict(config), kind, strict=False)
            return await found(items, config)
        setattr(self, name, as_a_guest_takes_them)  # (found here from now on)
        return as_a_guest_takes_them

    async def aclose(self) -> None:
        if callable(close := getattr(self._method, "aclose", None)):
            await close()


def _construct(source: PluginSource, module_name: str, class_name: str,
               problem: Callable[[str, str | None, str], Problem]) -> tuple[object | None, ModuleType | None,
                                                                         Problem | None]:
    """Import the entry module and build the method: (method, module, None), or the problem that stopped it."""
    entry_point = f"{module_name}:{class_name}"
    try:
        module = import_entry_module(source.directory, module_name, source.method_id)
        factory = resolve_class(module, class_name, entry_point, source.manifest.implements)
    except EntryPointError as exc:
        return None, None, problem(str(exc), exc.hint, exc.code)
    if not callable(factory):
        kind = type(factory).__name__
        return None, module, problem(f'"{class_name}" is a{"n" * (kind[0] in "aeiou")} {kind}, not a class',
                                     "point entry_point at the method's class", "entry-point")
    kwargs, missing = _constructor_arguments(factory, source)
    if missing:
        return None, module, problem(f"{class_name}() requires {', '.join(missing)}, which the loader cannot supply",
                                     "give those parameters defaults; the loader passes only `manifest` and "
                                     "`directory`, to constructors that name them", "constructor")
    from mt_eval.guarded_calls import working_directory_kept  # (and anyio: only once a constructor runs)

    try:
        with working_directory_kept("__init__()"):
            method = factory(**kwargs)
    except SystemExit as exc:
        return None, module, problem(f"{class_name}() {describe_exit(exc, source.directory)}",
                                     "a method must not end the process: raise an exception instead", "constructor")
    except KeyboardInterrupt:
        raise
    except BaseException as exc:  # (one of the plugin's own BaseExceptions too, as its import does)
        return None, module, problem(f"{class_name}() failed: {describe_exception(exc, source.directory)}",
                                     f"fix {class_name}.__init__", "constructor")
    return method, module, None


def _constructor_arguments(factory: Any, source: PluginSource) -> tuple[dict[str, Any], list[str]]:
    try:
        parameters = inspect.signature(factory).parameters
    except (TypeError, ValueError):
        return {}, []
    # the directory as an absolute path: a program or file the method finds through it must not depend on the
    # working directory (a run started inside the plugin, with --method ., included)
    offered = {"manifest": source.manifest, "directory": source.directory.resolve()}
    takes_any = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters.values())
    kwargs = {name: value for name, value in offered.items() if takes_any or name in parameters}
    missing = [name for name, p in parameters.items() if p.default is inspect.Parameter.empty and name not in kwargs
               and p.kind not in (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)]
    return kwargs, missing


def method_card_of(source: PluginSource, method: object | None, *, card_file: tuple[str, Any] | None = None
                   ) -> tuple[MethodCard | None, list[Problem]]:
    """Merge the plugin's card: method.json, then method_card.json (or ``card_file``, a ``(name, parsed)`` card
    given instead, e.g. ``--method-card``), then what the method reports at run time — its ``method_card()``, or
    the card a guest sent at initialize (a bridge method's ``method_card()`` once it has started)."""
    sources: dict[str, Any] = dict([card_file]) if card_file is not None else {source.card_file: source.card_data}
    problems: list[Problem] = []
    runtime_card = getattr(method, "method_card", None)
    if callable(runtime_card):
        from mt_eval.bridge.guest_requests import MethodCardError, reported_card  # (the guests' words too)

        label = str(getattr(method, "card_label", None) or f"{source.manifest.entry_point} method_card()")
        try:
            sources[label] = reported_card(runtime_card, source.directory)
        except MethodCardError as exc:
            problems.append(Problem(file=label, path="$", code="method-card", message=exc.problem, hint=exc.fix))
    card, found = merge_card(source.manifest, source.method_id, sources, manifest_file=source.manifest_file)
    return card, problems + found


def register_hooks(module: ModuleType, method_id: str, plugin_manager: pluggy.PluginManager) -> list[Problem]:
    """Register the plugin's module so it can implement hooks; a misspelled hook is a problem in its file. The same
    entry module loaded again after an edit replaces its old self; another plugin's with the same method_id is kept."""
    import pluggy

    from mt_eval.extensions import async_hook_problems, hook_problems

    if plugin_manager.is_registered(module):
        return []
    name = f"method:{method_id}"
    file = str(getattr(module, "__file__", name))
    registered = plugin_manager.get_plugin(name)
    if registered is not None and getattr(registered, "__name__", None) == module.__name__:
        plugin_manager.unregister(registered)  # (its code changed since: `mt_eval.plugin_import`)
    elif registered is not None:
        name = f"{name} ({Path(file).parent})"
    try:
        plugin_manager.register(module, name=name)
        plugin_manager.check_pending()
    except (pluggy.PluginValidationError, ValueError) as exc:
        if plugin_manager.is_registered(module):
            plugin_manager.unregister(module)
        return hook_problems(exc, file)
    if problems := async_hook_problems(module, plugin_manager, file):
        plugin_manager.unregister(module)
    return problems


def entry_module_file(source: PluginSource) -> Path | None:
    """The file of the plugin's Python entry module (its package's ``__init__.py`` for a package), if any."""
    if not source.manifest.entry_point:
        return None
    relative = Path(*source.manifest.entry_point.partition(":")[0].split("."))
    for candidate in (source.directory / relative.with_suffix(".py"), source.directory / relative / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


def load_method(path: str | Path, *, plugin_manager: pluggy.PluginManager | None = None,
                isolate: bool = False, needs: str | None = None, sandbox: Confinement | None = None
                ) -> LoadedMethod:
    """Load the method plugin in directory ``path``; raise `PluginLoadError` listing every problem.

    A plugin with a Python entry runs in this process (in its own process with ``isolate=True``); one
    with only a Node entry or a command runs as a bridge guest. Either way ``method`` is a
    TranslationMethod (and a DecisionMethod when it implements decide); a bridge guest starts on the first
    call. ``needs`` ("translate" or "decide") refuses, before any code runs, a plugin that does not implement it.
    With ``sandbox`` (see `mt_eval.sandbox.plugin_sandbox`) the guest runs confined, Python entries included:
    no plugin code runs here.
    """
    source, problems = read_plugin(path)
    if source is not None and needs is not None and needs not in source.manifest.implements:
        problems.append(Problem(
            file=source.manifest_file, path="$.implements", code="not-implemented",
            message=f"this needs a method that implements {needs}; {source.method_id} implements "
                    f"{', '.join(source.manifest.implements)}",
            hint=("evaluate a decision method with `mt-eval decide run`, or use it to grade with `mt-eval grade`"
                  if needs == "translate" else 'a decision method lists "decide" in "implements" and defines '
                                               "decide(rows, config)")))
    method = module = card = None
    if source is not None and not _has_errors(problems):  # never run the code of a plugin that is invalid
        method, module, more = build_method(source, isolate=isolate, sandbox=sandbox)
        problems.extend(more)
        if method is not None:
            card, more = method_card_of(source, method)
            problems.extend(more)
        if module is not None and plugin_manager is not None and not _has_errors(problems):
            problems.extend(register_hooks(module, source.method_id, plugin_manager))
    if source is None or method is None or card is None or _has_errors(problems):
        raise PluginLoadError(problems, summary=f"cannot load method plugin {plugin_directory(path)}")
    return LoadedMethod(source=source, method=method, card=card, module=module)  # type: ignore[arg-type]


def _has_errors(problems: list[Problem]) -> bool:
    return any(p.severity == "error" for p in problems)
