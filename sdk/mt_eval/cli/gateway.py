"""``mt-eval gateway``: serve the LLM gateway until interrupted, then print what went through it."""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import TYPE_CHECKING

from mt_eval.cli.usage_errors import named_path, path_operand

if TYPE_CHECKING:
    from mt_eval.gateway.server import Gateway

INTERRUPTED = ""  # stopped before it served: nothing to say

EPILOG = """\
examples:
  mt-eval gateway --policy examples/coached-llm-eng-spa/gateway-policy.json --check
  mt-eval gateway --policy examples/coached-llm-eng-spa/gateway-policy.json
  mt-eval gateway --policy examples/coached-llm-eng-spa/gateway-policy.json --listen 127.0.0.1:8787 \\
      --log runs/gateway.jsonl
  mt-eval run --method examples/coached-llm-eng-spa --corpus examples/data/eng-spa-demo.json --sandbox \\
      --gateway-policy examples/coached-llm-eng-spa/gateway-policy.json  # a sandboxed A1 run starts its own

A policy file:
  {"base_url": "https://api.openai.com/v1", "api_key_env": "OPENAI_API_KEY",
   "models": [{"id": "gpt-4o-mini-2024-07-18"}, {"id": "gpt-4.1-mini-2025-04-14"}],
   "token_budget": 2000000}

exit status: 0 the policy is valid (--check), or the gateway served and was stopped (Ctrl-C, SIGTERM or SIGHUP: what
went through it is printed); 1 the policy cannot be read or is not valid, the log cannot be opened, or it cannot
listen; 2 usage (--listen not HOST:PORT, a --log that is not a regular file); 130 interrupted before it served
"""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.description = ("An OpenAI-compatible proxy that forwards only the pinned models a policy file "
                          "allows, within its token budget, and logs every request and response as JSON lines "
                          "(SHA-256 of both bodies, tokens, latency). Methods reach it through RunConfig.base_url.")
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.epilog = EPILOG
    parser.add_argument("--policy", type=path_operand, required=True, metavar="FILE",
                        help="the policy file (allowlist, upstreams, token budget)")
    parser.add_argument("--listen", default="127.0.0.1:8787", metavar="HOST:PORT",
                        help="where to listen (default 127.0.0.1:8787; an IPv6 address in brackets, [::1]:8787; "
                             "port 0 picks a free one)")
    parser.add_argument("--unix", type=named_path, metavar="PATH",
                        help="listen on a Unix socket instead (yours only, mode 0600; removed when the gateway stops)")
    parser.add_argument("--log", type=named_path, default="gateway.jsonl", metavar="FILE",
                        help="the audit log, appended to and read back: a regular file (default gateway.jsonl; "
                             "a pipe, a socket or a block device is refused)")
    parser.add_argument("--check", action="store_true", help="check the policy file and exit")


def run(args: argparse.Namespace) -> int:
    from mt_eval.cli import said_on_stderr
    from mt_eval.control_chars import escaped_for_terminal
    from mt_eval.gateway.policy import policy_problems, read_policy

    policy = read_policy(Path(args.policy))  # ProblemsError: one line, exit status 1
    problems = policy_problems(Path(args.policy))
    for problem in problems:
        said_on_stderr(f"mt-eval gateway: {problem.render()}")
    if any(problem.severity == "error" for problem in problems):
        return 1
    models = ", ".join(r.id for r in policy.models)
    if args.check:
        print(escaped_for_terminal(f"{args.policy}: valid; models: {models}; token budget: "
                                   f"{policy.token_budget or 'none'}"))
        return 0
    host, _, port = args.listen.rpartition(":")
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]  # ([::1]:8787, as URLs write an IPv6 address)
    if not args.unix and (not host or not port.isdigit() or int(port) > 65535):
        print(f"mt-eval gateway: --listen {args.listen!r}: write it as HOST:PORT with a port from 0 to 65535, "
              "e.g. 127.0.0.1:8787", file=sys.stderr)
        return 2
    import asyncio

    from mt_eval.gateway.server import new_event_loop

    try:
        with asyncio.Runner(loop_factory=new_event_loop) as runner:  # the gateway's loop (uvloop where installed)
            status: int = runner.run(_serve(args, policy, host, int(port or 0), os.path.lexists(args.log)))
            return status
    except KeyboardInterrupt:
        return 130


async def _serve(args: argparse.Namespace, policy: object, host: str, port: int, log_existed: bool) -> int:
    import anyio

    from mt_eval.cli import said_on_stderr
    from mt_eval.control_chars import escaped_for_terminal
    from mt_eval.gateway.audit import AuditLog, AuditLogError, NotALogFile
    from mt_eval.gateway.server import Gateway

    try:
        log = AuditLog(Path(args.log))
    except OSError as exc:
        said_on_stderr(f"mt-eval gateway: cannot open the log --log {args.log}: {exc.strerror or exc}"
                       + (" (give the log's file path)" if isinstance(exc, IsADirectoryError) else ""))
        return 1
    except NotALogFile as exc:  # (the option names what cannot be a log: a usage error)
        said_on_stderr(f"mt-eval gateway: --log {args.log} is {exc.kind}, not a file. {exc.fix}")
        return 2
    except AuditLogError as exc:
        said_on_stderr(f"mt-eval gateway: {exc.one_line()}")
        return 1
    if log.torn_bytes:
        print(f"mt-eval gateway: the log's last line was torn (a write cut short): its {log.torn_bytes} byte(s) "
              "were cut off, so the next record starts on a line of its own", file=sys.stderr)
    before = (log.requests, log.refused, log.tokens)  # what an existing log held: it is continued, not restarted
    gateway = Gateway(policy, log)  # type: ignore[arg-type]
    try:
        url = await gateway.start(unix=Path(args.unix) if args.unix else None, host=host, port=port)
    except OSError as exc:
        log.close()
        if not log_existed:
            _remove_if_empty(args.log)  # (made for nothing: it never served)
        said_on_stderr(f"mt-eval gateway: cannot listen on {args.unix or args.listen}: {exc.strerror or exc}")
        return 1
    # SIGTERM and SIGHUP are heard here, not passed on as Ctrl-C (`mt_eval.cli.termination`): on uvloop that Ctrl-C
    # came twice, and one SIGHUP stopped the requests in flight at once. One started ignored (nohup) stays so.
    heard = [signal.SIGINT, *(sig for sig in (signal.SIGTERM, signal.SIGHUP)
                              if signal.getsignal(sig) is not signal.SIG_IGN)]
    with anyio.open_signal_receiver(*heard) as signals:
        continued = (f" (continued: it holds {before[0]} requests, {before[2]} tokens, which count toward the "
                     "budget)" if before[0] else "")
        print(escaped_for_terminal(f"mt-eval gateway: serving {url} (models: "
                                   f"{', '.join(r.id for r in gateway.policy.models)}); log: {args.log}{continued}; "
                                   "stop with Ctrl-C"), file=sys.stderr, flush=True)
        async for _signal in signals:
            break
        await _close(gateway, signals)
    facts = log.facts(Path(args.policy), gateway.policy.token_budget)
    whole = (f"; the log holds {facts.requests} requests ({facts.refused} refused), {facts.tokens} tokens"
             if before[0] else "")
    said_on_stderr(f"mt-eval gateway: stopped; {facts.requests - before[0]} requests ({facts.refused - before[1]} "
                   f"refused), {facts.tokens - before[2]} tokens{whole}; log {args.log} sha256 {facts.log_sha256}")
    if (budget := facts.budget_words()) is not None:
        said_on_stderr(f"mt-eval gateway: {budget}")
    return 0


def _remove_if_empty(path: str) -> None:
    with contextlib.suppress(OSError):
        if os.path.getsize(path) == 0:
            os.unlink(path)


async def _close(gateway: Gateway, signals: AsyncIterator[int]) -> None:
    """Close the gateway, saying so when requests are in flight; a second Ctrl-C stops waiting for them."""
    import anyio

    from mt_eval.gateway.server import CLOSE_GRACE_S

    if gateway.in_flight:
        print(f"mt-eval gateway: stopping: waiting up to {CLOSE_GRACE_S:g} s for {gateway.in_flight} request"
              f"{'s' if gateway.in_flight != 1 else ''} in flight (Ctrl-C again to stop now)", file=sys.stderr,
              flush=True)

    async def hurry_on_a_second_signal() -> None:
        async for _signal in signals:
            print(f"mt-eval gateway: stopping now: {gateway.in_flight} unanswered request"
                  f"{'s are' if gateway.in_flight != 1 else ' is'} answered 503 and logged", file=sys.stderr,
                  flush=True)
            gateway.hurry()
            return

    async with anyio.create_task_group() as group:
        group.start_soon(hurry_on_a_second_signal)
        await gateway.close()
        group.cancel_scope.cancel()
