// Facts about parts of request bodies (a message, an input item, a tool list), by the digest of the part's bytes. An
// agent sends its whole conversation again at every step: what an earlier step computed for a part is looked up, and
// only what is new is computed. A fact is a function of the part's value alone, so a looked-up fact is the fresh one.
import { receivedJsonOf } from './received-json.js';

/** The most parts remembered (about 150 bytes each with their facts); the least recently used go first. */
const MAX_PARTS = 65_536;

type Facts = Record<string, unknown>;

class PartCache {
  private readonly parts = new Map<string, Facts>();

  facts(digest: string): Facts {
    let facts = this.parts.get(digest);
    if (facts !== undefined) {
      // Most recently used last.
      this.parts.delete(digest);
    } else {
      facts = {};
      if (this.parts.size >= MAX_PARTS) {
        let n = MAX_PARTS >> 4;
        for (const k of this.parts.keys()) {
          this.parts.delete(k);
          if (--n === 0) break;
        }
      }
    }
    this.parts.set(digest, facts);
    return facts;
  }

  clear(): void {
    this.parts.clear();
  }
}

const cache = new PartCache();

function factOf<V>(digest: string, fact: string, compute: () => V): V {
  const facts = cache.facts(digest);
  if (fact in facts) return facts[fact] as V;
  const v = compute();
  facts[fact] = v;
  return v;
}

/**
 * `compute` of each element of the top-level array `member` of `body`, looked up by the element's bytes when `body` is
 * the body as received; computed afresh otherwise (a copy a check edited, a body built by the gateway). `fact` names
 * what is computed, and must name the same function (with the same settings) everywhere.
 */
export function perElement<V>(body: Record<string, unknown>, member: string, fact: string, compute: (element: unknown) => V): V[] {
  const elements = body[member];
  if (!Array.isArray(elements)) return [];
  const digests = receivedJsonOf(body)?.elementDigests(member);
  if (!digests) return elements.map(compute);
  return elements.map((e, i) => factOf(digests[i]!, fact, () => compute(e)));
}

/** `compute` of the top-level member `member` of `body`, looked up by its bytes as perElement does. */
export function ofMember<V>(body: Record<string, unknown>, member: string, fact: string, compute: (value: unknown) => V): V {
  const digest = receivedJsonOf(body)?.memberDigest(member);
  return digest ? factOf(digest, fact, () => compute(body[member])) : compute(body[member]);
}

/** Forgets every fact (tests). */
export function clearPartCache(): void {
  cache.clear();
}
