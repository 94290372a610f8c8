// mt-eval-locales: translate a champollion project's locale files with the method plugins its config
// names — the Node twin of `mt-eval locales`, with the same options, output and files.
import { constants } from 'node:os';
import { performance } from 'node:perf_hooks';

import { renderProblem } from './config.js';
import { describeEscaped, guardInProcessMethods } from './method-guard.js';
import { describeHolder } from './project-lock.js';
import { completeRunConfig } from '../results.js';
import {
  WAITING, escapedForTerminal, interruptedMessage, progressLine, renderError, renderJson, renderText, reportOk, unseenEscaped,
  waitingLine,
} from './report.js';
import { translateLocales } from './sync.js';

export const USAGE = `usage: mt-eval-locales [--config PATH] [--locale LOCALE]... [--dry-run] [--force] [--json] [--quiet]
                       [--wait [SECONDS]] [--start-timeout SECONDS]

Translate the input locale's JSON files into every target locale of a champollion config, with the
method plugin each pair names. Only missing or changed keys are sent (the lock file records what
produced each value); placeholders are kept exactly.

options:
  --config PATH      champollion.config.json, or the directory holding it (default: ./champollion.config.json)
  --locale LOCALE    only this target locale (repeatable; default: every pair)
  --dry-run          show what would be translated; send and write nothing
  --force            translate every key again, whatever the lock file says
  --json             print the report as JSON
  --quiet            no progress output
  --wait [SECONDS]   when another process (mt-eval-locales or mt-eval locales) is translating this project,
                     wait for it (at most SECONDS, 0 or more; inf, or --wait alone: as long as it takes) instead of
                     refusing at once
  --start-timeout SECONDS
                     seconds each plugin run as a guest (a Python plugin, a command) gets to start (default 30): give
                     more to one that loads a large model as it starts

examples:
  npx mt-eval-locales --config examples/champollion-project
  npx mt-eval-locales --config examples/champollion-project --dry-run --locale es
  npx mt-eval-locales --config examples/champollion-project --wait 300   # if another run holds it
  npx mt-eval-locales --config examples/champollion-project --json --quiet > report.json

Python plugins run through \`mt-eval serve\`: $MT_EVAL names the mt-eval command (default: mt-eval on PATH).

One process at a time writes a project (this command or mt-eval locales): a second one refuses at once, naming
the first, or waits with --wait.

exit status: 0 every key translated; 1 a key failed, a file cannot be read or written, a plugin cannot start,
the config is wrong, or the project is in use; 2 usage; 130 interrupted (what was translated is written);
143 stopped by SIGTERM and 129 by SIGHUP (as by Ctrl-C)`;

const NEGATIVE_NUMBER = /^-\d+$|^-\d*\.\d+$/;

/** --wait's seconds: Infinity when given alone or as inf, else 0 or more; throws Error for anything else (the values
 * and words of Python's mt_eval.cli.usage_errors.wait_value, which every mt-eval command with --wait takes). */
function waitSeconds(value) {
  if (value === undefined || value === 'inf') return Infinity;
  if (!/^(\d+(\.\d*)?|\.\d+)$/.test(value)) {
    throw Object.assign(new Error(`--wait ${value}: give a number of seconds, 0 or more (e.g. --wait 300), or inf (or `
      + '--wait alone) to wait as long as it takes'), { alone: true }); // (a line of its own, as mt-eval locales says it)
  }
  return Number(value);
}

const LONG_OPTIONS = ['--config', '--dry-run', '--force', '--help', '--json', '--locale', '--quiet', '--start-timeout', '--wait'];

/** Characters two strings have in common, as Python's difflib.SequenceMatcher counts them (longest blocks first). */
function matchingCharacters(a, b) {
  let total = 0;
  const todo = [[0, a.length, 0, b.length]];
  while (todo.length) {
    const [alo, ahi, blo, bhi] = todo.pop();
    let [bestI, bestJ, bestK] = [alo, blo, 0];
    let previous = new Map();
    for (let i = alo; i < ahi; i++) {
      const current = new Map();
      for (let j = blo; j < bhi; j++) {
        if (a[i] !== b[j]) continue;
        const k = (previous.get(j - 1) ?? 0) + 1;
        current.set(j, k);
        if (k > bestK) [bestI, bestJ, bestK] = [i - k + 1, j - k + 1, k];
      }
      previous = current;
    }
    if (bestK) {
      total += bestK;
      todo.push([alo, bestI, blo, bestJ], [bestI + bestK, ahi, bestJ + bestK, bhi]);
    }
  }
  return total;
}

/** The option closest to what was typed (as mt-eval's difflib.get_close_matches, cutoff 0.6), or null. */
function closestOption(typed) {
  let best = null;
  let bestScore = 0.6;
  for (const option of LONG_OPTIONS) {
    const score = (2 * matchingCharacters(typed, option)) / (typed.length + option.length);
    if (score > bestScore || (score === bestScore && (best === null || option > best))) { // (ties: as difflib)
      [best, bestScore] = [option, score];
    }
  }
  return best;
}

/** The usage error of words that are no option of this command: the closest option to each, and where they are. */
function unrecognized(word) {
  const close = word.startsWith('--') ? closestOption(word.split('=')[0]) : null;
  return new Error(`unrecognized arguments: ${word}${close ? `\n  ${word.split('=')[0]}: did you mean ${close}?` : ''}`
    + '\n  `mt-eval-locales --help` lists its options');
}

/** A value of seconds above 0, as mt-eval's positive_float reads it (its words); throws Error for anything else. */
function secondsAboveZero(option, text) {
  const infinite = /^\s*([-+]?)inf(inity)?\s*$/i.exec(text); // (as Python's float() reads it)
  const number = infinite ? (infinite[1] === '-' ? -Infinity : Infinity) : text.trim() === '' ? NaN : Number(text);
  if (Number.isNaN(number) && !/^\s*[-+]?nan\s*$/i.test(text)) {
    throw new Error(`argument ${option}: must be a number, got '${text}'`);
  }
  if (!(number > 0) || !Number.isFinite(number)) {
    const shown = Number.isNaN(number) ? 'nan' : number === Infinity ? 'inf' : number === -Infinity ? '-inf' : String(number);
    throw new Error(`argument ${option}: must be a finite number above 0, got ${shown}`);
  }
  return number;
}

/** Parse argv; throws Error with a usage message. */
export function parseArguments(argv) {
  const options = {
    config: undefined, locales: [], dryRun: false, force: false, json: false, quiet: false, help: false, wait: null,
    startTimeoutS: 30,
  };
  const flags = { '--dry-run': 'dryRun', '--force': 'force', '--json': 'json', '--quiet': 'quiet', '-h': 'help', '--help': 'help' };
  for (let i = 0; i < argv.length; i++) {
    let arg = argv[i];
    let value;
    if (arg.startsWith('--') && arg.includes('=')) [arg, value] = [arg.slice(0, arg.indexOf('=')), arg.slice(arg.indexOf('=') + 1)];
    if (flags[arg] && value === undefined) {
      options[flags[arg]] = true;
    } else if (arg === '--wait') {
      // As argparse reads it: the next word is its value unless it is an option (a negative number is not).
      const next = argv[i + 1];
      if (value === undefined && next !== undefined && (!next.startsWith('-') || NEGATIVE_NUMBER.test(next))) value = argv[++i];
      options.wait = waitSeconds(value);
    } else if (arg === '--config' || arg === '--locale' || arg === '--start-timeout') {
      if (value === undefined) {
        if (i + 1 >= argv.length) throw new Error(`argument ${arg}: expected one argument`);
        value = argv[++i];
      }
      if (arg === '--config' && value === '') { // ("$CONFIG" unset: as mt-eval locales, never the default quietly)
        throw new Error("argument --config: must name a path, got '' (a variable meant to hold it that is unset or "
          + 'empty?): give the path, or leave the option out');
      }
      if (arg === '--config') options.config = value;
      else if (arg === '--start-timeout') options.startTimeoutS = secondsAboveZero(arg, value);
      else options.locales.push(value);
    } else {
      throw unrecognized(argv[i]);
    }
  }
  return options;
}

function progressReporter(stream, quiet) {
  let open = false;
  const report = (locale, done, total) => {
    if (quiet) return;
    const line = escapedForTerminal(progressLine(locale, done, total));
    if (stream.isTTY) {
      stream.write(`\r${line}\x1b[K${done === total ? '\n' : ''}`);
      open = done !== total;
    } else {
      stream.write(`${line}\n`);
    }
  };
  report.say = (said) => { // a line between the counts (on a terminal, in their place until the next count)
    if (quiet) return;
    const line = escapedForTerminal(said);
    stream.write(stream.isTTY ? `\r${line}\x1b[K` : `${line}\n`);
    open = stream.isTTY;
  };
  report.close = () => {
    if (open) stream.write('\n');
    open = false;
  };
  return report;
}

/**
 * The translate calls not answered yet (translateLocales's onCall), said with progress.say (waitingLine) once the
 * oldest has waited afterS seconds, and again every everyS while calls wait; close() stops it.
 */
function waitingReporter(progress, { afterS, everyS }) {
  const calls = new Set();
  const now = () => performance.now() / 1000;
  let saidAt = -Infinity;
  const timer = setInterval(() => {
    const oldest = [...calls].reduce((found, call) => (found === null || call.started < found.started ? call : found), null);
    if (oldest === null || now() - oldest.started < afterS || now() - saidAt < everyS) return;
    saidAt = now();
    const strings = [...calls].reduce((sum, call) => sum + call.strings, 0);
    progress.say(waitingLine(oldest.locale, strings, calls.size, now() - oldest.started, oldest.timeoutS));
  }, Math.min(1000, afterS * 500));
  timer.unref();
  const onCall = (locale, strings, runConfig) => {
    const complete = completeRunConfig(runConfig);
    const call = { locale, strings, started: now(), timeoutS: typeof complete === 'string' ? runConfig.timeout_s : complete.timeout_s };
    calls.add(call);
    return () => calls.delete(call);
  };
  onCall.close = () => clearInterval(timer);
  return onCall;
}

const INTERRUPTED_EARLY = 'interrupted before anything was sent; nothing was written';

/** Another run holds the project: what to do about it, or (once --wait has run out) how long was waited. */
function busyMessage(busy, waitS) {
  if (waitS === null) return `${busy.message}. Wait for it to finish, or give --wait to wait`;
  return `${busy.what} is still in use by ${describeHolder(busy.holder)} after waiting ${waitS} s for it. Let it finish, `
    + 'then run again, or give a longer --wait';
}

// What stops a run as Ctrl-C does; its exit status is then 128 + the signal's number (130, 143, 129), as a shell
// reports a process the signal ended.
const STOP_SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'];
const stoppedStatus = (signal) => 128 + constants.signals[signal];

/**
 * Run the command; resolves to the exit status (0 done, 1 a problem, 2 a usage error, 130 interrupted: 143 and 129
 * when stopped by SIGTERM or SIGHUP). waiting: when a call the method has not answered is said ({afterS, everyS}).
 */
export async function main(argv, { stdout = process.stdout, stderr = process.stderr, env = process.env, waiting = WAITING } = {}) {
  let options;
  try {
    options = parseArguments(argv);
  } catch (error) {
    // (as mt-eval locales says them: argparse's usage lines and error, or a line of its own)
    stderr.write(error.alone ? `mt-eval-locales: ${escapedForTerminal(error.message)}\n`
      : `${USAGE.slice(0, USAGE.indexOf('\n\n'))}\nmt-eval-locales: error: ${escapedForTerminal(error.message)}\n`);
    return 2;
  }
  if (options.help) {
    stdout.write(`${USAGE}\n`);
    return 0;
  }
  // What is said on stderr and the text report: keys, file names, locales and a method's errors with their control and
  // invisible characters escaped, as mt-eval locales shows them; the JSON report with those JSON leaves as they are
  // written as its escapes.
  const say = (line) => stderr.write(`${escapedForTerminal(line)}\n`);
  const progress = progressReporter(stderr, options.quiet);
  const onCall = waitingReporter(progress, waiting); // (a method that takes long is said to be waited for)
  // Ctrl-C (or SIGTERM, SIGHUP): nothing more is sent, what was translated is written, the guests are closed and
  // the report says so; a second one ends the process at once (its guests' process groups killed as it exits).
  const interrupt = new AbortController();
  let stoppedBy = 'SIGINT';
  // A method's error that escaped its calls stops the run the same way (exit status 1).
  let escaped = null;
  const guard = guardInProcessMethods((error) => {
    if (escaped === null) say(`mt-eval-locales: a method's error escaped its calls: ${describeEscaped(error)}`);
    escaped ??= error;
    interrupt.abort();
  });
  const onInterrupt = (signal) => {
    if (interrupt.signal.aborted) {
      stderr.write('\nmt-eval-locales: interrupted again: stopped at once\n');
      guard.exit(stoppedStatus(stoppedBy));
    }
    stoppedBy = signal;
    interrupt.abort();
  };
  for (const signal of STOP_SIGNALS) process.on(signal, onInterrupt);
  // What stopped the run, as `mt-eval locales` says it: "interrupted" (Ctrl-C), "interrupted by SIGTERM", or that error.
  const stopped = (message) => message.replace(/^interrupted/, escaped !== null ? 'stopped by that error'
    : stoppedBy === 'SIGINT' ? 'interrupted' : `interrupted by ${stoppedBy}`);
  const stoppedWith = () => (escaped === null ? stoppedStatus(stoppedBy) : 1);
  let report;
  try {
    report = await translateLocales(options.config, {
      locales: options.locales, dryRun: options.dryRun, force: options.force, progress, mtEval: env.MT_EVAL,
      onWarning: (problem) => say(renderProblem(problem)),
      command: 'mt-eval-locales', wait: options.wait, startTimeoutS: options.startTimeoutS,
      onCloseProblem: (problem) => say(`mt-eval-locales: warning: ${problem}; carried on without it`),
      // What the plugins' hosts warn of (a method's results for entries it was not sent, a guest restarted), in process
      // or through a guest, said as this command's warnings, as `mt-eval locales` says them.
      logger: {
        warn: (message) => say(`mt-eval-locales: warning: ${message}`),
        error: (message) => say(`mt-eval-locales: ${message}`),
      },
      onWait: (busy) => say(`mt-eval-locales: ${busy.message}; waiting for it (--wait)`),
      signal: interrupt.signal, onCall,
    });
  } catch (error) {
    const early = error.kind === 'interrupted';
    const message = early ? stopped(INTERRUPTED_EARLY) : error.name === 'ProjectBusyError' ? busyMessage(error, options.wait) : error.message;
    if (options.json) stdout.write(unseenEscaped(renderError(error.kind ?? 'project', message, { dryRun: options.dryRun })));
    say(`mt-eval-locales: ${message}`);
    return early ? stoppedWith() : 1;
  } finally {
    onCall.close();
    progress.close();
    for (const signal of STOP_SIGNALS) process.removeListener(signal, onInterrupt);
    guard.release();
  }
  const kept = report.interrupted ? stopped(interruptedMessage(report)) : null;
  stdout.write(options.json ? unseenEscaped(renderJson(report, { interrupted: kept })) : escapedForTerminal(renderText(report)));
  if (kept !== null) {
    say(`mt-eval-locales: ${kept}`);
    return stoppedWith();
  }
  return reportOk(report) ? 0 : 1;
}
