"""A generated HTTP method run without its endpoint fails every entry saying which `mt-eval run` option gives it,
in pipeline.py and translate.js alike (the words of the two entries are the same)."""

from __future__ import annotations

import asyncio
import json
import shutil
import subprocess

import pytest

from mt_eval.loader import load_method
from mt_eval.records import RunConfig
from new_plugins import new

NODE = shutil.which("node")
MISSING = {  # profile → (the config the run gives, what the error says then)
    "llm-gateway": [({}, "e.g. mt-eval run --base-url http://127.0.0.1:8000/v1"),
                    ({"base_url": "http://127.0.0.1:9/v1"}, "e.g. mt-eval run --model NAME")],
    "external-api": [({}, "e.g. mt-eval run --param api_url=http://127.0.0.1:5000/translate")],
}


def node_error(plugin, config: dict) -> str:
    script = ("const m = await import(process.argv[1]);"
              "const [r] = await m.translate([{id: 's1', source: 'Hello.'}], JSON.parse(process.argv[2]));"
              "process.stdout.write(r.error);")
    done = subprocess.run([NODE, "--input-type=module", "-e", script, str(plugin / "translate.js"),
                           json.dumps({"source_lang": "eng", "target_lang": "spa", "params": {}, **config})],
                          capture_output=True, text=True, timeout=60, check=True)
    return done.stdout


@pytest.mark.skipif(NODE is None, reason="node is not installed")
@pytest.mark.parametrize("profile", sorted(MISSING))
def test_a_missing_endpoint_names_the_run_option_that_gives_it(tmp_path, profile: str):
    plugin = tmp_path / profile
    assert new(str(plugin), "--no-input", "--set", "runtime=both", "--set", f"dependency_profile={profile}") == 0
    method = load_method(plugin).method
    for config, said in MISSING[profile]:
        [result] = asyncio.run(method.translate([{"id": "s1", "source": "Hello."}],
                                                RunConfig(source_lang="eng", target_lang="spa", **config)))
        assert result["error"].endswith(said), result
        assert node_error(plugin, config) == result["error"]
