// What mt-eval-locales prints — the same text and JSON as `mt-eval locales` (mt_eval.champollion.report). With
// --json, a run that stops on an error prints a report too: ok false, error {kind, message}, no locales; a
// finished run's error is null, and an interrupted one's says what was kept (interruptedMessage, also said on
// stderr, where the command names the signal that stopped it when it was not Ctrl-C).
import { formatJson } from './json.js';

// Unicode's format characters that are not seen, as mt_eval.control_chars.INVISIBLE lists them (the soft hyphen, the
// bidirectional marks, embeddings, overrides and isolates, zero-width spaces, the byte-order mark, the line and
// paragraph separators, interlinear annotations and tags; not the joiners).
const INVISIBLE = '\u00ad\u061c\u180e\u200b\u200e\u200f\u2028-\u202e\u2060-\u2064\u2066-\u206f\ufeff\ufff9-\ufffb'
  + '\u{e0001}\u{e0020}-\u{e007f}';
const UNSEEN = new RegExp(`[\\x00-\\x09\\x0b-\\x1f\\x7f-\\x9f${INVISIBLE}]`, 'gu');
const UNSEEN_IN_JSON = new RegExp(`[\\x7f-\\x9f${INVISIBLE}]`, 'gu'); // (JSON escapes the C0 controls itself)
const SHORT_ESCAPES = { '\t': '\\t', '\r': '\\r' };
const hex = (code, width) => code.toString(16).padStart(width, '0');

/**
 * Text as a terminal may be given it: every control character but the line break, and every invisible format
 * character, written as its escape (\x1b, \u202e), as mt_eval.control_chars.escaped_for_terminal writes them.
 */
export function escapedForTerminal(text) {
  return text.replace(UNSEEN, (found) => {
    const code = found.codePointAt(0);
    if (SHORT_ESCAPES[found]) return SHORT_ESCAPES[found];
    return code < 0x100 ? `\\x${hex(code, 2)}` : code < 0x10000 ? `\\u${hex(code, 4)}` : `\\U${hex(code, 8)}`;
  });
}

/** JSON text with DEL, the C1 controls and the invisible characters written as JSON's escapes (\u202e). */
export const unseenEscaped = (json) => json.replace(UNSEEN_IN_JSON,
  (found) => [...Array(found.length).keys()].map((i) => `\\u${hex(found.charCodeAt(i), 4)}`).join(''));

const MARK = {
  new: '+', 'source changed': '~', 'now read as ICU': '~', 'no longer read as ICU': '~', 'method changed': '~',
  forced: '~',
};

const plural = (count, noun) => `${count} ${noun}${count === 1 ? '' : 's'}`;

function counts(file, dryRun) {
  const parts = dryRun
    ? [[file.due.length, 'to translate'], [file.upToDate, 'up to date'], [file.adopted.length, 'adopted'],
      [file.removed.length, 'to remove'], [file.failed.length, 'failed']]
    : [[file.translated.length, 'translated'], [file.copied.length, 'copied'], [file.upToDate, 'up to date'],
      [file.adopted.length, 'adopted'], [file.removed.length, 'removed'], [file.failed.length, 'failed'],
      [file.interrupted.length, 'not translated (interrupted)']];
  return parts.filter(([count]) => count).map(([count, label]) => `${count} ${label}`).join(', ') || 'no keys';
}

export function reportOk(report) {
  return !report.interrupted && report.locales.every((locale) => locale.files.every((file) => file.error === null
    && file.failed.length === 0 && file.interrupted.length === 0));
}

/** What an interrupted run kept and what it did not, for stderr (and the JSON report's error). */
export function interruptedMessage(report) {
  const files = report.locales.flatMap((locale) => locale.files);
  if (report.dryRun) return 'interrupted; a dry run sends and writes nothing';
  if (!files.length) return 'interrupted before anything was sent; nothing was written';
  const kept = files.filter((file) => file.error === null);
  const translated = kept.reduce((sum, file) => sum + file.translated.length, 0);
  const copied = kept.reduce((sum, file) => sum + file.copied.length, 0); // (not sent: copied as they are)
  const keys = translated + copied;
  const written = files.filter((file) => file.written).length;
  const what = copied ? `(${translated} translated, ${copied} copied) ` : 'translated ';
  const parts = [keys || written ? `interrupted; kept ${plural(keys, 'key')} ${what}(${plural(written, 'file')} written, with their lock entries)`
    : 'interrupted; nothing was translated or written'];
  const missing = report.locales.map((locale) => [locale.locale, locale.files.reduce((sum, file) => sum + file.interrupted.length, 0)])
    .filter(([, count]) => count);
  if (missing.length) parts.push(`not translated: ${missing.map(([locale, count]) => `${plural(count, 'key')} of ${locale}`).join(', ')}`);
  if (report.notStarted?.length) parts.push(`not started: ${report.notStarted.join(', ')}`);
  const rest = parts.length === 1 ? '' : `. Run the same command again for the rest${keys ? '; what was kept is not sent again' : ''}`;
  return parts.join('; ') + rest;
}

export function renderText(report) {
  const lines = [];
  for (const locale of report.locales) {
    lines.push(`${locale.locale} (${locale.pair}) via ${locale.method} (${locale.languages})`);
    for (const file of locale.files) {
      if (file.error !== null) {
        lines.push(`  ${file.file}  error: ${file.error}`);
        continue;
      }
      lines.push(`  ${file.file}  ${counts(file, report.dryRun)}`);
      if (report.dryRun) {
        for (const [key, reason] of file.due) lines.push(`    ${MARK[reason]} ${key} (${reason})`);
        for (const key of file.removed) lines.push(`    - ${key}`);
      }
      for (const [key, error] of file.failed) lines.push(`    failed ${key}: ${error}`);
      for (const key of file.repeated) {
        lines.push(`    ${JSON.stringify(key)} is written more than once in one object of this file: its last value is kept `
          + '(JSON readers keep the last), and the others are dropped when the file is written');
      }
    }
    for (const name of locale.orphaned) {
      lines.push(`  ${name}  left alone: its source file is gone (delete it if it is no longer used; its lock entries go with it)`);
    }
    lines.push(`  ${report.dryRun ? 'would send' : 'sent'} ${plural(locale.sent, 'string')} in ${plural(locale.calls, 'call')}`);
  }
  const files = report.locales.flatMap((locale) => locale.files);
  const keys = files.reduce((n, file) => n + file.failed.length, 0);
  const leftOut = files.reduce((n, file) => n + file.leftOut.length, 0);
  const unreadable = files.filter((file) => file.error !== null).length;
  if (report.dryRun) lines.push('dry run: nothing was sent or written');
  else if (keys || unreadable) {
    const said = [[keys - leftOut, 'failed keys kept their previous values'],
      [leftOut, 'failed keys with no previous value are missing from their files (the next run tries them again)'],
      [unreadable, 'files with an error were left as they were']].filter(([count]) => count).map(([, words]) => words);
    lines.push(`${plural(keys + unreadable, 'problem')}: ${said.join(', and ')}`);
  }
  if (report.interrupted) lines.push('interrupted: what was translated is written; the rest kept its previous values');
  return `${lines.join('\n')}\n`;
}

/**
 * The report as JSON; interrupted: an interrupted run's error message as the command says it on stderr (naming the
 * signal that stopped it: "interrupted by SIGTERM; kept …"), interruptedMessage by default.
 */
export function reportJson(report, { interrupted } = {}) {
  return {
    dryRun: report.dryRun,
    ok: reportOk(report),
    error: report.interrupted ? { kind: 'interrupted', message: interrupted ?? interruptedMessage(report) } : null,
    locales: report.locales.map((locale) => ({
      locale: locale.locale, pair: locale.pair, method: locale.method, languages: locale.languages,
      sent: locale.sent, calls: locale.calls,
      files: locale.files.map((file) => ({
        file: file.file, due: file.due.map(([key, reason]) => ({ key, reason })), upToDate: file.upToDate,
        adopted: file.adopted, removed: file.removed, repeated: file.repeated, translated: file.translated, copied: file.copied,
        failed: file.failed.map(([key, error]) => ({ key, error })), interrupted: file.interrupted, written: file.written,
        error: file.error,
      })),
      orphaned: locale.orphaned,
    })),
  };
}

export const renderJson = (report, options) => formatJson(reportJson(report, options));

/**
 * The report of a run that stopped on an error: kind (config, busy, method, project, or interrupted before
 * anything was sent) and the message printed on stderr after the command's name.
 */
export const renderError = (kind, message, { dryRun }) => formatJson({ dryRun, ok: false, error: { kind, message }, locales: [] });

export const progressLine = (locale, done, total) => `${locale}: ${done}/${total} strings answered`; // (translated, or failed: the report says which)

/** A call unanswered this long (seconds) is said (waitingLine), and again every everyS (mt_eval.champollion.report). */
export const WAITING = { afterS: 10, everyS: 30 };

/**
 * What a run waits for while the method has not answered for long: the strings in flight, how long the oldest call
 * has waited, how long a call may take, and that Ctrl-C keeps what was translated.
 */
export function waitingLine(locale, strings, calls, waitedS, timeoutS) {
  const sent = calls > 1 ? `${plural(strings, 'string')} in ${calls} calls, the oldest sent` : `${plural(strings, 'string')} sent`;
  return `${locale}: still waiting for the method: ${sent} ${Math.floor(waitedS)} s ago (a call may take ${timeoutS} s a `
    + 'string before it fails); Ctrl-C stops, keeping what was translated';
}
