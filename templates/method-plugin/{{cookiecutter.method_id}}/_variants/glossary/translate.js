// A glossary method: longest-match phrase lookup; words the glossary does not know are kept.
//
// Where the glossary comes from is what method.json declares for the dependency with id "glossary":
//   "access": "bundled"   glossary.tsv in this directory;
//   "access": "mirrored"  the file at config.params.artifact_path (absolute, or relative to the current
//                         directory), else the sample copy glossary.tsv here; its sha256 must equal the
//                         dependency's "pin" ("sha256:<hex>"), so a run never uses another artifact.
//
// pipeline.py beside this file behaves identically. Needs only Node (>= 20), no packages.
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { basename, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const GLOSSARY_ID = 'glossary';
const GLOSSARY_FILE = 'glossary.tsv';
const READ_ERRORS = { ENOENT: 'no such file', EISDIR: 'it is a directory', EACCES: 'permission denied' };
const WORD = /[\p{L}\p{N}]+(?:['’][\p{L}\p{N}]+)*/gu; // letters and digits, with inner apostrophes
const DIRECTORY = fileURLToPath(new URL('.', import.meta.url));

/** The glossary cannot be used; every entry of the request fails with this message. */
export class GlossaryError extends Error {}

/** `source<TAB>target` lines → Map {lowercased source words joined by one space → target}. */
export function parseGlossary(text, label) {
  const glossary = new Map();
  text.split('\n').forEach((raw, index) => {
    const line = raw.endsWith('\r') ? raw.slice(0, -1) : raw;
    if (line.trim() === '' || line.trimStart().startsWith('#')) return;
    const tab = line.indexOf('\t');
    const key = tab < 0 ? '' : line.slice(0, tab).toLowerCase().split(/\s+/).filter(Boolean).join(' ');
    const target = tab < 0 ? '' : line.slice(tab + 1).trim();
    if (tab < 0 || key === '' || target === '') {
      throw new GlossaryError(`${label}:${index + 1}: expected "source<TAB>target", got ${JSON.stringify(line)}`);
    }
    glossary.set(key, target);
  });
  return glossary;
}

/** `target` with a capital first letter when `sourceWord` starts with one. */
export function withCapital(target, sourceWord) {
  const first = Array.from(sourceWord)[0] ?? '';
  if (first !== first.toLowerCase() && target !== '') {
    const [head, ...rest] = Array.from(target);
    return head.toUpperCase() + rest.join('');
  }
  return target;
}

/** A parsed glossary and the longest-match lookup over it. */
export class Glossary {
  constructor(entries) {
    this.entries = entries;
    this.longest = Math.max(1, ...[...entries.keys()].map((key) => key.split(' ').length));
  }

  /** The text with every known phrase replaced (longest first), and how many were replaced. */
  translate(text) {
    const words = [...text.matchAll(WORD)].map((m) => [m.index, m.index + m[0].length]);
    const out = [];
    let cursor = 0;
    let index = 0;
    let used = 0;
    while (index < words.length) {
      const found = this.match(text, words, index);
      if (found === null) {
        index += 1;
        continue;
      }
      const [span, target] = found;
      const start = words[index][0];
      const end = words[index + span - 1][1];
      out.push(text.slice(cursor, start), withCapital(target, text.slice(start, words[index][1])));
      cursor = end;
      index += span;
      used += 1;
    }
    out.push(text.slice(cursor));
    return [out.join(''), used];
  }

  match(text, words, index) {
    for (let span = Math.min(this.longest, words.length - index); span > 0; span--) {
      const chosen = words.slice(index, index + span);
      const gaps = chosen.slice(1).map((word, i) => text.slice(chosen[i][1], word[0]));
      if (gaps.some((gap) => gap.trim() !== '')) continue; // a phrase never spans punctuation
      const key = chosen.map(([start, end]) => text.slice(start, end).toLowerCase()).join(' ');
      if (this.entries.has(key)) return [span, this.entries.get(key)];
    }
    return null;
  }
}

function readManifest() {
  const text = readFileSync(resolve(DIRECTORY, 'method.json'), 'utf8');
  return JSON.parse(text.replace(/^\uFEFF/, '')); // (an editor's byte-order mark too, as in pipeline.py)
}

function readDependency(manifest) {
  const found = (manifest.dependencies ?? []).filter((d) => d && d.id === GLOSSARY_ID);
  if (found.length === 0) throw new GlossaryError(`method.json lists no dependency with id "${GLOSSARY_ID}"`);
  return found[0];
}

const manifest = readManifest();
const dependency = readDependency(manifest);
const pairs = (manifest.supported_pairs ?? []).filter((p) => typeof p === 'string');
const loaded = new Map();

function glossaryPath(params) {
  const given = params?.artifact_path;
  if (dependency.access !== 'mirrored' || given === undefined || given === null || given === '') {
    return resolve(DIRECTORY, GLOSSARY_FILE);
  }
  if (typeof given !== 'string') {
    throw new GlossaryError(`config.params["artifact_path"] must be a file path, got ${JSON.stringify(given)}`);
  }
  return resolve(given);
}

function loadGlossary(params) {
  const path = glossaryPath(params);
  if (loaded.has(path)) return loaded.get(path);
  let data;
  try {
    data = readFileSync(path);
  } catch (error) {
    const reason = READ_ERRORS[error.code] ?? error.code ?? error.message;
    throw new GlossaryError(`cannot read the glossary ${path}: ${reason}`);
  }
  const pin = dependency.pin;
  if (pin !== undefined && pin !== null) {
    const digest = `sha256:${createHash('sha256').update(data).digest('hex')}`;
    if (digest !== pin) {
      throw new GlossaryError(`${path} has ${digest}, but method.json pins "${pin}": use the pinned copy, `
        + 'or review the new version and update the pin');
    }
  }
  let text;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(data);
  } catch {
    throw new GlossaryError(`${path} is not UTF-8 text`);
  }
  const glossary = new Glossary(parseGlossary(text, basename(path)));
  loaded.set(path, glossary);
  return glossary;
}

/** An abstention: the entry is not this method's to translate (what a run's negative controls expect). */
function declined(entry, reason) {
  return { id: entry.id, abstained: true, abstain_reason: reason };
}

export async function translate(entries, config) {
  const pair = `${config.source_lang}>${config.target_lang}`;
  if (pairs.length > 0 && !pairs.includes(pair)) { // never guess another language: decline (a negative control)
    return entries.map((entry) => declined(entry, `the glossary translates ${pairs.join(', ')}, not ${pair}`));
  }
  let glossary;
  try {
    glossary = loadGlossary(config.params ?? {});
  } catch (error) {
    if (!(error instanceof GlossaryError)) throw error;
    return entries.map((entry) => ({ id: entry.id, predicted: null, error: error.message }));
  }
  return entries.map((entry) => {
    // empty, or no letter or digit: nothing to translate
    if (entry.source.match(WORD) === null) return declined(entry, 'no word to translate');
    const started = performance.now();
    const [predicted, used] = glossary.translate(entry.source);
    return {
      id: entry.id,
      predicted,
      latency_s: (performance.now() - started) / 1000,
      metadata: { glossary_matches: used },
    };
  });
}
