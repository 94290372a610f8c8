// Placeholders a translation must keep verbatim — i18next {{name}} (and ${{amount}}, a $ written before one) and
// $t(key), ICU {count}, auto-numbered {} / {:.2f} / {!r}, Polyglot's %{name}, ${name}, vue-i18n's @:key, printf
// %s / %1$d / %*d / %.*f / %(name)s / %%, HTML and <Trans> tags, character references, a Markdown link's
// (destination) — are swapped for numbered sentinels ⟦n⟧ (which translators, Apertium included, pass through),
// then restored. A translation that loses, repeats or invents a sentinel, puts a closing tag before its opening
// tag, or reorders printf conversions or auto-numbered fields that take their arguments in the order written (%s,
// %*d; {}, {:.2f}: reordered), is refused; the source's edge whitespace is kept. Same expressions
// as mt_eval.champollion.placeholders; bridge/vectors/champollion/placeholders.json holds the cases
// both sides pass. A text that holds an ICU plural, select or selectordinal message (./icu.js) has its
// syntax ("{count, plural, one {", "} other {", "}}") and its arguments ("#", "{name}") protected as
// placeholders, so that only the texts of its branches are translated; the translation must then read as
// an ICU message with the same skeleton (argument names, keywords, selectors), or it is refused too. An
// apostrophe the translation puts right before a protected {, } or # is doubled as it is restored (d'{name}
// becomes d''{name}), so that ICU shows it rather than reading it as the start of quoted text; the other way, an
// apostrophe the message escapes (It''s) is sent as the apostrophe it stands for (It's). A text with simple
// arguments only (It''s {name}) cannot be told from another format's by itself: protect(text, {icu: true}) reads
// it as an ICU message all the same (the text of a locale file that holds ICU messages: holdsIcuMessage), with
// the same rules for its apostrophes.
import { IcuSyntaxError, IcuTooDeep, parse } from './icu.js';

// Every alternative starts with one fixed character (not a class, an optional one or a lookbehind), so the scan
// skips the text between such characters at once: one that did not made every string's scan ten times slower.
// {name}, {0}, {count, number}, {amount:.2f}, {0!r}, Angular's {$INTERPOLATION}; auto-numbered {}, {:.2f}, {!r}
const ARGUMENT = String.raw`\{(?:[ \t]*\$?[A-Za-z0-9_.-]+[ \t]*(?:[,:!][^{}]*)?|[:!][^{}]*)?\}`;
const PRINTF_WIDTH = String.raw`(?:\*(?:[0-9]+\$)?|[0-9]*)(?:\.(?:\*(?:[0-9]+\$)?|[0-9]+))?`; // 10 .2 * .* *2$
const PRINTF_LENGTH_AND_TYPE = '(?:hh|h|ll|l|L|q|j|z|t)?[sdifuxXeEgGc@]';
const PLACEHOLDER = new RegExp([
  String.raw`\{\{[^{}]*\}\}`,
  String.raw`\$\{\{[^{}]*\}\}`, // ${{amount}}: a $ written before {{amount}}
  String.raw`\$t\([^()]*\)`,
  ARGUMENT, `%${ARGUMENT}`, String.raw`\$` + ARGUMENT, // {name}, %{name}, ${name}
  String.raw`@(?:\.[A-Za-z]+)?:(?:\([^()]*\)|\{[^{}]*\}|[A-Za-z0-9_|/.-]*[A-Za-z0-9_|/-])`, // vue-i18n @:key
  String.raw`\((?<=\]\()[^() \t\r\n]*(?:[ \t]+"[^"\r\n]*")?\)`, // a Markdown link's (url "title")
  String.raw`%(?:\([A-Za-z0-9_.-]+\))?(?:[0-9]+\$)?[-+0#]*` + PRINTF_WIDTH + PRINTF_LENGTH_AND_TYPE, // %s %1$s %*d
  '%%',
  String.raw`<\/?[A-Za-z][A-Za-z0-9_:.-]*(?:[ \t\r\n]+[^<>]*?)?[ \t\r\n]*\/?>`,
  String.raw`<\/?[0-9]+[ \t]*\/?>`,
  '&(?:[A-Za-z][A-Za-z0-9]*|#[0-9]+|#[xX][0-9A-Fa-f]+);',
  '⟦[ \\t]*[0-9]+[ \\t]*⟧',
].join('|'), 'g');
const SENTINEL = /⟦[ \t]*([0-9]+)[ \t]*⟧/g;
const TAG = /^<(\/?)([A-Za-z][A-Za-z0-9_:.-]*|[0-9]+)(?:[ \t\r\n][^<>]*)?>$/; // a placeholder that is a tag
// a printf conversion that takes the next arguments (%s, %.2f, %ld, %*d), not a numbered (%1$s) or named (%(name)s)
// one; a format field that does so ({}, {:.2f}, {!r}), not a numbered ({0}) or named ({name}) one
const IN_TURN = new RegExp(String.raw`^%[-+0#]*(?:\*|[0-9]*)(?:\.(?:\*|[0-9]+))?` + PRINTF_LENGTH_AND_TYPE + '$');
const AUTO_NUMBERED = /^\{(?:[:!][^{}]*)?\}$/;

/**
 * {text, placeholders, icu, apostrophesDoubled}: text with its placeholders replaced by ⟦0⟧, ⟦1⟧ … in order of
 * appearance, the skeleton of its ICU plural, select and selectordinal messages (null: it is not read as ICU; "":
 * an ICU message without any), and whether its ICU text escaped apostrophes (It''s), sent unescaped, for restore to
 * double again. With icu, a text that reads as ICU is an ICU message even without a plural, select or selectordinal
 * message (It''s {name}).
 */
export function protect(text, { icu = false } = {}) {
  const placeholders = [];
  const swap = (match) => {
    placeholders.push(match);
    return `⟦${placeholders.length - 1}⟧`;
  };
  let message;
  try {
    message = icuMessage(text, true, icu);
  } catch (error) {
    if (!(error instanceof IcuTooDeep)) throw error;
    return { text, placeholders, icu: null, problem: `${error.message}: it cannot be translated with its placeholders kept; split it` };
  }
  if (message === null) return { text: text.replace(PLACEHOLDER, swap), placeholders, icu: null };
  let apostrophesDoubled = false;
  const protectedText = message.parts.map(([kind, piece]) => {
    if (kind !== 'text') return swap(piece);
    const sent = piece.replace(PLACEHOLDER, swap);
    const unescaped = apostrophesUnescaped(sent, piece);
    apostrophesDoubled ||= unescaped !== sent;
    return unescaped;
  }).join('');
  return { text: protectedText, placeholders, icu: message.skeleton, apostrophesDoubled };
}

// text as an ICU message, when it holds a plural, select or selectordinal one (or, simple, any) and reads as ICU
// (refuseDeep: throw IcuTooDeep for one nested too deep, rather than null).
function icuMessage(text, refuseDeep = false, simple = false) {
  if (!simple && !text.includes('plural') && !text.includes('select')) return null;
  let message;
  try {
    message = parse(text);
  } catch (error) {
    if (!(error instanceof IcuSyntaxError) || (refuseDeep && error instanceof IcuTooDeep)) throw error;
    return null;
  }
  return message.skeleton || simple ? message : null;
}

/**
 * Whether text holds an ICU plural, select or selectordinal message that reads as ICU: a locale file with one is
 * written in ICU, so its other texts are ICU messages too (protect's icu).
 */
export function holdsIcuMessage(text) {
  return icuMessage(text) !== null;
}

/**
 * Whether text, in a locale file that holds ICU messages, is read as ICU only because of its file, and read otherwise
 * than as plain text: it reads as an ICU message without a plural, select or selectordinal message of its own, and
 * holds a { or an apostrophe (ICU reads nothing else apart: Hello is sent, and written, the same either way).
 */
export function readAsIcuForItsFile(text) {
  if (!text.includes('{') && !text.includes("'")) return false;
  const message = icuMessage(text, false, true);
  return message !== null && !message.skeleton;
}

const OPENS_QUOTE = /'[{}#|]/; // an apostrophe that starts quoted text in ICU

// A text piece of an ICU message as it is sent (sent: its placeholders swapped), with each apostrophe written as
// ICU escapes it (It''s) made the apostrophe it stands for (It's), so the method reads the text a user sees.
// restore doubles them again (apostrophesDoubled). A piece that quotes text ('{'), or where the unescaped text would
// hold two apostrophes in a row, is sent as it is.
function apostrophesUnescaped(sent, piece) {
  if (!sent.includes("''") || OPENS_QUOTE.test(piece.replaceAll("''", ''))) return sent;
  const unescaped = sent.replaceAll("''", "'");
  return unescaped.includes("''") ? sent : unescaped;
}

/** The translation lost, repeated or invented a placeholder, or changed an ICU message's skeleton. */
export class PlaceholderError extends Error {
  constructor(message) {
    super(message);
    this.name = 'PlaceholderError';
  }
}

/**
 * A closing tag the translation puts before its opening one (</b>…<b>), for each pair of the source's tags (an
 * opening tag and the closing tag of its name that ends it; a tag never closed, such as <br>, pairs with nothing).
 * Tags and arguments may otherwise move: word order differs between languages.
 */
function tagsReversed(translated, placeholders) {
  const where = new Map([...translated.matchAll(SENTINEL)].map((m) => [Number(m[1]), m.index]));
  const opened = [];
  const problems = [];
  placeholders.forEach((placeholder, index) => {
    const tag = TAG.exec(placeholder);
    if (tag === null || placeholder.endsWith('/>')) return;
    const name = tag[2].toLowerCase();
    if (!tag[1]) {
      opened.push([name, index]);
      return;
    }
    const depth = opened.map(([n]) => n).lastIndexOf(name);
    if (depth < 0) return;
    const start = opened[depth][1];
    opened.length = depth;
    if (where.get(index) < where.get(start)) {
      problems.push(`put the closing tag ${placeholder} before its opening tag ${placeholders[start]}`);
    }
  });
  return problems;
}

/**
 * The source's printf conversions that take their arguments in the order written (%d … %s), and so its
 * auto-numbered format fields ({} … {}), when the translation does not keep their order: each would be given
 * another's argument. Numbered ones (%1$d, {0}) may move.
 */
function reordered(translated, placeholders) {
  const where = new Map([...translated.matchAll(SENTINEL)].map((m) => [Number(m[1]), m.index]));
  const problems = [];
  for (const [kind, numbered] of [[IN_TURN, printfNumbered], [AUTO_NUMBERED, fieldsNumbered]]) {
    const inTurn = placeholders.flatMap((placeholder, index) => (kind.test(placeholder) ? [index] : []));
    if (inTurn.every((index, at) => at === 0 || where.get(inTurn[at - 1]) < where.get(index))) continue;
    const written = inTurn.map((index) => placeholders[index]);
    problems.push(`reordered ${written.join(' and ')}, which take their arguments in the order they are written `
      + `(numbered, ${numbered(written).join(' and ')}, they may move)`);
  }
  return problems;
}

// printf conversions that take their arguments in turn, numbered as they take them: %s %*d gives %1$s %3$*2$d (a *
// width or precision takes an argument before its conversion does).
function printfNumbered(conversions) {
  let taken = 0;
  return conversions.map((conversion) => {
    const body = conversion.slice(1).replaceAll('*', () => `*${++taken}$`);
    return `%${++taken}$${body}`;
  });
}

// Auto-numbered format fields, numbered: {} {:.2f} {!r} gives {0} {1:.2f} {2!r}.
const fieldsNumbered = (fields) => fields.map((field, number) => `{${number}${field.slice(1)}`);

// An apostrophe of the translation's text right before a sentinel: not one of a pair already, nor the first of two
// around it ('{literal}', a literal the source quoted and the translation kept)
const QUOTES = ['{', '}', '#', '|']; // what an apostrophe before it starts quoted text with, in ICU

/**
 * The translation of an ICU message with each apostrophe of its text that would start quoted text once the
 * placeholder after it is back ({, }, # or |) doubled: ICU reads '' as the apostrophe the translator wrote
 * (French d'{name}, l'#), where '{ would quote the argument away. The text is read as ICU reads it: an apostrophe
 * that closes quoted text ('#' before {id}) is left alone, and so is one that quotes a placeholder whole ('⟦0⟧').
 */
function apostrophesKept(translated, placeholders, doubled = false) {
  if (!translated.includes("'")) return translated;
  const sentinel = new RegExp(SENTINEL.source, 'y');
  let out = '';
  let quoted = false;
  for (let at = 0; at < translated.length;) {
    const char = translated[at];
    if (char !== "'") {
      out += char;
      at += 1;
    } else if (translated.startsWith("''", at)) { // an apostrophe, written as ICU writes it
      out += "''";
      at += 2;
    } else if (quoted || QUOTES.includes(translated.slice(at + 1, at + 2))) { // closes quoted text, or opens it
      quoted = !quoted;
      out += "'";
      at += 1;
    } else {
      sentinel.lastIndex = at + 1;
      const found = sentinel.exec(translated);
      let opens = found !== null && QUOTES.includes(placeholders[Number(found[1])].slice(0, 1));
      if (opens && translated.slice(sentinel.lastIndex, sentinel.lastIndex + 1) === "'") { // ('⟦0⟧': quoted)
        quoted = true;
        opens = false;
      }
      out += opens || (doubled && !quoted) ? "''" : "'";
      at += 1;
    }
  }
  return out;
}

/**
 * Put the placeholders back; throws PlaceholderError unless each sentinel appears exactly once and, given the
 * source's ICU skeleton icu (protect's icu; "" too is one), the result has that skeleton.
 */
export function restore(translated, placeholders, icu = null, apostrophesDoubled = false) {
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
  if (!problems.length) problems.push(...tagsReversed(translated, placeholders), ...reordered(translated, placeholders));
  if (problems.length) throw new PlaceholderError(`the translation ${JSON.stringify(translated)} ${problems.join('; ')}`);
  const restored = (icu === null ? translated : apostrophesKept(translated, placeholders, apostrophesDoubled))
    .replace(SENTINEL, (_, index) => placeholders[Number(index)]);
  if (icu !== null) {
    let found;
    try {
      found = parse(restored).skeleton;
    } catch (error) {
      if (!(error instanceof IcuSyntaxError)) throw error;
      throw new PlaceholderError(`the translation ${JSON.stringify(translated)} breaks the ICU message ${icu || 'of its source'}: ${error.message}`);
    }
    if (found !== icu) {
      throw new PlaceholderError(`the translation ${JSON.stringify(translated)} changed the ICU message ${icu || 'of its source'} into `
        + `${found || 'a text without a plural, select or selectordinal message'}`);
    }
  }
  return restored;
}

/**
 * The translation with the source's leading and trailing whitespace instead of its own (translators
 * often drop or add a space at the edges, e.g. where a subject pronoun was dropped); so too each branch of
 * an ICU message, when the translation's message has the source's skeleton.
 */
export function keepEdges(source, translated) {
  const core = translated.replace(/^[ \t\r\n]+|[ \t\r\n]+$/g, '');
  if (!core) return translated;
  const [lead, trail] = edges(source);
  return lead + keepBranchEdges(source, core) + trail;
}

// The leading and the trailing whitespace of text.
const edges = (text) => [text.match(/^[ \t\r\n]*/)[0], text.match(/[ \t\r\n]*$/)[0]];

function keepBranchEdges(source, translated) {
  const ours = icuMessage(source);
  const theirs = icuMessage(translated);
  if (ours === null || theirs === null || ours.skeleton !== theirs.skeleton) return translated;
  const edits = [];
  ours.branches.forEach(([sourceStart, sourceEnd], i) => {
    const [start, end] = theirs.branches[i];
    const branch = translated.slice(start, end);
    if (!/[^ \t\r\n]/.test(branch)) return;
    const [lead, trail] = edges(source.slice(sourceStart, sourceEnd));
    const [oldLead, oldTrail] = edges(branch);
    edits.push([start, start + oldLead.length, lead], [end - oldTrail.length, end, trail]);
  });
  let out = translated;
  for (const [start, end, text] of edits.sort((a, b) => b[0] - a[0] || b[1] - a[1])) out = out.slice(0, start) + text + out.slice(end);
  return out;
}

/** Whether anything is left to translate once placeholders are out (a letter remains). */
// A letter, or a character this Node's Unicode does not know yet (as Python's has_words: a script newer than either
// runtime's Unicode is sent by both, so both tools write the same files).
export function hasWords(protectedText) {
  return /[\p{L}\p{Cn}]/u.test(protectedText.text.replace(SENTINEL, ''));
}
