"""One corpus, every runtime path, identical results (latency aside)."""

from __future__ import annotations

import json
from pathlib import Path

import anyio

from mt_eval.bridge.method import BridgeMethod
from mt_eval.bridge.runtimes import node_command
from mt_eval.loader import load_method
from mt_eval.records import RunConfig

REVERSE = Path(__file__).parent / "fixtures" / "reverse"
CONFIG = RunConfig(source_lang="eng", target_lang="spa")
SOURCES = ["Hello, world.", "¿Qué tal?", "日本語のテキスト", "emoji 🙂 and ZWJ 👩‍💻", "tab\tand\nnewline",
           "!fail this one", "", "a" * 5000, "mixed RTL עברית text", "quotes \"and\" \\backslashes\\"]
ENTRIES = [{"id": f"s{i}", "source": s, "reference": "ref", "domain": "test"} for i, s in enumerate(SOURCES)]


def comparable(results: list[dict]) -> list[tuple]:
    return [(r["id"], r["predicted"], r.get("error")) for r in results]


async def translate_with(method) -> list[tuple]:
    try:
        return comparable(await method.translate([dict(e) for e in ENTRIES], CONFIG))
    finally:
        if hasattr(method, "aclose"):
            await method.aclose()


async def test_python_in_process_serve_and_node_guest_agree():
    in_process = await translate_with(load_method(REVERSE).method)
    served = await translate_with(load_method(REVERSE, isolate=True).method)
    node = await translate_with(BridgeMethod(node_command(REVERSE), label="reverse-node"))
    assert in_process == served == node
    assert in_process[0] == ("s0", "spa:.dlrow ,olleH", None)
    assert in_process[5] == ("s5", None, "asked to fail")


async def test_translate_js_loaded_directly_in_node_matches_the_python_host():
    script = (
        "const m = await import(process.argv[1]);\n"
        "const entries = JSON.parse(process.argv[2]);\n"
        "const results = await m.translate(entries, { source_lang: 'eng', target_lang: 'spa' });\n"
        "process.stdout.write(JSON.stringify(results));\n"
    )
    with anyio.fail_after(60):
        direct = await anyio.run_process(["node", "--input-type=module", "-e", script, str(REVERSE / "translate.js"),
                                          json.dumps(ENTRIES)])
    loaded_in_node = comparable(json.loads(direct.stdout))
    through_host = await translate_with(BridgeMethod(node_command(REVERSE), label="reverse-node"))
    assert loaded_in_node == through_host
