// The mt-eval-locales command, which ../../bin/mt-eval-locales.js starts: translate a champollion project's locale
// files (the Node twin of `mt-eval locales`).
import { divertStdout } from '../guest-process.js';
import { endLeftovers } from '../leftovers.js';
import { main } from './cli.js';
import { describeEscaped } from './method-guard.js';

// stdout is the report's (the JSON one with --json): what a translate.js run in this process prints, with console
// or process.stdout.write, goes to stderr.
const { isTTY } = process.stdout;
const write = divertStdout();
process.exitCode = await main(process.argv.slice(2), { stdout: { isTTY, write } });
// A method's error that escapes once the run is over (a timer it left, a promise it left rejected) cannot change
// what was written or reported: one line says so, and the exit status stays the run's (a stack trace and exit
// status 1 said the run had failed).
const late = (error) => process.stderr.write(`mt-eval-locales: warning: a method's error escaped after the run: ${describeEscaped(error)}\n`);
process.on('uncaughtException', late);
process.on('unhandledRejection', late);
// Done: a process a method started and left running is ended (../lib/leftovers.js), and a method that left a
// timer or a socket open (a call that timed out, say) does not keep the process alive for long.
await endLeftovers('mt-eval-locales');
setTimeout(() => process.exit(), 1000).unref();
