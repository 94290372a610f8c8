// The Node side passes the shared champollion vectors (bridge/vectors/champollion/), as the Python side does.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { test } from 'node:test';

import { decodeConfig, sourceLocale } from '../lib/champollion/config.js';
import { codeSha256 } from '../lib/code-hash.js';
import { formatJson, parseOrdered } from '../lib/champollion/json.js';
import {
  LanguageError, PLURALS_CLDR_VERSION, PLURAL_ORDER, languageCandidates, normalizeLocale, pairLanguages, pluralCategories,
} from '../lib/champollion/languages.js';
import { fill, layout, slots } from '../lib/champollion/locales.js';
import { fingerprintInput, hashText, methodFingerprint } from '../lib/champollion/lockfile.js';
import { PlaceholderError, hasWords, keepEdges, protect, readAsIcuForItsFile, restore } from '../lib/champollion/placeholders.js';
import { readTree } from '../lib/champollion/plan.js';
import { repo } from './helpers/guests.js';

const vectors = (name) => JSON.parse(readFileSync(join(repo, 'bridge', 'vectors', 'champollion', name), 'utf8'));

test('placeholders: protect, restore, refusals, ICU messages and edge whitespace', () => {
  const { protect: protectCases, restore: restoreCases, edges } = vectors('placeholders.json');
  for (const c of protectCases) {
    const p = protect(c.text, { icu: c.icuFile ?? false });
    assert.equal(p.text, c.protected, c.text);
    assert.deepEqual(p.placeholders, c.placeholders, c.text);
    assert.equal(hasWords(p), c.hasWords, c.text);
    assert.equal(p.icu, c.icu ?? null, c.text);
    assert.equal(p.problem, c.problem, c.text); // (a text that cannot be sent: its key fails)
    assert.equal(p.apostrophesDoubled ?? false, c.apostrophesDoubled ?? false, c.text);
    assert.equal(restore(p.text, p.placeholders, p.icu, p.apostrophesDoubled), c.text);
  }
  for (const c of restoreCases) {
    const run = () => restore(c.translated, c.placeholders, c.icu ?? null, c.apostrophesDoubled ?? false);
    if (c.error) assert.throws(run, (e) => e instanceof PlaceholderError && e.message === c.error, c.translated);
    else assert.equal(run(), c.restored);
  }
  for (const c of edges) assert.equal(keepEdges(c.source, c.translated), c.kept, JSON.stringify(c.source));
});

test('languages: candidates, pairs and plural categories', () => {
  const { candidates, pairs, plurals } = vectors('languages.json');
  for (const c of candidates) {
    assert.equal(normalizeLocale(c.locale), c.normalized);
    assert.deepEqual(languageCandidates(c.locale), c.candidates, c.locale);
  }
  for (const c of pairs) {
    const run = () => pairLanguages(c.source, c.target, c.supportedPairs, { sourceLanguage: c.sourceLanguage, targetLanguage: c.targetLanguage });
    if (c.error) assert.throws(run, LanguageError);
    else assert.deepEqual(run(), c.languages, `${c.source}:${c.target}`);
  }
  for (const c of plurals) assert.deepEqual(pluralCategories(c.locale, c.kind), c.categories, `${c.locale} ${c.kind}`);
});

test('the plural table matches Intl.PluralRules when Node carries the same CLDR version', { skip: process.versions.cldr !== PLURALS_CLDR_VERSION && `CLDR ${process.versions.cldr} here, the table is from ${PLURALS_CLDR_VERSION}` }, () => {
  const table = JSON.parse(readFileSync(join(repo, 'bridge', 'node', 'lib', 'champollion', 'languages.json'), 'utf8'));
  const ordered = (categories) => PLURAL_ORDER.filter((c) => categories.includes(c));
  for (const [locale, [cardinal, ordinal]] of Object.entries(table.plurals)) {
    assert.deepEqual(ordered(new Intl.PluralRules(locale).resolvedOptions().pluralCategories), cardinal, locale);
    assert.deepEqual(ordered(new Intl.PluralRules(locale, { type: 'ordinal' }).resolvedOptions().pluralCategories), ordinal, locale);
  }
});

test('JSON: read in written order, written as JSON.stringify(value, null, 2)', () => {
  for (const c of vectors('json.json').cases) assert.equal(formatJson(parseOrdered(c.input)), c.output, c.input);
});

test('JSON: a locale file\'s numbers read and written exactly as written', () => {
  for (const c of vectors('json.json').exactNumbers) {
    assert.equal(formatJson(parseOrdered(c.input, { exactNumbers: true })), c.output, c.input);
  }
});

test('locale files: layout with plurals, and fill', () => {
  for (const c of vectors('locales.json').cases) {
    const shape = layout(readTree('en.json', Buffer.from(c.source)), c.locale);
    assert.deepEqual(slots(shape).map((s) => [s.key, s.source, ...(s.collision ? [s.collision] : [])]), c.slots, c.source);
    assert.equal(formatJson(fill(shape, new Map(Object.entries(c.values)))), c.output, c.source);
  }
});

test('hashes, method fingerprints and plugin code hashes', () => {
  const { texts, lockSources, fingerprints, codeHashes } = vectors('hashing.json');
  for (const c of texts) assert.equal(hashText(c.text), c.hash);
  for (const c of lockSources) { // the SOURCE a lock records covers how the text is read
    const readAsIcu = c.fileHoldsIcu && readAsIcuForItsFile(c.text);
    assert.equal(readAsIcu, c.readAsIcu, c.text);
    assert.equal(hashText(c.text, { readAsIcu }), c.source, c.text);
  }
  for (const c of fingerprints) {
    const args = [c.methodId, c.codeSha256, c.sourceLanguage, c.targetLanguage, c.model, c.temperature];
    assert.equal(fingerprintInput(...args), c.input);
    assert.equal(methodFingerprint(...args), c.fingerprint);
  }
  const scratch = mkdtempSync(join(tmpdir(), 'mt-eval-code-hash-'));
  for (const [i, c] of codeHashes.entries()) {
    const root = join(scratch, String(i));
    mkdirSync(root);
    for (const [relative, text] of Object.entries(c.files)) {
      mkdirSync(dirname(join(root, relative)), { recursive: true });
      writeFileSync(join(root, relative), text);
    }
    for (const [relative, target] of Object.entries(c.links ?? {})) symlinkSync(target, join(root, relative));
    assert.equal(codeSha256(root), c.sha256, c.name);
  }
});

test('config: the same problems at the same paths, in the same order', () => {
  for (const c of vectors('config.json').cases) {
    const [value, problems] = decodeConfig(c.text, 'champollion.config.json');
    assert.deepEqual(problems.map((p) => [p.path, p.severity, p.code, p.message, p.hint]), c.problems, c.text);
    const valid = value !== null && !problems.some((p) => p.severity === 'error');
    assert.equal(valid, c.valid, c.text);
    assert.equal(valid ? sourceLocale(value) : null, c.inputLocale, c.text);
  }
});
