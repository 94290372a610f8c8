// A termbase method (English → Spanish) in plain Node: no packages, nothing outside this directory.
//
// 1. Protect what must come through unchanged: URLs, e-mail addresses, placeholders ({name}, {{name}},
//    {0}, %s, %1$s, %(name)s, ${name}), inline code in backticks, markup tags (<b>, </a>, <br/>), and the
//    termbase's do-not-translate entries (target "=": product and brand names, matched case-sensitively
//    as whole words).
// 2. Translate the rest with the bundled CC0 termbase (termbase.tsv): phrases match whole words,
//    case-insensitively, the longest first; a phrase never spans punctuation or a protected span; a
//    capital first letter stays capital. Words the termbase does not know are kept.
// 3. Put the protected spans back exactly as they were.
//
// It abstains (abstained: true, with the reason) on a pair other than eng>spa and on a source without a word.
//
// config.params.terms, an object {"source phrase": "target"}, adds or overrides entries for one run
// ("=" protects). Each result's metadata lists the termbase entries applied and counts protected spans.
import { readFileSync } from 'node:fs';

export const name = 'Termbase English→Spanish';

const KEEP = '=';
const WORD = /[\p{L}\p{N}]+(?:['’][\p{L}\p{N}]+)*/gu;
const PROTECTED = new RegExp([
  String.raw`\bhttps?:\/\/[^\s<>"']*[^\s<>"'.,;:!?)\]}]`, // URLs, without trailing punctuation
  String.raw`[\w.+-]+@[\w-]+(?:\.[\w-]+)+`, // e-mail addresses
  String.raw`\{\{[^{}]*\}\}|\{[\w.:-]*\}|\$\{[^{}]*\}`, // {{name}} {name} {0} ${name}
  String.raw`%(?:\d+\$)?(?:\([\w.]+\))?[-+ #0]*\d*(?:\.\d+)?[sdifuxXeEgGc%@]`, // printf: %s %1$s %(name)s
  '`[^`\\n]+`', // inline code
  String.raw`<\/?[A-Za-z][\w:-]*(?:\s[^<>]*)?\/?>`, // markup tags
].join('|'), 'gu');

/** `source<TAB>target` lines → Map {lowercased source words joined by one space → target}. */
export function parseTermbase(text, label = 'termbase.tsv') {
  const entries = new Map();
  text.split('\n').forEach((raw, index) => {
    const line = raw.replace(/\r$/, '');
    if (line.trim() === '' || line.startsWith('#')) return;
    const [source, target] = line.split('\t');
    if (target === undefined || source.trim() === '' || target.trim() === '') {
      throw new Error(`${label}:${index + 1}: expected "source<TAB>target", got ${JSON.stringify(line)}`);
    }
    entries.set(source.trim(), target.trim());
  });
  return entries;
}

const escapeRegExp = (text) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
const wordsOf = (phrase) => phrase.toLowerCase().match(WORD)?.join(' ') ?? '';

/** The lookup tables of a termbase: phrases to translate, and terms to keep. */
export class Termbase {
  constructor(entries) {
    this.phrases = new Map();
    const keep = [];
    for (const [source, target] of entries) {
      if (target === KEEP) keep.push(source);
      else if (wordsOf(source) !== '') this.phrases.set(wordsOf(source), target);
    }
    this.longest = Math.max(1, ...[...this.phrases.keys()].map((key) => key.split(' ').length));
    keep.sort((a, b) => b.length - a.length);
    this.keep = keep.length === 0 ? null
      : new RegExp(`(?<![\\p{L}\\p{N}])(?:${keep.map(escapeRegExp).join('|')})(?![\\p{L}\\p{N}])`, 'gu');
  }

  /** Protected spans of `text`: [start, end] pairs, sorted, not overlapping (the leftmost wins). */
  protectedSpans(text) {
    const found = [...text.matchAll(PROTECTED), ...(this.keep ? text.matchAll(this.keep) : [])]
      .map((m) => [m.index, m.index + m[0].length])
      .sort((a, b) => a[0] - b[0] || b[1] - a[1]);
    const spans = [];
    for (const span of found) {
      if (spans.length === 0 || span[0] >= spans[spans.length - 1][1]) spans.push(span);
    }
    return spans;
  }

  /** `text` translated; `applied` collects the termbase entries used. */
  translate(text, applied) {
    const spans = this.protectedSpans(text);
    const out = [];
    let cursor = 0;
    for (const [start, end] of spans) {
      out.push(this.translateSegment(text.slice(cursor, start), applied), text.slice(start, end));
      cursor = end;
    }
    out.push(this.translateSegment(text.slice(cursor), applied));
    return { text: out.join(''), protected: spans.length };
  }

  translateSegment(text, applied) {
    const words = [...text.matchAll(WORD)].map((m) => [m.index, m.index + m[0].length]);
    const out = [];
    let cursor = 0;
    let index = 0;
    while (index < words.length) {
      const found = this.match(text, words, index);
      if (found === null) {
        index += 1;
        continue;
      }
      const [span, key] = found;
      const start = words[index][0];
      out.push(text.slice(cursor, start), withCapital(this.phrases.get(key), text.slice(start, words[index][1])));
      applied.push(key);
      cursor = words[index + span - 1][1];
      index += span;
    }
    out.push(text.slice(cursor));
    return out.join('');
  }

  match(text, words, index) {
    for (let span = Math.min(this.longest, words.length - index); span > 0; span--) {
      const chosen = words.slice(index, index + span);
      const gaps = chosen.slice(1).map((word, i) => text.slice(chosen[i][1], word[0]));
      if (gaps.some((gap) => gap.trim() !== '')) continue;
      const key = chosen.map(([start, end]) => text.slice(start, end).toLowerCase()).join(' ');
      if (this.phrases.has(key)) return [span, key];
    }
    return null;
  }
}

/** `target` with a capital first letter when `sourceWord` starts with one. */
export function withCapital(target, sourceWord) {
  const first = Array.from(sourceWord)[0] ?? '';
  if (first !== first.toLowerCase()) {
    const [head, ...rest] = Array.from(target);
    return head.toUpperCase() + rest.join('');
  }
  return target;
}

const BUNDLED = parseTermbase(readFileSync(new URL('./termbase.tsv', import.meta.url), 'utf8'));
const bundled = new Termbase(BUNDLED);

function termbaseFor(params) {
  const terms = params?.terms;
  if (terms === undefined || terms === null) return bundled;
  if (typeof terms !== 'object' || Array.isArray(terms)
      || !Object.entries(terms).every(([k, v]) => k.trim() !== '' && typeof v === 'string' && v.trim() !== '')) {
    throw new TypeError('params.terms must be an object mapping source phrases to non-empty target strings');
  }
  return new Termbase(new Map([...BUNDLED, ...Object.entries(terms).map(([k, v]) => [k.trim(), v.trim()])]));
}

export async function translate(entries, config) {
  let termbase;
  try {
    termbase = termbaseFor(config?.params);
  } catch (error) {
    return entries.map((entry) => ({ id: entry.id, predicted: null, error: error.message }));
  }
  const pair = `${config?.source_lang || 'eng'}>${config?.target_lang || 'spa'}`; // no languages given: eng>spa
  return entries.map((entry) => {
    const started = performance.now();
    const reason = pair !== 'eng>spa' ? `unsupported pair ${pair}: the termbase is eng>spa`
      : entry.source.match(WORD) === null ? 'the source has no word (empty, or only symbols and control characters)'
        : null;
    if (reason !== null) return { id: entry.id, abstained: true, abstain_reason: reason };
    const applied = [];
    const { text, protected: count } = termbase.translate(entry.source, applied);
    return {
      id: entry.id,
      predicted: text,
      latency_s: (performance.now() - started) / 1000,
      metadata: { terms: applied, protected: count },
    };
  });
}
