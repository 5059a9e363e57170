/**
 * The main process's side of the IPC contract, independent of Electron: one handler per channel that
 * refuses a sender that is not the console page, validates the arguments (zod), and answers. `main.ts`
 * registers these with `ipcMain.handle`; tests call them directly.
 */
import { z } from 'zod';
import {
  IPC_CHANNELS,
  THEME_SOURCES,
  type DesktopInfo,
  type IpcChannel,
  type ThemeSource,
} from './ipc-contract.js';

export type IpcErrorCode = 'FORBIDDEN_SENDER' | 'INVALID_ARGUMENTS';

export class IpcError extends Error {
  override readonly name = 'IpcError';
  constructor(
    readonly code: IpcErrorCode,
    message: string,
  ) {
    super(message);
  }
}

/** Who sent an invoke: the URL of the sending frame (`event.senderFrame.url`), if Electron knows it. */
export interface IpcSender {
  url: string | null | undefined;
}

export interface IpcDeps {
  /** The console's origin (`http://127.0.0.1:7878`): the only page allowed to call. */
  consoleOrigin: string;
  info(): DesktopInfo;
  setTheme(theme: ThemeSource): void;
}

export type IpcHandler = (sender: IpcSender, args: readonly unknown[]) => Promise<unknown>;

/** Arguments of each channel, as a tuple: extra or missing arguments are refused too. */
export const IPC_ARGUMENTS = {
  [IPC_CHANNELS.info]: z.tuple([]),
  [IPC_CHANNELS.setTheme]: z.tuple([z.enum(THEME_SOURCES)]),
} satisfies Record<IpcChannel, z.ZodType>;

function originOf(url: string | null | undefined): string | null {
  if (!url) return null;
  try {
    return new URL(url).origin;
  } catch {
    return null;
  }
}

export function createIpcHandlers(deps: IpcDeps): Record<IpcChannel, IpcHandler> {
  const guard =
    <C extends IpcChannel>(channel: C, answer: (args: z.infer<(typeof IPC_ARGUMENTS)[C]>) => unknown) =>
    async (sender: IpcSender, args: readonly unknown[]): Promise<unknown> => {
      if (originOf(sender.url) !== deps.consoleOrigin)
        throw new IpcError('FORBIDDEN_SENDER', `${channel}: only the console page may call`);
      const parsed = IPC_ARGUMENTS[channel].safeParse(args);
      if (!parsed.success)
        throw new IpcError(
          'INVALID_ARGUMENTS',
          `${channel}: ${parsed.error.issues[0]?.message ?? 'invalid'}`,
        );
      return answer(parsed.data as z.infer<(typeof IPC_ARGUMENTS)[C]>);
    };
  return {
    [IPC_CHANNELS.info]: guard(IPC_CHANNELS.info, () => deps.info()),
    [IPC_CHANNELS.setTheme]: guard(IPC_CHANNELS.setTheme, ([theme]) => {
      deps.setTheme(theme);
      return theme;
    }),
  };
}
