// Start-up time of the guest (spawn until its initialize answer arrives) against `node -e 0`
// (spawn until exit), as medians over interleaved runs. Target: at most 1.3x.
// Usage: node bench/startup.js [--runs N] [--check]
import { spawn } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const guest = join(here, '..', 'bin', 'mt-eval-guest.js');
const plugin = join(here, '..', '..', '..', 'tests', 'fixtures', 'reverse');
const TARGET = 1.3;
const INITIALIZE = `${JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: {
  protocol_versions: ['mt-eval-bridge/1'], host: { name: 'bench', version: '1' }, config: null } })}\n`;

function baseline() {
  const started = performance.now();
  return new Promise((done) => {
    spawn(process.execPath, ['-e', '0'], { stdio: 'ignore' }).on('exit', () => done(performance.now() - started));
  });
}

function guestReady() {
  const started = performance.now();
  return new Promise((done, fail) => {
    const child = spawn(process.execPath, [guest, plugin], { stdio: ['pipe', 'pipe', 'inherit'] });
    child.stdin.write(INITIALIZE);
    child.stdout.once('data', () => {
      const elapsed = performance.now() - started;
      child.stdin.end();
      child.on('exit', () => done(elapsed));
    });
    child.on('error', fail);
  });
}

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const args = process.argv.slice(2);
const runs = args.includes('--runs') ? Number(args[args.indexOf('--runs') + 1]) : 20;
await baseline();
await guestReady();
const base = [];
const ready = [];
for (let i = 0; i < runs; i++) {
  base.push(await baseline());
  ready.push(await guestReady());
}
const ratio = median(ready) / median(base);
console.log(`node -e 0            : ${median(base).toFixed(1)} ms (median of ${runs})`);
console.log(`mt-eval-guest ready  : ${median(ready).toFixed(1)} ms (median of ${runs})`);
console.log(`ratio                : ${ratio.toFixed(2)}x (target <= ${TARGET}x: ${ratio <= TARGET ? 'met' : 'MISSED'})`);
if (args.includes('--check') && ratio > TARGET) process.exitCode = 1;
