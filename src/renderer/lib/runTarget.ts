/**
 * Where a run trained, read from the tags a run on a Ray cluster is created with (src/main/remote/computeTarget.ts
 * runTagsFor): `on:ray`, `ray:<remote name>` when it was named, and always `ray-url:<dashboard URL>`. Shown as one
 * "on ray:NAME" chip (the URL in its title) in place of those three tags.
 */
export interface RunTarget {
  /** The remote's name, or null for a run sent to a bare dashboard URL. */
  readonly name: string | null;
  readonly url: string | null;
  /** `ray:NAME`, or `ray:URL` without a name. */
  readonly label: string;
}

const NAME = 'ray:';
const URL_TAG = 'ray-url:';

export function runTarget(tags: readonly string[]): RunTarget | null {
  const name = tags.find((t) => t.startsWith(NAME))?.slice(NAME.length) ?? null;
  const url = tags.find((t) => t.startsWith(URL_TAG))?.slice(URL_TAG.length) ?? null;
  if (name === null && url === null) return null;
  return { name, url, label: `ray:${name ?? url}` };
}

/** The tags to show as tags: the target's own are folded into its chip. */
export function plainTags(tags: readonly string[]): string[] {
  return tags.filter((t) => t !== 'on:ray' && !t.startsWith(NAME) && !t.startsWith(URL_TAG));
}
