import { Box, Text } from 'ink';
import type { Line, Tone } from '../lines.js';

const COLOR: Record<Tone, string | undefined> = {
  create: 'green',
  update: 'yellow',
  delete: 'red',
  success: 'green',
  warning: 'yellow',
  error: 'red',
  muted: 'gray',
  plain: undefined,
};

export function LineView({ line }: { line: Line }) {
  if (line.text === '') return <Text> </Text>;
  return (
    <Text bold={line.bold}>
      {line.segments.map((s, i) => (
        <Text key={i} color={COLOR[s.tone]}>
          {s.text}
        </Text>
      ))}
    </Text>
  );
}

export function LinesView({ lines }: { lines: Line[] }) {
  return (
    <Box flexDirection="column">
      {lines.map((l, i) => (
        <LineView key={i} line={l} />
      ))}
    </Box>
  );
}
