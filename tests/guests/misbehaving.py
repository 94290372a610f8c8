"""A bridge guest that misbehaves in the way its first argument names (for the host's failure tests).

It speaks just enough of the protocol by hand (no SDK imports) to reach the misbehaviour.
"""

import json
import os
import signal
import subprocess
import sys
import time

MODE = sys.argv[1]
OUT = sys.stdout.buffer


def send(obj, raw=None):
    OUT.write(raw if raw is not None else json.dumps(obj).encode() + b"\n")
    OUT.flush()


def results(entries, **overrides):
    return [{"id": e["id"], "predicted": e["source"][::-1], **overrides} for e in entries]


def main():
    if MODE == "ignore-sigterm":
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    if MODE == "grandchild":
        child = subprocess.Popen(["sleep", "300"])
        sys.stderr.write(f"grandchild pid {child.pid}\n")
        sys.stderr.flush()
    if MODE == "stderr-flood":
        sys.stderr.write(("x" * 1023 + "\n") * 1500)  # 1.5 MB before the handshake
        sys.stderr.flush()
    translated = 0
    for line in sys.stdin.buffer:
        message = json.loads(line)
        method, rid, params = message.get("method"), message.get("id"), message.get("params") or {}
        if rid is None:
            continue
        if method == "initialize":
            if MODE == "no-initialize":
                continue
            caps = {"max_batch": 2 if MODE in ("crash-mid-batch", "oversized") else None,
                    "max_concurrency": 2 if MODE == "null-id" else 1, "cancel": False, "progress": MODE == "progress"}
            send({"jsonrpc": "2.0", "id": rid, "result": {
                "protocol_version": "mt-eval-bridge/1", "method": {"name": MODE, "method_id": MODE},
                "card": None, "capabilities": caps, "guest": {"name": "misbehaving", "version": "0"}}})
            continue
        if method == "shutdown":
            send({"jsonrpc": "2.0", "id": rid, "result": None})
            continue
        entries = params.get("entries", [])
        translated += 1
        if MODE == "crash-mid-batch" and translated == 2:
            sys.stderr.write("fatal: the model ran out of memory\n")
            sys.stderr.flush()
            os._exit(3)
        if MODE == "crash-always":
            sys.stderr.write("fatal: cannot load weights\n")
            sys.stderr.flush()
            os._exit(4)
        if MODE in ("hang", "ignore-sigterm", "grandchild", "null-id") and any("hang" in e["source"] for e in entries):
            continue
        if MODE == "null-id" and any(e["source"] == "unreadable" for e in entries):  # as if the line were not JSON
            send({"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "not valid JSON: unreadable"}})
            continue
        if MODE == "junk":  # (the last names the request in flight, in a line that is no JSON object)
            OUT.write(b"Loading model... 100%\n\x00\x01 not json\n{\"half\": \n"
                      + f'debug: sending {{"id": {json.dumps(rid)}}} upstream\n'.encode())
        if MODE == "stderr-flood":
            sys.stderr.write(("y" * 1023 + "\n") * 1000)
            sys.stderr.flush()
        if MODE == "progress":
            for odd in ([rid], {"id": rid}, True):  # ids that name no request: ignored
                send({"jsonrpc": "2.0", "method": "progress", "params": {"id": odd, "done": 0, "total": 1}})
            for _ in range(int(entries[0]["source"])):
                time.sleep(0.1)
                send({"jsonrpc": "2.0", "method": "progress", "params": {"id": rid, "done": 0, "total": 1}})
        if MODE == "long-messages" and entries[0]["id"] == "demo-02":  # a method's failure said in 1 MB
            send({"jsonrpc": "2.0", "id": rid, "error": {"code": -32007, "message": "x" * 1_000_000,
                                                         "data": {"type": "RuntimeError"}}})
            continue
        result = {"jsonrpc": "2.0", "id": rid, "result": {"results": results(entries)}}
        if MODE == "long-messages" and entries[0]["id"] == "demo-03":  # an error of 1 MB returned for the entry
            result["result"]["results"] = [{"id": "demo-03", "error": "y" * 1_000_000}]
        if MODE == "deep" and any(e["source"] == "deep" for e in entries):  # nested too deep for a reader
            send(None, raw=json.dumps(result).replace('"results": [', '"deep": ' + "[" * 5000 + "]" * 5000
                                                      + ', "results": [').encode() + b"\n")
            continue
        if MODE == "oversized" and any("big" in e["source"] for e in entries):
            result["result"]["results"][0]["predicted"] = "z" * 100_000
        if MODE == "invalid-utf8" and any("bad" in e["source"] for e in entries):
            send(None, raw=json.dumps(result).encode().replace(b"dab", b"d\xff\xfeb") + b"\n")
            continue
        if MODE == "wrong-ids":
            rs = result["result"]["results"]
            rs[0]["id"] = "no-such-entry"  # wrong id for the first entry
            rs.append(dict(rs[1]))  # the second entry twice
            rs.pop(2)  # the third entry missing
        send(result)
    if MODE in ("ignore-sigterm",):
        while True:  # outlives stdin closing and SIGTERM; only SIGKILL ends it
            time.sleep(1)
    if MODE == "grandchild":
        pass  # exits normally, leaving the grandchild in its process group


if __name__ == "__main__":
    main()
