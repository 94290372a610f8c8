// Every conformance transcript against both reference guests serving the reverse fixture (which
// implements translate and decide), and the decide-only ones against a translate-only plugin.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, test } from 'node:test';

import { conformanceDir, nodeGuestCommand, nodePackage, pythonGuest, repo } from './helpers/guests.js';
import { loadTranscripts, replay } from './helpers/replay.js';

const transcripts = loadTranscripts(conformanceDir);

describe('Node guest (mt-eval-guest) passes the conformance transcripts', { concurrency: true }, () => {
  for (const transcript of transcripts) {
    test(transcript.name, async (t) => {
      const { skipped } = await replay(nodeGuestCommand, transcript, { cwd: repo });
      if (skipped) t.skip(skipped);
    });
  }
});

describe('Python guest (mt-eval serve) passes the conformance transcripts', { concurrency: true }, () => {
  const python = pythonGuest();
  for (const transcript of transcripts) {
    test(transcript.name, { skip: python.skip }, async (t) => {
      const { skipped } = await replay(python.command, transcript, { cwd: repo });
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
