import js from '@eslint/js';
import globals from 'globals';
import tseslint from 'typescript-eslint';

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
    // Every folder of the control plane reaches http/ through its door (http/index.ts), like any other.
    files: ['control-plane/src/**/*.ts'],
    ignores: ['control-plane/src/http/**'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              regex: '^\\.{1,2}/(\\.\\./)*http/(?!index\\.js$)',
              message: 'Import http/ through its door: http/index.js.',
            },
          ],
        },
      ],
    },
  },
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
