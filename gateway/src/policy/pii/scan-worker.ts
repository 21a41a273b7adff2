// A scan worker (scan-pool.ts): reads the texts of one job as the main thread would, and answers with their verdicts.
import { parentPort } from 'node:worker_threads';
import type { ScanJob, ScanJobAnswer } from './scan-pool.js';
import { allowFromLists, textVerdict } from './scan-text.js';

parentPort!.on('message', (job: ScanJob) => {
  let answer: ScanJobAnswer;
  try {
    const allow = allowFromLists(job.allow);
    answer = { id: job.id, verdicts: job.texts.map((text, i) => textVerdict(text, job.kinds[i]!, job.types, allow, job.redact)) };
  } catch (e) {
    answer = { id: job.id, error: e instanceof Error ? e.message : String(e) };
  }
  parentPort!.postMessage(answer);
});
