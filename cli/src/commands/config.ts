import { connect, type ConnectionOptions } from '../services/connection.js';
import { renderDocument } from '../ui/document.js';
import { outputMode } from '../ui/output-mode.js';

/** The server's configuration as the admin interface reports it (never a provider secret). */
export async function configCommand(flags: ConnectionOptions & { json?: boolean }): Promise<number> {
  renderDocument(await connect(flags).getSystemConfig(), outputMode(flags));
  return 0;
}
