// A small rule-based English→Spanish translator: lexicon lookup, noun groups reordered, agreement.
//
// 1. Words are looked up in the bundled CC0 lexicon (lexicon.tsv), the longest phrase first; an English
//    plural the lexicon does not list is found through its singular (cats → cat, cities → city).
// 2. Noun groups — a determiner, adjectives (each maybe after adverbs) and a noun — are reordered the
//    Spanish way (determiner, noun, adjectives) and agree with the noun in gender and number:
//    "a new school" → "una escuela nueva", "these red cars" → "estos coches rojos".
// 3. Adjectives after a copula agree with the subject: "The door is big and red." → "La puerta es grande y
//    roja."; "de el" and "a el" contract to "del" and "al".
// 4. Unknown words, punctuation, spacing and newlines are kept; a capital first letter stays capital.
//
// pipeline.py beside this file behaves identically (the tests run both through the same corpus). Needs
// only Node (>= 20). Each result's metadata counts the words the lexicon did not know.
import { readFileSync } from 'node:fs';

export const name = 'Rules English→Spanish';

const WORD = /[\p{L}\p{N}]+(?:['’][\p{L}\p{N}]+)*/gu; // letters and digits, with inner apostrophes
const JOINED = /^[ \t\u00a0]+$/u; // a gap that words of one phrase or noun group may span
const SENTENCE_END = /[.!?\n]/u;
const CONTRACTION = /(?<![\p{L}\p{N}])([Dd]e|[Aa]) el(?![\p{L}\p{N}])/gu;

const kindOf = (tag) => tag.split('.')[0];
const chars = (text) => Array.from(text);
const lowerFirst = (text) => (chars(text)[0] ?? '').toLowerCase();
const isCapital = (text) => (chars(text)[0] ?? '') !== lowerFirst(text);

/** `english<TAB>spanish<TAB>tag` lines → Map {lowercased English words joined by one space → entry}. */
export function parseLexicon(text, label = 'lexicon.tsv') {
  const lexicon = new Map();
  text.split('\n').forEach((raw, index) => {
    const line = raw.endsWith('\r') ? raw.slice(0, -1) : raw;
    if (line.trim() === '' || line.startsWith('#')) return;
    const fields = line.split('\t');
    const key = (fields[0].toLowerCase().match(WORD) ?? []).join(' ');
    if (fields.length !== 3 || key === '' || fields[1].trim() === '' || fields[2].trim() === '') {
      throw new Error(`${label}:${index + 1}: expected "english<TAB>spanish<TAB>tag", got ${JSON.stringify(line)}`);
    }
    lexicon.set(key, { target: fields[1].trim(), tag: fields[2].trim() });
  });
  return lexicon;
}

/** The Spanish plural of a noun or adjective: casa → casas, ciudad → ciudades, feliz → felices. */
export function plural(word) {
  if (word.endsWith('ión')) return `${word.slice(0, -3)}iones`;
  if (word.endsWith('z')) return `${word.slice(0, -1)}ces`;
  const last = chars(word).at(-1) ?? '';
  return word + (last === '' || 'aeiouáéó'.includes(last) ? 's' : 'es');
}

/** An adjective agreeing in gender and number: nuevo → nueva, nuevas; grande → grandes. */
export function inflect(adjective, gender, number) {
  let word = adjective;
  if (gender === 'f') {
    if (word.endsWith('o')) word = `${word.slice(0, -1)}a`;
    else if (word.endsWith('or')) word += 'a';
  }
  return number === 'pl' ? plural(word) : word;
}

const capitalized = (text) => {
  const [head = '', ...rest] = chars(text);
  return head.toUpperCase() + rest.join('');
};

/** "de el" → "del", "A el" → "Al". */
const contract = (_match, word) => word[0] + ('Dd'.includes(word[0]) ? 'el' : 'l');

const unitKind = (unit) => (unit.entry ? kindOf(unit.entry.tag) : 'unknown');

export class RulesTranslator {
  constructor(lexicon) {
    this.lexicon = lexicon;
    this.longest = Math.max(1, ...[...lexicon.keys()].map((key) => key.split(' ').length));
  }

  /** The translation of `text` and how many of its words the lexicon did not know. */
  translate(text) {
    const spans = [...text.matchAll(WORD)].map((m) => [m.index, m.index + m[0].length]);
    const units = this.units(text, spans);
    const gap = (before) => {
      const end = before > 0 ? spans[units[before - 1].last][1] : 0;
      return before < units.length ? text.slice(end, spans[units[before].first][0]) : text.slice(end);
    };
    const out = [];
    let subject = null;
    let predicate = false;
    let index = 0;
    while (index < units.length) {
      out.push(gap(index));
      const starts = index === 0 || SENTENCE_END.test(gap(index));
      if (starts) {
        subject = null;
        predicate = false;
      }
      const end = this.nounGroup(units, index, gap);
      if (end !== null) {
        const [words, features] = this.renderGroup(text, spans, units.slice(index, end));
        subject = features;
        out.push(words[0]);
        words.slice(1).forEach((word, offset) => out.push(gap(index + offset + 1) + word));
        predicate = false;
        index = end;
        continue;
      }
      const unit = units[index];
      const { entry } = unit;
      const source = text.slice(spans[unit.first][0], spans[unit.last][1]);
      if (entry === null) {
        out.push(source);
        predicate = false;
      } else {
        const word = this.render(unit, predicate ? subject : null);
        const capital = isCapital(source) && (starts || source !== 'I'); // "I" is always capital
        out.push(capital ? capitalized(word) : word);
        const kind = unitKind(unit);
        if (kind === 'pron') {
          const [, gender, number] = entry.tag.split('.');
          subject = [gender, number];
        }
        predicate = ['cop', 'adv', 'conj', 'adj'].includes(kind) && (predicate || kind === 'cop');
      }
      index += 1;
    }
    out.push(gap(units.length));
    const unknown = units.filter((u) => u.entry === null).reduce((sum, u) => sum + u.last - u.first + 1, 0);
    return [out.join('').replace(CONTRACTION, contract), unknown];
  }

  units(text, spans) {
    const found = [];
    let index = 0;
    while (index < spans.length) {
      const unit = this.match(text, spans, index);
      found.push(unit);
      index = unit.last + 1;
    }
    return found;
  }

  match(text, spans, index) {
    for (let size = Math.min(this.longest, spans.length - index); size > 0; size--) {
      const chosen = spans.slice(index, index + size);
      if (chosen.slice(1).some((span, i) => !JOINED.test(text.slice(chosen[i][1], span[0])))) continue;
      const key = chosen.map(([start, end]) => text.slice(start, end).toLowerCase()).join(' ');
      const entry = this.lexicon.get(key);
      if (entry !== undefined) return { first: index, last: index + size - 1, entry, isPlural: entry.tag.endsWith('.pl') };
    }
    const word = text.slice(spans[index][0], spans[index][1]).toLowerCase();
    for (const [suffix, replacement] of [['ies', 'y'], ['es', ''], ['s', '']]) {
      if (chars(word).length > 3 && word.endsWith(suffix)) {
        const entry = this.lexicon.get(word.slice(0, -suffix.length) + replacement);
        if (entry !== undefined && kindOf(entry.tag) === 'n' && !entry.tag.endsWith('.pl')) {
          return { first: index, last: index, entry, isPlural: true };
        }
      }
    }
    return { first: index, last: index, entry: null, isPlural: false };
  }

  /** The end (exclusive) of the noun group starting at unit `start`, or null. */
  nounGroup(units, start, gap) {
    const joined = (at) => at < units.length && (at === start || JOINED.test(gap(at)));
    let at = start;
    if (joined(at) && unitKind(units[at]) === 'det') at += 1;
    for (;;) {
      let probe = at;
      while (joined(probe) && unitKind(units[probe]) === 'adv') probe += 1;
      if (joined(probe) && unitKind(units[probe]) === 'adj') {
        at = probe + 1;
        continue;
      }
      break;
    }
    return joined(at) && unitKind(units[at]) === 'n' ? at + 1 : null;
  }

  /** Spanish word order (determiner, noun, adverbs and adjectives) with agreement, and the features. */
  renderGroup(text, spans, group) {
    const noun = group[group.length - 1];
    const gender = noun.entry.tag.split('.')[1];
    const determiner = unitKind(group[0]) === 'det' ? group[0] : null;
    const pluralGroup = noun.isPlural || (determiner !== null && determiner.entry.tag === 'det.pl');
    const features = [gender, pluralGroup ? 'pl' : 'sg'];
    const modifiers = group.slice(determiner ? 1 : 0, -1);
    const ordered = [...(determiner ? [determiner] : []), noun, ...modifiers];
    const words = ordered.map((unit) => this.render(unit, features));
    const first = text.slice(spans[group[0].first][0], spans[group[0].last][1]);
    if (isCapital(first)) words[0] = capitalized(words[0]);
    return [words, features];
  }

  render(unit, features) {
    const { entry } = unit;
    const [gender, number] = features ?? ['m', 'sg'];
    const kind = unitKind(unit);
    if (kind === 'det') return entry.target.split('|')[(number === 'pl' ? 2 : 0) + (gender === 'f' ? 1 : 0)];
    if (kind === 'adj') return inflect(entry.target, gender, number);
    if (kind === 'n' && !entry.tag.endsWith('.pl') && (unit.isPlural || number === 'pl')) return plural(entry.target);
    return entry.target;
  }
}

const translator = new RulesTranslator(parseLexicon(readFileSync(new URL('./lexicon.tsv', import.meta.url), 'utf8')));

/**
 * Why the method declines an entry: a pair other than English→Spanish (a config without languages means
 * eng>spa), or a source without a word.
 */
export function abstention(source, config) {
  const pair = `${config?.source_lang || 'eng'}>${config?.target_lang || 'spa'}`;
  if (pair !== 'eng>spa') return `unsupported pair ${pair}: this method translates eng>spa only`;
  if (source.match(WORD) === null) {
    return 'the source has no word to translate (it is empty, or only symbols and control characters)';
  }
  return null;
}

export async function translate(entries, config) {
  return entries.map((entry) => {
    const started = performance.now();
    const reason = abstention(entry.source, config);
    if (reason !== null) {
      return { id: entry.id, abstained: true, abstain_reason: reason, latency_s: (performance.now() - started) / 1000 };
    }
    const [predicted, unknown] = translator.translate(entry.source);
    return { id: entry.id, predicted, latency_s: (performance.now() - started) / 1000, metadata: { unknown_words: unknown } };
  });
}
