import { Text, render, useApp, useInput } from 'ink';
import { useState } from 'react';

function Confirm({ question, onAnswer }: { question: string; onAnswer: (yes: boolean) => void }) {
  const [answer, setAnswer] = useState<boolean | null>(null);
  const { exit } = useApp();
  useInput((input, key) => {
    if (answer !== null) return;
    const yes = input.toLowerCase() === 'y';
    if (yes || input.toLowerCase() === 'n' || key.return || key.escape) {
      setAnswer(yes);
      onAnswer(yes);
      // leave one frame with the answer on screen
      setTimeout(() => exit(), 0);
    }
  });
  return (
    <Text>
      <Text bold>{question}</Text> {answer === null ? <Text color="gray">(y/N) </Text> : <Text color={answer ? 'green' : 'red'}>{answer ? 'yes' : 'no'}</Text>}
    </Text>
  );
}

/** Asks a yes/no question on the terminal; anything but "y" is no (Ctrl+C too). */
export async function confirmPrompt(question: string): Promise<boolean> {
  let answer = false;
  const app = render(<Confirm question={question} onAnswer={(yes) => (answer = yes)} />, { exitOnCtrlC: true });
  await app.waitUntilExit();
  return answer;
}
