/**
 * The check of files that come back from Ray, on lines as the job writes them (remoteWorker) and the lab reads
 * them (decodeLine): an untouched line verifies, a tampered byte or a tampered hash is refused with the file named.
 * The real-Ray run of ray.test.ts shows a normal run's files verify end to end.
 */
import { describe, expect, it } from 'vitest';
import type { Trajectory } from '../../shared/api';
import { decodeLine, encodeLine } from './lineProtocol';
import { checkpointLine, trajectoryLine, TransitError, verifyCheckpointLine, verifyTrajectoryLine } from './transit';

const CKPT = {
  step: 4,
  meta: { optimizer: 'adamw' },
  files: { 'weights.bin': new Uint8Array([0, 1, 2, 250, 251, 252, 7, 7, 7]), 'rng.json': new TextEncoder().encode('{"s":[1,2,3]}') },
};
// A trajectory-shaped value with what a real one holds: nested arrays, a non-finite number, unicode text.
const TRAJ = {
  trajUid: 't-4-0',
  step: 4,
  reward: NaN,
  turns: [{ obs: 'box ▣ left', action: 'push', logp: -0.25 }],
  ok: true,
} as unknown as Trajectory;

/** Through the log and back, as the job writes a line and the lab decodes it. */
function overTheLog(type: 'checkpoint' | 'trajectory', body: unknown): unknown {
  return decodeLine(`(raylet) ${encodeLine(type, body)}`)!.body;
}

describe('files back from Ray are verified against the SHA-256s the job reports', () => {
  it('an untouched checkpoint and trajectory verify and come back byte for byte', () => {
    const c = verifyCheckpointLine(overTheLog('checkpoint', checkpointLine(CKPT)));
    expect(c.step).toBe(4);
    expect(c.meta).toEqual(CKPT.meta);
    expect(Object.keys(c.files).sort()).toEqual(['rng.json', 'weights.bin']);
    expect(Array.from(c.files['weights.bin'])).toEqual(Array.from(CKPT.files['weights.bin']));
    const t = verifyTrajectoryLine(overTheLog('trajectory', trajectoryLine(TRAJ)));
    expect(t).toEqual(TRAJ);
  });

  it('a byte of a checkpoint file changed in transit is refused, naming the file', () => {
    const line = checkpointLine(CKPT);
    const bytes = Buffer.from(line.files['weights.bin'], 'base64');
    bytes[3] ^= 1;
    const tampered = { ...line, files: { ...line.files, 'weights.bin': bytes.toString('base64') } };
    expect(() => verifyCheckpointLine(overTheLog('checkpoint', tampered))).toThrow(TransitError);
    expect(() => verifyCheckpointLine(overTheLog('checkpoint', tampered))).toThrow(
      /step 4.*weights\.bin does not match the SHA-256 the job reported.*not written/,
    );
  });

  it('a reported hash that was altered, is missing, or names a file that did not arrive is refused', () => {
    const line = checkpointLine(CKPT);
    const bad = line.sha256['rng.json'].replace(/^./, (ch) => (ch === '0' ? '1' : '0'));
    expect(() => verifyCheckpointLine({ ...line, sha256: { ...line.sha256, 'rng.json': bad } })).toThrow(/rng\.json does not match/);
    const { 'rng.json': _dropped, ...fewer } = line.sha256;
    expect(() => verifyCheckpointLine({ ...line, sha256: fewer })).toThrow(/rng\.json arrived without a valid SHA-256/);
    const { 'rng.json': _gone, ...lessFiles } = line.files;
    expect(() => verifyCheckpointLine({ ...line, files: lessFiles })).toThrow(/SHA-256 for rng\.json, but the file did not arrive/);
    const { sha256: _none, ...unhashed } = line;
    expect(() => verifyCheckpointLine(unhashed)).toThrow(/carries no SHA-256s/);
  });

  it('a trajectory changed in transit, or its hash changed or missing, is refused', () => {
    const line = trajectoryLine(TRAJ);
    const edited = { ...line, trajectory: { ...TRAJ, step: 5 } };
    expect(() => verifyTrajectoryLine(overTheLog('trajectory', edited))).toThrow(/trajectory t-4-0 \(step 5\).*does not match the SHA-256/);
    expect(() => verifyTrajectoryLine({ ...line, sha256: '0'.repeat(64) })).toThrow(/does not match/);
    expect(() => verifyTrajectoryLine({ trajectory: TRAJ })).toThrow(/without a valid SHA-256/);
    expect(() => verifyTrajectoryLine(TRAJ)).toThrow(/holds no trajectory/);
  });
});
