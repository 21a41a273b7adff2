import { AdminApiError, AdminConnectionError } from '@agentgw/cli';
import { HandlerError } from './resources/index.js';

export interface Diagnostic {
  severity: 'ERROR' | 'WARNING';
  summary: string;
  detail: string;
  attribute: { steps: Array<{ attribute_name: string } | { element_key_string: string } | { element_key_int: number }> } | null;
}

/** A tfplugin6 attribute path from a contract field path (names are attributes, numbers list indexes). */
export function attributePath(path: ReadonlyArray<PropertyKey>): Diagnostic['attribute'] {
  if (path.length === 0) return null;
  return {
    steps: path.map((step, i) => {
      if (typeof step === 'number') return { element_key_int: step };
      // Inside a map (labels) a name is a key, not an attribute.
      if (i > 0 && path[i - 1] === 'labels') return { element_key_string: String(step) };
      return { attribute_name: String(step) };
    }),
  };
}

export function errorDiagnostic(summary: string, detail: string, path: ReadonlyArray<PropertyKey> = []): Diagnostic {
  return { severity: 'ERROR', summary, detail, attribute: attributePath(path) };
}

/** Turns anything thrown while talking to the admin API into one diagnostic that says what failed and why. */
export function diagnosticFromError(action: string, e: unknown): Diagnostic {
  if (e instanceof HandlerError) return errorDiagnostic(e.summary, e.message);
  if (e instanceof AdminApiError) return errorDiagnostic(`${action} failed`, `${e.message} (${e.code}, HTTP ${e.status})`);
  if (e instanceof AdminConnectionError) return errorDiagnostic(`${action} failed`, e.message);
  return errorDiagnostic(`${action} failed`, e instanceof Error ? e.message : String(e));
}
