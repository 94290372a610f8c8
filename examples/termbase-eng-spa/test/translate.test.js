// node --test examples/termbase-eng-spa/test: the method on its own, without the bridge.
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { Termbase, parseTermbase, translate } from '../translate.js';

const CONFIG = { source_lang: 'eng', target_lang: 'spa', params: {} };
const one = async (source, config = CONFIG) => (await translate([{ id: 'x', source }], config))[0];

test('phrases win over words, and a capital first letter stays', async () => {
  const result = await one('Good afternoon, my friend! The dog is very happy.');
  assert.equal(result.predicted, 'Buenas tardes, mi amigo! El perro está muy feliz.');
  assert.deepEqual(result.metadata, { terms: ['good afternoon', 'my friend', 'the dog', 'is very', 'happy'], protected: 0 });
});

test('placeholders, markup, code, URLs, e-mail and do-not-translate terms come through unchanged', async () => {
  const source = 'Open {name} and %1$s or ${count} in <b>the file</b>: `the file`, https://example.org/the/file. '
    + 'Mail me@example.org about GitHub, Node.js and {{user}} (%(total)d files).';
  const result = await one(source);
  assert.equal(result.predicted, 'Abrir {name} y %1$s o ${count} en <b>el archivo</b>: `the file`, '
    + 'https://example.org/the/file. Mail me@example.org about GitHub, Node.js y {{user}} (%(total)d archivos).');
  assert.equal(result.metadata.protected, 12);
});

test('a phrase never spans punctuation or a protected span, and newlines survive', async () => {
  assert.equal((await one('good, morning')).predicted, 'good, morning');
  assert.equal((await one('thank {x} you')).predicted, 'thank {x} you');
  assert.equal((await one('The cat\nthe dog\n\n')).predicted, 'El gato\nel perro\n\n');
});

test('an empty or wordless source and another pair are abstained on, with the reason', async () => {
  for (const source of ['', '\ufffd\ufffd\u0007 \ufffd']) {
    const result = await one(source);
    assert.deepEqual([result.abstained, result.predicted], [true, undefined]);
    assert.match(result.abstain_reason, /the source has no word/);
  }
  const german = await one('Good morning.', { ...CONFIG, target_lang: 'deu' });
  assert.deepEqual([german.abstained, german.abstain_reason], [true, 'unsupported pair eng>deu: the termbase is eng>spa']);
});

test('params.terms adds or overrides entries for one run, and is checked', async () => {
  const config = { ...CONFIG, params: { terms: { save: 'guarde', files: '=' } } };
  assert.equal((await one('Save the files', config)).predicted, 'Guarde el files');
  assert.equal((await one('Save the files')).predicted, 'Guardar los archivos');
  const bad = await one('x', { ...CONFIG, params: { terms: ['save'] } });
  assert.equal(bad.predicted, null);
  assert.match(bad.error, /^params\.terms must be an object/);
});

test('the termbase file format is checked line by line', () => {
  assert.throws(() => parseTermbase('# c\nok\tbien\nbroken line\n', 'x.tsv'), /^Error: x\.tsv:3: expected "source<TAB>target"/);
  const termbase = new Termbase(parseTermbase('Big Word\tpalabra\nACME\t=\n'));
  assert.deepEqual([...termbase.phrases], [['big word', 'palabra']]);
  assert.deepEqual(termbase.protectedSpans('ACME and ACMEs'), [[0, 4]]);
});
