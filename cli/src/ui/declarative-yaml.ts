import type { DeclarativeFile } from '@agentgw/gateway/contract';
import { stringify } from 'yaml';

/** The exported file as YAML, with a header saying where it came from. */
export function declarativeYaml(file: DeclarativeFile, from: string): string {
  const header = `# Exported from ${from}. Apply it back with: agentgw apply -f FILE\n`;
  return header + stringify(file, { lineWidth: 0 });
}
