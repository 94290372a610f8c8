// The mt-eval-locales command, which ../../bin/mt-eval-locales.js starts: translate a champollion project's locale
// files (the Node twin of `mt-eval locales`).
import { divertStdout } from '../guest-process.js';
import { endLeftovers } from '../leftovers.js';
import { main } from './cli.js';
import { strerror } from './files.js';
import { describeEscaped } from './method-guard.js';
import { escapedForTerminal } from './report.js';

// stdout is the report's (the JSON one with --json): what a translate.js run in this process prints, with console
// or process.stdout.write, goes to stderr.
const { isTTY } = process.stdout;
const write = divertStdout();
// Standard output that cannot be written: a reader gone (`| head`) stops quietly with 141, as a shell reports SIGPIPE;
// another failure (a full disk) is said, with exit status 1, as mt-eval locales says them (not as a method's error).
let outputFailed = null;
process.stdout.on('error', (error) => {
  if (outputFailed === null && error.code !== 'EPIPE') {
    process.stderr.write(`mt-eval-locales: cannot write to standard output: ${strerror(error)}\n`);
  }
  outputFailed ??= error.code === 'EPIPE' ? 141 : 1;
  process.exitCode = outputFailed;
});
// Standard error that cannot be written (2>/dev/full, a reader gone) loses the progress and warnings, not the run: the
// run is not stopped as by a method's error, and what it translates is written.
process.stderr.on('error', () => {});
process.exitCode = await main(process.argv.slice(2), { stdout: { isTTY, write } });
if (outputFailed !== null) process.exitCode = outputFailed;
// A method's error that escapes once the run is over (a timer it left, a promise it left rejected) cannot change
// what was written or reported: one line says so, and the exit status stays the run's (a stack trace and exit
// status 1 said the run had failed).
const late = (error) => process.stderr.write(
  `${escapedForTerminal(`mt-eval-locales: warning: a method's error escaped after the run: ${describeEscaped(error)}`)}\n`);
process.on('uncaughtException', late);
process.on('unhandledRejection', late);
// Done: a process a method started and left running is ended (../lib/leftovers.js), and a method that left a
// timer or a socket open (a call that timed out, say) does not keep the process alive for long.
await endLeftovers('mt-eval-locales');
setTimeout(() => process.exit(), 1000).unref();
