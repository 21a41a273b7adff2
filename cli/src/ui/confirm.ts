/** Asks a yes/no question on the terminal (ink is loaded only here, on a terminal). */
export async function confirm(question: string): Promise<boolean> {
  const { confirmPrompt } = await import('./ink/confirm-prompt.js');
  return confirmPrompt(question);
}
