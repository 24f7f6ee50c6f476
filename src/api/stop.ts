// Stop strings over streamed text (llama.cpp's semantics): the text up to a stop string is emitted, the
// stop string itself and everything after it never are. Text that could be the start of a stop string
// is held back until the next piece decides it.

export class StopMatcher {
  private pending = '';
  private readonly maxLen: number;

  constructor(private readonly stops: readonly string[]) {
    this.maxLen = stops.reduce((m, s) => Math.max(m, s.length), 0);
  }

  /**
   * Adds a piece of text; returns the text that is safe to emit now and the stop string found, if any
   * (then nothing more may be emitted). `final`: no more text follows, release what was held back.
   */
  feed(piece: string, final = false): { emit: string; stop: string | undefined } {
    this.pending += piece;
    let at = -1;
    let found: string | undefined;
    // the earliest stop string in the text wins
    for (const s of this.stops) {
      const i = this.pending.indexOf(s);
      if (i >= 0 && (at < 0 || i < at)) { at = i; found = s; }
    }
    if (found !== undefined) {
      const emit = this.pending.slice(0, at);
      this.pending = '';
      return { emit, stop: found };
    }
    if (final || this.maxLen === 0) {
      const emit = this.pending;
      this.pending = '';
      return { emit, stop: undefined };
    }
    // hold back the longest suffix that is a proper prefix of a stop string
    let hold = 0;
    for (const s of this.stops) {
      for (let k = Math.min(s.length - 1, this.pending.length); k > hold; k--) {
        if (this.pending.endsWith(s.slice(0, k))) { hold = k; break; }
      }
    }
    const emit = this.pending.slice(0, this.pending.length - hold);
    this.pending = this.pending.slice(this.pending.length - hold);
    return { emit, stop: undefined };
  }
}
