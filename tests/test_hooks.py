"""pluggy hooks: explicit extensions, register callbacks, lifecycle calls, loud misspellings."""

from __future__ import annotations

import inspect
import re
import types
from pathlib import Path

import pluggy
import pytest

from mt_eval import hookspecs
from mt_eval.hookspecs import hookimpl
from mt_eval.plugins import (
    RegistrationError,
    enable_extension,
    make_plugin_manager,
    registered_methods,
    registered_metrics,
)

README = Path(__file__).parent.parent / "README.md"


def hook_names() -> list[str]:
    return [name for name, f in inspect.getmembers(hookspecs, inspect.isfunction)
            if hasattr(f, "mt_eval_spec")]


def extension(name: str, **hooks: object) -> types.ModuleType:
    module = types.ModuleType(name)
    for hook, impl in hooks.items():
        setattr(module, hook, hookimpl(impl))  # type: ignore[arg-type]
    return module


def test_every_hook_is_documented_in_the_readme_and_tested_here():
    readme = README.read_text(encoding="utf-8")
    this_test = inspect.getsource(test_every_hook_is_documented_in_the_readme_and_tested_here)
    other_tests = Path(__file__).read_text(encoding="utf-8").replace(this_test, "")
    assert hook_names() == ["entry_completed", "register_methods", "register_metrics", "run_finished",
                            "run_started"]
    for name in hook_names():
        assert re.search(rf"^\| `{name}\(", readme, re.M), f"{name} is not in the README's hook table"
        assert f"hook.{name}(" in other_tests or f"{name}=" in other_tests, f"{name} has no test"


def test_register_methods_collects_factories_from_every_extension():
    manager = make_plugin_manager()
    enable_extension(manager, extension("ext_a", register_methods=lambda register: register("a", dict)))
    enable_extension(manager, extension("ext_b", register_methods=lambda register: register("b", list)))
    assert registered_methods(manager) == {"a": dict, "b": list}


def test_register_metrics_and_duplicates_name_both_plugins():
    manager = make_plugin_manager()
    enable_extension(manager, extension("first", register_metrics=lambda register: register("len", len)))
    assert registered_metrics(manager) == {"len": len}
    enable_extension(manager, extension("second", register_metrics=lambda register: register("len", max)))
    with pytest.raises(RegistrationError, match="plugin 'second', hook 'register_metrics': metric 'len' is "
                                                "already registered by plugin 'first'"):
        registered_metrics(manager)


def test_registering_something_unusable_is_an_error():
    manager = make_plugin_manager()
    enable_extension(manager, extension("bad", register_methods=lambda register: register("x", 42)))
    with pytest.raises(RegistrationError, match="plugin 'bad', hook 'register_methods': method 'x' must be "
                                                "callable, got int"):
        registered_methods(manager)


def test_run_lifecycle_hooks_are_called_in_order():
    calls: list[tuple[str, object]] = []
    manager = make_plugin_manager()
    enable_extension(manager, extension(
        "recorder",
        run_started=lambda run_id, method_id, config: calls.append(("started", (run_id, method_id))),
        entry_completed=lambda run_id, result: calls.append(("entry", result)),
        run_finished=lambda run_id, card: calls.append(("finished", card)),
    ))
    manager.hook.run_started(run_id="r1", method_id="m", config=None)
    manager.hook.entry_completed(run_id="r1", result={"id": "1"})
    manager.hook.run_finished(run_id="r1", card={"ok": True})
    assert calls == [("started", ("r1", "m")), ("entry", {"id": "1"}), ("finished", {"ok": True})]


def test_misspelled_hook_fails_loudly_and_is_not_left_registered():
    manager = make_plugin_manager()
    module = extension("typo", register_model=lambda register: None)
    with pytest.raises(pluggy.PluginValidationError, match="unknown hook 'register_model' in plugin"):
        enable_extension(manager, module)
    assert not manager.is_registered(module)


def test_wrong_hook_signature_names_the_plugin_and_hook():
    manager = make_plugin_manager()
    with pytest.raises(pluggy.PluginValidationError, match="register_methods"):
        enable_extension(manager, extension("sig", register_methods=lambda register, extra: None))


def test_extensions_are_enabled_by_name_and_never_by_import():
    manager = make_plugin_manager()
    assert manager.get_plugins() == set()
    module = enable_extension(manager, "json")  # any importable module with no hooks
    assert manager.is_registered(module)
