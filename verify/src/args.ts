/** The command line: `dpp-verify <digital-link | label.png | label.pdf | proof.json> [options]`. */
import { VerifyError } from './errors.js';

export const USAGE =
  'usage: dpp-verify <digital-link | label.png | label.pdf | proof.json> [--offline] [--keys keys.json] ' +
  '[--state file] [--no-state] [--json] [--save-proof out.json] [--save-keys out.json]';

export interface Options {
  input: string;
  offline: boolean;
  keys: string | undefined;
  state: string | undefined;
  noState: boolean;
  json: boolean;
  saveProof: string | undefined;
  saveKeys: string | undefined;
  help: boolean;
}

const VALUED = {
  '--keys': 'keys',
  '--state': 'state',
  '--save-proof': 'saveProof',
  '--save-keys': 'saveKeys',
} as const;
const FLAGS = { '--offline': 'offline', '--no-state': 'noState', '--json': 'json' } as const;

export function parseArgs(argv: readonly string[]): Options {
  const o: Options = {
    input: '',
    offline: false,
    keys: undefined,
    state: undefined,
    noState: false,
    json: false,
    saveProof: undefined,
    saveKeys: undefined,
    help: false,
  };
  const inputs: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    const [name, inline] =
      arg.startsWith('--') && arg.includes('=')
        ? [arg.slice(0, arg.indexOf('=')), arg.slice(arg.indexOf('=') + 1)]
        : [arg, undefined];
    if (name === '--help' || name === '-h') o.help = true;
    else if (name in FLAGS) o[FLAGS[name as keyof typeof FLAGS]] = true;
    else if (name in VALUED) {
      const value = inline ?? argv[++i];
      if (value === undefined || value === '')
        throw new VerifyError('USAGE', `${name} needs a value\n${USAGE}`);
      o[VALUED[name as keyof typeof VALUED]] = value;
    } else if (arg.startsWith('--')) throw new VerifyError('USAGE', `unknown option ${arg}\n${USAGE}`);
    else inputs.push(arg);
  }
  if (o.help) return o;
  if (inputs.length !== 1) throw new VerifyError('USAGE', USAGE);
  o.input = inputs[0]!;
  if (o.offline && o.keys === undefined) {
    throw new VerifyError(
      'USAGE',
      `--offline needs --keys (a saved copy of /api/v2/public/signing-keys)\n${USAGE}`,
    );
  }
  if (o.noState && o.state !== undefined)
    throw new VerifyError('USAGE', `--state and --no-state exclude each other`);
  return o;
}
