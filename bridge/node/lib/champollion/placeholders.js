// Placeholders a translation must keep verbatim — i18next {{name}} and $t(key), ICU {count}, printf
// %s / %1$d / %(name)s / %%, HTML and <Trans> tags, character references — are swapped for numbered
// sentinels ⟦n⟧ (which translators, Apertium included, pass through), then restored. A translation that
// loses, repeats or invents a sentinel is refused; the source's edge whitespace is kept. Same expressions
// as mt_eval.champollion.placeholders; bridge/vectors/champollion/placeholders.json holds the cases
// both sides pass.

const PLACEHOLDER = new RegExp([
  String.raw`\{\{[^{}]*\}\}`,
  String.raw`\$t\([^()]*\)`,
  String.raw`\{[ \t]*[A-Za-z0-9_.-]+[ \t]*(?:,[^{}]*)?\}`,
  String.raw`%(?:\([A-Za-z0-9_.-]+\))?(?:[0-9]+\$)?[-+0#]*[0-9]*(?:\.[0-9]+)?[sdifuxXeEgGc@]`,
  '%%',
  String.raw`<\/?[A-Za-z][A-Za-z0-9_:.-]*(?:[ \t\r\n]+[^<>]*?)?[ \t\r\n]*\/?>`,
  String.raw`<\/?[0-9]+[ \t]*\/?>`,
  '&(?:[A-Za-z][A-Za-z0-9]*|#[0-9]+|#[xX][0-9A-Fa-f]+);',
  '⟦[ \\t]*[0-9]+[ \\t]*⟧',
].join('|'), 'g');
const SENTINEL = /⟦[ \t]*([0-9]+)[ \t]*⟧/g;

/** {text, placeholders}: text with its placeholders replaced by ⟦0⟧, ⟦1⟧ … in order of appearance. */
export function protect(text) {
  const placeholders = [];
  const protectedText = text.replace(PLACEHOLDER, (match) => {
    placeholders.push(match);
    return `⟦${placeholders.length - 1}⟧`;
  });
  return { text: protectedText, placeholders };
}

/** The translation lost, repeated or invented a placeholder. */
export class PlaceholderError extends Error {
  constructor(message) {
    super(message);
    this.name = 'PlaceholderError';
  }
}

/** Put the placeholders back; throws PlaceholderError unless each sentinel appears exactly once. */
export function restore(translated, placeholders) {
  const seen = new Map();
  for (const match of translated.matchAll(SENTINEL)) {
    const index = Number(match[1]);
    seen.set(index, (seen.get(index) ?? 0) + 1);
  }
  const problems = [];
  placeholders.forEach((placeholder, index) => {
    const count = seen.get(index) ?? 0;
    seen.delete(index);
    if (count === 0) problems.push(`lost placeholder ${placeholder}`);
    else if (count > 1) problems.push(`repeated placeholder ${placeholder} (${count} times)`);
  });
  for (const index of [...seen.keys()].sort((a, b) => a - b)) problems.push(`invented placeholder ⟦${index}⟧`);
  if (problems.length) throw new PlaceholderError(`the translation ${JSON.stringify(translated)} ${problems.join('; ')}`);
  return translated.replace(SENTINEL, (_, index) => placeholders[Number(index)]);
}

/**
 * The translation with the source's leading and trailing whitespace instead of its own (translators
 * often drop or add a space at the edges, e.g. where a subject pronoun was dropped).
 */
export function keepEdges(source, translated) {
  const core = translated.replace(/^[ \t\r\n]+|[ \t\r\n]+$/g, '');
  if (!core) return translated;
  return source.match(/^[ \t\r\n]*/)[0] + core + source.match(/[ \t\r\n]*$/)[0];
}

/** Whether anything is left to translate once placeholders are out (a letter remains). */
export function hasWords(protectedText) {
  return /\p{L}/u.test(protectedText.text.replace(SENTINEL, ''));
}
