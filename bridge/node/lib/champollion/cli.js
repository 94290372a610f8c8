// mt-eval-locales: translate a champollion project's locale files with the method plugins its config
// names — the Node twin of `mt-eval locales`, with the same options, output and files.
import { renderProblem } from './config.js';
import { progressLine, renderJson, renderText, reportOk } from './report.js';
import { translateLocales } from './sync.js';

export const USAGE = `usage: mt-eval-locales [--config PATH] [--locale LOCALE]... [--dry-run] [--force] [--json] [--quiet]
                       [--wait [SECONDS]]

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
                     wait for it (at most SECONDS) instead of refusing at once

Python plugins run through \`mt-eval serve\`: $MT_EVAL names the mt-eval command (default: mt-eval on PATH).`;

/** Parse argv; throws Error with a usage message. */
export function parseArguments(argv) {
  const options = { config: undefined, locales: [], dryRun: false, force: false, json: false, quiet: false, help: false, wait: null };
  const flags = { '--dry-run': 'dryRun', '--force': 'force', '--json': 'json', '--quiet': 'quiet', '-h': 'help', '--help': 'help' };
  for (let i = 0; i < argv.length; i++) {
    let arg = argv[i];
    let value;
    if (arg.startsWith('--') && arg.includes('=')) [arg, value] = [arg.slice(0, arg.indexOf('=')), arg.slice(arg.indexOf('=') + 1)];
    if (flags[arg] && value === undefined) {
      options[flags[arg]] = true;
    } else if (arg === '--wait') {
      if (value === undefined && /^\d+(\.\d+)?$/.test(argv[i + 1] ?? '')) value = argv[++i];
      const seconds = value === undefined ? Infinity : Number(value);
      if (!(seconds >= 0)) throw new Error(`--wait ${value}: give a number of seconds`);
      options.wait = seconds;
    } else if (arg === '--config' || arg === '--locale') {
      if (value === undefined) {
        if (i + 1 >= argv.length) throw new Error(`${arg} needs a value`);
        value = argv[++i];
      }
      if (arg === '--config') options.config = value;
      else options.locales.push(value);
    } else {
      throw new Error(`unrecognized argument ${argv[i]}`);
    }
  }
  return options;
}

function progressReporter(stream, quiet) {
  let open = false;
  const report = (locale, done, total) => {
    if (quiet) return;
    const line = progressLine(locale, done, total);
    if (stream.isTTY) {
      stream.write(`\r${line}\x1b[K${done === total ? '\n' : ''}`);
      open = done !== total;
    } else {
      stream.write(`${line}\n`);
    }
  };
  report.close = () => {
    if (open) stream.write('\n');
    open = false;
  };
  return report;
}

/** Run the command; resolves to the exit status (0 done, 1 a problem, 2 a usage error). */
export async function main(argv, { stdout = process.stdout, stderr = process.stderr, env = process.env } = {}) {
  let options;
  try {
    options = parseArguments(argv);
  } catch (error) {
    stderr.write(`mt-eval-locales: ${error.message}\n${USAGE}\n`);
    return 2;
  }
  if (options.help) {
    stdout.write(`${USAGE}\n`);
    return 0;
  }
  const progress = progressReporter(stderr, options.quiet);
  let report;
  try {
    report = await translateLocales(options.config, {
      locales: options.locales, dryRun: options.dryRun, force: options.force, progress, mtEval: env.MT_EVAL,
      onWarning: (problem) => stderr.write(`${renderProblem(problem)}\n`),
      command: 'mt-eval-locales', wait: options.wait,
      onWait: (busy) => stderr.write(`mt-eval-locales: ${busy.message}; waiting for it (--wait)\n`),
    });
  } catch (error) {
    let hint = '';
    if (error.name === 'ProjectBusyError') {
      hint = options.wait === null ? '. Wait for it to finish, or give --wait to wait'
        : `. Waited ${options.wait} s and it still holds it: wait for it to finish, or give a longer --wait`;
    }
    stderr.write(`mt-eval-locales: ${error.message}${hint}\n`);
    return 1;
  } finally {
    progress.close();
  }
  stdout.write(options.json ? renderJson(report) : renderText(report));
  return reportOk(report) ? 0 : 1;
}
