// This plugin's own tests: `node --test` (needs only Node >= 20).
// The API is a stand-in served by the test itself on 127.0.0.1: nothing leaves this machine.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { after, before, beforeEach, test } from 'node:test';

import { translate } from '../translate.js';

const CORPUS = readFileSync(new URL('../sample/corpus.jsonl', import.meta.url), 'utf8')
  .split('\n').filter((line) => line.trim()).map((line) => JSON.parse(line));
const REFERENCES = new Map(CORPUS.map((entry) => [entry.source, entry.reference]));

const requests = [];
let apiUrl;

/** A LibreTranslate-style /translate answering with the corpus reference; "!fail" gets an HTTP 400. */
const server = createServer((request, response) => {
  let text = '';
  request.setEncoding('utf8');
  request.on('data', (chunk) => { text += chunk; });
  request.on('end', () => {
    const body = JSON.parse(text);
    requests.push({ path: request.url, body });
    const [status, answer] = body.q === '!fail'
      ? [400, { error: 'Invalid request: unsupported text' }]
      : [200, { translatedText: REFERENCES.get(body.q) ?? '?' }];
    response.writeHead(status, { 'Content-Type': 'application/json' });
    response.end(JSON.stringify(answer));
  });
});

before(async () => {
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  apiUrl = `http://127.0.0.1:${server.address().port}/translate`;
});
after(() => new Promise((resolve) => server.close(resolve)));
beforeEach(() => {
  requests.length = 0;
  delete process.env.MT_EVAL_TRANSLATION_API_KEY;
});

const config = (params) => ({ source_lang: 'eng', target_lang: 'spa', timeout_s: 30, concurrency: 8, params });

test('the sample corpus through the API', async () => {
  const results = await translate(CORPUS, config({ api_url: apiUrl }));
  assert.deepEqual(results.map((r) => r.predicted), CORPUS.map((entry) => entry.reference));
  assert.ok(results.every((r) => !('error' in r) && r.latency_s >= 0));
  assert.deepEqual(requests.find((r) => r.body.q === CORPUS[0].source),
    { path: '/translate', body: { q: CORPUS[0].source, source: 'eng', target: 'spa', format: 'text' } });
});

test('language codes can be mapped and the key comes from the environment', async () => {
  process.env.MT_EVAL_TRANSLATION_API_KEY = 'test-key';
  await translate([{ id: '1', source: 'The cat drinks water.' }], config({ api_url: apiUrl, language_codes: { eng: 'en' } }));
  assert.deepEqual(requests[0].body,
    { q: 'The cat drinks water.', source: 'en', target: 'spa', format: 'text', api_key: 'test-key' });
});

test('a missing or bad api_url fails each entry with the fix', async () => {
  const entries = [{ id: '1', source: 'Hello' }, { id: '2', source: 'Bye' }];
  const missing = await translate(entries, config({}));
  assert.deepEqual(missing.map((r) => r.predicted), [null, null]);
  assert.ok(missing.every((r) => r.error.startsWith('config.params["api_url"] is not set')));
  const bad = await translate(entries, config({ api_url: 'ftp://127.0.0.1/translate' }));
  assert.ok(bad.every((r) => r.error
    === 'config.params["api_url"] "ftp://127.0.0.1/translate" is not an http:// or https:// address'));
});

test('an HTTP error fails only its entry', async () => {
  const results = await translate([{ id: 'ok', source: 'The cat drinks water.' }, { id: 'bad', source: '!fail' }],
    config({ api_url: apiUrl }));
  assert.equal(results[0].predicted, 'El gato bebe agua.');
  assert.deepEqual([results[1].predicted, results[1].error],
    [null, `HTTP 400 from ${apiUrl}: Invalid request: unsupported text`]);
});

test('an unreachable API fails each entry', async () => {
  const probe = createServer();
  await new Promise((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address();
  await new Promise((resolve) => probe.close(resolve)); // a port nothing listens on
  const results = await translate([{ id: '1', source: 'Hello' }], config({ api_url: `http://127.0.0.1:${port}/translate` }));
  assert.equal(results[0].predicted, null);
  assert.ok(results[0].error.startsWith(`cannot reach http://127.0.0.1:${port}/translate`));
});
