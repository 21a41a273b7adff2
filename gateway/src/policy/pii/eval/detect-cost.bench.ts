// The cost of detection per kind of text: `npx vitest bench gateway/src/policy/pii` (not part of `npm test`).
import { readdirSync, readFileSync } from 'node:fs';
import { bench, describe } from 'vitest';
import { PII_TYPES } from '../../../contract/policies.js';
import { messagesPolicyView } from '../../../data-plane/dialects/messages/messages-policy-view.js';
import { responsesPolicyView } from '../../../data-plane/dialects/responses/responses-policy-view.js';
import { detectPii } from '../detect-pii.js';
import { EVERY_PART } from '../request-texts.js';
import { fakerSamples } from './__fixtures__/faker-sentences.js';
import { readmeBlocks } from './__fixtures__/readme-paragraphs.js';

function agentTexts(): string[] {
  const texts: string[] = [];
  for (const [dir, view] of [['messages', messagesPolicyView], ['responses', responsesPolicyView]] as const) {
    const folder = new URL(`../../../data-plane/dialects/${dir}/__fixtures__/`, import.meta.url);
    for (const f of readdirSync(folder).filter((n) => /^(claude-code|codex).*request\.json$/.test(n))) {
      view.visitTexts(JSON.parse(readFileSync(new URL(f, folder), 'utf8')), (t) => void texts.push(t), EVERY_PART);
    }
  }
  return texts;
}

const blocks = readmeBlocks();
let digitDense = '';
for (let i = 0; i < 2000; i++) digitDense += `${(i * 7919) % 100000} ${(i * 104729) % 10000000}, `;

const CORPORA: Record<string, string[]> = {
  'agent requests, every part': agentTexts(),
  'README prose': blocks.filter((b) => !b.code).map((b) => b.text),
  'README code blocks': blocks.filter((b) => b.code).map((b) => b.text),
  'faker sentences': fakerSamples(20).map((s) => s.text),
  'a short prompt': ['Summarise the attached quarterly report in three bullet points, and keep it short please.'],
  'a line of 4,000 numbers': [digitDense],
};

describe('detectPii, all types', () => {
  for (const [name, texts] of Object.entries(CORPORA)) {
    const kb = texts.reduce((n, t) => n + t.length, 0) / 1024;
    bench(`${name} (${kb < 1 ? kb.toFixed(2) : kb.toFixed(0)} KB)`, () => {
      for (const t of texts) detectPii(t, PII_TYPES);
    });
  }
});
