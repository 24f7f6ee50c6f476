// Progress on stderr when it is a terminal; silent when piped.
export function progress(label: string): { update(done: number, total: number): void; done(): void } {
  const tty = process.stderr.isTTY === true;
  let last = -1;
  return {
    update(done, total) {
      if (!tty) return;
      const pct = total > 0 ? Math.floor((100 * done) / total) : 100;
      if (pct === last) return;
      last = pct;
      process.stderr.write(`\r${label} ${pct}%`);
    },
    done() { if (tty && last >= 0) process.stderr.write('\r\x1b[K'); },
  };
}
