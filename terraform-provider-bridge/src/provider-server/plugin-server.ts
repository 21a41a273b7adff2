import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import { PROTO_DIR } from '../schema/package-paths.js';
import { goPluginServices } from './go-plugin-services.js';
import { handshakeLine } from './handshake.js';
import { PROVIDER_RPCS, ProviderService } from './provider-service.js';
import { selfSignedCertificate } from './self-signed-cert.js';

export interface PluginServerOptions {
  /** PEM of the client certificate (go-plugin's PLUGIN_CLIENT_CERT): when set, only that client may connect (mutual TLS). */
  clientCertPem?: string;
  /** Called once go-plugin's controller asks the plugin to stop. */
  onShutdown?: () => void;
  /** Logs go to stderr, which go-plugin forwards to terraform's log. */
  log?: (line: string) => void;
}

export interface PluginServer {
  /** The line to print on stdout for go-plugin. */
  handshake: string;
  address: string;
  /** DER of the server certificate (absent without TLS). */
  serverCertDer?: Buffer;
  close(): Promise<void>;
}

// Proto field names stay snake_case, as the .proto files (and the wire) have them.
const LOADER_OPTIONS: protoLoader.Options = { keepCase: true, longs: Number, enums: String, defaults: true, oneofs: true, includeDirs: [PROTO_DIR] };

/** Wraps an RPC that returns a response (or a promise of one) as a grpc-js unary handler. */
function unary(name: string, fn: (request: any) => unknown, log: (line: string) => void): grpc.handleUnaryCall<any, any> {
  return (call, callback) => {
    Promise.resolve()
      .then(() => fn(call.request))
      .then(
        (response) => callback(null, response),
        (e: unknown) => {
          log(`[ERROR] ${name}: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}`);
          callback({ code: grpc.status.INTERNAL, details: `${name}: ${e instanceof Error ? e.message : String(e)}` } as grpc.ServiceError);
        },
      );
  };
}

/** Starts the gRPC server terraform talks to, on 127.0.0.1 and a free port. */
export async function startPluginServer(opts: PluginServerOptions = {}): Promise<PluginServer> {
  const log = opts.log ?? ((line: string) => process.stderr.write(`${line}\n`));
  const definition = protoLoader.loadSync(['tfplugin6.proto', 'go-plugin.proto', 'health.proto'], LOADER_OPTIONS);
  const pkg = grpc.loadPackageDefinition(definition) as any;
  const server = new grpc.Server();
  const provider = new ProviderService();
  const handlers = Object.fromEntries(PROVIDER_RPCS.map((rpc) => [rpc, unary(rpc, (req) => provider[rpc](req), log)]));
  server.addService(pkg.tfplugin6.Provider.service, handlers);

  let closing: Promise<void> | undefined;
  const close = () => {
    closing ??= new Promise<void>((resolve) => {
      goPlugin.endStreams();
      const force = setTimeout(() => server.forceShutdown(), 2_000);
      server.tryShutdown(() => {
        clearTimeout(force);
        resolve();
      });
    });
    return closing;
  };
  const goPlugin = goPluginServices(() => {
    void close().then(() => opts.onShutdown?.());
  });
  server.addService(pkg.grpc.health.v1.Health.service, goPlugin.health);
  server.addService(pkg.plugin.GRPCController.service, goPlugin.controller);
  server.addService(pkg.plugin.GRPCStdio.service, goPlugin.stdio);
  server.addService(pkg.plugin.GRPCBroker.service, goPlugin.broker);

  let credentials = grpc.ServerCredentials.createInsecure();
  let serverCertDer: Buffer | undefined;
  if (opts.clientCertPem) {
    const cert = selfSignedCertificate();
    serverCertDer = cert.der;
    credentials = grpc.ServerCredentials.createSsl(
      Buffer.from(opts.clientCertPem),
      [{ private_key: Buffer.from(cert.keyPem), cert_chain: Buffer.from(cert.certPem) }],
      true,
    );
  }
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync('127.0.0.1:0', credentials, (err, p) => (err ? reject(err) : resolve(p))),
  );
  const address = `127.0.0.1:${port}`;
  return { handshake: handshakeLine(address, serverCertDer), address, serverCertDer, close };
}
