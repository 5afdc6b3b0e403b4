/**
 * Two-key shortcuts in the style of GitHub and Gmail ("g r" = go to Runs). Pure: feed it keys with their
 * time and it answers which binding completed, so it can be unit-tested without a DOM.
 */
export class KeySequence<A> {
  private pending: { key: string; at: number } | null = null;

  constructor(
    private readonly bindings: Readonly<Record<string, A>>,
    private readonly timeoutMs = 1200,
  ) {}

  /** Returns the action whose sequence this key completes, or null. */
  feed(key: string, at: number): A | null {
    if (this.pending && at - this.pending.at <= this.timeoutMs) {
      const seq = `${this.pending.key} ${key}`;
      this.pending = null;
      if (Object.prototype.hasOwnProperty.call(this.bindings, seq)) return this.bindings[seq];
    }
    this.pending = null;
    if (Object.prototype.hasOwnProperty.call(this.bindings, key)) return this.bindings[key];
    if (Object.keys(this.bindings).some((b) => b.startsWith(`${key} `))) this.pending = { key, at };
    return null;
  }

  reset(): void {
    this.pending = null;
  }
}

/** True when the event target is a place where typing must not trigger shortcuts. */
export function isTypingTarget(t: EventTarget | null): boolean {
  if (!t || typeof (t as HTMLElement).tagName !== 'string') return false;
  const el = t as HTMLElement;
  const tag = el.tagName.toLowerCase();
  return tag === 'input' || tag === 'textarea' || tag === 'select' || el.isContentEditable === true;
}
