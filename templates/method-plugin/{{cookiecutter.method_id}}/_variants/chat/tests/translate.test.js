// This plugin's own tests: `node --test` (needs only Node >= 20).
// The endpoint is a stand-in served by the test itself on 127.0.0.1: nothing leaves this machine.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { after, before, beforeEach, test } from 'node:test';

import { translate } from '../translate.js';

const CORPUS = readFileSync(new URL('../sample/corpus.jsonl', import.meta.url), 'utf8')
  .split('\n').filter((line) => line.trim()).map((line) => JSON.parse(line));
const REFERENCES = new Map(CORPUS.map((entry) => [entry.source, entry.reference]));

const requests = [];
let baseUrl;

/** Answers chat completions with the corpus reference; "!fail" gets an HTTP 503. */
const server = createServer((request, response) => {
  let text = '';
  request.setEncoding('utf8');
  request.on('data', (chunk) => { text += chunk; });
  request.on('end', () => {
    const body = JSON.parse(text);
    requests.push({ path: request.url, body, authorization: request.headers.authorization ?? null });
    const source = body.messages.at(-1).content;
    const [status, answer] = source === '!fail'
      ? [503, { error: { message: 'model overloaded' } }]
      : [200, {
        choices: [{ message: { role: 'assistant', content: ` ${REFERENCES.get(source) ?? '?'}\n` } }],
        usage: { prompt_tokens: body.messages[0].content.split(/\s+/).filter(Boolean).length, completion_tokens: 4 },
      }];
    response.writeHead(status, { 'Content-Type': 'application/json' });
    response.end(JSON.stringify(answer));
  });
});

before(async () => {
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${server.address().port}/v1`;
});
after(() => new Promise((resolve) => server.close(resolve)));
beforeEach(() => {
  requests.length = 0;
  delete process.env.MT_EVAL_LLM_API_KEY;
});

const config = (extra) => ({ source_lang: 'eng', target_lang: 'spa', timeout_s: 30, concurrency: 8, params: {}, ...extra });

test('the sample corpus through the endpoint', async () => {
  const results = await translate(CORPUS, config({ base_url: `${baseUrl}/`, model: 'stand-in', temperature: 0, seed: 7 }));
  assert.deepEqual(results.map((r) => r.predicted), CORPUS.map((entry) => entry.reference));
  assert.ok(results.every((r) => r.usage.completion_tokens === 4 && r.usage.prompt_tokens > 10 && !('error' in r)));
  assert.equal(requests.length, CORPUS.length);
  const request = requests.find((r) => r.body.messages.at(-1).content === CORPUS[0].source);
  assert.equal(request.path, '/v1/chat/completions');
  assert.equal(request.authorization, null);
  assert.deepEqual([request.body.model, request.body.temperature, request.body.seed], ['stand-in', 0, 7]);
  assert.ok(!('max_tokens' in request.body));
  const [system, user] = request.body.messages;
  assert.ok(system.role === 'system' && system.content.includes('eng') && system.content.includes('spa'));
  assert.ok(!system.content.includes('{source_lang}'));
  assert.deepEqual(user, { role: 'user', content: CORPUS[0].source });
});

test('a missing base_url or model fails each entry with the fix', async () => {
  const entries = [{ id: '1', source: 'Hello' }, { id: '2', source: 'Bye' }];
  const noUrl = await translate(entries, config({ model: 'm' }));
  assert.deepEqual(noUrl.map((r) => r.predicted), [null, null]);
  assert.ok(noUrl.every((r) => r.error.startsWith('config.base_url is not set')));
  const noModel = await translate(entries, config({ base_url: 'http://127.0.0.1:9/v1' }));
  assert.ok(noModel.every((r) => r.error.startsWith('config.model is not set')));
});

test('an HTTP error fails only its entry', async () => {
  const results = await translate([{ id: 'ok', source: 'The cat drinks water.' }, { id: 'bad', source: '!fail' }],
    config({ base_url: baseUrl, model: 'stand-in' }));
  assert.equal(results[0].predicted, 'El gato bebe agua.');
  assert.equal(results[1].predicted, null);
  assert.equal(results[1].error, `HTTP 503 from ${baseUrl}/chat/completions: model overloaded`);
});

test('the API key comes from the environment', async () => {
  process.env.MT_EVAL_LLM_API_KEY = 'test-key';
  await translate([{ id: '1', source: 'The cat drinks water.' }], config({ base_url: baseUrl, model: 'stand-in' }));
  assert.equal(requests[0].authorization, 'Bearer test-key');
});

test('an unreachable endpoint fails each entry', async () => {
  const probe = createServer();
  await new Promise((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address();
  await new Promise((resolve) => probe.close(resolve)); // a port nothing listens on
  const results = await translate([{ id: '1', source: 'Hello' }], config({ base_url: `http://127.0.0.1:${port}/v1`, model: 'm' }));
  assert.equal(results[0].predicted, null);
  assert.ok(results[0].error.startsWith(`cannot reach http://127.0.0.1:${port}/v1/chat/completions`));
});
