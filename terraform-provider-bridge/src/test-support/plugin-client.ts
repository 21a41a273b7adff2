import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import { PROTO_DIR } from '../schema/package-paths.js';
import { MAGIC_COOKIE_KEY, MAGIC_COOKIE_VALUE } from '../provider-server/handshake.js';
import { selfSignedCertificate } from '../provider-server/self-signed-cert.js';
import { PLUGIN_BIN } from './build.js';

type Rpc = (request: object) => Promise<any>;

export interface PluginConnection {
  child: ChildProcess;
  handshake: string[];
  serverCertPem: string;
  /** tfplugin6.Provider RPCs by name. */
  provider: Record<string, Rpc>;
  health: Record<string, Rpc>;
  controller: Record<string, Rpc>;
  stderr: () => string;
  close(): Promise<void>;
}

function derToPem(base64NoPadding: string): string {
  const padded = base64NoPadding + '='.repeat((4 - (base64NoPadding.length % 4)) % 4);
  const der = Buffer.from(padded, 'base64');
  return `-----BEGIN CERTIFICATE-----\n${der.toString('base64').match(/.{1,64}/g)!.join('\n')}\n-----END CERTIFICATE-----\n`;
}

export function promisify(client: grpc.Client): Record<string, Rpc> {
  const out: Record<string, Rpc> = {};
  const proto = Object.getPrototypeOf(client) as Record<string, unknown>;
  for (const name of Object.keys(proto)) {
    const fn = (client as unknown as Record<string, Function>)[name];
    if (typeof fn !== 'function' || name === 'constructor') continue;
    out[name] = (request) =>
      new Promise((resolve, reject) => fn.call(client, request, (err: Error | null, res: unknown) => (err ? reject(err) : resolve(res))));
  }
  return out;
}

/** gRPC clients of the plugin's Provider, Health and GRPCController services over mutual TLS. */
export function connect(address: string, serverCertPem: string, clientCert: { certPem: string; keyPem: string }): grpc.Client[] {
  const definition = protoLoader.loadSync(['tfplugin6.proto', 'go-plugin.proto', 'health.proto'], {
    keepCase: true,
    longs: Number,
    enums: String,
    defaults: true,
    oneofs: true,
    includeDirs: [PROTO_DIR],
  });
  const pkg = grpc.loadPackageDefinition(definition) as any;
  const credentials = grpc.credentials.createSsl(Buffer.from(serverCertPem), Buffer.from(clientCert.keyPem), Buffer.from(clientCert.certPem));
  // go-plugin's client verifies the server as "localhost", whatever address it dials.
  const options = { 'grpc.ssl_target_name_override': 'localhost', 'grpc.default_authority': 'localhost' };
  return [
    new pkg.tfplugin6.Provider(address, credentials, options),
    new pkg.grpc.health.v1.Health(address, credentials, options),
    new pkg.plugin.GRPCController(address, credentials, options),
  ];
}


/**
 * Starts the plugin binary the way terraform's go-plugin client does (magic cookie, PLUGIN_CLIENT_CERT),
 * reads the handshake line, and connects over mutual TLS trusting only the certificate it announced.
 */
export async function startPlugin(env: NodeJS.ProcessEnv = {}): Promise<PluginConnection> {
  const clientCert = selfSignedCertificate();
  const child = spawn(PLUGIN_BIN, [], {
    env: { ...process.env, ...env, [MAGIC_COOKIE_KEY]: MAGIC_COOKIE_VALUE, PLUGIN_CLIENT_CERT: clientCert.certPem, PLUGIN_PROTOCOL_VERSIONS: '5,6' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  const line = await new Promise<string>((resolve, reject) => {
    const rl = createInterface({ input: child.stdout! });
    rl.once('line', (l) => resolve(l));
    child.once('exit', (code) => reject(new Error(`plugin exited with ${code} before the handshake: ${stderr}`)));
  });
  const handshake = line.split('|');
  const serverCertPem = derToPem(handshake[5]);
  const clients = connect(handshake[3], serverCertPem, clientCert);
  return {
    child,
    handshake,
    serverCertPem,
    provider: promisify(clients[0]),
    health: promisify(clients[1]),
    controller: promisify(clients[2]),
    stderr: () => stderr,
    async close() {
      for (const c of clients) c.close();
      if (child.exitCode === null) {
        const exited = new Promise((resolve) => child.once('exit', resolve));
        child.kill('SIGTERM');
        await exited;
      }
    },
  };
}
