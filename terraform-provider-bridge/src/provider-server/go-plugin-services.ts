import type * as grpc from '@grpc/grpc-js';

type Call = grpc.ServerUnaryCall<Record<string, unknown>, unknown>;
type Callback = grpc.sendUnaryData<unknown>;

/** The services go-plugin's client uses besides the provider's own. */
export function goPluginServices(onShutdown: () => void) {
  const streams = new Set<{ end(): void }>();
  return {
    /** go-plugin pings the "plugin" service; an empty name means the whole server. */
    health: {
      Check(call: Call, callback: Callback) {
        const service = String(call.request.service ?? '');
        if (service === '' || service === 'plugin') callback(null, { status: 'SERVING' });
        else callback({ code: 5, details: `unknown service ${service}` } as grpc.ServiceError);
      },
    },
    controller: {
      Shutdown(_call: Call, callback: Callback) {
        callback(null, {});
        for (const s of streams) s.end();
        setImmediate(onShutdown);
      },
    },
    /** Nothing is mirrored (the plugin writes logs to stderr, which go-plugin reads), but the stream stays open as expected. */
    stdio: {
      StreamStdio(call: grpc.ServerWritableStream<unknown, unknown>) {
        streams.add(call);
        call.on('cancelled', () => streams.delete(call));
      },
    },
    /** The broker serves extra connections for plugins that dispense sub-plugins; a provider needs none. */
    broker: {
      StartStream(call: grpc.ServerDuplexStream<unknown, unknown>) {
        streams.add(call);
        call.on('data', () => undefined);
        call.on('end', () => {
          streams.delete(call);
          call.end();
        });
        call.on('cancelled', () => streams.delete(call));
      },
    },
    endStreams() {
      for (const s of streams) s.end();
      streams.clear();
    },
  };
}
