import js from '@eslint/js';
import globals from 'globals';
import tseslint from 'typescript-eslint';

/** Every folder of the control plane reaches http/ through its door (http/index.ts), like any other. */
const HTTP_DOOR = {
  regex: '^\\.{1,2}/(\\.\\./)*http/(?!index\\.js$)',
  message: 'Import http/ through its door: http/index.js.',
};
const NO_TESTKIT = {
  regex: '^@dpp/testkit(/|$)',
  message: 'Test support is for tests only; product code must not import @dpp/testkit.',
};

function restrictImports({ files, ignores, patterns }) {
  return { files, ignores, rules: { 'no-restricted-imports': ['error', { patterns }] } };
}

export default tseslint.config(
  { ignores: ['**/node_modules/**', '.tsbuild/**', '**/dist/**', 'data/**', 'test-results/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { ...globals.node } },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': 'error',
      'no-console': 'off',
    },
  },
  {
    // The agent's console page: browser modules, typed by JSDoc (agent/tsconfig.ui.json).
    files: ['agent/src/console/ui/**/*.js'],
    languageOptions: { globals: { ...globals.browser } },
  },
  // Imports each kind of file may not make. One rule name holds them all: a later block's setting of a rule
  // replaces an earlier one for the files both match, so every block lists all that apply to its files.
  restrictImports({
    // Product code never imports test support (@dpp/testkit): it is a dev dependency only.
    files: ['*/src/**/*.ts', '*/src/**/*.js'],
    ignores: ['**/*.test.ts', 'control-plane/src/**'],
    patterns: [NO_TESTKIT],
  }),
  restrictImports({
    files: ['control-plane/src/**/*.ts'],
    ignores: ['**/*.test.ts', 'control-plane/src/http/**'],
    patterns: [NO_TESTKIT, HTTP_DOOR],
  }),
  restrictImports({
    files: ['control-plane/src/http/**/*.ts'],
    ignores: ['**/*.test.ts'],
    patterns: [NO_TESTKIT],
  }),
  restrictImports({
    files: ['control-plane/src/**/*.test.ts'],
    ignores: ['control-plane/src/http/**'],
    patterns: [HTTP_DOOR],
  }),
  {
    // One rule for transactions (control-plane/src/store/unit-of-work.ts): a unit of work is
    // `db.transaction().execute(fn)`, which the store guards. Kysely's other ways to hold a connection are
    // not guarded, so they are not used.
    files: ['control-plane/src/**/*.ts'],
    rules: {
      'no-restricted-syntax': [
        'error',
        {
          selector: "CallExpression[callee.property.name='startTransaction']",
          message: 'Use db.transaction().execute(fn): only it keeps the root handle out of the unit of work.',
        },
        {
          selector: "CallExpression[callee.property.name='connection'][arguments.length=0]",
          message: 'Use db.transaction().execute(fn): only it keeps the root handle out of the unit of work.',
        },
      ],
    },
  },
);
