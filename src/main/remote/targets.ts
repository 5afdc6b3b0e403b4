/**
 * Compute targets the user has named: a Ray cluster's dashboard address plus, optionally, its token (Ray's token
 * auth). Kept in the data directory: `remotes.json` (names and addresses, no secrets) and one token file per
 * target under `remote-tokens/`, written owner-only (0600, the folder 0700). The token is read only to build an
 * Authorization header; it is never printed, logged, or written into a run record or bundle.
 */
import { chmod, mkdir, open, readFile, rename, rm } from 'node:fs/promises';
import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { removeDeadTemps, writeFileAtomic } from '../store/atomic';
import { storeFaults } from '../store/faults';
import { writerTag } from '../platform/process';

export interface RemoteEntry {
  readonly name: string;
  readonly url: string;
  /** True when a token file is stored for it. */
  readonly hasToken: boolean;
  readonly addedAt: string;
}

/** What a client needs to reach a cluster: the address and the token (never shown). */
export interface RemoteAccess {
  readonly name: string | null;
  readonly url: string;
  readonly token: string | null;
}

const NAME_RE = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,39}$/;

export class RemoteError extends Error {
  readonly expected = true;
  /** The input at fault when it is one (the app's settings point at it): name, url, token or tokenFile. */
  constructor(
    message: string,
    readonly field?: 'name' | 'url' | 'token' | 'tokenFile',
  ) {
    super(message);
    this.name = 'RemoteError';
  }
}

/** A dashboard address: http(s)://host[:port], no trailing slash. */
export function normalizeUrl(raw: string): string {
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    throw new RemoteError(`"${raw}" is not a URL; give the Ray dashboard's address, e.g. http://head:8265`, 'url');
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:')
    throw new RemoteError(`"${raw}": the Ray dashboard is reached over http:// or https://, not ${u.protocol}`, 'url');
  if (u.username || u.password) throw new RemoteError(`"${raw}": put the token in a file and pass --token-file, not in the URL`, 'url');
  return `${u.protocol}//${u.host}${u.pathname.replace(/\/+$/, '')}`;
}

/** Write a secret so that it is never readable by others, not even for a moment: created 0600, then renamed in. */
async function writeSecret(file: string, data: string): Promise<void> {
  await removeDeadTemps(file);
  const tmp = `${file}.${writerTag()}.tmp`; // its writer named, for removeDeadTemps
  const fh = await open(tmp, 'w', 0o600);
  try {
    await fh.chmod(0o600);
    await fh.writeFile(data);
    await fh.sync();
  } finally {
    await fh.close();
  }
  storeFaults().at('secret-before-rename');
  await rename(tmp, file);
}

export class RemoteTargets {
  constructor(private readonly dataDir: string) {}

  private get file(): string {
    return join(this.dataDir, 'remotes.json');
  }
  private get tokenDir(): string {
    return join(this.dataDir, 'remote-tokens');
  }
  private tokenPath(name: string): string {
    return join(this.tokenDir, `${name}.token`);
  }

  async list(): Promise<RemoteEntry[]> {
    if (!existsSync(this.file)) return [];
    const raw = JSON.parse(await readFile(this.file, 'utf8')) as { remotes?: Array<Omit<RemoteEntry, 'hasToken'>> };
    return (raw.remotes ?? []).map((r) => ({ ...r, hasToken: existsSync(this.tokenPath(r.name)) }));
  }

  private async save(entries: ReadonlyArray<Omit<RemoteEntry, 'hasToken'>>): Promise<void> {
    await mkdir(this.dataDir, { recursive: true });
    await writeFileAtomic(
      this.file,
      `${JSON.stringify({ remotes: entries.map(({ name, url, addedAt }) => ({ name, url, addedAt })) }, null, 2)}\n`,
    );
  }

  /**
   * Name a cluster. The token comes from `tokenFile` (the CLI's --token-file) or, from the app's settings where
   * it is pasted, as `opts.token`; either way only its copy in the data directory is kept.
   */
  async add(name: string, url: string, tokenFile?: string, opts: { token?: string } = {}): Promise<RemoteEntry> {
    if (!NAME_RE.test(name))
      throw new RemoteError(`remote name "${name}": use 1–40 letters, digits, '.', '_' or '-', starting with a letter or digit`, 'name');
    if (name === 'local') throw new RemoteError('"local" means this machine (train --on local); pick another name for the cluster', 'name');
    const clean = normalizeUrl(url);
    const all = await this.list();
    if (all.some((r) => r.name === name))
      throw new RemoteError(
        `a remote named "${name}" exists already (${all.find((r) => r.name === name)!.url}); remove it first with: arlarena remote remove ${name}`,
        'name',
      );
    let token: string | null = null;
    if (tokenFile !== undefined) {
      if (!existsSync(tokenFile) || !statSync(tokenFile).isFile())
        throw new RemoteError(`--token-file ${tokenFile}: no such file`, 'tokenFile');
      token = (await readFile(tokenFile, 'utf8')).trim();
      if (!token)
        throw new RemoteError(
          `--token-file ${tokenFile} is empty; it should hold the cluster's token (ray get-auth-token prints it)`,
          'tokenFile',
        );
      if (/\s/.test(token))
        throw new RemoteError(`--token-file ${tokenFile} holds more than one word; it should hold only the token`, 'tokenFile');
    } else if (opts.token !== undefined) {
      token = opts.token.trim();
      if (!token)
        throw new RemoteError(
          "the token is empty; paste the cluster's token (ray get-auth-token on the head prints it), or leave it out for a cluster without token auth",
          'token',
        );
      if (/\s/.test(token))
        throw new RemoteError(
          'the token holds spaces or line breaks; paste only the token (one word, as ray get-auth-token prints it)',
          'token',
        );
    }
    const entry = { name, url: clean, addedAt: new Date().toISOString() };
    if (token !== null) {
      await mkdir(this.tokenDir, { recursive: true, mode: 0o700 });
      await chmod(this.tokenDir, 0o700);
      await writeSecret(this.tokenPath(name), token);
    }
    await this.save([...all, entry]);
    return { ...entry, hasToken: token !== null };
  }

  async remove(name: string): Promise<boolean> {
    const all = await this.list();
    if (!all.some((r) => r.name === name)) return false;
    await this.save(all.filter((r) => r.name !== name));
    await rm(this.tokenPath(name), { force: true });
    await removeDeadTemps(this.tokenPath(name)); // a copy a killed add left, the token in clear
    return true;
  }

  /** A stored name, or a dashboard URL given directly (no token then), resolved to what a client needs. */
  async resolve(nameOrUrl: string): Promise<RemoteAccess> {
    if (/^https?:\/\//i.test(nameOrUrl)) return { name: null, url: normalizeUrl(nameOrUrl), token: null };
    const all = await this.list();
    const r = all.find((e) => e.name === nameOrUrl);
    if (!r)
      throw new RemoteError(
        `no remote named "${nameOrUrl}"; known: ${all.map((e) => e.name).join(', ') || 'none'} (add one with: arlarena remote add NAME URL [--token-file F], or pass a URL)`,
      );
    const token = r.hasToken ? (await readFile(this.tokenPath(r.name), 'utf8')).trim() : null;
    return { name: r.name, url: r.url, token };
  }
}
