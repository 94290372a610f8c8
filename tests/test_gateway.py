"""The LLM gateway: an A1 method reaches its model only through it (Python and Node methods, in the
sandbox); other models are refused; the budget holds; every exchange is logged and the log's digest is in
the card; substitutability is replayed. Upstreams are loopback stand-ins started by the tests."""

from __future__ import annotations

import asyncio
import hashlib
import json
import re
import signal
import subprocess
import sys
from pathlib import Path

import aiohttp
import pytest
from aiohttp import web

from llm_standin import StandIn
from mt_eval.cli import main
from mt_eval.gateway.audit import AuditLog
from mt_eval.gateway.policy import GatewayPolicy, ModelRoute
from mt_eval.gateway.server import Gateway
from sandbox_support import GATEWAY_DEPENDENCY, actions, needs_sandbox, probe_plugin, run_card, small_corpus

ANSWERS = {f"Sentence {i}.": f"Frase {i}." for i in range(10)}
MODELS = ["standin-2024-06-01", "standin-2025-01-01"]


def write_policy(root: Path, base_url: str, **extra: object) -> Path:
    policy = {"base_url": base_url, "api_key_env": "STANDIN_API_KEY", "models": [{"id": m} for m in MODELS], **extra}
    path = root / "policy.json"
    path.write_text(json.dumps(policy))
    return path


@pytest.fixture
def standin():
    with StandIn(ANSWERS) as server:
        yield server


@needs_sandbox
@pytest.mark.parametrize("runtime", ["python", "node"])
def test_an_a1_method_reaches_its_model_only_through_the_gateway(tmp_path: Path, runtime: str, standin: StandIn,
                                                                 monkeypatch):
    monkeypatch.setenv("STANDIN_API_KEY", "sk-kept-by-the-gateway")
    plugin = probe_plugin(tmp_path, runtime, dependency_class="A1", dependencies=[GATEWAY_DEPENDENCY])
    policy = write_policy(tmp_path, standin.base_url, token_budget=100_000)
    code, card = run_card(tmp_path, "--method", str(plugin), "--corpus", str(small_corpus(tmp_path)), "--official",
                          "--gateway-policy", str(policy), *actions("chat:"))
    assert code == 0 and card is not None
    assert [r.predicted for r in card.results] == ["Frase 0.", "Frase 1.", "Frase 2."]
    assert card.covariates.model == MODELS[0]
    assert card.sandbox is not None and card.sandbox.policy.network == "gateway"
    assert card.sandbox.policy.gateway_url == "http://127.0.0.1:8080/v1"
    assert {r["authorization"] for r in standin.requests} == {"Bearer sk-kept-by-the-gateway"}
    log = tmp_path / "run" / "gateway.jsonl"
    lines = [json.loads(line) for line in log.read_text().splitlines()]
    assert card.gateway is not None and card.gateway.log_sha256 == hashlib.sha256(log.read_bytes()).hexdigest()
    assert card.gateway.requests == len(lines) == len(standin.requests) == 3 + 3  # the run, then the replay
    assert card.gateway.models == MODELS
    assert card.gateway.tokens == sum(line["prompt_tokens"] + line["completion_tokens"] for line in lines)
    assert all(re.fullmatch(r"[0-9a-f]{64}", line["request_sha256"]) and line["latency_s"] >= 0 for line in lines)
    assert card.eligibility is not None and card.eligibility.eligible, card.eligibility.reasons
    substitution = card.eligibility.substitution
    assert substitution is not None and substitution.model == MODELS[1] and substitution.completed == 3


@needs_sandbox
@pytest.mark.parametrize("runtime", ["python", "node"])
def test_a_model_off_the_allowlist_and_a_direct_call_are_refused(tmp_path: Path, runtime: str, standin: StandIn):
    plugin = probe_plugin(tmp_path, runtime, dependency_class="A1", dependencies=[GATEWAY_DEPENDENCY])
    policy = write_policy(tmp_path, standin.base_url)
    code, card = run_card(tmp_path, "--method", str(plugin), "--corpus", str(small_corpus(tmp_path, 2)), "--sandbox",
                          "--gateway-policy", str(policy), *actions("chat:gpt-unlisted"))
    assert code == 4 and card is not None and standin.requests == []  # all refused; nothing reached the upstream
    assert all('model "gpt-unlisted" is not on this gateway\'s allowlist' in (r.error or "") for r in card.results)
    assert card.gateway is not None and card.gateway.refused == 4  # the run's 2 entries, and the replay's 2
    assert any(a.kind == "gateway" and a.count == 4 for a in card.sandbox.denied)  # type: ignore[union-attr]
    assert card.eligibility is not None and not card.eligibility.eligible
    direct = len(standin.requests)
    code, card = run_card(tmp_path, "--method", str(plugin), "--corpus", str(small_corpus(tmp_path, 2)), "--sandbox",
                          "--gateway-policy", str(policy), "--param", f"url={standin.base_url}", *actions("chat:"),
                          out="direct")
    assert code == 4 and card is not None and len(standin.requests) == direct  # nothing got past the sandbox
    assert all("refused" in (r.error or "").lower() for r in card.results)
    assert [a.kind for a in card.sandbox.denied] == ["network"]  # type: ignore[union-attr]


def test_a_sandboxed_a1_run_needs_a_policy_and_an_allowlisted_model(tmp_path: Path, standin: StandIn, capsys):
    plugin = probe_plugin(tmp_path, "python", dependency_class="A1", dependencies=[GATEWAY_DEPENDENCY])
    corpus = str(small_corpus(tmp_path))
    assert run_card(tmp_path, "--method", str(plugin), "--corpus", corpus, "--sandbox")[0] == 1
    assert "only through the LLM gateway" in capsys.readouterr().err
    policy = str(write_policy(tmp_path, standin.base_url))
    assert run_card(tmp_path, "--method", str(plugin), "--corpus", corpus, "--gateway-policy", policy,
                    "--model", "gpt-unlisted")[0] == 1
    assert "not on the gateway policy's allowlist" in capsys.readouterr().err
    assert run_card(tmp_path, "--method", str(plugin), "--corpus", corpus, "--gateway-policy", policy,
                    "--base-url", "http://example.invalid/v1")[0] == 2  # (a usage error)
    assert "argument --gateway-policy: not allowed with argument --base-url" in capsys.readouterr().err
    one = tmp_path / "one.json"
    one.write_text(json.dumps({"base_url": standin.base_url, "models": [{"id": MODELS[0]}]}))
    assert run_card(tmp_path, "--method", str(plugin), "--corpus", corpus, "--official", "--gateway-policy",
                    str(one))[0] == 1
    assert "tests substitutability" in capsys.readouterr().err


def test_without_the_sandbox_the_gateway_serves_on_loopback_and_the_run_is_not_eligible(tmp_path: Path,
                                                                                      standin: StandIn):
    plugin = probe_plugin(tmp_path, "python", dependency_class="A1", dependencies=[GATEWAY_DEPENDENCY])
    code, card = run_card(tmp_path, "--method", str(plugin), "--corpus", str(small_corpus(tmp_path)),
                          "--gateway-policy", str(write_policy(tmp_path, standin.base_url)), *actions("chat:"))
    assert code == 0 and card is not None and card.gateway is not None and card.gateway.requests == 3 + 3
    assert [r.predicted for r in card.results] == ["Frase 0.", "Frase 1.", "Frase 2."]
    assert card.eligibility is not None and not card.eligibility.eligible and card.sandbox is None


def test_a_run_whose_gateway_tokens_went_past_the_budget_says_so_in_its_result(tmp_path: Path, standin: StandIn,
                                                                              capsys):
    """The budget is checked as each request arrives, so the one that reaches it is let finish: before, the card
    held how far past it the tokens went and the run's result said nothing of it."""
    plugin = probe_plugin(tmp_path, "python", dependency_class="A1", dependencies=[GATEWAY_DEPENDENCY])
    policy = write_policy(tmp_path, standin.base_url, token_budget=5)
    code, card = run_card(tmp_path, "--method", str(plugin), "--corpus", str(small_corpus(tmp_path)),
                          "--gateway-policy", str(policy), "--concurrency", "1", *actions("chat:"))
    assert card is not None and card.gateway is not None, code
    over = card.gateway.budget_exceeded_by
    assert over is not None and over == card.gateway.tokens - 5 > 0
    said = f"  gateway: tokens {card.gateway.tokens} of a budget of 5: exceeded by {over} (requests in flight when it "
    assert said in capsys.readouterr().out


async def test_the_token_budget_holds_and_a_reopened_log_keeps_counting(tmp_path: Path, standin: StandIn):
    policy = GatewayPolicy(models=[ModelRoute(id=MODELS[0])], base_url=standin.base_url, token_budget=18)
    log_path = tmp_path / "gateway.jsonl"
    statuses = []
    for _session in range(2):
        gateway = Gateway(policy, AuditLog(log_path))
        url = await gateway.start()
        async with aiohttp.ClientSession() as client:
            for _ in range(2):
                body = {"model": MODELS[0], "messages": [{"role": "user", "content": "Sentence 1."}]}
                async with client.post(f"{url}/chat/completions", json=body) as response:
                    statuses.append((response.status, (await response.json()).get("error", {}).get("code")))
        await gateway.close()
    assert statuses == [(200, None), (200, None), (403, "token_budget_exhausted"), (403, "token_budget_exhausted")]
    reopened = AuditLog(log_path)
    reopened.close()
    assert reopened.tokens == 18 and reopened.requests == 4 and reopened.refused == 2


HANGS_ON_THE_SUBSTITUTE = """
import asyncio, sys, time

class Method:
    async def translate(self, entries, config):
        if config.model == "SUBSTITUTE":
            if config.params.get("on_substitute") == "exit":
                sys.exit(7)
            if config.params.get("on_substitute") == "block":
                time.sleep(3600)
            await asyncio.sleep(3600)
        return [{"id": e["id"], "predicted": e["source"]} for e in entries]
""".replace("SUBSTITUTE", MODELS[1])


@pytest.mark.parametrize(("behaviour", "error"), [("hang", "timed out after 3 s (1 s per entry)"),
                                                  ("exit", "the method called sys.exit(7)"),
                                                  ("block", "the method blocked the event loop for 3.")])
def test_a_method_that_hangs_blocks_or_exits_on_the_replay_fails_the_replay_not_the_run(
        tmp_path: Path, standin: StandIn, make_plugin, behaviour: str, error: str):
    plugin = make_plugin({"name": "Replay", "entry_point": "pipeline:Method", "dependency_class": "A1",
                          "dependencies": [GATEWAY_DEPENDENCY]}, {"pipeline.py": HANGS_ON_THE_SUBSTITUTE})
    policy = write_policy(tmp_path, standin.base_url)
    code, card = run_card(tmp_path, "--method", str(plugin), "--corpus", str(small_corpus(tmp_path)), "--timeout",
                          "1", "--gateway-policy", str(policy), "--param", f"on_substitute={behaviour}")
    assert code == 0 and card is not None and [r.predicted for r in card.results] == [
        "Sentence 0.", "Sentence 1.", "Sentence 2."]
    substitution = card.eligibility.substitution  # type: ignore[union-attr]
    assert substitution is not None and (substitution.completed, substitution.failed) == (0, 3)
    assert error in (substitution.example_error or "")


async def test_streaming_is_relayed_and_its_usage_counted_and_a_dead_upstream_is_a_clear_502(tmp_path: Path):
    async def stream(request: web.Request) -> web.StreamResponse:
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await response.prepare(request)
        for chunk in ('{"choices":[{"delta":{"content":"Ho"}}]}', '{"choices":[{"delta":{"content":"la"}}]}',
                      '{"choices":[],"usage":{"prompt_tokens":5,"completion_tokens":2}}'):
            await response.write(f"data: {chunk}\n\n".encode())
        await response.write(b"data: [DONE]\n\n")
        return response

    app = web.Application()
    app.router.add_post("/v1/chat/completions", stream)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = runner.addresses[0][1]
    policy = GatewayPolicy(models=[ModelRoute(id="a-2024"), ModelRoute(id="dead-2024", base_url="http://127.0.0.1:9/v1")],
                           base_url=f"http://127.0.0.1:{port}/v1", log_bodies=True)
    gateway = Gateway(policy, AuditLog(tmp_path / "log.jsonl"))
    url = await gateway.start()
    try:
        async with aiohttp.ClientSession() as client:
            body = {"model": "a-2024", "stream": True, "messages": [{"role": "user", "content": "Hi"}]}
            async with client.post(f"{url}/chat/completions", json=body) as response:
                text = await response.text()
            async with client.post(f"{url}/chat/completions", json={**body, "model": "dead-2024"}) as dead:
                error = await dead.json()
            async with client.get(f"{url}/models") as listed:
                models = [m["id"] for m in (await listed.json())["data"]]
            async with client.post(f"{url}/files", json=body) as other:
                assert other.status == 403 or other.status == 404 or other.status == 200
    finally:
        await gateway.close()
        await runner.cleanup()
    assert text.count("data:") == 3 and "[DONE]" in text  # (and not the usage chunk, which the method did not ask for)
    assert dead.status == 502 and error["error"]["code"] == "upstream_unreachable"
    assert models == ["a-2024", "dead-2024"]
    first = json.loads((tmp_path / "log.jsonl").read_text().splitlines()[0])
    assert (first["prompt_tokens"], first["completion_tokens"], first["stream"]) == (5, 2, True)
    assert first["response_sha256"] == hashlib.sha256(text.encode()).hexdigest() and "Hola" not in first["request_body"]
    assert first["response_body"] == text


async def test_a_streamed_chat_completion_is_asked_for_its_usage_and_a_streamed_response_s_usage_counts(
        tmp_path: Path):
    """Before, both counted 0 tokens: OpenAI reports a stream's usage only when asked, and a Responses-API stream
    reports it inside its ``response.completed`` event. So the token budget never stopped a streaming method."""
    seen: list[dict] = []

    async def chat(request: web.Request) -> web.StreamResponse:
        body = await request.json()
        seen.append(body)
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await response.prepare(request)
        await response.write(b'data: {"choices":[{"delta":{"content":"Hola"}}]}\n\n')
        if (body.get("stream_options") or {}).get("include_usage"):
            await response.write(b'data: {"choices":[],"usage":{"prompt_tokens":40,"completion_tokens":60}}\n\n')
        await response.write(b"data: [DONE]\n\n")
        return response

    async def responses(request: web.Request) -> web.StreamResponse:
        seen.append(await request.json())
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await response.prepare(request)
        for event in ({"type": "response.created", "response": {"usage": None}},
                      {"type": "response.output_text.delta", "delta": "Hola"},
                      {"type": "response.completed", "response": {"usage": {"input_tokens": 7, "output_tokens": 3}}}):
            await response.write(f"event: {event['type']}\ndata: {json.dumps(event)}\n\n".encode())
        return response

    app = web.Application()
    app.router.add_post("/v1/chat/completions", chat)
    app.router.add_post("/v1/responses", responses)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    policy = GatewayPolicy(models=[ModelRoute(id="a-2024")], base_url=f"http://127.0.0.1:{runner.addresses[0][1]}/v1",
                           token_budget=250)
    gateway = Gateway(policy, AuditLog(tmp_path / "log.jsonl"))
    url = await gateway.start()
    asked = {"model": "a-2024", "stream": True, "messages": [{"role": "user", "content": "Hi"}]}
    try:
        async with aiohttp.ClientSession() as client:
            async with client.post(f"{url}/chat/completions", json=asked) as first:
                # (the usage chunk the gateway asked for is not passed on: a client reading choices[0] of every
                # chunk had broken on it)
                assert first.status == 200
                first_text = await first.text()
                assert first_text == 'data: {"choices":[{"delta":{"content":"Hola"}}]}\n\ndata: [DONE]\n\n'
            usage = {**asked, "stream_options": {"include_usage": True}}
            async with client.post(f"{url}/chat/completions", json=usage) as asking:  # (asked for: passed on)
                assert asking.status == 200 and '"choices":[],"usage"' in await asking.text()
            async with client.post(f"{url}/responses", json={"model": "a-2024", "stream": True, "input": "Hi"}) as r:
                assert r.status == 200 and "response.completed" in await r.text()
            own = {**asked, "stream_options": {"include_usage": False, "other": 1}}
            async with client.post(f"{url}/chat/completions", json=own) as second:
                assert second.status == 200
            async with client.post(f"{url}/chat/completions", json=asked) as spent:
                assert spent.status == 403 and (await spent.json())["error"]["code"] == "token_budget_exhausted"
    finally:
        await gateway.close()
        await runner.cleanup()
    assert seen[0]["stream_options"] == {"include_usage": True} and "stream_options" not in seen[2]
    assert seen[1]["stream_options"] == {"include_usage": True}
    assert seen[3]["stream_options"] == {"include_usage": True, "other": 1}
    logged = [json.loads(line) for line in (tmp_path / "log.jsonl").read_text().splitlines()]
    assert [(r["prompt_tokens"], r["completion_tokens"]) for r in logged] == [(40, 60), (40, 60), (7, 3), (40, 60),
                                                                              (0, 0)]
    assert logged[0]["request_sha256"] == hashlib.sha256(json.dumps(asked).encode()).hexdigest()  # as sent
    assert (logged[0]["response_sha256"], logged[0]["response_bytes"]) == (  # (what the method received)
        hashlib.sha256(first_text.encode()).hexdigest(), len(first_text))


def _serve_and_ask(policy: Path, log: Path, asks: int) -> tuple[str, str]:
    """Run ``mt-eval gateway``, send ``asks`` requests, stop it with Ctrl-C: (its banner, what it said after)."""
    process = subprocess.Popen([sys.executable, "-m", "mt_eval.cli", "gateway", "--policy", str(policy),
                                "--listen", "127.0.0.1:0", "--log", str(log)], stderr=subprocess.PIPE, text=True)
    try:
        assert process.stderr is not None
        banner = process.stderr.readline()
        while banner and "serving" not in banner:  # (warnings about the policy come first)
            banner = process.stderr.readline()
        url = re.search(r"serving (http://\S+)", banner).group(1)  # type: ignore[union-attr]

        async def ask() -> int:
            async with aiohttp.ClientSession() as client, client.post(
                    f"{url}/chat/completions", json={"model": MODELS[1], "messages": [
                        {"role": "user", "content": "Sentence 2."}]}) as response:
                return response.status
        for _ in range(asks):
            assert asyncio.run(ask()) == 200
    finally:
        process.send_signal(signal.SIGINT)
        _out, err = process.communicate(timeout=20)
    assert process.returncode == 0
    return banner, err


def test_mt_eval_gateway_serves_until_interrupted_and_prints_the_log_digest(tmp_path: Path, standin: StandIn):
    policy = write_policy(tmp_path, standin.base_url)
    log = tmp_path / "audit.jsonl"
    banner, err = _serve_and_ask(policy, log, 1)
    digest = hashlib.sha256(log.read_bytes()).hexdigest()
    assert "continued" not in banner
    assert "stopped; 1 requests (0 refused)" in err and digest in err and "the log holds" not in err
    assert main(["gateway", "--policy", str(policy), "--check"]) == 0
    # Serving again continues the log: the stop line counts what this gateway served, then what the log holds.
    banner, err = _serve_and_ask(policy, log, 2)
    assert re.search(r"log: \S+audit\.jsonl \(continued: it holds 1 requests, \d+ tokens, which count toward the "
                     r"budget\)", banner), banner
    assert re.search(r"stopped; 2 requests \(0 refused\), \d+ tokens; the log holds 3 requests \(0 refused\)", err), err


def test_mt_eval_gateway_says_when_the_tokens_went_past_the_budget(tmp_path: Path, standin: StandIn):
    """The budget is checked as each request arrives, so requests in flight can take a run past it: said on stop."""
    policy = write_policy(tmp_path, standin.base_url, token_budget=100)
    log = tmp_path / "audit.jsonl"
    log.write_text(json.dumps({"path": "/v1/chat/completions", "model": MODELS[1], "refused": None, "status": 200,
                               "prompt_tokens": 300, "completion_tokens": 48}) + "\n")
    _banner, err = _serve_and_ask(policy, log, 0)
    assert "mt-eval gateway: tokens 348 of a budget of 100: exceeded by 248 (requests in flight when it was reached " \
           "were let finish)" in err
