// Every conformance transcript against both reference guests serving the reverse fixture.
import { describe, test } from 'node:test';

import { conformanceDir, nodeGuestCommand, pythonGuest, repo } from './helpers/guests.js';
import { loadTranscripts, replay } from './helpers/replay.js';

const transcripts = loadTranscripts(conformanceDir);

describe('Node guest (mt-eval-guest) passes the conformance transcripts', { concurrency: true }, () => {
  for (const transcript of transcripts) {
    test(transcript.name, () => replay(nodeGuestCommand, transcript, { cwd: repo }));
  }
});

describe('Python guest (mt-eval serve) passes the conformance transcripts', { concurrency: true }, () => {
  const python = pythonGuest();
  for (const transcript of transcripts) {
    test(transcript.name, { skip: python.skip }, () => replay(python.command, transcript, { cwd: repo }));
  }
});
