import { existsSync } from 'node:fs';
import { type Browser, chromium } from 'playwright-core';

/** Debian's chromium (`.ci/run` installs it when absent); AGENTGW_TEST_CHROMIUM points elsewhere. */
export const CHROMIUM = process.env.AGENTGW_TEST_CHROMIUM ?? '/usr/bin/chromium';

/** Headless chromium for the console's browser tests: no sandbox (CI runs as root), no GPU, no calls home. */
export async function launchChromium(): Promise<Browser> {
  if (!existsSync(CHROMIUM)) {
    throw new Error(`No chromium at ${CHROMIUM}: install Debian's chromium package (apt-get install chromium) or set AGENTGW_TEST_CHROMIUM.`);
  }
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
  });
}
