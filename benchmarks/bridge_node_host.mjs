// One round of the Node host → Python guest figures of benchmarks/bridge.py, printed as JSON:
// - pipe_p50: Node writes a 1-entry translate request into a bare Python echo (msgspec, blocking reads and
//   writes) and waits for its reply line;
// - public_p50: the Node host's public path, startGuest(["python", "-m", "mt_eval.cli", "serve", PLUGIN])
//   then guest.translate([entry], config), one call after another.
// Usage: node benchmarks/bridge_node_host.mjs --python PYTHON --plugin DIR --calls N
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
const WARM_UP = 200;

const { values } = parseArgs({ options: { python: { type: 'string' }, plugin: { type: 'string' }, calls: { type: 'string' } } });
const calls = Number(values.calls ?? 2000);
const entry = (i) => ({ id: String(i), source: `Sentence number ${i} to translate.` });
const median = (times) => times.sort((a, b) => a - b)[Math.floor(times.length / 2)];

async function timed(call) {
  for (let i = 0; i < WARM_UP; i++) await call(i);
  const times = [];
  for (let i = 0; i < calls; i++) {
    const started = process.hrtime.bigint();
    await call(i);
    times.push(Number(process.hrtime.bigint() - started) / 1e9);
  }
  return median(times);
}

async function barePipe() {
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
  const p50 = await timed(call);
  child.stdin.end();
  await new Promise((resolve) => child.on('exit', resolve));
  return p50;
}

async function publicPath() {
  const guest = await startGuest([values.python, '-m', 'mt_eval.cli', 'serve', values.plugin], { config: CONFIG });
  try {
    return await timed((i) => guest.translate([entry(i)], CONFIG));
  } finally {
    await guest.close();
  }
}

const pipe = await barePipe();
const ours = await publicPath();
process.stdout.write(`${JSON.stringify({ pipe_p50: pipe, public_p50: ours })}\n`);
