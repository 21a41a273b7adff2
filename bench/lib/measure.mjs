// The three measurements: throughput under load (autocannon), added latency with one request in flight, time to first streamed byte.
import autocannon from 'autocannon';
import { Client } from 'undici';
import { chatBody, headersFor } from './workload.mjs';

const PATH = '/v1/chat/completions';

/** Requests/s and latency percentiles of `connections` concurrent keep-alive connections for `seconds`. */
export async function load({ url, apiKey, stream, connections, seconds, path = PATH, body = chatBody, headers = headersFor }) {
  const result = await autocannon({
    url,
    connections,
    duration: seconds,
    pipelining: 1,
    timeout: 10,
    requests: [
      {
        method: 'POST',
        path,
        setupRequest: (req) => {
          const { n, json } = body({ stream });
          return { ...req, headers: headers(apiKey, n), body: json };
        },
      },
    ],
  });
  return {
    requestsPerSec: result.requests.total / result.duration,
    p50Ms: result.latency.p50,
    p99Ms: result.latency.p99,
    meanMs: result.latency.mean,
    total: result.requests.total,
    seconds: result.duration,
    failures: result.errors + result.timeouts + result.non2xx,
  };
}

/** Nearest-rank percentile of a sorted array. */
export function percentile(sorted, p) {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))];
}

function summary(samplesNs) {
  const ms = samplesNs.map((ns) => Number(ns) / 1e6).sort((a, b) => a - b);
  return { p50Ms: percentile(ms, 50), p99Ms: percentile(ms, 99), samples: ms.length };
}

class RequestFailed extends Error {}

/** One request on a dedicated keep-alive connection; returns the time to the first body byte and to the end, in ns. */
async function timedRequest(client, { apiKey, path = PATH }, { stream, model }) {
  const { n, json } = chatBody({ stream, model });
  const t0 = process.hrtime.bigint();
  const res = await client.request({ method: 'POST', path, headers: headersFor(apiKey, n), body: json });
  let first = 0n;
  let text = '';
  for await (const chunk of res.body) {
    if (first === 0n) first = process.hrtime.bigint();
    text += chunk;
  }
  const end = process.hrtime.bigint();
  if (res.statusCode !== 200) throw new RequestFailed(`HTTP ${res.statusCode}: ${text.slice(0, 300)}`);
  if (stream && !text.includes('data: [DONE]')) throw new RequestFailed(`stream ended without [DONE]: ${text.slice(0, 300)}`);
  return { firstByteNs: first - t0, totalNs: end - t0 };
}

/**
 * Sequential requests, one in flight at a time, interleaved across targets round by round
 * so that drift (CPU frequency, GC in this process) weighs on every target alike.
 */
async function interleaved(targets, { warmup, samples, stream, model, pick }) {
  const clients = targets.map((t) => new Client(t.url, { pipelining: 1, keepAliveTimeout: 60_000 }));
  const times = targets.map(() => []);
  try {
    for (let i = 0; i < warmup + samples; i++) {
      for (let k = 0; k < targets.length; k++) {
        const t = await timedRequest(clients[k], targets[k], { stream, model });
        if (i >= warmup) times[k].push(pick(t));
      }
    }
  } finally {
    await Promise.all(clients.map((c) => c.close()));
  }
  return Object.fromEntries(targets.map((t, k) => [t.name, summary(times[k])]));
}

/** Whole-response latency of non-streamed requests with one in flight. */
export function sequentialLatency(targets, { warmup, samples }) {
  return interleaved(targets, { warmup, samples, stream: false, pick: (t) => t.totalNs });
}

/**
 * Time to the first body byte of streamed requests whose upstream holds back everything after its first chunk
 * (targets give the mock's slow path, or the gateway the slow provider's model).
 */
export function timeToFirstByte(targets, { warmup, samples, model }) {
  return interleaved(targets, { warmup, samples, stream: true, model, pick: (t) => t.firstByteNs });
}

/**
 * Time to the first text byte of an agent workload's streams (the mock's /slow-text/ paths send everything up to the
 * first text event at once and the rest later): per target, the time from sending to the arrival of the first answer
 * text ('word0'), and to the first body byte. One request in flight; targets alternate request by request (their order
 * swapped every other request), so drift weighs on each alike. The samples are also split into `rounds` blocks, each
 * with its own p50.
 */
export async function timeToFirstText(targets, workload, { warmup, samples, rounds }) {
  const clients = targets.map((t) => new Client(t.url, { pipelining: 1, keepAliveTimeout: 60_000 }));
  const text = targets.map(() => []);
  const firstByte = targets.map(() => []);
  try {
    for (let i = 0; i < warmup + samples; i++) {
      const order = i % 2 === 0 ? targets.map((_, k) => k) : targets.map((_, k) => targets.length - 1 - k);
      for (const k of order) {
        const { n, json } = workload.body({ stream: true });
        const t0 = process.hrtime.bigint();
        const res = await clients[k].request({ method: 'POST', path: workload.path, headers: workload.headers(targets[k].apiKey, n), body: json });
        let first = 0n;
        let firstText = 0n;
        let got = '';
        for await (const chunk of res.body) {
          const now = process.hrtime.bigint();
          if (first === 0n) first = now;
          got += chunk;
          if (firstText === 0n && got.includes('word0')) firstText = now;
        }
        if (res.statusCode !== 200 || firstText === 0n || !got.includes(workload.answered(true))) {
          throw new RequestFailed(`${targets[k].name} (${workload.name} streaming, first text): HTTP ${res.statusCode}, incomplete or without text: ${got.slice(0, 300)}`);
        }
        if (i >= warmup) {
          text[k].push(firstText - t0);
          firstByte[k].push(first - t0);
        }
      }
    }
  } finally {
    await Promise.all(clients.map((c) => c.close()));
  }
  const blocks = Math.max(1, Math.min(rounds, samples));
  return Object.fromEntries(
    targets.map((t, k) => {
      const size = Math.ceil(text[k].length / blocks);
      const perRound = [];
      for (let b = 0; b < text[k].length; b += size) perRound.push(summary(text[k].slice(b, b + size)).p50Ms);
      return [t.name, { firstText: summary(text[k]), firstByte: summary(firstByte[k]), roundP50Ms: perRound }];
    }),
  );
}
