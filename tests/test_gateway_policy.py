"""`mt-eval gateway --check` and its start: a policy, an API key or a log that cannot be used is named before
anything is served, with every problem at once; what a policy would expose is warned of."""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path

import aiohttp
import pytest

from mt_eval.cli import main
from mt_eval.gateway.audit import AuditLog
from mt_eval.gateway.policy import GatewayPolicy, ModelRoute, read_policy
from mt_eval.gateway.server import Gateway
from mt_eval.problems import ProblemsError


@pytest.mark.parametrize(("policy", "message"), [
    ({"base_url": "http://x/v1", "models": [{"id": "gpt-4o-latest"}]}, "is not pinned"),
    ({"base_url": "http://x/v1", "models": [{"id": "a-1"}, {"id": "a-1"}]}, "listed twice"),
    ({"models": [{"id": "a-1"}]}, "has no upstream"),
    ({"base_url": "http://x/v1", "models": [{"id": "a-1"}], "substitute": "b-1"}, "is not one of the models"),
    ({"base_url": "ftp://x", "models": [{"id": "a-1"}]}, "an http(s) URL"),
    ({"base_url": "http://x/v1", "models": []}, "$.models"),
    ({"base_url": "https://x.org:99999/v1", "models": [{"id": "a-1"}]},  # (a port no request could reach)
     "\"a-1\" would be served from 'https://x.org:99999/v1', which cannot be reached: Port out of range"),
    ({"base_url": "https://x/v1", "models": [{"id": "a-1", "base_url": "https:///v1"}]},
     "$.models[0].base_url: \"a-1\" would be served from 'https:///v1', which has no host"),
    ({"base_url": "https://x.org/v1/模型", "models": [{"id": "a-1"}]},  # (every request failed with a 500)
     "\"a-1\" would be served from 'https://x.org/v1/模型', which holds U+6A21, a character a request line "
     "cannot carry\n    fix: percent-encode it (%E6%A8%A1)"),
    ({"base_url": "https://x.org/my v1", "models": [{"id": "a-1"}]},
     "which holds U+0020, a character a request line cannot carry\n    fix: percent-encode it (%20)"),
    ({"base_url": "https://user:pw@x.org/v1", "models": [{"id": "a-1"}]},  # (dropped without a word)
     "which holds credentials before its host, which the gateway does not send\n    fix: remove them: the API key "
     "goes in the environment variable that api_key_env names"),
    ({"base_url": "https://x.org/v1#part", "models": [{"id": "a-1"}]}, "which has a fragment (#…), which no request "
                                                                       "carries"),
    ({"base_url": "https://x/v1", "api_key_env": "A=B", "models": [{"id": "a-1"}]},  # (its warning said "set A=B")
     '$.api_key_env: "A=B" is not an environment variable name (letters, digits and _, not starting with a digit)'),
    ({"base_url": "https://x/v1", "models": [{"id": "a-1", "api_key_env": ""}]},
     '$.models[0].api_key_env: "" is not an environment variable name'),
    ({"base_url": "https://x/v1", "models": [{"id": "a-1\u0000"}]},  # (it passed --check)
     '$.models[0].id: "a-1\\x00" holds the control character U+0000'),
    ({"base_url": "https://x/v1", "models": [{"id": "a-1", "upstream_model": "gpt-4o-latest"}]},  # (what is served
     '$.models[0].upstream_model: "gpt-4o-latest" is not pinned: "latest" moves'),  # upstream: it passed --check)
    ({"base_url": "https://x/v1", "models": [{"id": "a-1", "upstream_model": "a-1\u001b[2J"}]},
     '$.models[0].upstream_model: "a-1\\x1b[2J" holds the control character U+001B'),
    ({"base_url": "https://x/v1", "models": [{"id": "a-1\nb"}]},  # (the message was cut in two)
     '$.models[0].id: "a-1\\nb" holds the control character U+000A'),
    ({"base_url": "https://x/v1", "models": [{"id": "a-1 "}]},  # (it passed --check; "a-1" was then refused)
     '$.models[0].id: "a-1 " begins or ends with white space'),
    ({"base_url": "https://x/v1", "models": [{"id": "a-1", "upstream_model": " a-1"}]},
     '$.models[0].upstream_model: " a-1" begins or ends with white space'),
    ({"base_url": "https://x/v1", "models": [{"id": "a-1", "upstream_model": ""}]},  # (the id was sent instead)
     "$.models[0].upstream_model"),
    ({"base_url": "https://x/v1", "models": [{"id": "a-1"}], "timeout_s": 1e-300},  # (its timer spun a whole core)
     "$.timeout_s: must be >= 0.01, got 1e-300"),
    ({"base_url": "https://x/v1", "models": [{"id": "a-1"}], "timeout_s": 90_000},
     "$.timeout_s: must be <= 86400, got 90000"),
    ({"base_url": "https://x/v1", "models": [{"id": "a-1"}], "token_budget": 10 ** 400},  # (it said "Infinity")
     "$.token_budget: expected an integer, got a number too large to hold: 10000000000000000000… (401 digits)"),
])
def test_a_bad_policy_is_refused_with_every_problem(tmp_path: Path, policy: dict, message: str, capsys):
    path = tmp_path / "policy.json"
    path.write_text(json.dumps(policy))
    with pytest.raises(ProblemsError, match=re.escape(message)):
        read_policy(path)
    assert main(["gateway", "--policy", str(path), "--check"]) == 1
    assert message in capsys.readouterr().err


@pytest.mark.parametrize(("policy", "problems"), [
    ({"base_url": "https://x/v1", "modles": [], "models": [{"id": "a-1"}, {"id": "a-1"}]},
     ['$.modles: unknown field "modles"', '$.models[1].id: "a-1" is listed twice']),
    ({"base_url": "https://x/v1", "token_budget": 0, "timeout_s": "60",
      "models": [{"id": "a-1", "upstream": "a"}, {"id": "b-latest"}, {"id": "c-1", "base_url": "https:///v1"}],
      "substitute": "d-1"},
     ["$.token_budget: must be >= 1, got 0", '$.timeout_s: expected a number, got the string "60"',
      '$.models[0].upstream: unknown field "upstream"', '$.models[1].id: "b-latest" is not pinned',
      "$.models[2].base_url: \"c-1\" would be served from 'https:///v1', which has no host",
      '$.substitute: "d-1" is not one of the models']),
    ({"base_url": "https://x/v1", "models": [{"id": "a-latest"}, {"id": "b-1", "upstream_model": 5}]},
     ["$.models[1].upstream_model: expected a string, got the number 5", '$.models[0].id: "a-latest" is not pinned']),
    ({"base_url": 7, "models": [{"id": "a-1"}, {"id": "a-1"}]},  # (and no model said to have no upstream)
     ["$.base_url: expected a string, got the number 7", '$.models[1].id: "a-1" is listed twice']),
    ({"base_url": "https://x/v1", "models": [{"id": 3}, "b-1", {"id": "c-1"}, {"id": "c-1"}], "substitute": 4},
     ["$.models[0].id: expected a string, got the number 3", "$.models[1]: expected an object, got the string",
      '$.models[3].id: "c-1" is listed twice', "$.substitute: expected a string, got the number 4"]),
])
def test_a_policy_with_several_problems_has_every_one_named_at_once(tmp_path: Path, capsys, policy: dict,
                                                                   problems: list[str]):
    """Before, a problem of the policy's shape (an unknown field, a bad token_budget, a field of the wrong type) hid
    those of its rules (a model listed twice, an unpinned id): fixing one showed the next."""
    path = tmp_path / "policy.json"
    path.write_text(json.dumps(policy))
    with pytest.raises(ProblemsError) as refused:
        read_policy(path)
    assert len(refused.value.problems) == len(problems)
    assert main(["gateway", "--policy", str(path), "--check"]) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"mt-eval gateway: {path} is not a valid GatewayPolicy\n")
    for problem in problems:
        assert f"error: {path} {problem}" in err


def test_a_policy_with_one_problem_is_refused_in_the_same_words(tmp_path: Path, capsys):
    path = tmp_path / "policy.json"
    path.write_text(json.dumps({"base_url": "https://x/v1", "models": [{"id": "a-1"}], "bogus": 1}))
    assert main(["gateway", "--policy", str(path), "--check"]) == 1
    assert capsys.readouterr().err == (
        f"mt-eval gateway: {path} is not a valid GatewayPolicy\nerror: {path} $.bogus: unknown field \"bogus\"\n"
        "    fix: remove it. Known fields: models, base_url, api_key_env, token_budget, substitute, log_bodies, "
        "timeout_s, $schema\n")


def test_check_names_a_model_id_json_quoted(tmp_path: Path, capsys):
    """A model id holding a quote or a backslash reads unambiguously, as JSON writes it (it was written raw between
    quotes: "a"b" is listed twice)."""
    path = tmp_path / "policy.json"
    path.write_text(json.dumps({"models": [{"id": 'a"b'}, {"id": 'a"b'}, {"id": "c\\d-latest"}],
                                "substitute": 'e"f'}))
    assert main(["gateway", "--policy", str(path), "--check"]) == 1
    err = capsys.readouterr().err
    for problem in ['$.models[1].id: "a\\"b" is listed twice', '$.models[0]: "a\\"b" has no upstream',
                    '$.models[2].id: "c\\\\d-latest" is not pinned', '$.substitute: "e\\"f" is not one of the models']:
        assert f"error: {path} {problem}" in err


@pytest.mark.parametrize(("base_url", "warned"), [("http://api.example.com/v1", True), ("http://10.0.0.7/v1", True),
                                                  ("https://api.example.com/v1", False),
                                                  ("http://127.0.0.1:9/v1", False), ("http://localhost:9/v1", False)])
def test_check_warns_of_an_api_key_sent_over_plain_http(tmp_path: Path, capsys, base_url: str, warned: bool):
    path = tmp_path / "policy.json"
    path.write_text(json.dumps({"base_url": base_url, "api_key_env": "UPSTREAM_KEY", "models": [{"id": "a-1"}]}))
    assert main(["gateway", "--policy", str(path), "--check"]) == 0
    err = capsys.readouterr().err
    assert ("its API key (UPSTREAM_KEY) would cross the network unencrypted" in err) is warned
    assert ("use the upstream's https:// URL" in err) is warned


def test_check_warns_of_an_api_key_variable_this_environment_does_not_set(tmp_path: Path, capsys, monkeypatch):
    """Before, it passed --check in silence, and its requests went upstream without a key."""
    path = tmp_path / "policy.json"
    path.write_text(json.dumps({"base_url": "https://api.example.com/v1", "api_key_env": "UPSTREAM_KEY",
                                "models": [{"id": "a-1"}, {"id": "b-1", "api_key_env": "OTHER_KEY"}]}))
    monkeypatch.delenv("UPSTREAM_KEY", raising=False)
    monkeypatch.setenv("OTHER_KEY", "set")
    assert main(["gateway", "--policy", str(path), "--check"]) == 0
    err = capsys.readouterr().err
    assert f"warning: {path} $.api_key_env: $UPSTREAM_KEY, the API key of a-1, is not set here: their requests " \
           "would go upstream without a key" in err and "OTHER_KEY" not in err
    monkeypatch.setenv("UPSTREAM_KEY", "set")
    assert main(["gateway", "--policy", str(path), "--check"]) == 0
    assert "is not set here" not in capsys.readouterr().err


@pytest.mark.parametrize(("key", "shown"), [("sk-模型", "U+6A21 at position 4"),
                                            ("sk-1\r\nX-Admin: 1", "U+000D at position 5")])
def test_an_api_key_a_header_cannot_carry_is_refused_before_serving(tmp_path: Path, capsys, monkeypatch,
                                                                    key: str, shown: str):
    """Before, the gateway stopped with a UnicodeEncodeError traceback, or sent the key's lines as headers."""
    path = tmp_path / "policy.json"
    path.write_text(json.dumps({"base_url": "https://api.example.com/v1", "api_key_env": "UPSTREAM_KEY",
                                "models": [{"id": "a-1"}]}))
    monkeypatch.setenv("UPSTREAM_KEY", key)
    for argv in (["--check"], ["--listen", "127.0.0.1:0", "--log", str(tmp_path / "gateway.jsonl")]):
        assert main(["gateway", "--policy", str(path), *argv]) == 1
        err = capsys.readouterr().err
        assert f"error: {path} $.api_key_env: $UPSTREAM_KEY, the API key of a-1, holds {shown}, which an HTTP " \
               "header cannot carry\n    fix: set UPSTREAM_KEY to the key alone, as the provider gave it" in err
        assert "Traceback" not in err and key not in err
    assert not (tmp_path / "gateway.jsonl").exists()

    assert asyncio.run(first_answer(Gateway(read_policy(path), AuditLog(tmp_path / "run.jsonl"),
                                            environ={"UPSTREAM_KEY": key}))) == (
        502, "$UPSTREAM_KEY, the API key of a-1, holds a character an HTTP header cannot carry: set it to the key "
        "alone, as the provider gave it")


@pytest.mark.parametrize("host", ["a..b", "x" * 64 + ".example.com"])
def test_a_host_name_no_connection_can_be_made_to_is_refused_not_served_with_a_traceback(tmp_path: Path, capsys,
                                                                                        host: str):
    """Before, --check called it valid, and serving it stopped at once with a UnicodeError traceback."""
    path = tmp_path / "policy.json"
    path.write_text(json.dumps({"base_url": f"https://{host}/v1", "models": [{"id": "a-1"}]}))
    for argv in (["--check"], ["--listen", "127.0.0.1:0", "--log", str(tmp_path / "gateway.jsonl")]):
        assert main(["gateway", "--policy", str(path), *argv]) == 1
        err = capsys.readouterr().err
        assert f"$.base_url: \"a-1\" would be served from 'https://{host}/v1', which has a host name, {host!r}, " \
               "that is not one: a part between its dots is empty or over 63 characters" in err
        assert "Traceback" not in err
    assert not (tmp_path / "gateway.jsonl").exists()

    policy = GatewayPolicy(base_url="https://x.org/v1", models=[ModelRoute(id="a-1")])
    policy.base_url = f"https://{host}/v1"  # (as a policy made in code, not read and checked)
    assert asyncio.run(first_answer(Gateway(policy, AuditLog(tmp_path / "run.jsonl"), environ={}))) == (
        502, f"the policy's base_url for a-1 ('https://{host}/v1') is not an http(s) URL with a valid host name")


def test_a_log_that_cannot_be_opened_is_named_before_serving(tmp_path: Path, capsys):
    path = tmp_path / "policy.json"
    path.write_text(json.dumps({"base_url": "https://api.example.com/v1", "models": [{"id": "a-1"}]}))
    (tmp_path / "logs").mkdir()
    assert main(["gateway", "--policy", str(path), "--listen", "127.0.0.1:0", "--log", str(tmp_path / "logs")]) == 1
    err = capsys.readouterr().err
    assert f"cannot open the log --log {tmp_path / 'logs'}: Is a directory (give the log's file path)" in err


@pytest.mark.parametrize(("name", "reason"), [("absent.json", "No such file or directory"), ("", "Is a directory")])
def test_a_policy_file_that_cannot_be_read_is_not_called_invalid(tmp_path: Path, capsys, name: str, reason: str):
    """Before, "PATH is not a valid GatewayPolicy" came first, for a file that is not there."""
    path = tmp_path / name
    assert main(["gateway", "--policy", str(path), "--check"]) == 1
    err = capsys.readouterr().err
    assert err.splitlines()[0] == f"mt-eval gateway: cannot read {path}"
    assert f"{path}: cannot read file: {reason}" in err and "not a valid" not in err


async def first_answer(gateway: Gateway) -> tuple[int, str]:
    """The status and error message of a chat request for model a-1 through ``gateway``, started and closed here."""
    url = await gateway.start()
    try:
        async with aiohttp.ClientSession() as client, client.post(
                f"{url}/chat/completions", json={"model": "a-1"}) as response:
            return response.status, (await response.json())["error"]["message"]
    finally:
        await gateway.close()
