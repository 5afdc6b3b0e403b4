/**
 * Test helper process for mutation.test.ts: verify a bundle file in a fresh process and report how
 * much the resident set grew while it was refused. Usage: node bombProbe.mjs <bundle.zip>
 */
import { readFileSync } from 'node:fs';
import { verifyBundle } from './importBundle';

const data = new Uint8Array(readFileSync(process.argv[2]));
const before = process.memoryUsage().rss;
let refused = '';
try {
  verifyBundle(data);
} catch (e) {
  refused = (e as Error).message;
}
// maxRSS is the peak over the process's life, in KiB.
const peak = process.resourceUsage().maxRSS * 1024;
process.stdout.write(JSON.stringify({ refused, rssGrowthMB: (peak - before) / 2 ** 20 }));
