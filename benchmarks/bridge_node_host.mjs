// The Node host → Python guest figures of benchmarks/bridge.py, every round trip's seconds printed as JSON:
// - pipe_p50: Node writes a 1-entry translate request into a bare Python echo (msgspec, blocking reads and
//   writes) and waits for its reply line;
// - public_p50: the Node host's public path, startGuest(["python", "-m", "mt_eval.cli", "serve", PLUGIN])
//   then guest.translate([entry], config), one call after another.
// Both run at once and are measured in alternating blocks of N calls, after WARM_UP calls each (the first FIRST
// of those are printed too, as 'pipe rtt first node' and 'public rtt first node').
// Usage: node benchmarks/bridge_node_host.mjs --python PYTHON --plugin DIR --blocks B --calls N
import { spawn } from 'node:child_process';
import { parseArgs } from 'node:util';

import { startGuest } from '../bridge/node/index.js';

const PYTHON_ECHO = `
import sys
import msgspec
decode, encode = msgspec.json.Decoder().decode, msgspec.json.Encoder().encode
out = sys.stdout.buffer
for line in sys.stdin.buffer:
    request = decode(line)
    results = [{"id": e["id"], "predicted": e["source"]} for e in request["params"]["entries"]]
    out.write(encode({"jsonrpc": "2.0", "id": request["id"], "result": {"results": results}}) + b"\\n")
    out.flush()
`;
const CONFIG = { source_lang: 'eng', target_lang: 'spa' };
const WARM_UP = 3000; // as benchmarks/bridge.py's WARM_UP and FIRST, for the same reasons
const FIRST = 1000;

const { values } = parseArgs({
  options: { python: { type: 'string' }, plugin: { type: 'string' }, blocks: { type: 'string' }, calls: { type: 'string' } },
});
const blocks = Number(values.blocks ?? 6);
const calls = Number(values.calls ?? 300);
const entry = (i) => ({ id: String(i), source: `Sentence number ${i} to translate.` });

async function roundTrips(call, count) {
  const times = [];
  for (let i = 0; i < count; i++) {
    const started = process.hrtime.bigint();
    await call(i);
    times.push(Number(process.hrtime.bigint() - started) / 1e9);
  }
  return times;
}

// The bare pipe: a Python echo process, one request line written, its reply line awaited.
function barePipe() {
  const child = spawn(values.python, ['-c', PYTHON_ECHO], { stdio: ['pipe', 'pipe', 'inherit'] });
  let waiting = null;
  let buffered = '';
  child.stdout.setEncoding('utf8');
  child.stdout.on('data', (chunk) => {
    buffered += chunk;
    const newline = buffered.indexOf('\n');
    if (newline >= 0) {
      const line = buffered.slice(0, newline);
      buffered = buffered.slice(newline + 1);
      waiting(JSON.parse(line));
    }
  });
  const call = (i) => new Promise((resolve) => {
    waiting = resolve;
    child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id: i, method: 'translate', params: { entries: [entry(i)], config: CONFIG } })}\n`);
  });
  const close = () => new Promise((resolve) => { child.on('exit', resolve); child.stdin.end(); });
  return { call, close };
}

const pipe = barePipe();
const guest = await startGuest([values.python, '-m', 'mt_eval.cli', 'serve', values.plugin], { config: CONFIG });
const ours = (i) => guest.translate([entry(i)], CONFIG);
const samples = { 'pipe rtt node': [], 'public rtt node': [] };
try {
  samples['pipe rtt first node'] = (await roundTrips(pipe.call, WARM_UP)).slice(0, FIRST);
  samples['public rtt first node'] = (await roundTrips(ours, WARM_UP)).slice(0, FIRST);
  for (let block = 0; block < blocks; block++) { // alternating, so a burst of load shifts both
    samples['pipe rtt node'].push(...await roundTrips(pipe.call, calls));
    samples['public rtt node'].push(...await roundTrips(ours, calls));
  }
} finally {
  await guest.close();
  await pipe.close();
}
process.stdout.write(`${JSON.stringify(samples)}\n`);
