/**
 * The Python peers the tests run against: the project's own venv (.peers-venv, made by scripts/setup.sh from
 * tests/peers/requirements.txt). A test that needs a peer fails with the set-up command when it is missing,
 * never skips: the README's test command installs it.
 */
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';

const ROOT = resolve(import.meta.dirname, '..', '..');

/** The peer venv's python, or throws saying how to install it. */
export function peerPython(): string {
  const p = process.env.ARLARENA_PEER_PYTHON ?? join(ROOT, '.peers-venv', 'bin', 'python');
  if (!existsSync(p))
    throw new Error(
      `the Python peer venv is missing (${p}): run \`bash scripts/setup.sh\` (creates .peers-venv from tests/peers/requirements.txt)`,
    );
  return p;
}

/** The python of the named peer venv (.venvs/<name>, made by scripts/setup.sh from tests/peers/venvs/<name>.txt). */
export function venvPython(name: string): string {
  const p = join(ROOT, '.venvs', name, 'bin', 'python');
  if (!existsSync(p))
    throw new Error(
      `the Python peer venv ${name} is missing (${p}): run \`bash scripts/setup.sh\` (creates .venvs/${name} from tests/peers/venvs/${name}.txt)`,
    );
  return p;
}
