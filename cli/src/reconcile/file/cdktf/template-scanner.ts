/** One piece of a Terraform JSON string: literal text or the source of a `${...}` interpolation. */
export type TemplatePart = { kind: 'text'; text: string } | { kind: 'expr'; source: string };

/** Index just past the closing quote of an HCL string literal that opens at `start`. */
function scanString(s: string, start: number): number {
  let i = start + 1;
  while (i < s.length) {
    const c = s[i];
    if (c === '\\') i += 2;
    else if (c === '"') return i + 1;
    else if (s.startsWith('${', i)) i = scanExpression(s, i + 2) + 1;
    else i += 1;
  }
  throw new Error(`unterminated string in ${JSON.stringify(s)}`);
}

/** Index of the `}` that closes an interpolation whose expression starts at `start`. */
function scanExpression(s: string, start: number): number {
  let depth = 0;
  let i = start;
  while (i < s.length) {
    const c = s[i];
    if (c === '"') {
      i = scanString(s, i);
      continue;
    }
    if (c === '{') depth += 1;
    if (c === '}') {
      if (depth === 0) return i;
      depth -= 1;
    }
    i += 1;
  }
  throw new Error(`unterminated \${ in ${JSON.stringify(s)}`);
}

/** Splits a string of Terraform's JSON syntax into text and interpolations (`$${` is an escaped `${`). */
export function scanTemplate(s: string): TemplatePart[] {
  const parts: TemplatePart[] = [];
  let text = '';
  let i = 0;
  while (i < s.length) {
    if (s.startsWith('$${', i)) {
      text += '${';
      i += 3;
    } else if (s.startsWith('${', i)) {
      const end = scanExpression(s, i + 2);
      if (text) parts.push({ kind: 'text', text });
      text = '';
      parts.push({ kind: 'expr', source: s.slice(i + 2, end).trim() });
      i = end + 1;
    } else {
      text += s[i];
      i += 1;
    }
  }
  if (text || parts.length === 0) parts.push({ kind: 'text', text });
  return parts;
}

/** A traversal such as `agentgw_tenant.acme.id` or `var.models[0]`, split into names and indexes. */
export function parseTraversal(source: string): Array<string | number> | null {
  const re = /^([A-Za-z_][\w-]*)((?:\.[A-Za-z_][\w-]*|\.\d+|\[\d+\]|\["[^"\\]*"\])*)$/;
  const m = re.exec(source);
  if (!m) return null;
  const steps: Array<string | number> = [m[1]];
  for (const step of m[2].match(/\.[A-Za-z_][\w-]*|\.\d+|\[\d+\]|\["[^"\\]*"\]/g) ?? []) {
    if (step.startsWith('["')) steps.push(step.slice(2, -2));
    else if (step.startsWith('[')) steps.push(Number(step.slice(1, -1)));
    else if (/^\.\d+$/.test(step)) steps.push(Number(step.slice(1)));
    else steps.push(step.slice(1));
  }
  return steps;
}
