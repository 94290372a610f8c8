"""A guest that did not complete its handshake, in words: an older or newer protocol, no answer within the start
timeout, a plain program (`mt_eval.bridge.not_a_guest`), a method that did not load, or an answer that is not an
initialize result. The error carries the guest's exit code and stderr tail, and ``start`` (it never started). One still
starting when its start timeout ended is told how to give it longer, in its caller's words (`slow_start_fix`: the
Python API's, or a command's --start-timeout)."""

from __future__ import annotations

import re

from mt_eval.bridge import messages as m

# the sandbox's launcher (bubblewrap, or mt-eval's unshare fallback) could not run the guest's program
_SANDBOX_EXEC = re.compile(r"^(?:(?:bwrap|mt-eval sandbox): execvp|setpriv: failed to execute) (.+?): (.+)$",
                           re.MULTILINE)


def start_error(exc: Exception, *, label: str, start_timeout_s: float, exit_code: int | None,
                stderr_tail: str) -> m.BridgeError:
    """The `BridgeError` a failed start raises, from what failed it (see the module docstring)."""
    if isinstance(exc, m.BridgeError) and exc.code == m.UNSUPPORTED_VERSION:
        supported = (exc.data or {}).get("supported") if isinstance(exc.data, dict) else None
        return m.BridgeError(exc.code, f"guest {label} speaks {', '.join(supported or ['?'])}; this host "
                             f"speaks {', '.join(m.SUPPORTED_VERSIONS)}: upgrade the older side", exc.data)
    refused = _SANDBOX_EXEC.search(stderr_tail) if exit_code not in (None, 0) else None
    if refused is not None:  # (as the host says a program it cannot start: not "make it answer initialize")
        return m.BridgeError(m.GUEST_EXITED, f"cannot start guest {refused[1]!r} in the sandbox: {refused[2]} (there a "
                             "plugin sees its own directory and /usr, read-only, and nothing else of this host)",
                             {"exit_code": exit_code, "stderr_tail": _SANDBOX_EXEC.sub("", stderr_tail).strip("\n"),
                              "start": True, "cannot_run": True,
                              "sandboxed": True})
    not_a_guest = isinstance(exc, m.BridgeError) and isinstance(exc.data, dict) and bool(exc.data.get("not_a_guest"))
    if isinstance(exc, m.BridgeError) and exc.code == m.TIMEOUT:
        message = (f"guest {label} did not answer initialize within {start_timeout_s:g} s "
                   "(a guest answers initialize as soon as its method is loaded; see its stderr)")
    elif isinstance(exc, m.BridgeError) and not_a_guest:
        message = exc.message
    elif isinstance(exc, m.BridgeError):
        message = f"guest {label} failed to start: {exc.message}"
    else:
        message = f"guest {label} sent an invalid initialize result: {exc}"
    data = {"exit_code": exit_code, "stderr_tail": stderr_tail, "start": True}
    if not_a_guest:
        data["not_a_guest"] = True
    return m.BridgeError(exc.code if isinstance(exc, m.BridgeError) else m.INTERNAL_ERROR, message, data)


FROM_PYTHON = "with mt_eval.loader.GUEST_START_TIMEOUT.set(SECONDS) before load_method"  # (how the API gives it longer)


def slow_start_fix(entry: str, longer: str = FROM_PYTHON) -> str:
    """The fix for a guest still starting when its start timeout ended: more time (``longer`` says how), or a quicker
    start of ``entry``, what it runs."""
    return (f"if it loads a large model as it starts, give it longer {longer}; else make {entry} answer initialize "
            "as soon as it is loaded (its stderr says what it was doing)")


def with_slow_start_fix(exc: m.BridgeError, fix: str | None) -> m.BridgeError:
    """``exc``, a failed start, with ``fix`` after its message (``…\n  fix: …``, as a guest words its fix) when the
    guest was still starting at its start timeout."""
    if fix is None or exc.code != m.TIMEOUT:
        return exc
    return m.BridgeError(exc.code, f"{exc.message}\n  fix: {fix}", exc.data)
