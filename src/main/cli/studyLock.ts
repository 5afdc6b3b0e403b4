/**
 * The study commands (`ladder`, `arena`) run holding their study's lock (app/studies/studyLock.ts) from before they
 * read the study until they return, so a second process running the same named study is refused before it plans or
 * trains anything. A command without --study (an unnamed ladder or arena: fresh studies each time) takes none.
 */
import { lockStudy, type StudyKind } from '../app/studies/studyLock';
import { checkStudyName } from '../app/studies/studyFiles';
import type { CliCommand } from './types';

/**
 * The value of --study as the command's parseArgs will read it (`--study NAME` or `--study=NAME`, the last one
 * given), or undefined. A name the command will refuse (checkStudyName) takes no lock: its usage error comes first.
 */
export function studyNameArg(args: readonly string[]): string | undefined {
  let name: string | undefined;
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    if (a === '--') break;
    if (a === '--study') name = args[++i];
    else if (a.startsWith('--study=')) name = a.slice('--study='.length);
  }
  return name !== undefined && checkStudyName(name) === null ? name : undefined;
}

/**
 * `command` run under the lock of the study its --study names, of `kind`; `kindOf` may say another kind or none for
 * some arguments (`arena --ladder` is the ladder's, which takes the ladder's lock itself).
 */
export function lockedStudyCommand(command: CliCommand, kindOf: (args: readonly string[]) => StudyKind | null): CliCommand {
  return {
    summary: command.summary,
    usage: command.usage,
    async run(args, ctx) {
      const kind = kindOf(args);
      const name = studyNameArg(args);
      if (kind === null || name === undefined) return command.run(args, ctx);
      const unlock = await lockStudy(ctx.dataDir, kind, name);
      try {
        return await command.run(args, ctx);
      } finally {
        await unlock();
      }
    },
  };
}
