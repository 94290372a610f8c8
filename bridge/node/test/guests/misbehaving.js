// A guest that breaks the protocol on purpose, one way per mode: `node misbehaving.js MODE`.
// It speaks the protocol by hand (no library code) and writes with writeSync so nothing is lost
// when it exits abruptly. Translations are "<target_lang>:<source reversed>", as the reverse fixture.
import { spawn } from 'node:child_process';
import { closeSync, existsSync, readFileSync, writeFileSync, writeSync } from 'node:fs';

const mode = process.argv[2];
const out = (text) => writeSync(1, text);
const err = (text) => writeSync(2, `${text}\n`);
const send = (message) => out(`${JSON.stringify(message)}\n`);
const answer = (id, result) => send({ jsonrpc: '2.0', id, result });
const translation = (entry, config) => ({ id: entry.id, predicted: `${config.target_lang}:${[...entry.source].reverse().join('')}` });
const reversed = (entries, config) => entries.map((entry) => translation(entry, config));
const after = (ms, fn) => setTimeout(fn, ms);
const keepAlive = () => setInterval(() => {}, 60_000);

let inFlight = 0;
let maxInFlight = 0;

// What each mode does: capabilities for initialize, and translate(id, entries, config).
const modes = {
  crash: {
    capabilities: { max_batch: 1, max_concurrency: 1 },
    translate(id, entries, config) {
      if (entries.some((e) => e.source === 'crash')) {
        err('crashing on purpose');
        process.exit(3);
      }
      answer(id, { results: reversed(entries, config) });
    },
  },
  'crash-pending': {
    capabilities: { max_batch: 1, max_concurrency: 4 },
    translate(id, entries, config) {
      if (entries[0].source === 'slow') return; // held until the crash
      if (entries[0].source === 'crash') {
        after(300, () => { err('crashing with requests pending'); process.exit(3); });
        return;
      }
      answer(id, { results: reversed(entries, config) });
    },
  },
  'always-crash': {
    capabilities: { max_batch: 1, max_concurrency: 1 },
    translate() {
      err('crash on every translate');
      process.exit(4);
    },
  },
  hang: { capabilities: { cancel: true }, translate() {} },
  'hang-no-cancel': { // never answers "hang", and cannot cancel: a request that times out gets it stopped
    capabilities: { cancel: false },
    translate(id, entries, config) {
      if (entries[0].source !== 'hang') answer(id, { results: reversed(entries, config) });
    },
  },
  'wrong-id': { // answers with an id no request has
    capabilities: { cancel: true },
    translate(id, entries, config) { answer(id + 1000, { results: reversed(entries, config) }); },
  },
  'string-id': { // answers with its request's id as a string
    capabilities: { cancel: true, max_concurrency: 2 },
    translate(id, entries, config) { answer(String(id), { results: reversed(entries, config) }); },
  },
  progress: {
    capabilities: { progress: true },
    translate(id, entries, config) {
      const total = Number(entries[0].source.split(' ')[1]);
      let done = 0;
      const tick = setInterval(() => {
        done += 100;
        send({ jsonrpc: '2.0', method: 'progress', params: { id, done, total, message: 'working' } });
        if (done >= total) {
          clearInterval(tick);
          answer(id, { results: reversed(entries, config) });
        }
      }, 100);
    },
  },
  junk: {
    capabilities: {},
    translate(id, entries, config) {
      out('hello, this is not JSON\n[1, 2, 3]\n42\n"text"\n{"unrelated": true}\n\n{broken json\n');
      send({ jsonrpc: '2.0', method: 'log', params: { level: 'warning', message: 'a log notification' } });
      send({ jsonrpc: '2.0', id: 9999, result: { results: [] } });
      answer(id, { results: reversed(entries, config) });
    },
  },
  huge: {
    capabilities: { max_batch: 1, max_concurrency: 4 },
    translate(id, entries, config) {
      if (entries[0].source === 'huge') {
        answer(id, { results: [{ id: entries[0].id, predicted: 'x'.repeat(100_000) }] });
      } else {
        answer(id, { results: reversed(entries, config) });
      }
    },
  },
  'bad-utf8': {
    capabilities: { max_batch: 1, max_concurrency: 4 },
    translate(id, entries, config) {
      if (entries[0].source !== 'bad') return answer(id, { results: reversed(entries, config) });
      const head = `{"jsonrpc":"2.0","id":${id},"result":{"results":[{"id":${JSON.stringify(entries[0].id)},"predicted":"`;
      writeSync(1, Buffer.concat([Buffer.from(head), Buffer.from([0xff, 0xfe]), Buffer.from('"}]}}\n')]));
    },
  },
  ids: {
    capabilities: {},
    translate(id, entries, config) {
      const results = [];
      for (const entry of entries) {
        const result = translation(entry, config);
        if (entry.source === 'dup') results.push(result, { ...result });
        else if (entry.source === 'wrong') results.push({ ...result, id: `${entry.id}-wrong` });
        else if (entry.source === 'malformed') results.push({ ...result, predicted: 42 });
        else if (entry.source !== 'missing') results.push(result);
      }
      results.push({ id: 'zzz', predicted: 'nobody asked' }, 'not an object');
      answer(id, { results });
    },
  },
  'no-results': { // answers a request holding the source "bad" with the result given as the next argument (JSON)
    capabilities: {},
    translate(id, entries, config) {
      if (entries.some((e) => e.source === 'bad')) send({ jsonrpc: '2.0', id, result: JSON.parse(process.argv[3]) });
      else answer(id, { results: reversed(entries, config) });
    },
  },
  'odd-line': { // answers a request holding the source "bad" with the line given as the next argument, $ID its id
    capabilities: { cancel: true },
    translate(id, entries, config) {
      if (entries.some((e) => e.source === 'bad')) out(`${process.argv[3].replaceAll('$ID', JSON.stringify(id))}\n`);
      else answer(id, { results: reversed(entries, config) });
    },
  },
  'line-then-answer': { // writes the line given as the next argument ($ID its request's id), then answers
    capabilities: { cancel: true },
    translate(id, entries, config) {
      out(`${process.argv[3].replaceAll('$ID', JSON.stringify(id))}\n`);
      answer(id, { results: reversed(entries, config) });
    },
  },
  sizes: { // (well behaved: each translation is how many entries its request carried, so a reply stays short)
    capabilities: {},
    translate(id, entries) {
      answer(id, { results: entries.map((entry) => ({ id: entry.id, predicted: String(entries.length) })) });
    },
  },
  concurrency: {
    capabilities: { max_batch: 3, max_concurrency: 2 },
    translate(id, entries, config) {
      maxInFlight = Math.max(maxInFlight, ++inFlight);
      after(100, () => {
        inFlight--;
        const metadata = { batch_size: entries.length, max_in_flight: maxInFlight };
        answer(id, { results: reversed(entries, config).map((r) => ({ ...r, metadata })) });
      });
    },
  },
  'ignore-sigterm': {
    setup() {
      process.on('SIGTERM', () => err('ignoring SIGTERM'));
      keepAlive();
    },
    capabilities: {},
    translate() {},
    shutdown() {}, // never answered
    end() {}, // stays up when stdin closes
  },
  'slow-exit': { // exits on its own 300 ms after stdin closes, and says what ended it
    setup() {
      process.on('SIGTERM', () => { err('ended by SIGTERM'); process.exit(143); });
    },
    capabilities: {},
    translate(id, entries, config) { answer(id, { results: reversed(entries, config) }); },
    end() { after(300, () => { err('exiting on its own'); process.exit(0); }); },
  },
  grandchild: {
    setup() {
      // The grandchild shares stdout and stderr, so those pipes stay open if the guest dies.
      const child = spawn('sleep', ['1000'], { stdio: ['ignore', 'inherit', 'inherit'] });
      err(`grandchild pid ${child.pid}`);
      keepAlive();
    },
    capabilities: {},
    translate(id, entries) {
      if (entries[0]?.source === 'crash') {
        err('exiting, leaving the grandchild behind');
        process.exit(6);
      }
    },
    end() {},
  },
  'stderr-flood': {
    setup() {
      for (let i = 0; i < 2_000; i++) err(`flood line ${i} ${'e'.repeat(1_000)}`);
    },
    capabilities: {},
    translate(id, entries, config) {
      writeSync(2, 'x'.repeat(1_200_000)); // one line of 1.2 MB, no newline
      err('');
      answer(id, { results: reversed(entries, config) });
    },
  },
  'no-initialize': {
    setup() {
      err(`booting, pid ${process.pid}`);
      keepAlive();
    },
    initialize() {},
  },
  'exit-on-init': {
    initialize() {
      err('cannot start: missing model file');
      process.exit(5);
    },
  },
  // Starts fine the first time, crashes on translate, then fails every later start.
  'flaky-start': {
    setup() {
      const state = process.env.MISBEHAVING_STATE;
      const starts = existsSync(state) ? Number(readFileSync(state, 'utf8')) : 0;
      writeFileSync(state, String(starts + 1));
      this.initialize = starts === 0 ? undefined : () => { err('later starts fail'); process.exit(5); };
    },
    capabilities: {},
    translate() {
      err('first process crashes');
      process.exit(3);
    },
  },
  // Starts fine the first time, crashes on translate, then never answers initialize again.
  'hang-on-restart': {
    setup() {
      const state = process.env.MISBEHAVING_STATE;
      const starts = existsSync(state) ? Number(readFileSync(state, 'utf8')) : 0;
      writeFileSync(state, String(starts + 1));
      if (starts > 0) this.initialize = () => err(`restarted as pid ${process.pid}; not answering initialize`);
      keepAlive();
    },
    capabilities: {},
    translate() {
      err('first process crashes');
      process.exit(3);
    },
  },
  'init-result': { // answers initialize with the result given as the next argument (JSON), over a valid one
    initialize(id) {
      answer(id, { protocol_version: 'mt-eval-bridge/1', method: { name: 'odd', method_id: 'odd' }, ...JSON.parse(process.argv[3]) });
    },
    capabilities: {},
    translate(id, entries, config) { answer(id, { results: reversed(entries, config) }); },
  },
  'refuse-init': {
    initialize(id) {
      send({ jsonrpc: '2.0', id, error: { code: -32005, message: 'unsupported protocol version', data: { supported: ['mt-eval-bridge/9'] } } });
    },
  },
  'null-id': { // answers "unreadable" as if its line were not JSON: an error without an id
    capabilities: { max_concurrency: 2, cancel: true },
    translate(id, entries, config) {
      if (entries[0].source === 'unreadable') send({ jsonrpc: '2.0', id: null, error: { code: -32700, message: 'not valid JSON: unreadable' } });
      else if (entries[0].source !== 'slow') answer(id, { results: reversed(entries, config) });
    },
  },
  'closes-stdout': {
    capabilities: { max_batch: 1, max_concurrency: 2 },
    setup: keepAlive,
    translate(id, entries, config) {
      if (entries[0].source === 'close') {
        err('closing stdout');
        closeSync(1);
        return;
      }
      if (entries[0].source !== 'slow') answer(id, { results: reversed(entries, config) });
    },
    end() {},
  },
};

const behaviour = modes[mode];
if (!behaviour) {
  err(`unknown mode ${mode}; modes: ${Object.keys(modes).join(', ')}`);
  process.exit(2);
}
behaviour.setup?.();

function handle(message) {
  const { id, method, params } = message;
  if (id === undefined) return;
  if (method === 'initialize') {
    if (behaviour.initialize) return behaviour.initialize(id);
    return answer(id, {
      protocol_version: 'mt-eval-bridge/1',
      method: { name: `misbehaving ${mode}`, method_id: `misbehaving-${mode}` },
      card: null,
      capabilities: behaviour.capabilities,
      guest: { name: 'misbehaving', version: '0', runtime: `node ${process.version}` },
    });
  }
  if (method === 'translate') return behaviour.translate(id, params.entries, params.config);
  if (method === 'shutdown') return behaviour.shutdown ? behaviour.shutdown(id) : answer(id, null);
  send({ jsonrpc: '2.0', id, error: { code: -32601, message: `method not found: ${method}` } });
}

let buffered = '';
process.stdin.setEncoding('utf8');
process.stdin.on('data', (text) => {
  const lines = (buffered + text).split('\n');
  buffered = lines.pop();
  for (const line of lines) if (line.trim()) handle(JSON.parse(line));
});
process.stdin.on('end', () => (behaviour.end ? behaviour.end() : process.exit(0)));
