// Locale codes ("en", "pt-BR") to the language codes of a method's pairs ("eng>spa", "en>es"), and the
// CLDR plural categories of a locale. The table is languages.json beside this file, which the Python
// side (mt_eval.champollion.languages) reads too. A locale's candidates, most specific first: ISO 639-3
// with subtags, ISO 639-1 with subtags, then both without (pt-BR → por-BR, pt-BR, por, pt). A plugin
// with supported_pairs gets the first supported combination (target candidates outermost); one that
// supports any pair gets the first candidates; sourceLanguage/targetLanguage override the mapping.
import { readFileSync } from 'node:fs';

export const LOCALE_PATTERN = /^[A-Za-z]{2,3}([-_][A-Za-z0-9]{2,8})*$/;
export const PLURAL_ORDER = Object.freeze(['zero', 'one', 'two', 'few', 'many', 'other']);

const TABLE = JSON.parse(readFileSync(new URL('./languages.json', import.meta.url), 'utf8'));
const ISO1_OF = new Map(Object.entries(TABLE.iso639).map(([one, three]) => [three, one]));

/** No language pair of the method fits the locales; the message says what was tried. */
export class LanguageError extends Error {
  constructor(message) {
    super(message);
    this.name = 'LanguageError';
  }
}

const isAlpha = (text) => /^[A-Za-z]+$/.test(text);

/** pt_br → pt-BR: "-" separators, lowercase language, uppercase region, titlecase script. */
export function normalizeLocale(locale) {
  const [first, ...rest] = locale.split(/[-_]/);
  return [first.toLowerCase(), ...rest.map((part) => {
    if (part.length === 2 && isAlpha(part)) return part.toUpperCase();
    if (part.length === 4 && isAlpha(part)) return part[0].toUpperCase() + part.slice(1).toLowerCase();
    return part.toLowerCase();
  })].join('-');
}

export const sameLocale = (a, b) => normalizeLocale(a) === normalizeLocale(b);

/** The language codes a locale may appear as in a method's pairs, most specific first. */
export function languageCandidates(locale) {
  const normal = normalizeLocale(locale);
  const dash = normal.indexOf('-');
  const primary = dash === -1 ? normal : normal.slice(0, dash);
  const rest = dash === -1 ? '' : normal.slice(dash + 1);
  const iso3 = primary.length === 2 ? TABLE.iso639[primary] ?? null : primary;
  const iso1 = primary.length === 2 ? primary : ISO1_OF.get(primary) ?? null;
  const found = [];
  for (const code of [iso3, iso1]) {
    if (code && rest && !found.includes(`${code}-${rest}`)) found.push(`${code}-${rest}`);
  }
  for (const code of [iso3, iso1]) {
    if (code && !found.includes(code)) found.push(code);
  }
  return found;
}

/**
 * [source_lang, target_lang] of the RunConfig for a locale pair; throws LanguageError when the
 * plugin's supportedPairs has none that fits.
 */
export function pairLanguages(sourceLocale, targetLocale, supportedPairs, { sourceLanguage, targetLanguage } = {}) {
  const sources = sourceLanguage ? [sourceLanguage] : languageCandidates(sourceLocale);
  const targets = targetLanguage ? [targetLanguage] : languageCandidates(targetLocale);
  if (!supportedPairs || supportedPairs.length === 0) return [sources[0], targets[0]];
  for (const target of targets) {
    for (const source of sources) {
      if (supportedPairs.includes(`${source}>${target}`)) return [source, target];
    }
  }
  const tried = targets.flatMap((target) => sources.map((source) => `${source}>${target}`)).join(', ');
  throw new LanguageError(`the method supports ${supportedPairs.join(', ')}; none fits ${sourceLocale}:${targetLocale} (tried ${tried})`);
}

/** The CLDR plural categories of a locale's language (kind: cardinal or ordinal); null if unknown. */
export function pluralCategories(locale, kind = 'cardinal') {
  const normal = normalizeLocale(locale);
  const primary = normal.split('-')[0];
  for (const key of [normal, primary, ISO1_OF.get(primary) ?? '']) {
    if (Object.hasOwn(TABLE.plurals, key)) return [...TABLE.plurals[key][kind === 'cardinal' ? 0 : 1]];
  }
  return null;
}

/** The CLDR version the plural table was taken from. */
export const PLURALS_CLDR_VERSION = TABLE.cldr;
