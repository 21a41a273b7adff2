import { handshakeProblem } from './handshake.js';
import { startPluginServer } from './plugin-server.js';

// Entry point of bin/terraform-provider-agentgw: terraform starts it and reads the handshake line from stdout.
const problem = handshakeProblem(process.env);
if (problem) {
  process.stderr.write(`${problem}\n`);
  process.exit(1);
}

// Terraform forwards Ctrl-C to the whole process group and then stops the plugin itself, as go-plugin expects.
process.on('SIGINT', () => undefined);

const server = await startPluginServer({
  clientCertPem: process.env.PLUGIN_CLIENT_CERT || undefined,
  onShutdown: () => process.exit(0),
});
process.stdout.write(`${server.handshake}\n`);
process.on('SIGTERM', () => void server.close().then(() => process.exit(0)));
