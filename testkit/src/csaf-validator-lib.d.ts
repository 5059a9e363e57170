// The BSI CSAF validator ships JavaScript without declarations; the parts the tests use.
declare module '@secvisogram/csaf-validator-lib/validateStrict.js' {
  interface TestResult {
    name: string;
    isValid: boolean;
    errors: { instancePath: string; message: string }[];
  }
  type DocumentTest = (doc: unknown) => unknown;
  export default function validateStrict(
    tests: DocumentTest[],
    doc: unknown,
  ): Promise<{ isValid: boolean; tests: TestResult[] }>;
}
declare module '@secvisogram/csaf-validator-lib/mandatoryTests.js' {
  const tests: Record<string, (doc: unknown) => unknown>;
  export = tests;
}
declare module '@secvisogram/csaf-validator-lib/schemaTests.js' {
  export const csaf_2_0_strict: (doc: unknown) => unknown;
}
