// A bounded map for what the gateway remembers of request bodies (part facts, parsed parts, written JSON, sightings).

/**
 * Two generations: entries go into the young one, an entry found in the old one moves up, and when the young one holds
 * `budget` (in the entries' own cost: 1 each, or their bytes) it becomes the old one and the old one is dropped. Least
 * recently used entries go first, in constant time per look-up, and at most twice the budget is held.
 */
export class Generations<V> {
  private young = new Map<string, V>();
  private old = new Map<string, V>();
  private youngCost = 0;

  constructor(
    private readonly budget: number,
    private readonly costOf: (value: V) => number = () => 1,
  ) {}

  /** The entry for `key`, moved up if it was in the old generation. */
  get(key: string): V | undefined {
    const young = this.young.get(key);
    if (young !== undefined) return young;
    const old = this.old.get(key);
    if (old !== undefined) this.set(key, old);
    return old;
  }

  /** Whether `key` has an entry, without moving it. */
  has(key: string): boolean {
    return this.young.has(key) || this.old.has(key);
  }

  set(key: string, value: V): void {
    const cost = this.costOf(value);
    if (this.youngCost + cost > this.budget) {
      this.old = this.young;
      this.young = new Map();
      this.youngCost = 0;
    }
    this.young.set(key, value);
    this.youngCost += cost;
  }

  clear(): void {
    this.young = new Map();
    this.old = new Map();
    this.youngCost = 0;
  }
}
