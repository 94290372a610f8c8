// The lock file, <localesDir>/.champollion-lock.json: per target file and key, "SOURCE METHOD" — the
// hash of the source text a value was translated from and the fingerprint of the method (its code, its settings)
// that translated it ("-" for a value that was there before the key was first seen: kept, and sent
// again only when its source changes). "values" records the hash of each value the method wrote (per target file
// and key), so that one a person edited since is told apart: it is kept as a value that was already there ("-"), and
// not replaced when the method changes (a section of its own, which a reader that does not know it leaves aside).
// As mt_eval.champollion.lockfile; hashes are the first 16 hex
// digits of SHA-256 over UTF-8 (bridge/vectors/champollion/hashing.json). SOURCE covers how the text is read, too: a
// text read as ICU only because its file holds ICU messages (Open {name} beside a plural: placeholders.js's
// readAsIcuForItsFile) is sent and written otherwise than as plain text, so its SOURCE is the hash of the byte 0xFF
// followed by the text in UTF-8 (readAsIcu), a byte no UTF-8 text holds: it never equals a plain text's hash. Such a
// key is sent again when its file gains its first ICU message, or loses its last ("now read as ICU", "no longer read
// as ICU"; a value adopted is kept). Every other text's SOURCE is the hash of the text.
import { createHash } from 'node:crypto';
import { FileProblem, isFile, readJson } from './files.js';
import { byCodeUnits, formatJson } from './json.js';

export const LOCK_FILE = '.champollion-lock.json';
export const LOCK_VERSION = 1;

const READ_AS_ICU = Buffer.from([0xff]); // before a text read as ICU only because of its file: never in UTF-8

/**
 * First 16 hex digits of the SHA-256 of text in UTF-8 (a lone surrogate counts as U+FFFD); with readAsIcu, of
 * READ_AS_ICU followed by it.
 */
export function hashText(text, { readAsIcu = false } = {}) {
  const hash = createHash('sha256');
  if (readAsIcu) hash.update(READ_AS_ICU);
  return hash.update(Buffer.from(text, 'utf8')).digest('hex').slice(0, 16);
}

/**
 * What identifies a method — its id and its code (../code-hash.js) — and the settings that shape its output:
 * [id, codeSha256, "src>tgt", model, temperature]. Editing the plugin's code changes it.
 */
export function fingerprintInput(methodId, codeSha256, sourceLang, targetLang, model, temperature) {
  return JSON.stringify([methodId, codeSha256, `${sourceLang}>${targetLang}`, model ?? null,
    temperature === null || temperature === undefined ? null : String(temperature)]);
}

export function methodFingerprint(methodId, codeSha256, sourceLang, targetLang, model, temperature) {
  return hashText(fingerprintInput(methodId, codeSha256, sourceLang, targetLang, model, temperature));
}

/** The lock file cannot be read; the message names it and how to recover. */
export class LockError extends Error {
  constructor(message) {
    super(message);
    this.name = 'LockError';
  }
}

/** Whether value is not the one the method wrote, as entry records it: a person edited it since. */
export function editedSince(entry, value) {
  return entry.method !== null && Boolean(entry.value) && entry.value !== hashText(value);
}

/** entry recording the hash of value, the value written, when the method wrote it (editedSince tells it apart). */
export function withValue(entry, value) {
  return entry.method === null ? entry : { source: entry.source, method: entry.method, value: hashText(value) };
}

/** files: Map(target file → Map(key → {source, method, value?})), in the file's order. */
export class Lock {
  constructor() {
    this.files = new Map();
  }

  toJson() {
    const names = [...this.files.keys()].sort(byCodeUnits);
    const files = new Map(names.map((name) => [name,
      new Map([...this.files.get(name)].map(([key, entry]) => [key, `${entry.source} ${entry.method ?? '-'}`]))]));
    const values = new Map(names.map((name) => [name, new Map([...this.files.get(name)]
      .filter(([, entry]) => entry.method && entry.value).map(([key, entry]) => [key, entry.value]))])
      .filter(([, hashes]) => hashes.size > 0));
    const sections = [['version', LOCK_VERSION], ['files', files]];
    return formatJson(new Map(values.size ? [...sections, ['values', values]] : sections));
  }
}

function entry(raw, value) {
  const parts = typeof raw === 'string' ? raw.split(' ') : [];
  if (parts.length !== 2 || !parts[0] || !parts[1]) return null; // only means the key is checked again
  const method = parts[1] === '-' ? null : parts[1];
  // (a value hash it cannot read only means an edit of that value is not told apart)
  return { source: parts[0], method, value: method && typeof value === 'string' && value ? value : null };
}

/** The lock file at path, or an empty lock when there is none. */
export function readLock(path) {
  const lock = new Lock();
  if (!isFile(path)) return lock;
  let data;
  try {
    data = readJson(path);
  } catch (error) {
    if (!(error instanceof FileProblem)) throw error;
    throw new LockError(`${path}: cannot read the lock file: ${error.what}; ${error.fix ? `${error.fix}, or delete` : 'delete'} it to re-check every key`);
  }
  if (!(data instanceof Map) || data.get('version') !== LOCK_VERSION || !(data.get('files') instanceof Map)) {
    throw new LockError(`${path}: not a version ${LOCK_VERSION} lock file; delete it to re-check every key`);
  }
  for (const [name, entries] of data.get('files')) {
    if (!(entries instanceof Map)) {
      throw new LockError(`${path}: files[${JSON.stringify(name)}] is not an object; delete the lock file to re-check every key`);
    }
    const values = data.get('values') instanceof Map ? data.get('values').get(name) : undefined;
    const kept = new Map();
    for (const [key, raw] of entries) {
      const found = entry(raw, values instanceof Map ? values.get(key) : undefined);
      if (found) kept.set(key, found);
    }
    lock.files.set(name, kept);
  }
  return lock;
}
