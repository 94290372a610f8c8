// Unit tests of the shared wire pieces: line splitting, id recovery, message kinds, result shapes.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';

import {
  ErrorCode, LineSplitter, PROTOCOL_VERSION, classify, completeRunConfig, decodeUtf8, errorResponse, matchResults,
  normalizeResult, readMessageId,
} from '../index.js';
import { compactResult, translateAnswer } from '../lib/results.js';

function split(chunks, maxLineBytes = 64) {
  const events = [];
  const splitter = new LineSplitter({
    maxLineBytes,
    onLine: (line) => events.push(line.toString('utf8')),
    onOverflow: (overflow) => events.push(overflow),
  });
  for (const chunk of chunks) splitter.push(Buffer.from(chunk));
  splitter.end();
  return events;
}

describe('LineSplitter', () => {
  test('splits on newlines across chunk boundaries and drops a trailing \\r', () => {
    assert.deepEqual(split(['ab', 'c\nde\r\n', '\nf', 'g']), ['abc', 'de', '', 'fg']);
    assert.deepEqual(split(['x\r', '\n']), ['x']);
    assert.deepEqual(split(['in\rside\n']), ['in\rside']);
  });

  test('a line over the limit is reported as soon as it passes it, then skipped to its newline', () => {
    const long = `{"jsonrpc": "2.0", "id": 42, "result": "${'x'.repeat(100)}"}`;
    const events = split(['ok\n', long.slice(0, 30), long.slice(30, 80), long.slice(80), '\nafter\n']);
    assert.deepEqual(events, ['ok', { id: 42, bytes: 80, whole: false }, 'after']); // (80 bytes seen: at least)
    assert.deepEqual(split(['z'.repeat(65), '\n']), [{ id: undefined, bytes: 65, whole: false }]);
    assert.deepEqual(split(['z'.repeat(64), '\n']), ['z'.repeat(64)]);
  });

  test('an oversized line in one chunk with its newline does not swallow the next line', () => {
    const line = `{"id": "s-1", "p": "${'y'.repeat(80)}"}`;
    assert.deepEqual(split([`${line}\nnext\n`]), [{ id: 's-1', bytes: line.length, whole: true }, 'next']);
  });

  test('never holds more than the limit', () => {
    const splitter = new LineSplitter({ maxLineBytes: 1000, onLine: () => {}, onOverflow: () => {} });
    for (let i = 0; i < 100; i++) {
      splitter.push(Buffer.alloc(300, 97));
      assert.ok(splitter.pendingBytes <= 1000);
    }
  });
});

describe('readMessageId', () => {
  test('reads the top-level id, not one nested in params or results', () => {
    assert.equal(readMessageId('{"jsonrpc":"2.0","id":7,"result":{'), 7);
    assert.equal(readMessageId('{"jsonrpc":"2.0","result":{"results":[{"id":"a"}]},"id":"r-9"}'), 'r-9');
    assert.equal(readMessageId('{"result":{"results":[{"id":"a","predicted":"xx'), undefined);
    assert.equal(readMessageId('{"method":"x","params":{"note":"\\"id\\": 3"},"id" : -2}'), -2);
    assert.equal(readMessageId('{"id": null, "error": {}}'), null);
    assert.equal(readMessageId('[{"id": 1}]'), undefined);
    assert.equal(readMessageId(Buffer.from('  {"id": "é"}')), 'é');
  });
});

test('classify tells requests, notifications, responses and junk apart', () => {
  assert.equal(classify({ jsonrpc: '2.0', id: 1, method: 'translate' }), 'request');
  assert.equal(classify({ jsonrpc: '2.0', id: 'a', method: 'translate', params: {} }), 'request');
  assert.equal(classify({ jsonrpc: '2.0', method: 'cancel', params: { id: 1 } }), 'notification');
  assert.equal(classify({ jsonrpc: '2.0', id: 1, result: null }), 'response');
  assert.equal(classify({ jsonrpc: '2.0', id: null, error: { code: -32700, message: 'x' } }), 'response');
  for (const junk of [[1, 2], 'text', null, { id: 1, method: 'x' }, { jsonrpc: '2.0', id: 1.5, method: 'x' },
    { jsonrpc: '2.0', id: 1, result: 1, error: {} }]) {
    assert.equal(classify(junk), 'invalid', JSON.stringify(junk));
  }
});

test('constants and builders follow PROTOCOL.md', () => {
  assert.equal(PROTOCOL_VERSION, 'mt-eval-bridge/1');
  assert.equal(ErrorCode.NOT_INITIALIZED, -32006);
  assert.equal(ErrorCode.METHOD_FAILED, -32007);
  assert.deepEqual(errorResponse(undefined, ErrorCode.PARSE_ERROR, 'bad'), { jsonrpc: '2.0', id: null, error: { code: -32700, message: 'bad' } });
  assert.equal(decodeUtf8(Buffer.from([0xff])), null);
  assert.equal(decodeUtf8(Buffer.from('ok ✓')), 'ok ✓');
});

describe('results', () => {
  test('normalizeResult fills defaults and names the first bad field (bridge/vectors/contract/results.json has the rest)', () => {
    assert.deepEqual(normalizeResult({ id: 'a', error: 'failed' }, { defaultLatencyS: 0.25 }).result, { id: 'a', predicted: null,
      latency_s: 0.25, usage: { prompt_tokens: 0, completion_tokens: 0, total_tokens: null }, error: 'failed', tool_calls: [],
      tool_call_count: 0, metadata: {}, raw_predicted: null, cached: null, abstained: false, abstain_reason: null });
    assert.equal(normalizeResult({ id: 'a' }).problem, 'a result needs "predicted" or, when the entry failed, "error"');
    assert.equal(normalizeResult({ id: 'a', abstained: true, abstain_reason: 'empty source' }).result.abstained, true);
    assert.equal(normalizeResult({ id: 'a', abstained: true }).problem, 'an abstained result needs "abstain_reason" saying why');
    assert.equal(normalizeResult({ id: 'a', predicted: 'x', tool_calls: [{}, {}], tool_call_count: 1 }).problem,
      'tool_call_count is 1 but 2 tool calls are listed');
    assert.equal(normalizeResult({ id: 'a', latency_s: -1 }).problem, '$.latency_s: must be >= 0, got -1');
    assert.equal(normalizeResult({ id: 'a', tool_calls: ['x'] }).problem, '$.tool_calls[0]: expected an object, got the string "x"');
    assert.equal(normalizeResult({ id: 'a', metadata: [] }).problem, '$.metadata: expected an object, got an array');
    assert.equal(normalizeResult({ id: 7, predicted: 'x' }), null);
  });

  test('matchResults gives one result per entry in entry order', () => {
    const unknown = [];
    const matched = matchResults([{ id: 'a' }, { id: 'b' }, { id: 'c' }, { id: 'd' }],
      [{ id: 'c', predicted: 'C' }, { id: 'x' }, { id: 'a', predicted: 'A' }, { id: 'a', predicted: 'A2' }, { id: 'd' }],
      { onUnknown: (raw) => unknown.push(raw) });
    assert.deepEqual(matched.map((r) => [r.id, r.predicted, r.error]), [
      ['a', null, 'the method returned 2 results for this entry'],
      ['b', null, "the method returned no result for this entry, and results whose id matches no entry of the call (a result's id is its entry's id, a string)"],
      ['c', 'C', null],
      ['d', null, 'the method returned an unusable result: a result needs "predicted" or, when the entry failed, "error"'],
    ]);
    assert.deepEqual(unknown, [{ id: 'x' }]);
  });

  test('the guest\'s quick path for results already in shape answers as the full path would', () => {
    const items = [
      { id: 'a', predicted: 'x' }, { id: 'b', predicted: 'y', latency_s: 0.5, usage: { prompt_tokens: 3 } },
      { id: 'c', error: 'failed', metadata: {}, tool_calls: [] }, { id: 'd', predicted: 'z', usage: { prompt_tokens: 0, completion_tokens: 2 } },
      { id: 'e', predicted: 'w', cached: true, raw_predicted: ' w', tool_calls: [{ n: 1 }], tool_call_count: 1 },
    ];
    const entries = items.map((item) => ({ id: item.id }));
    const slow = items.map((item) => compactResult(normalizeResult(item, { defaultLatencyS: 0.25 }).result));
    assert.deepEqual(translateAnswer(items, entries, 0.25), { results: slow });
  });

  test('completeRunConfig checks the config against its schema and fills defaults', () => {
    assert.equal(completeRunConfig({ source_lang: 'eng', target_lang: 'pt-BR' }).batch_size, 16);
    assert.equal(completeRunConfig({ source_lang: 'eng' }), 'invalid config: $.target_lang: required field "target_lang" is missing');
    assert.equal(completeRunConfig(null), 'invalid config: expected an object, got null');
  });
});
