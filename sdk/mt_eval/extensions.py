"""The pluggy manager: explicit extensions, and the registries their hooks fill.

Nothing is enabled by importing it or by installing a package: an extension is a module named on
purpose (`enable_extension`, ``mt-eval run --extension MODULE``), and a method plugin's entry module is
registered when it is loaded in this process. A hook that does not match a hook specification — a
misspelled name, a wrong signature — is a `Problem` naming the file, the hook and the fix, never a traceback.

Methods are not provided through hooks: every method is a plugin directory whose method.json declares its
dependencies and class, which is what makes a run card comparable (see the README's Hooks section).
"""

from __future__ import annotations

import ast
import difflib
import importlib
import importlib.util
import inspect
import math
import numbers
import traceback
from collections.abc import Callable, Collection, Mapping
from pathlib import Path
from typing import Any

import pluggy

from mt_eval import hookspecs
from mt_eval.problems import Problem, ProblemsError

PROJECT = "mt_eval"


class RegistrationError(ValueError):
    """A hook registered something twice or something that is not usable."""


class ExtensionError(ProblemsError):
    """An extension module cannot be enabled; ``problems`` says why, with the fix."""


def make_plugin_manager() -> pluggy.PluginManager:
    """A manager with the mt-eval hookspecs and no extensions enabled."""
    manager = pluggy.PluginManager(PROJECT)
    manager.add_hookspecs(hookspecs)
    return manager


def hook_names() -> list[str]:
    """Every hook an extension or a plugin may implement."""
    return sorted(name for name in dir(hookspecs) if hasattr(getattr(hookspecs, name), f"{PROJECT}_spec"))


def hook_problems(exc: Exception, file: str) -> list[Problem]:
    """A pluggy validation error (or a failed import) as problems located in ``file``."""
    text = str(exc)
    unknown = text.partition("unknown hook '")[2].partition("'")[0] if "unknown hook '" in text else None
    known = ", ".join(hook_names())
    if unknown:
        close = difflib.get_close_matches(unknown, hook_names(), n=1, cutoff=0.6)
        return [Problem(file=file, path="$", code="hook", message=f'unknown hook "{unknown}"',
                        hint=(f'did you mean "{close[0]}"? ' if close else "") + f"hooks are: {known} "
                             "(mt_eval.hookspecs)")]
    if isinstance(exc, pluggy.PluginValidationError):
        lines = text.splitlines()  # "Plugin 'x' for hook 'h'", "hookimpl definition: h(a, b)", the reason
        hook = text.partition("for hook '")[2].partition("'")[0]
        defined = next((hook + line[line.find("("):] for line in lines  # (its arguments, whatever its __name__)
                        if line.startswith("hookimpl definition:") and "(" in line), hook)
        reason = lines[-1] if len(lines) > 2 else lines[0]
        spec = getattr(hookspecs, hook, None)
        written = f"write it as {hook}{_parameters(spec)}, taking " if spec is not None else "implement it with "
        return [Problem(file=file, path="$", code="hook", message=f"hook {defined}: {reason}",
                        hint=f"{written}some or all of the arguments its specification names, by name (see "
                             "mt_eval.hookspecs)")]
    return [Problem(file=file, path="$", code="extension", message=f"{type(exc).__name__}: {exc}",
                    hint="fix the module, or leave out --extension")]


def _parameters(func: Any) -> str:
    """``(run_id, card)``: the argument names of a hook specification."""
    return f"({', '.join(inspect.signature(func).parameters)})"


def async_hook_problems(plugin: object, manager: pluggy.PluginManager, file: str) -> list[Problem]:
    """A hook of ``plugin`` written ``async def``: hooks are called, never awaited, so it would never run."""
    problems = []
    for hook in manager.get_hookcallers(plugin) or []:
        for impl in hook.get_hookimpls():
            if impl.plugin is plugin and inspect.iscoroutinefunction(impl.function):
                problems.append(Problem(
                    file=file, path="$", code="hook", message=f"hook {hook.name} is async: hooks are called, never "
                                                              "awaited, so it would never run",
                    hint=f"write it as a plain def {hook.name}{_parameters(getattr(hookspecs, hook.name))}; keep "
                         "asynchronous work in translate"))
    return problems


def enable_extension(manager: pluggy.PluginManager, extension: str | object) -> object:
    """Enable an extension given as a module object or dotted module name.

    Raises `ExtensionError` when the module cannot be imported or a hook in it does not match a specification.
    """
    name = extension if isinstance(extension, str) else getattr(extension, "__name__", None)
    summary = f"cannot enable extension {extension if name is None else name}"
    module: object
    if isinstance(extension, str):
        if not all(part.isidentifier() for part in extension.split(".")):
            problem = Problem(file=extension, path="$", code="extension", message=f"{extension!r} is not a module name",
                              hint='give the dotted name of an importable module, e.g. "my_package.metrics" (not a '
                                   "file path)")
            raise ExtensionError([problem], summary=summary)
        try:
            module = importlib.import_module(extension)
        except ModuleNotFoundError as exc:
            if exc.name is None or not (extension == exc.name or extension.startswith(exc.name + ".")):
                raise ExtensionError(_import_problems(exc, extension), summary=summary) from exc
            problem = Problem(file=extension, path="$", code="extension", message=f"no module named {exc.name!r}",
                              hint="give the dotted name of an importable module (on PYTHONPATH, or installed)")
            raise ExtensionError([problem], summary=summary) from exc
        except SystemExit as exc:
            from mt_eval.process_exit import ExitCalled

            function = "os._exit" if isinstance(exc, ExitCalled) else "sys.exit"
            called = f"{function}({'' if exc.code is None else repr(exc.code)}){_where(exc, extension)}"
            problem = Problem(file=extension, path="$", code="extension", message=f"importing it called {called}",
                              hint="an extension must not end the process: raise an exception instead")
            raise ExtensionError([problem], summary=summary) from None
        except Exception as exc:
            raise ExtensionError(_import_problems(exc, extension), summary=summary) from exc
    elif extension is None or not hasattr(extension, "__dict__"):
        problem = Problem(file=str(extension), path="$", code="extension",
                          message=f"{extension!r} is not a module (an extension is one)",
                          hint='give a module object, or its dotted name as a string (e.g. "my_package.metrics")')
        raise ExtensionError([problem], summary=summary)
    else:
        module = extension
    file = str(getattr(module, "__file__", None) or name)
    try:
        if not manager.is_registered(module):
            manager.register(module, name=name)
        manager.check_pending()
    except (pluggy.PluginValidationError, ValueError) as exc:
        if manager.is_registered(module):
            manager.unregister(module)
        raise ExtensionError(hook_problems(exc, file), summary=summary) from exc
    if problems := async_hook_problems(module, manager, file):
        manager.unregister(module)
        raise ExtensionError(problems, summary=summary)
    return module


def _import_problems(exc: Exception, extension: str) -> list[Problem]:
    """An extension module that exists but fails as it is imported (a module it imports is missing, too)."""
    if isinstance(exc, SyntaxError):
        return hook_problems(exc, extension)
    from mt_eval.lone_surrogates import writable

    hint = (f"install {exc.name!r}, or fix the import in the extension" if isinstance(exc, ModuleNotFoundError)
            else "fix the module, or leave out --extension")
    return [Problem(file=extension, path="$", code="extension", hint=hint,
                    message=writable(f"{type(exc).__name__}: {exc}{_where(exc, extension)}"))]


def _where(exc: BaseException, extension: str) -> str:
    """`` (file:line)`` of the innermost frame in the extension's own directory, or ""."""
    try:
        origin = importlib.util.find_spec(extension).origin  # type: ignore[union-attr]
    except Exception:
        origin = None
    if not origin:
        return ""
    for frame in reversed(traceback.extract_tb(exc.__traceback__)):
        if frame.filename and Path(frame.filename).parent == Path(origin).parent:
            return f" ({Path(frame.filename).name}:{frame.lineno})"
    return ""


def declared_hooks(path: Path) -> list[str]:
    """The functions of a Python file decorated as hook implementations, found without running it."""
    try:
        tree = ast.parse(path.read_text(encoding="utf-8"))
    except (OSError, SyntaxError, UnicodeDecodeError, ValueError, RecursionError, MemoryError):
        return []  # (unreadable, or nested too deeply to parse: no hooks are known; importing it will say why)

    def is_hookimpl(decorator: ast.expr) -> bool:
        target = decorator.func if isinstance(decorator, ast.Call) else decorator
        return (isinstance(target, ast.Name) and target.id == "hookimpl") or (
            isinstance(target, ast.Attribute) and target.attr == "hookimpl")

    return [node.name for node in tree.body if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
            and any(is_hookimpl(d) for d in node.decorator_list)]


def _collect(hook: Any, kind: str) -> dict[str, Any]:
    """Call each implementation of a ``register_*`` hook with a callback that knows who is calling."""
    registered: dict[str, Any] = {}
    owners: dict[str, str] = {}
    for impl in hook.get_hookimpls():  # in registration order
        plugin, where = impl.plugin_name, f"plugin {impl.plugin_name!r}, hook {hook.name!r}"

        def register(name: str, value: Any, plugin: str = plugin, where: str = where) -> None:
            if not isinstance(name, str) or not name:
                raise RegistrationError(f"{where}: {kind} names must be non-empty strings, got {name!r}")
            if not callable(value):
                raise RegistrationError(f"{where}: {kind} {name!r} must be callable, got {type(value).__name__}")
            if name in registered:
                raise RegistrationError(f"{where}: {kind} {name!r} is already registered by plugin {owners[name]!r}")
            registered[name] = value
            owners[name] = plugin

        try:
            impl.function(register=register)
        except RegistrationError:
            raise
        except Exception as exc:
            raise RegistrationError(f"{where}: raised {type(exc).__name__}: {exc}{_raised_at(exc)}: fix the hook"
                                    ) from None
    return registered


def registered_metrics(manager: pluggy.PluginManager) -> dict[str, Callable[..., Any]]:
    """metric name → scorer, from every ``register_metrics`` implementation."""
    return _collect(manager.hook.register_metrics, "metric")


RESCORE = " (the translations are kept: run again with --resume to score them)"


def metric_scorers(manager: pluggy.PluginManager, *, taken: Collection[str], then: str = RESCORE
                   ) -> dict[str, Callable[..., Any]]:
    """`registered_metrics`, checked as the extensions are enabled (before anything is translated) and again as
    they score: `ValueError` naming the metric when two plugins register its name, or it takes the name of one in
    ``taken`` (the SDK's own), and naming the hook when it raises; ``then`` ends the message."""
    try:
        scorers = registered_metrics(manager)
    except RegistrationError as exc:
        raise RegistrationError(f"{exc}{then}") from None
    for name in scorers:
        if name in taken:
            raise ValueError(f"the metric {name!r} an extension registered has the name of a metric mt-eval computes "
                             f"({', '.join(taken)}): give it another name{then}")
    return scorers


def extension_scores(scorers: Mapping[str, Callable[..., Any]], listed: Callable[[], tuple[list[str], list[str]]],
                     *, then: str = RESCORE) -> list[tuple[str, float]]:
    """(name, score) of each of ``scorers`` (`metric_scorers`), over the scored segments ``listed()`` gives (asked
    only when there is one). `ValueError` naming the metric when its scorer raises or does not give a finite int or
    float (a string or a bool is no score); ``then`` ends the message."""
    from mt_eval.value_words import value_in_words

    if not scorers:
        return []
    hypotheses, references = listed()
    scores = []
    for name, scorer in scorers.items():
        said = f"the metric {name!r} an extension registered"
        try:
            given = scorer(hypotheses, references)
        except Exception as exc:
            raise ValueError(f"{said} raised {type(exc).__name__}: {exc}{_raised_at(exc)}: fix its scorer{then}"
                             ) from None
        is_number = isinstance(given, numbers.Real) and not isinstance(given, bool)  # (numpy's scalars are)
        try:
            score = float(given) if is_number else math.nan
        except (TypeError, ValueError, OverflowError):  # (an int too large for a float)
            score = math.nan
        if not math.isfinite(score):
            number = "a finite number" if is_number else "a number"
            raise ValueError(f"{said} gave {value_in_words(given)}, not {number}: fix its scorer{then}")
        scores.append((name, round(score, 4)))
    return scores


_WARNED: set[tuple[int, str, str]] = set()  # (manager, plugin, hook) whose failure was said
COPIED = {"run_started": "config", "run_finished": "card"}  # what the run goes on using: its hooks get a copy


def notify(manager: pluggy.PluginManager, hook: str, **arguments: Any) -> None:
    """Call every implementation of the event hook ``hook`` (``run_started``, ``entry_completed``, ``run_finished``)
    with ``arguments``, last registered first, as pluggy does. One that raises is said once on stderr, with what it
    raised, and the others still run: an extension's fault never ends a run, or costs it its results. The config
    and the card are handed over as copies, so a hook that changes them changes nothing the run says or seals
    (an entry's result is recorded before its hook is called)."""
    import copy
    import sys

    implementations = getattr(manager.hook, hook).get_hookimpls()
    if implementations and hook in COPIED:
        arguments[COPIED[hook]] = copy.deepcopy(arguments[COPIED[hook]])
    for impl in reversed(implementations):
        try:
            if impl.hookwrapper or impl.wrapper:  # (a wrapper wraps the others: pluggy's own call runs them all)
                getattr(manager.hook, hook)(**arguments)
                return
            impl.function(*[arguments[name] for name in impl.argnames])
        except Exception as exc:
            if (id(manager), impl.plugin_name, hook) not in _WARNED:
                _WARNED.add((id(manager), impl.plugin_name, hook))
                print(f"mt-eval: warning: {impl.plugin_name}'s hook {hook} raised {type(exc).__name__}: {exc}"
                      f"{_raised_at(exc)}; it is skipped, and the run goes on: fix the hook", file=sys.stderr)


def _raised_at(exc: BaseException) -> str:
    """`` (file:line)`` of the innermost frame of ``exc``, or ""."""
    frames = traceback.extract_tb(exc.__traceback__)
    return f" ({Path(frames[-1].filename).name}:{frames[-1].lineno})" if frames else ""
