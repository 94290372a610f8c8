// A translate.js run in this process cannot end it or crash it while the locales are translated: process.exit()
// fails the call it was made in, and an error that escapes every call (a callback that throws, a promise left
// rejected) is handed to `onEscaped`, which stops the run as Ctrl-C does, so what was translated is written.
// Any program's loadMethodPlugin gets the first part (`guardExitDuringCalls`): while a plugin's call is in flight,
// process.exit() from the plugin's own files fails the call, and the program's own process.exit() still ends it.
import { pathToFileURL } from 'node:url';

/** What a method's call of process.exit() throws instead of ending the process. */
export class MethodExitError extends Error {
  constructor(code) {
    super(`the method called process.exit(${code ?? ''}): a translate.js returns its results or throws; it does not `
      + 'end the process');
    this.name = 'MethodExitError';
  }
}

/** One line naming an escaped error and where it was thrown. */
export function describeEscaped(error) {
  if (!(error instanceof Error)) return `a non-Error value was thrown: ${String(error)}`;
  const where = (error.stack ?? '').split('\n').map((line) => line.trim()).find((line) => line.startsWith('at '));
  return `${error.name}: ${error.message}${where ? ` (${where})` : ''}`;
}

/** From now on process.exit() throws MethodExitError (the call it was made in fails); returns the real one. */
export function exitThrows() {
  const exit = process.exit.bind(process);
  process.exit = (code) => { throw new MethodExitError(code); };
  return exit;
}

/**
 * Guard the process until `release()` is called: returns {release, exit}, `exit` being the real process.exit for
 * this command's own use.
 */
export function guardInProcessMethods(onEscaped) {
  const exit = exitThrows();
  process.on('uncaughtException', onEscaped);
  process.on('unhandledRejection', onEscaped);
  const release = () => {
    process.exit = exit;
    process.removeListener('uncaughtException', onEscaped);
    process.removeListener('unhandledRejection', onEscaped);
  };
  return { release, exit };
}

// The plugin directories with a call in flight: directory → {url (its file: URL, as stacks may name it), calls}; and
// process.exit as it was before the first.
const inFlight = new Map();
let exitBefore = null;

// Whether the stack of a process.exit() call runs through one of the guarded plugins' files.
function calledByPlugin() {
  const limit = Error.stackTraceLimit;
  Error.stackTraceLimit = Infinity;
  const { stack } = new Error();
  Error.stackTraceLimit = limit;
  return [...inFlight].some(([path, { url }]) => stack.includes(path) || stack.includes(url));
}

/**
 * Until the returned release() is called, process.exit() called from the files of the plugin in `directory` throws
 * MethodExitError (the call it was made in fails); called from anywhere else, it ends the process as before.
 */
export function guardExitDuringCalls(directory) {
  const guarded = inFlight.get(directory) ?? { url: pathToFileURL(directory).href, calls: 0 };
  guarded.calls += 1;
  inFlight.set(directory, guarded);
  if (exitBefore === null) {
    exitBefore = process.exit;
    const previous = exitBefore;
    process.exit = function exit(code) {
      if (calledByPlugin()) throw new MethodExitError(code);
      return previous.call(process, code);
    };
  }
  let released = false;
  return () => {
    if (released) return;
    released = true;
    guarded.calls -= 1;
    if (guarded.calls === 0) inFlight.delete(directory);
    if (inFlight.size === 0 && exitBefore !== null) {
      process.exit = exitBefore;
      exitBefore = null;
    }
  };
}
