// Facts about parts of request bodies (a message, an input item, a tool list), by the digest of the part's bytes. An
// agent sends its whole conversation again at every step: what an earlier step computed for a part is looked up, and
// only what is new is computed. A fact is a function of the part's value alone, so a looked-up fact is the fresh one.
import { Generations } from './generations.js';
import { receivedJsonOf } from './received-json.js';

/**
 * The most parts remembered, about 200 bytes each with their facts (3 MB): the conversations of a few hundred agents in
 * flight, and a bounded part of the gateway's memory.
 */
const MAX_PARTS = 16_384;

type Facts = Record<string, unknown>;

/** Facts by part digest, least recently used dropped first (see Generations). */
const cache = new Generations<Facts>(MAX_PARTS / 2);

function factOf<V>(digest: string, fact: string, compute: () => V): V {
  let facts = cache.get(digest);
  if (facts === undefined) cache.set(digest, (facts = {}));
  if (fact in facts) return facts[fact] as V;
  const v = compute();
  facts[fact] = v;
  return v;
}

/**
 * Bodies smaller than this are computed afresh: digesting and looking up their parts would cost about what computing
 * does, and such a body is no long conversation sent again.
 */
export const MIN_BODY_BYTES = 4_096;

/** The body's bytes, when its parts are looked up (see perElement). */
function cachedBody(body: Record<string, unknown>) {
  const raw = receivedJsonOf(body);
  return raw !== undefined && raw.bytes.length >= MIN_BODY_BYTES ? raw : undefined;
}

/** Whether perElement and ofMember look up the parts of `body` (it is the body as received, and a large one). */
export function partsLookedUp(body: Record<string, unknown>): boolean {
  return cachedBody(body) !== undefined;
}

/**
 * `compute` of each element of the top-level array `member` of `body`, looked up by the element's bytes when `body` is
 * the body as received; computed afresh otherwise (a copy a check edited, a body built by the gateway). `fact` names
 * what is computed, and must name the same function (with the same settings) everywhere.
 */
export function perElement<V>(body: Record<string, unknown>, member: string, fact: string, compute: (element: unknown) => V): V[] {
  const elements = body[member];
  if (!Array.isArray(elements)) return [];
  const digests = cachedBody(body)?.elementDigests(member);
  if (!digests || digests.length !== elements.length) return elements.map(compute);
  return elements.map((e, i) => factOf(digests[i]!, fact, () => compute(e)));
}

/** `compute` of the top-level member `member` of `body`, looked up by its bytes as perElement does. */
export function ofMember<V>(body: Record<string, unknown>, member: string, fact: string, compute: (value: unknown) => V): V {
  const digest = cachedBody(body)?.memberDigest(member);
  return digest ? factOf(digest, fact, () => compute(body[member])) : compute(body[member]);
}

/** Forgets every fact (tests). */
export function clearPartCache(): void {
  cache.clear();
}
