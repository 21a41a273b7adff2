// Large fresh texts are scanned by the scan workers: the same verdicts as on the main thread, an event loop that keeps
// turning meanwhile, a worker that dies replaced (its job failing, never passing), and the byte budget counted before.
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { afterAll, describe, expect, it } from 'vitest';
import { PII_TYPES, type PiiType } from '../../contract/policies.js';
import { LONG_JOB_CHARS, ScanPool, scanPool } from './scan-pool.js';
import {
  SYNC_SCAN_CHARS,
  ScanBudgetExceeded,
  redactRequestPii,
  redactRequestPiiAsync,
  scanRequestPii,
  scanRequestPiiAsync,
} from './scan-request.js';
import { allowFromLists, textVerdict } from './scan-text.js';
import { parseReceivedJson } from '../../json/parse-received.js';
import { partsLookedUp } from '../../json/part-cache.js';

/** Digits as a log or a data dump has them: nine-digit numbers, one a line. */
export function numberLines(chars: number, seed = 1): string {
  const out: string[] = [];
  let s = seed;
  let n = 0;
  while (n < chars) {
    s = (s * 1103515245 + 12345) & 0x7fffffff;
    const line = `${s % 1_000_000_000}\n`;
    out.push(line);
    n += line.length;
  }
  return out.join('');
}

const PII_SENTENCES = [
  'mail john.doe@example.com today',
  'call me on +44 20 7946 0958 please',
  'card 4111 1111 1111 1111 exp 12/29',
  'ssn 123-45-6789',
  'IBAN DE89 3704 0044 0532 0130 00',
  'from 81.2.69.142',
  'AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY',
  'reach noc@acme.io or 415-555-2671',
];

/** A long text with PII every so often among prose and numbers. */
function mixedText(chars: number, seed: number): string {
  const out: string[] = [];
  let n = 0;
  let i = seed;
  while (n < chars) {
    const piece = i % 5 === 0 ? PII_SENTENCES[i % PII_SENTENCES.length]! : i % 5 === 1 ? numberLines(60, i) : `Some prose about step ${i} of the build, nothing personal in it.`;
    out.push(piece, '\n');
    n += piece.length + 1;
    i++;
  }
  return out.join('');
}

const pool = new ScanPool(1);
afterAll(() => pool.close());

describe('scan workers', () => {
  it('load from the TypeScript sources and answer as the main thread does, allow-lists and JSON text included', async () => {
    const allowLists = [['*@acme.io']];
    const allow = allowFromLists(allowLists);
    const texts = [...PII_SENTENCES, mixedText(20_000, 3), JSON.stringify({ note: PII_SENTENCES.join(' '), password: 'Tr0ub4dor&3', n: 4155552671 })];
    const kinds = texts.map((_, i) => (i === texts.length - 1 ? 'json' : 'text') as 'text' | 'json');
    for (const redact of [false, true]) {
      const verdicts = await pool.run({ texts, kinds, types: PII_TYPES, allow: allowLists, redact });
      expect(verdicts).toEqual(texts.map((t, i) => textVerdict(t, kinds[i]!, PII_TYPES, allow, redact)));
    }
  });

  it('never queue a short job behind long ones: long jobs leave the last worker free', async () => {
    const two = new ScanPool(2);
    try {
      const short = () => two.run({ texts: [mixedText(100_000, 1)], kinds: ['text'], types: PII_TYPES, allow: [], redact: false });
      // Both workers started.
      await Promise.all([short(), short()]);
      expect(two.started).toHaveLength(2);
      const long = (seed: number) => two.run({ texts: [numberLines(1_500_000, seed)], kinds: ['text'], types: ['phone'], allow: [], redact: false });
      const longs = [long(1), long(2)];
      await new Promise((r) => setTimeout(r, 50));
      const started = performance.now();
      let longsDone = false;
      void Promise.all(longs).then(() => (longsDone = true));
      const [verdict] = await short();
      const shortMs = performance.now() - started;
      expect(verdict!.types.length).toBeGreaterThan(0);
      // Answered while the first long job still runs (the second waits for it).
      expect(longsDone).toBe(false);
      console.log(`a 100 KB job sent after two 1.5 MB ones: answered in ${shortMs.toFixed(0)} ms`);
      await Promise.all(longs);
    } finally {
      await two.close();
    }
  });

  it('replace a worker that dies: its job fails, the next one is answered', async () => {
    const job = pool.run({ texts: [numberLines(2_000_000)], kinds: ['text'], types: ['phone'], allow: [], redact: false });
    await new Promise((r) => setTimeout(r, 100));
    expect(pool.started).toHaveLength(1);
    await pool.started[0]!.terminate();
    await expect(job).rejects.toThrow(/exited/);
    const [verdict] = await pool.run({ texts: [PII_SENTENCES[0]!], kinds: ['text'], types: PII_TYPES, allow: [], redact: false });
    expect(verdict!.types).toEqual(['email']);
  });
});

/** A body as the gateway receives it: its parts are looked up by their bytes. */
const received = (body: object) => {
  const parsed = parseReceivedJson(Buffer.from(JSON.stringify(body))) as Record<string, unknown>;
  expect(partsLookedUp(parsed)).toBe(true);
  return parsed;
};

const chat = (...contents: string[]) => ({ model: 'm', messages: contents.map((content) => ({ role: 'user', content })) });

describe('scanRequestPiiAsync and redactRequestPiiAsync', () => {
  const types: readonly PiiType[] = PII_TYPES;

  it('find and redact what the main thread finds and redacts, in texts too large to scan on it', async () => {
    for (let seed = 0; seed < 4; seed++) {
      const body = {
        ...chat(mixedText(SYNC_SCAN_CHARS * 3, seed), 'short one', mixedText(5_000, seed + 7)),
        tools: [{ type: 'function', function: { name: 'f', description: mixedText(40_000, seed + 11), parameters: { type: 'object' } } }],
      };
      (body.messages as unknown[]).push({
        role: 'assistant',
        tool_calls: [{ id: 'c', type: 'function', function: { name: 'f', arguments: JSON.stringify({ text: mixedText(50_000, seed + 13) }) } }],
      });
      const allow = allowFromLists([['*@acme.io']]);
      expect(await scanRequestPiiAsync(structuredClone(body), types, undefined, undefined, allow)).toEqual(scanRequestPii(structuredClone(body), types, undefined, undefined, allow));
      const here = redactRequestPii(body, types, undefined, undefined, allow);
      const there = await redactRequestPiiAsync(body, types, undefined, undefined, allow);
      expect(there.types).toEqual(here.types);
      expect(JSON.stringify(there.body)).toBe(JSON.stringify(here.body));
      expect(JSON.stringify(there.body)).not.toContain('john.doe@example.com');
    }
  });

  it('keep texts whole across jobs: a match astride a job-sized offset is found, and each text gets its own verdict', async () => {
    const EMAIL = 'jane.roe@example.org';
    const prose = (n: number) => 'lorem ipsum dolor sit amet '.repeat(Math.ceil(n / 27)).slice(0, n);
    // One text longer than a job, with an address across the offset where a job would end; then texts that fill
    // several jobs, PII at the end of one and the start of the next.
    const long = `${prose(LONG_JOB_CHARS - 8)} ${EMAIL} ${prose(1_000)}`;
    const batch = Array.from({ length: 9 }, (_, i) => (i % 2 === 0 ? `${prose(70_000)} mail ${EMAIL}` : `call +44 20 7946 0958 ${prose(70_000)}`));
    const body = chat(long, ...batch);
    const here = redactRequestPii(body, types);
    const there = await redactRequestPiiAsync(body, types);
    expect(JSON.stringify(there.body)).toBe(JSON.stringify(here.body));
    expect(JSON.stringify(there.body)).not.toContain(EMAIL);
    expect(await scanRequestPiiAsync(body, types)).toEqual(['email', 'phone']);
  });

  it('keep the event loop turning while 4 MB of fresh digits are scanned', async () => {
    const body = chat(numberLines(4_000_000, Date.now() % 1000));
    const h = monitorEventLoopDelay({ resolution: 5 });
    h.enable();
    const started = performance.now();
    const found = await scanRequestPiiAsync(body, types);
    const took = performance.now() - started;
    h.disable();
    const maxHoldMs = h.max / 1e6;
    console.log(`4 MB of fresh digits: scanned in ${took.toFixed(0)} ms off the main thread; longest event-loop delay meanwhile ${maxHoldMs.toFixed(1)} ms`);
    expect(found).toContain('phone');
    // On the event loop this scan holds it for seconds; the bound leaves room for a machine that others share.
    expect(maxHoldMs).toBeLessThan(500);
  });

  it('look up a large part already scanned: the next step scans only what it added', async () => {
    const big = numberLines(300_000, 99);
    const step1 = received(chat(big, 'first question, long enough to be remembered by the clean-text memory'));
    expect(await scanRequestPiiAsync(step1, types)).toContain('phone');
    const step2 = received(chat(big, 'first question, long enough to be remembered by the clean-text memory', 'and a second one'));
    const busy = pool.started.length;
    const t = performance.now();
    expect(await scanRequestPiiAsync(step2, types)).toContain('phone');
    expect(performance.now() - t).toBeLessThan(50);
    expect(pool.started.length).toBe(busy);
  });

  it('look up a large top-level member (a system prompt, instructions) by its bytes, with the same verdict every time', async () => {
    const { visitResponsesTexts } = await import('../../data-plane/dialects/responses/responses-policy-view.js');
    const clean = `You are a coding agent. ${'Read the repository before you change it. '.repeat(200)}`;
    const withMail = `${clean} Escalate to ops.lead@example.com when stuck.`;
    for (const [instructions, want] of [[clean, []], [withMail, ['email']]] as const) {
      for (let step = 0; step < 3; step++) {
        const body = { model: 'm', instructions, input: [{ role: 'user', content: `question ${step} of many, long enough to be remembered` }], prompt_cache_key: 'k' };
        const expected = scanRequestPii(structuredClone(body), types, visitResponsesTexts);
        expect(expected).toEqual(want);
        expect(await scanRequestPiiAsync(received(body), types, visitResponsesTexts)).toEqual(expected);
      }
      // The same text under the scope that does not read it, and with the member under another name: read as that one is.
      const asUser = received({ model: 'm', metadata_note: instructions, input: [] });
      expect(await scanRequestPiiAsync(asUser, types, visitResponsesTexts, new Set(['user']))).toEqual(want);
      expect(await scanRequestPiiAsync(received({ model: 'm', instructions, input: [] }), types, visitResponsesTexts, new Set(['user']))).toEqual([]);
    }
  });

  it('agree with a scan on the main thread at every step of a growing conversation, requests of one step at once', async () => {
    const messages: Array<Record<string, unknown>> = [];
    for (let step = 0; step < 6; step++) {
      const large = step % 2 === 0 ? mixedText(SYNC_SCAN_CHARS + 5_000, step) : numberLines(SYNC_SCAN_CHARS * 2, step);
      messages.push({ role: step % 3 === 2 ? 'assistant' : 'user', content: step === 4 ? 'nothing to see here, just a short message' : large });
      const body = { model: 'm', messages };
      const expected = scanRequestPii(structuredClone(body), types);
      // Two agents sending the same new part at once: one waits for the other's scan.
      const [a, b] = await Promise.all([scanRequestPiiAsync(received(body), types), scanRequestPiiAsync(received(body), types)]);
      expect(a).toEqual(expected);
      expect(b).toEqual(expected);
    }
  });

  it('refuse text past the byte budget before scanning it, counting parts already scanned and UTF-8 bytes', async () => {
    const text = 'é'.repeat(5_000);
    const body = received(chat(text, text));
    const scan = (limit: number) => () => scanRequestPiiAsync(body, types, undefined, undefined, undefined, limit);
    // 10,000 characters, 20,000 bytes.
    expect(scan(19_999)).toThrow(ScanBudgetExceeded);
    expect(await scan(20_000)()).toEqual([]);
    // Scanned and remembered now: still counted.
    expect(scan(19_999)).toThrow(expect.objectContaining({ bytes: 20_000, limit: 19_999 }));
  });

  it('fail when a worker cannot scan, never pass', async () => {
    const body = chat(numberLines(SYNC_SCAN_CHARS * 4, 5));
    const running = scanRequestPiiAsync(body, types);
    // Awaited from the start, so the rejection that ending the workers causes is handled when it comes.
    const refused = expect(running).rejects.toThrow();
    await new Promise((r) => setTimeout(r, 20));
    await Promise.all(scanPool().started.map((w) => w.terminate()));
    await refused;
    // The same body again: scanned afresh by a new worker.
    expect(await scanRequestPiiAsync(body, types)).toContain('phone');
  });
});
