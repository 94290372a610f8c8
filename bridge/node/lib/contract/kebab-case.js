// A method id made from a name, on its own so that a starting guest (method-load.js) does not load the rest of the
// contract's words to make one.

/** A best-effort kebab-case form of text ("My Método v2" → "my-metodo-v2"); bridge/vectors/method-ids.json. */
export function kebabCase(text) {
  const ascii = String(text).normalize('NFKD').replace(/[^\x00-\x7f]/g, '');
  const split = ascii.replace(/([a-z0-9])([A-Z])/g, '$1-$2').toLowerCase();
  return (split.match(/[a-z0-9]+/g) ?? []).join('-');
}
