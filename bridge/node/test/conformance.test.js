// Every conformance transcript against both reference guests serving the reverse fixture (which
// implements translate and decide: a transcript written for both requests runs with each), the
// decide-only ones against a translate-only plugin, and every one against a decision-only plugin.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, test } from 'node:test';

import { conformanceDir, nodeGuestCommand, nodePackage, pythonGuest, repo } from './helpers/guests.js';
import { loadTranscripts, replay, requestsOf } from './helpers/replay.js';

const transcripts = loadTranscripts(conformanceDir);
// Each transcript once, or once per request its by_request steps are written for.
const runs = transcripts.flatMap((transcript) => {
  const requests = requestsOf(transcript);
  return requests.length ? requests.map((request) => ({ transcript, request, name: `${transcript.name} (${request})` }))
    : [{ transcript, request: null, name: transcript.name }];
});

describe('Node guest (mt-eval-guest) passes the conformance transcripts', { concurrency: true }, () => {
  for (const { transcript, request, name } of runs) {
    test(name, async (t) => {
      const { skipped } = await replay(nodeGuestCommand, transcript, { cwd: repo, request });
      if (skipped) t.skip(skipped);
    });
  }
});

describe('Python guest (mt-eval serve) passes the conformance transcripts', { concurrency: true }, () => {
  const python = pythonGuest();
  for (const { transcript, request, name } of runs) {
    test(name, { skip: python.skip }, async (t) => {
      const { skipped } = await replay(python.command, transcript, { cwd: repo, request });
      if (skipped) t.skip(skipped);
    });
  }
});

describe('a guest that only translates skips the decide transcripts and refuses decide', () => {
  const translateOnly = [process.execPath, join(nodePackage, 'bin', 'mt-eval-guest.js'), join(repo, 'examples', 'termbase-eng-spa')];
  for (const transcript of transcripts.filter((t) => t.requires === 'decide' || t.unless === 'decide')) {
    test(transcript.name, async () => {
      const { skipped } = await replay(translateOnly, transcript, { cwd: repo });
      assert.equal(skipped, transcript.requires ? 'the guest does not implement decide' : null);
    });
  }
});

describe('a guest that only decides runs the protocol transcripts with decide and skips the translate ones', { concurrency: true }, () => {
  const decideOnly = [process.execPath, join(nodePackage, 'bin', 'mt-eval-guest.js'), join(repo, 'examples', 'rules-grader')];
  for (const transcript of transcripts) {
    const translates = [transcript.requires ?? []].flat().includes('translate');
    test(transcript.name, async () => {
      const outcome = await replay(decideOnly, transcript, { cwd: repo });
      if (translates) assert.equal(outcome.skipped, 'the guest does not implement translate');
      else if (transcript.unless === 'decide') assert.equal(outcome.skipped, 'the guest implements decide');
      else assert.equal(outcome.skipped, null);
      assert.equal(outcome.request ?? null, requestsOf(transcript).length ? 'decide' : null);
    });
  }
  test('a protocol fault of a decide-only guest fails the transcript that shows it, by name', async () => {
    const [parseError] = transcripts.filter((t) => t.name === 'parse-error');
    const faulty = [process.execPath, join(nodePackage, 'test', 'guests', 'wrong-parse-error.mjs'), ...decideOnly];
    await assert.rejects(replay(faulty, parseError, { cwd: repo }),
      /^Error: parse-error \(decide\) step 3 \(expect\): \$\.error\.code: expected -32700, got -32600/);
  });
});
