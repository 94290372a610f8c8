"""Method code that calls ``os._exit()`` in mt-eval's own process fails its call instead of ending the process.

``os._exit`` ends a process at once — no exception, no ``finally``, no card — so an in-process method that called
it (or whose module did, when imported) ended ``mt-eval run`` with status 0 and nothing said, as if all had gone
well. Once plugin code is imported (`mt_eval.plugin_import`), ``os._exit`` called in this process raises
`ExitCalled`, a `SystemExit`: it is handled wherever a method's ``sys.exit()`` is (the call fails with where it
was called, the run goes on). A forked child — the scorers' workers, a method's own ``fork`` — exits as before,
and mt-eval's own hard exits (the loop watchdog's, the end of a command) call `real_exit`.
"""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False  # see mt_eval/__init__.py (the mt-eval program imports this module as it starts)
if TYPE_CHECKING:
    from typing import NoReturn

real_exit = os._exit  # the process's own exit, for mt-eval's hard exits
_guarded_pid: int | None = None  # the process whose os._exit raises (its forked children exit as before)


class ExitCalled(SystemExit):
    """``os._exit(status)`` called by code running in the process that imported a plugin."""


def _exit(status: int) -> NoReturn:
    if os.getpid() != _guarded_pid:
        real_exit(status)
    raise ExitCalled(status)


def guard_process_exit() -> None:
    """From now on, ``os._exit`` in this process raises `ExitCalled` (idempotent)."""
    global _guarded_pid
    _guarded_pid = os.getpid()
    os._exit = _exit


adopts_orphans = False  # set by the mt-eval program (`mt_eval.cli.console_main`), whose end ends what is left running
adopted_orphans = False  # this process became their subreaper: its end must end what it adopted (`adopt_orphans`)


def adopt_orphans() -> None:
    """In the mt-eval program, from now on: a process that plugin code daemonises (it forks, the child calls
    ``setsid``, the parent exits) — or a guest program does — is reparented to this process rather than to init
    (Linux's child subreaper), so the program's end (`mt_eval.cli.leftovers.leave`) finds it among its children and
    ends it with the others, as it does whatever else plugin code left running. Elsewhere, and where prctl is
    missing, nothing changes."""
    global adopts_orphans, adopted_orphans
    if not adopts_orphans or not sys.platform.startswith("linux"):
        return
    adopts_orphans = False  # (once)
    try:
        import ctypes

        adopted_orphans = ctypes.CDLL(None, use_errno=True).prctl(36, 1, 0, 0, 0) == 0  # PR_SET_CHILD_SUBREAPER
    except (OSError, AttributeError):
        pass
