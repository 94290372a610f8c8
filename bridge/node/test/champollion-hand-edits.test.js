// A translation a person fixed in a target file is kept when the method changes (as
// tests/test_champollion_hand_edits.py checks across both commands).
import assert from 'node:assert/strict';
import { appendFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';

import { makeProject, runLocales } from './helpers/champollion.js';

test('a value edited by hand survives a change of the method; a change of its source sends it again', async () => {
  const project = makeProject({
    config: { version: 3, inputLocale: 'en', pairs: { 'en:es': { methodPlugin: 'upper' } } },
    files: { 'locales/en/a.json': { title: 'Recipes', nav: { save: 'Save' } } },
    plugins: ['upper'],
  });
  try {
    assert.equal((await runLocales(project)).status, 0);
    project.write('locales/es/a.json', project.read('locales/es/a.json').replace('spa: RECIPES', 'Recetas'));
    appendFileSync(join(project.root, '.champollion/methods/upper/translate.js'), '// a new version\n');
    const run = await runLocales(project);
    assert.equal(run.status, 0, run.stderr);
    assert.match(run.stdout, /es\/a\.json {2}1 translated, 1 adopted\n/);
    assert.deepEqual(project.json('locales/es/a.json'), { title: 'Recetas', nav: { save: 'spa: SAVE' } });
    const lock = project.json('locales/.champollion-lock.json');
    assert.match(lock.files['es/a.json'].title, / -$/);
    assert.deepEqual(Object.keys(lock.values['es/a.json']), ['nav.save']);

    project.write('locales/en/a.json', { title: 'My recipes', nav: { save: 'Save' } });
    assert.equal((await runLocales(project)).status, 0);
    assert.equal(project.json('locales/es/a.json').title, 'spa: MY RECIPES');
  } finally {
    project.cleanup();
  }
});

test('a value a person saves while the method translates is kept, not written over', async () => {
  const project = makeProject({
    config: { version: 3, inputLocale: 'en', pairs: { 'en:es': { methodPlugin: 'editing' } } },
    files: {
      'locales/en/a.json': { title: 'Recipes', save: 'Save', cancel: 'Cancel' },
      'locales/es/a.json': { title: 'spa: RECIPES' },
      '.champollion/methods/editing/method.json': {
        name: 'Editing', method_id: 'editing', class: 'custom-plugin', node_entry: 'translate.js',
        dependency_class: 'S', dependencies: [],
      },
      // While it translates, it does what a person at an editor would: saves the target file.
      '.champollion/methods/editing/translate.js': `import { writeFileSync } from 'node:fs';
export async function translate(entries, config) {
  writeFileSync(process.env.EDIT_FILE, '{"title": "Recetas", "save": "Guardar"}');
  return entries.map(({ id, source }) => ({ id, predicted: config.target_lang + ': ' + source.toUpperCase() }));
}
`,
    },
    plugins: [],
  });
  process.env.EDIT_FILE = join(project.root, 'locales/es/a.json');
  try {
    const run = await runLocales(project);
    assert.equal(run.status, 0, run.stderr);
    assert.match(run.stdout, /es\/a\.json {2}1 translated, 2 adopted\n/);
    assert.deepEqual(project.json('locales/es/a.json'), { title: 'Recetas', save: 'Guardar', cancel: 'spa: CANCEL' });
    const lock = project.json('locales/.champollion-lock.json');
    assert.deepEqual(Object.values(lock.files['es/a.json']).map((entry) => entry.endsWith(' -')), [true, true, false]);
  } finally {
    delete process.env.EDIT_FILE;
    project.cleanup();
  }
});
