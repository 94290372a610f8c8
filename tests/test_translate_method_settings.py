"""``mt-eval translate`` passes the method what ``mt-eval run`` passes it (--model, --base-url, --temperature,
--max-tokens, --param), so a plugin made by ``mt-eval new`` for a chat endpoint or an HTTP API can be tried with
it; a --param is refused in run's words, and one the method has no use for reaches it, as in a run."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from llm_standin import StandIn
from loopback import JsonHandler, LoopbackServer
from mt_eval.cli import main
from new_plugins import new

ECHO_CONFIG = """\
class Echo:
    async def translate(self, entries, config):
        return [{"id": e["id"], "predicted": repr(sorted(config.params.items()))} for e in entries]
"""


class _TranslateHandler(JsonHandler):
    server: ApiStandIn

    def do_POST(self) -> None:
        body = self.read_json()
        with self.server.lock:
            self.server.requests.append({"path": self.path, "body": body})
        self.reply(200, {"translatedText": f"[{body['source']}>{body['target']}] {body['q']}"})


class ApiStandIn(LoopbackServer):
    """A LibreTranslate-compatible /translate on 127.0.0.1: each text answered with the languages it was sent."""

    def __init__(self) -> None:
        super().__init__(_TranslateHandler)


@pytest.fixture(autouse=True)
def _no_proxy_nor_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("no_proxy", "127.0.0.1")
    for variable in ("MT_EVAL_LLM_API_KEY", "MT_EVAL_TRANSLATION_API_KEY"):
        monkeypatch.delenv(variable, raising=False)


def generated(tmp_path: Path, profile: str) -> Path:
    plugin = tmp_path / profile
    assert new(str(plugin), "--no-input", "--set", f"dependency_profile={profile}") == 0
    return plugin


def echo_plugin(make_plugin) -> Path:
    return make_plugin({"name": "Echo", "entry_point": "pipeline:Echo", "supported_pairs": ["eng>spa"],
                        "dependency_class": "S", "dependencies": []}, {"pipeline.py": ECHO_CONFIG})


def translate(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    capsys.readouterr()
    status = main(["translate", *argv])
    out, err = capsys.readouterr()
    return status, out, err


def test_a_generated_chat_plugin_translates_against_the_endpoint_and_model_given(tmp_path, capsys):
    """Before: translate had no --base-url nor --model, and the plugin failed every sentence without them."""
    plugin = generated(tmp_path, "llm-gateway")
    with StandIn({"Good morning.": "Buenos días."}) as server:
        status, out, err = translate(capsys, str(plugin), "--pair", "eng:spa", "--base-url", server.base_url,
                                     "--model", "stand-in", "--temperature", "0.5", "--max-tokens", "64",
                                     "Good morning.")
    assert (status, out, err) == (0, "Buenos días.\n", "")
    [request] = server.requests
    assert request["path"] == "/v1/chat/completions"
    assert {key: request["body"][key] for key in ("model", "temperature", "max_tokens")} == {
        "model": "stand-in", "temperature": 0.5, "max_tokens": 64}


def test_a_generated_api_plugin_translates_against_the_api_url_param(tmp_path, capsys):
    plugin = generated(tmp_path, "external-api")
    with ApiStandIn() as server:
        status, out, err = translate(capsys, str(plugin), "--pair", "eng:spa", "--param",
                                     f"api_url={server.base_url}/translate", "--param",
                                     'language_codes={"eng": "en", "spa": "es"}', "Good morning.")
    assert (status, out, err) == (0, "[en>es] Good morning.\n", "")
    assert [request["path"] for request in server.requests] == ["/translate"]


def test_a_param_the_method_declares_no_use_for_reaches_it_as_in_a_run(make_plugin, capsys):
    """A method declares no parameters: run gives it every --param, and so does translate (its values as JSON)."""
    plugin = echo_plugin(make_plugin)
    status, out, _ = translate(capsys, str(plugin), "--param", "beam=5", "--param", "note=text", "Hello")
    assert (status, out) == (0, "[('beam', 5), ('note', 'text')]\n")


@pytest.mark.parametrize("params", [["foo"], ["=1"], ["x=NaN"], ["beam=1", "beam=2"]],
                         ids=["no-equals", "no-key", "not-json", "twice"])
def test_a_malformed_param_is_refused_in_the_words_run_uses(make_plugin, capsys, params: list[str]):
    plugin = echo_plugin(make_plugin)
    given = [word for param in params for word in ("--param", param)]
    with pytest.raises(SystemExit) as refused:
        main(["translate", str(plugin), *given, "Hello"])
    translate_said = capsys.readouterr().err.splitlines()[-1]
    with pytest.raises(SystemExit) as run_refused:
        main(["run", "--method", str(plugin), "--corpus", "c.json", *given])
    run_said = capsys.readouterr().err.splitlines()[-1]
    assert refused.value.code == run_refused.value.code == 2
    assert translate_said.startswith("mt-eval translate: error: argument --param: ")
    assert translate_said.removeprefix("mt-eval translate") == run_said.removeprefix("mt-eval run")


def test_the_help_lists_the_options_passed_to_the_method(capsys):
    with pytest.raises(SystemExit):
        main(["translate", "--help"])
    shown = capsys.readouterr().out
    assert all(option in shown for option in ("--base-url", "--model", "--temperature", "--max-tokens", "--param"))
    assert "--param api_url=" in json.dumps(shown)
