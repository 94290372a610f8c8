// decide from Node: the host (startGuest) through both guests, and loadMethodPlugin in process and through
// `mt-eval serve`, with every answer checked by the shared rules.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';

import { loadMethodPlugin, startGuest } from '../index.js';
import { nodeGuestCommand, pythonGuest, recordingLogger, repo, reverseFixture } from './helpers/guests.js';

const levels = [{ value: 0 }, { value: 1.5, label: 'mid' }, { value: 3 }];
const ROWS = [
  { id: 'r1', state: { prefer: 'b' }, questions: {
    q: { type: 'choice', instructions: '?', options: ['a', 'b', 'c'] },
    s: { type: 'score', instructions: '?', levels },
  } },
  { id: 'r2', state: { fail: true }, questions: { n: { type: 'noul', instructions: '?' } } },
  { id: 'r3', state: { prefer: 'true' }, questions: { n: { type: 'noul', instructions: '?' } } },
];
const near = (a, b) => Math.abs(a - b) < 1e-12;

function checkReverse(results) {
  assert.deepEqual(results.map((r) => r.id), ['r1', 'r2', 'r3']);
  const [first, failed, third] = results;
  assert.ok(near(first.answers.q.probabilities.b, 0.7) && near(first.answers.q.probabilities.a, 0.15));
  assert.ok(near(first.answers.s.expected, 1.5));
  assert.equal(failed.error, 'asked to fail');
  assert.deepEqual(failed.answers, {});
  assert.ok(near(third.answers.n.probabilities.true, 0.7));
  assert.ok(results.every((r) => r.latency_s > 0 && r.usage.prompt_tokens === 0));
}

const guests = { 'Node guest': { command: nodeGuestCommand } };
const python = pythonGuest();
guests['Python guest'] = python.skip ? { skip: python.skip } : { command: python.command };

for (const [name, { command, skip }] of Object.entries(guests)) {
  describe(`the Node host decides through the ${name}`, { skip }, () => {
    test('checked results in row order; a failed row keeps its error', async () => {
      const guest = await startGuest(command, { cwd: repo, logger: {}, closeStepMs: 500 });
      try {
        assert.deepEqual(guest.info.implements, ['translate', 'decide']);
        checkReverse(await guest.decide(ROWS));
        const [translated] = await guest.translate([{ id: 'e', source: 'ab' }], { source_lang: 'eng', target_lang: 'spa' });
        assert.equal(translated.predicted, 'spa:ba');
      } finally {
        await guest.close();
      }
    });

    test('a raising decide fails only its own rows; bad rows are refused before sending', async () => {
      const guest = await startGuest(command, { cwd: repo, logger: {}, closeStepMs: 500, batchSize: 1 });
      try {
        const results = await guest.decide([{ ...ROWS[2], id: 'boom', state: { raise: true } }, ROWS[2]]);
        assert.match(results[0].error, /asked to raise/);
        assert.equal(results[1].error, null);
        await assert.rejects(guest.decide([{ id: 'x', state: {}, questions: {} }]), /at least one question/);
        await assert.rejects(guest.decide([ROWS[2], ROWS[2]]), /appears twice/);
      } finally {
        await guest.close();
      }
    });
  });
}

test('a guest that only translates fails every decide row with the reason', async () => {
  const command = [...nodeGuestCommand.slice(0, 2), join(repo, 'examples', 'termbase-eng-spa')];
  const guest = await startGuest(command, { cwd: repo, logger: {}, closeStepMs: 500 });
  try {
    const [result] = await guest.decide(ROWS.slice(2));
    assert.equal(result.error, 'the guest does not implement decide (it implements translate)');
  } finally {
    await guest.close();
  }
});

test('a guest that only decides fails every translate entry with the reason, as the Python host does, sending nothing', async () => {
  const directory = mkdtempSync(join(tmpdir(), 'mt-eval-decide-'));
  writeFileSync(join(directory, 'judge.js'), 'export async function decide(rows) { return []; }\n');
  const { logger, text } = recordingLogger();
  const guest = await startGuest([...nodeGuestCommand.slice(0, 2), '--module', join(directory, 'judge.js')],
    { logger, closeStepMs: 500 });
  try {
    const results = await guest.translate([{ id: 'a', source: 'x' }, { id: 'b', source: 'y' }], { source_lang: 'eng', target_lang: 'spa' });
    assert.deepEqual(results.map((r) => [r.id, r.error]), ['a', 'b'].map((id) => [id, 'the guest does not implement translate (it implements decide)']));
    assert.equal(text(), '');
  } finally {
    await guest.close();
  }
});

test('answers that break the rules become question errors, within the host\'s tolerance', async () => {
  const directory = mkdtempSync(join(tmpdir(), 'mt-eval-decide-'));
  writeFileSync(join(directory, 'judge.js'), `export async function decide(rows) {
    return rows.map((row) => ({ id: row.id, answers: { n: { probabilities: { true: 0.6, false: 0.395 } } } }));
  }\n`);
  const command = [...nodeGuestCommand.slice(0, 2), '--module', join(directory, 'judge.js')];
  const strict = await startGuest(command, { logger: {}, closeStepMs: 500 });
  const loose = await startGuest(command, { logger: {}, closeStepMs: 500, tolerance: 0.01 });
  try {
    assert.deepEqual(strict.info.implements, ['decide']);
    const [refused] = await strict.decide(ROWS.slice(2));
    assert.match(refused.answers.n.error, /^probabilities sum to 0.995, not 1 \(within 0.001\)/);
    const [accepted] = await loose.decide(ROWS.slice(2));
    assert.deepEqual(accepted.answers.n, { probabilities: { true: 0.6, false: 0.395 } });
  } finally {
    await Promise.all([strict.close(), loose.close()]);
  }
});

describe('loadMethodPlugin decides', () => {
  test('with decide.js in this process', async () => {
    const plugin = await loadMethodPlugin(join(repo, 'examples', 'rules-grader'));
    try {
      assert.deepEqual(plugin.implements, ['decide']);
      const [result] = await plugin.decide([{ id: 'r', state: { source: 'The cat.', candidate: 'El gato.', reference: 'El gato.' },
        questions: { s: { type: 'score', instructions: '?', levels: [{ value: 0 }, { value: 4 }] } } }]);
      assert.equal(result.error, null);
      assert.ok(result.answers.s.expected > 3);
      await assert.rejects(plugin.translate([{ id: 'x', source: 'y' }], { source_lang: 'eng', target_lang: 'spa' }),
        /does not translate \(it implements decide\)/);
    } finally {
      await plugin.close();
    }
  });

  test('with a Python entry through mt-eval serve', { skip: python.skip }, async () => {
    const directory = mkdtempSync(join(tmpdir(), 'mt-eval-decide-'));
    writeFileSync(join(directory, 'pipeline.py'), readFileSync(join(reverseFixture, 'pipeline.py')));
    writeFileSync(join(directory, 'method.json'), JSON.stringify({ name: 'Reverse', entry_point: 'pipeline:ReverseMethod',
      implements: ['translate', 'decide'], dependency_class: 'S', dependencies: [] }));
    const { logger } = recordingLogger();
    const plugin = await loadMethodPlugin(directory, { mtEval: python.command[0], logger });
    try {
      assert.equal(plugin.runtime, 'python');
      checkReverse(await plugin.decide(ROWS, { batch_size: 1 }));
    } finally {
      await plugin.close();
    }
  });

  test('with the reverse fixture\'s decide.js in process, timed', async () => {
    const plugin = await loadMethodPlugin(reverseFixture);
    try {
      assert.equal(plugin.runtime, 'node');
      checkReverse(await plugin.decide(ROWS, { batch_size: 2 }));
    } finally {
      await plugin.close();
    }
  });
});

// A decide method giving numbers JSON cannot carry: each row's state holds them as strings ("NaN", "Infinity").
const NON_FINITE_JS = `const revive = (value) => (typeof value === 'string' && /^-?(NaN|Infinity)$/.test(value) ? Number(value)
  : value !== null && typeof value === 'object' ? Object.fromEntries(Object.entries(value).map(([k, v]) => [k, revive(v)])) : value);
export async function decide(rows) {
  return rows.map((row) => ({ id: row.id, latency_s: revive(row.state.latency), answers: revive(row.state.answers) }));
}
`;
const NON_FINITE_PY = `def revive(value):
    if isinstance(value, str) and value in ("NaN", "Infinity", "-Infinity"):
        return float(value.lower().replace("infinity", "inf"))
    return {k: revive(v) for k, v in value.items()} if isinstance(value, dict) else value


class Judge:
    async def decide(self, rows, config):
        return [{"id": row["id"], "latency_s": revive(row["state"].get("latency")), "answers": revive(row["state"]["answers"])}
                for row in rows]
`;
const noul = { type: 'noul', instructions: '?' };
const NON_FINITE_ROWS = [
  ['nan', {}, { n: { probabilities: { true: 'NaN', false: 1 } } }],
  ['inf', {}, { n: { probabilities: { true: 'Infinity', false: 0 } } }],
  ['expected', {}, { s: { probabilities: { 0: 0, 1: 1 }, expected: 'NaN' } }],
  ['latency', { latency: '-Infinity' }, { n: { probabilities: { true: 1, false: 0 } } }],
  ['beside', {}, { n: { probabilities: { true: 'NaN', false: 1 } }, m: { probabilities: { true: 0.6, false: 0.395 } } }],
].map(([id, state, answers]) => ({ id, state: { ...state, answers }, questions: Object.fromEntries(Object.keys(answers)
  .map((name) => [name, name === 's' ? { type: 'score', instructions: '?', levels: [{ value: 0 }, { value: 1 }] } : noul])) }));
const NON_FINITE_SAID = [
  ['nan', null, { n: 'the probability of "true" is NaN: each must be a number from 0 to 1' }],
  ['inf', null, { n: 'the probability of "true" is Infinity: each must be a number from 0 to 1' }],
  ['expected', null, { s: 'the expected value NaN does not match the probabilities, which give 1' }],
  ['latency', 'the result is malformed: "latency_s" must be a number >= 0, got -Infinity', {}],
  ['beside', null, { n: 'the probability of "true" is NaN: each must be a number from 0 to 1',
    m: 'probabilities sum to 0.995, not 1 (within 0.001): they are never renormalised; return a distribution that sums to 1' }],
];
const said = (results) => results.map((r) => [r.id, r.error, Object.fromEntries(Object.entries(r.answers).map(([name, a]) => [name, a.error]))]);

test('NaN and Infinity in decisions are said as in process, through the Node and the Python guest', async (t) => {
  const directory = mkdtempSync(join(tmpdir(), 'mt-eval-decide-'));
  t.after(() => rmSync(directory, { recursive: true, force: true }));
  writeFileSync(join(directory, 'judge.js'), NON_FINITE_JS);
  writeFileSync(join(directory, 'judge.py'), NON_FINITE_PY);
  const manifest = { name: 'Judge', implements: ['decide'], class: 'custom-plugin', dependency_class: 'S', dependencies: [] };
  writeFileSync(join(directory, 'method.json'), JSON.stringify({ ...manifest, node_entry: 'judge.js' }));
  const inProcess = await loadMethodPlugin(directory);
  try {
    assert.deepEqual(said(await inProcess.decide(NON_FINITE_ROWS)), NON_FINITE_SAID);
  } finally {
    await inProcess.close();
  }
  const guest = await startGuest([...nodeGuestCommand.slice(0, 2), '--module', join(directory, 'judge.js')], { logger: {}, closeStepMs: 500 });
  try {
    assert.deepEqual(said(await guest.decide(NON_FINITE_ROWS)), NON_FINITE_SAID);
  } finally {
    await guest.close();
  }
  if (python.skip) return t.diagnostic(`the Python guest was not tried: ${python.skip}`);
  const pythonPlugin = join(directory, 'python');
  mkdirSync(pythonPlugin);
  writeFileSync(join(pythonPlugin, 'judge.py'), NON_FINITE_PY);
  writeFileSync(join(pythonPlugin, 'method.json'), JSON.stringify({ ...manifest, entry_point: 'judge:Judge' }));
  const served = await loadMethodPlugin(pythonPlugin, { mtEval: python.command[0] });
  try {
    assert.equal(served.runtime, 'python');
    assert.deepEqual(said(await served.decide(NON_FINITE_ROWS)), NON_FINITE_SAID);
  } finally {
    await served.close();
  }
});
