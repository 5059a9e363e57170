/**
 * The default wrong content: the same data with its last character changed (a digit counts up by
 * one, anything else becomes `X`), the way a stale template or an off-by-one serial would misprint.
 */
export function defaultWrongContent(payload: string): string {
  if (payload.length === 0) return 'X';
  const last = payload.charAt(payload.length - 1);
  const next = /\d/.test(last) ? String((Number(last) + 1) % 10) : last === 'X' ? 'Y' : 'X';
  return payload.slice(0, -1) + next;
}
