"""The pluggy manager: explicit extensions, and the registries their hooks fill.

Nothing is enabled by importing it or by installing a package: an extension is a module named on
purpose (`enable_extension`), and a method plugin's entry module is registered when it is loaded.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

import pluggy

from mt_eval import hookspecs

PROJECT = "mt_eval"


class RegistrationError(ValueError):
    """A hook registered something twice or something that is not usable."""


def make_plugin_manager() -> pluggy.PluginManager:
    """A manager with the mt-eval hookspecs and no extensions enabled."""
    manager = pluggy.PluginManager(PROJECT)
    manager.add_hookspecs(hookspecs)
    return manager


def enable_extension(manager: pluggy.PluginManager, extension: str | object) -> object:
    """Enable an extension given as a module object or dotted module name; misspelled hooks fail here."""
    module = importlib.import_module(extension) if isinstance(extension, str) else extension
    if not manager.is_registered(module):
        name = extension if isinstance(extension, str) else getattr(module, "__name__", None)
        manager.register(module, name=name)
    try:
        manager.check_pending()
    except pluggy.PluginValidationError:
        manager.unregister(module)
        raise
    return module


def _collect(hook: Any, kind: str) -> dict[str, Any]:
    """Call each implementation of a ``register_*`` hook with a callback that knows who is calling."""
    registered: dict[str, Any] = {}
    owners: dict[str, str] = {}
    for impl in hook.get_hookimpls():  # in registration order
        plugin = impl.plugin_name

        def register(name: str, value: Any, plugin: str = plugin) -> None:
            where = f"plugin {plugin!r}, hook {hook.name!r}"
            if not isinstance(name, str) or not name:
                raise RegistrationError(f"{where}: {kind} names must be non-empty strings, got {name!r}")
            if not callable(value):
                raise RegistrationError(f"{where}: {kind} {name!r} must be callable, got {type(value).__name__}")
            if name in registered:
                raise RegistrationError(f"{where}: {kind} {name!r} is already registered by plugin {owners[name]!r}")
            registered[name] = value
            owners[name] = plugin

        impl.function(register=register)
    return registered


def registered_methods(manager: pluggy.PluginManager) -> dict[str, Callable[[], Any]]:
    """method_id → factory, from every ``register_methods`` implementation."""
    return _collect(manager.hook.register_methods, "method")


def registered_metrics(manager: pluggy.PluginManager) -> dict[str, Callable[..., Any]]:
    """metric name → scorer, from every ``register_metrics`` implementation."""
    return _collect(manager.hook.register_metrics, "metric")
