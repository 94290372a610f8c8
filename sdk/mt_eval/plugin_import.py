"""Importing a plugin's Python entry point from its directory, isolated from other plugins.

Each plugin directory becomes a private package (``_mt_eval_plugin_<id>_<hash>``) whose ``__path__`` is
the directory, so two plugins that both ship ``pipeline.py`` or ``helpers.py`` load side by side.
While the entry module is imported the directory is at the front of ``sys.path``, so plugin code may
``import helpers`` as if run from its own folder; afterwards ``sys.path`` is restored and the sibling
modules imported that way are moved under the private package. Only modules inside the directory
are reachable: every module found in it — the entry, and whatever the entry imports from it, then or
later — must resolve inside it. A ``pipeline/`` package (or a symlink to ``../elsewhere``) beside
``pipeline.py`` wins Python's import, so what is checked is what Python would load, not the file name
one expects; a module that resolves outside the directory is refused with its path (`PluginBoundary`).
A plugin imported again in the same process is imported afresh when one of its module files changed since (its
modification time or size: an edit that keeps the size within one tick of the clock is not seen, as Python's own
bytecode cache does not see it).
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import inspect
import os
import re
import sys
import traceback
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from types import ModuleType

from mt_eval import process_exit
from mt_eval.cached_bytecode import DamagedBytecode, SourceOnlyLoader, damaged_bytecode, set_aside
from mt_eval.lone_surrogates import capped, writable
from mt_eval.method_protocol import function_not_class, request_function
from mt_eval.process_exit import ExitCalled, adopt_orphans, guard_process_exit


class EntryPointError(Exception):
    """The entry point cannot be imported, or names no method; the message says why, ``hint`` how to fix it, and
    ``code`` is the problem's (``"protocol"``: it imported, and names a function where a class belongs)."""

    def __init__(self, message: str, hint: str | None = None, code: str = "entry-point") -> None:
        super().__init__(message)
        self.hint = hint
        self.code = code


def private_package(directory: Path, method_id: str) -> str:
    """The private package name for a plugin directory (stable for the same path)."""
    digest = hashlib.sha256(os.fsencode(directory)).hexdigest()[:10]  # (a name that is not UTF-8 too)
    return f"_mt_eval_plugin_{re.sub(r'[^A-Za-z0-9_]', '_', method_id)}_{digest}"


ESCAPE_HINT = "keep the plugin's code inside its directory (copy it in instead of linking to it)"


class PluginBoundary(importlib.abc.MetaPathFinder):
    """Refuses any module found in a registered plugin directory that resolves outside it.

    It sits first on ``sys.meta_path`` and looks only at imports whose search path includes a plugin
    directory (the entry's import, and the private package's submodules); it returns the spec it
    checked, or None to let the usual finders work.
    """

    def __init__(self) -> None:
        self.directories: set[str] = set()
        self.source_only: set[str] = set()  # sources whose cached bytecode is damaged (`DamagedBytecode`)

    def find_spec(self, fullname: str, path: object = None, target: object = None
                  ) -> importlib.machinery.ModuleSpec | None:
        search = [str(p) for p in (path if path is not None else sys.path)]  # type: ignore[attr-defined]
        if not any(self._root_of(entry) for entry in search):
            return None
        spec = importlib.machinery.PathFinder.find_spec(fullname, search)
        if spec is None:
            return None
        locations = [spec.origin] if spec.origin and spec.has_location else []
        locations += list(spec.submodule_search_locations or [])
        roots = [root for root in map(self._root_of, locations) if root]
        if not roots:
            return None
        if spec.origin in self.source_only:
            spec.loader = SourceOnlyLoader(fullname, spec.origin)
        for location in locations:
            root = self._root_of(location)
            resolved = Path(location).resolve()
            if root and not resolved.is_relative_to(root):
                raise ImportError(f'module "{fullname}" resolves to {resolved}, outside the plugin directory '
                                  f"{root} ({ESCAPE_HINT})", name=fullname)
        return spec

    def _root_of(self, location: str) -> str | None:
        for root in self.directories:
            if location == root or location.startswith(root + os.sep):
                return root
        return None


BOUNDARY = PluginBoundary()


def _guard(directory: Path) -> None:
    BOUNDARY.directories.add(str(directory))
    if not sys.meta_path or sys.meta_path[0] is not BOUNDARY:
        if BOUNDARY in sys.meta_path:
            sys.meta_path.remove(BOUNDARY)
        sys.meta_path.insert(0, BOUNDARY)


def module_file(directory: Path, module: str) -> Path:
    """The file that ``module`` (dotted, relative to ``directory``) is loaded from, chosen in Python's order
    (a package ``name/__init__.py`` wins over ``name.py``); every part must resolve inside ``directory``."""
    parts = module.split(".")
    current = directory
    for index, name in enumerate(parts):
        last = index == len(parts) - 1
        package, plain = current / name, current / f"{name}.py"
        if package.is_dir() and (package / "__init__.py").is_file():
            chosen, file = package, package / "__init__.py"
        elif last and plain.is_file():
            chosen, file = plain, plain
        elif package.is_dir() and not last:
            chosen, file = package, None  # a namespace package on the way
        else:
            break
        resolved = chosen.resolve()
        if not resolved.is_relative_to(directory):
            raise EntryPointError(f'module "{".".join(parts[:index + 1])}" is {chosen}, which resolves to '
                                  f"{resolved}, outside the plugin directory", ESCAPE_HINT)
        if last and file is not None:
            return file.resolve()
        current = package
    python_files = sorted(str(p.relative_to(directory).with_suffix("")).replace("/", ".")
                          for p in directory.rglob("*.py") if "__pycache__" not in p.parts)
    listing = ", ".join(python_files[:12]) or "none"
    raise EntryPointError(
        f'module "{module}" not found: no {module.replace(".", "/")}.py in {directory}',
        f"Python modules in the plugin: {listing}")


def import_entry_module(directory: Path, module: str, method_id: str) -> ModuleType:
    """Import ``module`` from ``directory`` under the plugin's private package."""
    directory = directory.resolve()
    target = module_file(directory, module)
    _guard(directory)
    guard_process_exit()  # plugin code's os._exit() fails what called it instead of ending the process silently
    adopt_orphans()  # (what it daemonises is ended with what else it left running, at the program's end)
    package = private_package(directory, method_id)
    if _edited_since(package):  # (loaded again in this process after an edit: its new code, not the old)
        for name in [n for n in sys.modules if n == package or n.startswith(package + ".")]:
            del sys.modules[name]
        importlib.invalidate_caches()
    if package not in sys.modules:
        spec = importlib.machinery.ModuleSpec(package, None, is_package=True)
        spec.submodule_search_locations = [str(directory)]
        sys.modules[package] = importlib.util.module_from_spec(spec)
    try:
        try:
            return _import_isolated(directory, package, module)
        except DamagedBytecode as damaged:
            set_aside(damaged.files)
            return _import_isolated(directory, package, module)  # (from the source of what was damaged)
    except KeyboardInterrupt:
        raise
    except BaseException as exc:
        raise _import_failure(exc, directory, module, target) from (None if isinstance(exc, SystemExit) else exc)


def _import_isolated(directory: Path, package: str, module: str) -> ModuleType:
    before = set(sys.modules)
    saved_path = list(sys.path)
    sys.path.insert(0, str(directory))
    try:
        with _host_signals_kept(), _working_directory_kept(module):
            return importlib.import_module(f"{package}.{module}")
    except BaseException as exc:
        for name in set(sys.modules) - before:  # forget the half-imported modules
            sys.modules.pop(name, None)
        damaged = damaged_bytecode(exc)
        if damaged and not BOUNDARY.source_only.issuperset(str(source) for source, _ in damaged):
            BOUNDARY.source_only.update(str(source) for source, _ in damaged)
            raise DamagedBytecode([cached for _, cached in damaged]) from exc
        raise
    finally:
        sys.path[:] = saved_path
        _rehome_siblings(before, package, directory)
        _LOADED[package] = _files_of(package)


def _import_failure(exc: BaseException, directory: Path, module: str, target: Path) -> EntryPointError:
    """The EntryPointError that says why importing ``module`` failed."""
    if isinstance(exc, SystemExit):
        return EntryPointError(f'importing "{module}" {describe_exit(exc, directory)}',
                               f"a plugin must not end the process: remove the {exit_function(exc)} call, or "
                               "raise an exception")
    damaged = damaged_bytecode(exc)
    if damaged:
        cached = damaged[0][1]
        return EntryPointError(f'importing "{module}" failed: {describe_exception(exc, directory)}',
                               f"its cached bytecode {cached} is damaged (cut short, e.g. by a full disk): delete "
                               f"{cached} (or the {cached.parent} directory) and try again")
    import shlex
    command = shlex.join([sys.executable, str(target)])  # (the Python running mt-eval: another may lack the SDK)
    return EntryPointError(f'importing "{module}" failed: {describe_exception(exc, directory)}',
                           f"fix the error in {error_place(exc, directory) or target.name} (run `{command}` to see "
                           "the full traceback)")


@contextlib.contextmanager
def _host_signals_kept() -> Iterator[None]:
    """What a plugin's import does to the handlers of the signals that stop a command (Ctrl-C, SIGTERM, SIGHUP) is
    undone: they are the host's. A plugin that ignored SIGINT as it was imported could not be stopped with Ctrl-C."""
    import signal
    import threading

    if threading.current_thread() is not threading.main_thread():  # (only the main thread sets handlers)
        yield
        return
    kept = {number: signal.getsignal(number) for number in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)}
    try:
        yield
    finally:
        for number, handler in kept.items():
            if handler is not None and signal.getsignal(number) != handler:
                signal.signal(number, handler)


@contextlib.contextmanager
def _working_directory_kept(module: str) -> Iterator[None]:
    """A plugin's import that changes the working directory (``os.chdir(HERE)``) is undone, and said: the command's
    relative paths (``--out runs/x``, the corpus) are the user's, and a run written elsewhere would be lost."""
    try:
        before: str | None = os.getcwd()
    except OSError:  # (the directory the command started in is gone)
        before = None
    try:
        yield
    finally:
        with contextlib.suppress(OSError):
            if before is not None and (now := os.getcwd()) != before:
                os.chdir(before)
                print(f'mt-eval: warning: importing "{module}" changed the working directory to {now}; it is changed '
                      "back (open the plugin's files by their path: its directory is given to __init__ as "
                      "`directory`)", file=sys.stderr, flush=True)


_LOADED: dict[str, dict[str, tuple[int, int] | None]] = {}  # private package → its modules' files as imported


def _files_of(package: str) -> dict[str, tuple[int, int] | None]:
    """The file of each module of ``package`` with its modification time and size (None when it is gone)."""
    files: dict[str, tuple[int, int] | None] = {}
    for name, loaded in list(sys.modules.items()):
        file = getattr(loaded, "__file__", None) if name.startswith(package + ".") else None
        if file:
            try:
                stat = os.stat(file)
                files[file] = (stat.st_mtime_ns, stat.st_size)
            except OSError:
                files[file] = None
    return files


def _edited_since(package: str) -> bool:
    """Whether a module file ``package`` was imported from has changed (or gone) since."""
    before = _LOADED.get(package)
    if not before:
        return False
    for file, seen in before.items():
        try:
            stat = os.stat(file)
            now: tuple[int, int] | None = (stat.st_mtime_ns, stat.st_size)
        except OSError:
            now = None
        if now != seen:
            return True
    return False


def _rehome_siblings(before: set[str], package: str, directory: Path) -> None:
    for name in set(sys.modules) - before:
        if name == package or name.startswith(package + "."):
            continue
        loaded = sys.modules.get(name)
        file = getattr(loaded, "__file__", None)
        if file and Path(file).resolve().is_relative_to(directory):
            sys.modules[f"{package}.{name}"] = sys.modules.pop(name)


def resolve_class(module: ModuleType, name: str, entry_point: str, requests: Sequence[str] = ("translate",)
                  ) -> object:
    """The attribute ``name`` of the entry module, listing the candidates when it is missing; a function that is
    itself the method's ``translate`` (or ``decide``) is refused, naming the class to point at instead."""
    try:
        found = getattr(module, name)
    except AttributeError:
        classes, methods = entry_classes(module, requests)
        candidates = methods or classes
        hint = ("classes defined there: " + ", ".join(candidates)) if candidates else "no classes are defined there"
        close = [c for c in candidates if c.lower() == name.lower()]
        if close:
            hint = f'did you mean "{close[0]}"? ' + hint
        raise EntryPointError(f'entry point "{entry_point}": module has no attribute "{name}"', hint) from None
    if (request := request_function(found, name, requests)) is not None:
        file = Path(getattr(module, "__file__", None) or "the entry module").name
        classes, methods = entry_classes(module, [request])
        raise EntryPointError(*function_not_class(name, entry_point.partition(":")[0], file, request,
                                                  classes, methods), code="protocol")
    return found


def entry_classes(module: ModuleType, requests: Sequence[str] = ("translate",)) -> tuple[list[str], list[str]]:
    """The public classes ``module`` defines, and those of them with a method named in ``requests`` — the ones with
    an async one when there are any (a helper class's own ``translate(text)`` is not the method)."""
    classes = [n for n, v in vars(module).items()
               if inspect.isclass(v) and not n.startswith("_") and getattr(v, "__module__", None) == module.__name__]

    def having(test: Callable[[object], bool]) -> list[str]:
        return [n for n in classes if any(test(getattr(vars(module)[n], r, None)) for r in requests)]
    return classes, having(inspect.iscoroutinefunction) or having(lambda found: found is not None)


def describe_exception(exc: BaseException, directory: Path | None) -> str:
    """``Type: message (file:line)`` for the innermost frame inside the plugin directory (writable: a lone
    surrogate in the message is escaped, `mt_eval.lone_surrogates.writable`)."""
    where = _where(exc, directory)
    if isinstance(exc, SyntaxError) and exc.filename:
        where = f" ({Path(exc.filename).name}:{exc.lineno})"
        return writable(f"SyntaxError: {exc.msg}{where}")
    return writable(f"{exception_words(exc)}{where}")


def exception_words(exc: BaseException) -> str:
    """``Type: message`` of an exception plugin code raised, writable and `capped`; its ``str()`` may itself raise
    (a ``__str__`` with a bug), which is then said in place of the message."""
    try:
        message = str(exc)
    except Exception as failed:
        message = f"<its str() raised {type(failed).__name__}>"
    return capped(writable(f"{type(exc).__name__}: {message}"))


def exit_function(exc: SystemExit) -> str:
    """``os._exit()`` or ``sys.exit()``: what plugin code called to end the process (`mt_eval.process_exit`)."""
    return "os._exit()" if isinstance(exc, ExitCalled) else "sys.exit()"


def describe_exit(exc: SystemExit, directory: Path | None = None) -> str:
    """``called sys.exit(3) (pipeline.py:22)``: where plugin code tried to end the process."""
    code = "" if exc.code is None else repr(exc.code)
    return writable(f"called {exit_function(exc)[:-1]}{code}){_where(exc, directory)}")


def _where(exc: BaseException, directory: Path | None) -> str:
    """`` (file:line)`` of the innermost frame inside ``directory`` (any frame without one), or ""."""
    found = _innermost(exc, directory)
    return f" ({Path(found[0]).name}:{found[1]})" if found else ""


def _innermost(exc: BaseException, directory: Path | None) -> tuple[str, int | None] | None:
    resolved = directory.resolve() if directory is not None else None
    for frame in reversed(traceback.extract_tb(exc.__traceback__)):
        if frame.filename == process_exit.__file__:  # (where os._exit() raised, not where it was called)
            continue
        if frame.filename and (resolved is None or Path(frame.filename).resolve().is_relative_to(resolved)):
            return frame.filename, frame.lineno
    return None


def error_place(exc: BaseException, directory: Path) -> str | None:
    """``helpers.py:3``: the file (relative to ``directory`` when inside it) and line to fix — a SyntaxError's own,
    in whatever module the entry imported, else the innermost frame inside ``directory`` — or None."""
    found = _innermost(exc, directory)
    if isinstance(exc, SyntaxError) and exc.filename and os.path.isfile(exc.filename):  # (not compile()'s "<string>")
        found = exc.filename, exc.lineno
    if found is None:
        return None
    file, resolved = Path(found[0]), Path(found[0]).resolve()
    shown = resolved.relative_to(directory.resolve()).as_posix() if resolved.is_relative_to(directory.resolve()) \
        else str(file)
    return f"{shown}:{found[1]}" if found[1] else shown
