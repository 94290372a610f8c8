// A translate.js run in this process cannot end it or crash it while the locales are translated: process.exit()
// fails the call it was made in, and an error that escapes every call (a callback that throws, a promise left
// rejected) is handed to `onEscaped`, which stops the run as Ctrl-C does, so what was translated is written.

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

/**
 * Guard the process until `release()` is called: returns {release, exit}, `exit` being the real process.exit for
 * this command's own use.
 */
export function guardInProcessMethods(onEscaped) {
  const exit = process.exit.bind(process);
  process.exit = (code) => { throw new MethodExitError(code); };
  process.on('uncaughtException', onEscaped);
  process.on('unhandledRejection', onEscaped);
  const release = () => {
    process.exit = exit;
    process.removeListener('uncaughtException', onEscaped);
    process.removeListener('unhandledRejection', onEscaped);
  };
  return { release, exit };
}
