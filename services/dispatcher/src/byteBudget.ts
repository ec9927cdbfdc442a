/**
 * Bytes a process holds for one kind of work at once, shared by every task doing it: a task
 * takes what it is about to hold and gives it back when done; past the budget, tasks wait their
 * turn, first come first served. A task larger than the whole budget takes all of it, alone.
 */
export class ByteBudget {
  private used = 0;
  private readonly waiting: { bytes: number; go: () => void }[] = [];

  constructor(readonly max: number) {}

  /** Resolves once `bytes` are held, with the function that gives them back (call it once). */
  async take(bytes: number): Promise<() => void> {
    const need = Math.min(Math.max(bytes, 0), this.max);
    if (!this.waiting.length && this.used + need <= this.max) this.used += need;
    else await new Promise<void>((go) => this.waiting.push({ bytes: need, go }));
    let given = false;
    return () => {
      if (given) return;
      given = true;
      this.used -= need;
      this.wake();
    };
  }

  /** Bytes held now. */
  held(): number {
    return this.used;
  }

  private wake(): void {
    while (this.waiting.length && this.used + this.waiting[0]!.bytes <= this.max) {
      const next = this.waiting.shift()!;
      this.used += next.bytes;
      next.go();
    }
  }
}
