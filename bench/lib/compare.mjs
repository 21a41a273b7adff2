// Comparisons measured inside one run: two targets of the same rounds (interleaved, their order rotating), so that
// what else runs on the machine weighs on both alike. Only such ratios mean anything on a shared machine.

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  if (s.length === 0) return NaN;
  const m = s.length >> 1;
  return s.length % 2 === 1 ? s[m] : (s[m - 1] + s[m]) / 2;
};

const usPerRequest = (round) => (round.cpuMs === null ? NaN : (round.cpuMs * 1000) / round.total);

/**
 * CPU per request of `after` against `before`, two targets of one loadPhase() result: the ratio over all rounds, the
 * per-round ratios (round i of one against round i of the other) with their median, min and max, and the same for the
 * difference in us per request. `limit` is {ratio} (after/before may be at most that) or {diffUs} (after - before may
 * be at most that); the verdict is on the median of the rounds, which one disturbed round cannot move.
 */
export function compareCpu(runs, before, after, { name, limit }) {
  const a = runs[before];
  const b = runs[after];
  const rounds = Math.min(a.rounds.length, b.rounds.length);
  const ratios = [];
  const diffs = [];
  for (let i = 0; i < rounds; i++) {
    const x = usPerRequest(a.rounds[i]);
    const y = usPerRequest(b.rounds[i]);
    ratios.push(y / x);
    diffs.push(y - x);
  }
  const out = {
    name,
    before,
    after,
    beforeUs: a.cpuUsPerRequest,
    afterUs: b.cpuUsPerRequest,
    ratio: b.cpuUsPerRequest / a.cpuUsPerRequest,
    diffUs: b.cpuUsPerRequest - a.cpuUsPerRequest,
    rounds: { ratios, diffsUs: diffs },
    medianRatio: median(ratios),
    minRatio: Math.min(...ratios),
    maxRatio: Math.max(...ratios),
    medianDiffUs: median(diffs),
    minDiffUs: Math.min(...diffs),
    maxDiffUs: Math.max(...diffs),
    limit,
  };
  out.pass = limit?.ratio !== undefined ? out.medianRatio <= limit.ratio : limit?.diffUs !== undefined ? out.medianDiffUs <= limit.diffUs : null;
  return out;
}

/** Time to the first text byte of two targets measured together (timeToFirstText): p50s, their difference, per block. */
export function compareFirstText(byTarget, before, after, { name }) {
  const a = byTarget[before];
  const b = byTarget[after];
  const diffs = a.roundP50Ms.map((x, i) => b.roundP50Ms[i] - x).filter(Number.isFinite);
  return {
    name,
    before,
    after,
    beforeP50Ms: a.firstText.p50Ms,
    afterP50Ms: b.firstText.p50Ms,
    beforeP99Ms: a.firstText.p99Ms,
    afterP99Ms: b.firstText.p99Ms,
    diffP50Ms: b.firstText.p50Ms - a.firstText.p50Ms,
    diffP99Ms: b.firstText.p99Ms - a.firstText.p99Ms,
    firstByteP50Ms: { [before]: a.firstByte.p50Ms, [after]: b.firstByte.p50Ms },
    rounds: { diffsP50Ms: diffs },
    medianDiffP50Ms: median(diffs),
    minDiffP50Ms: Math.min(...diffs),
    maxDiffP50Ms: Math.max(...diffs),
    samples: a.firstText.samples,
  };
}
