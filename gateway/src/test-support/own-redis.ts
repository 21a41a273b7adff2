import { type ChildProcess, spawn } from 'node:child_process';
import { connect, createServer } from 'node:net';

/**
 * A Redis server of a test's own, on a free port, without persistence (`--save "" --appendonly no`), that the test may
 * stop and restart at will: a restart comes back empty, as a Redis without persistence does in production. The shared
 * server on 6379 is never touched.
 */
export interface OwnRedis {
  readonly port: number;
  /** `redis://127.0.0.1:PORT` */
  readonly url: string;
  readonly running: boolean;
  /** Starts the server (again) on the same port; resolves once it answers PING. */
  start(): Promise<void>;
  /** SIGTERM (or SIGKILL) and wait for the process to exit; clients see their connection closed. */
  stop(signal?: 'SIGTERM' | 'SIGKILL'): Promise<void>;
  /** SIGSTOP: the server keeps its connections but answers nothing (a hung Redis); resume() with SIGCONT. */
  pause(): void;
  resume(): void;
  /** stop() then start(): the server comes back with no data at all. */
  restartWithoutData(): Promise<void>;
  /** Stops the server if it runs. */
  cleanup(): Promise<void>;
}

export function redisServerBinary(): string {
  return process.env.AGENTGW_TEST_REDIS_SERVER ?? 'redis-server';
}

/** Starts a fresh server on a free port; call cleanup() when done. */
export async function startOwnRedis(): Promise<OwnRedis> {
  const port = await freePort();
  let child: ChildProcess | undefined;
  let stderr = '';
  const self: OwnRedis = {
    port,
    url: `redis://127.0.0.1:${port}`,
    get running() {
      return child !== undefined;
    },
    async start() {
      if (child) return;
      const proc = spawn(
        redisServerBinary(),
        ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', '/tmp', '--loglevel', 'warning'],
        { stdio: ['ignore', 'ignore', 'pipe'] },
      );
      proc.stderr?.on('data', (d: Buffer) => (stderr = (stderr + d.toString()).slice(-4000)));
      const exited = new Promise<never>((_, reject) =>
        proc.once('exit', (code) => reject(new Error(`redis-server on port ${port} exited with ${code} while starting: ${stderr}`))),
      );
      exited.catch(() => undefined);
      child = proc;
      proc.once('exit', () => {
        if (child === proc) child = undefined;
      });
      const deadline = Date.now() + 10_000;
      while (!(await Promise.race([ping(port), exited]))) {
        if (Date.now() > deadline) {
          await self.stop('SIGKILL');
          throw new Error(`redis-server on port ${port} did not answer PING within 10 s: ${stderr}`);
        }
        await new Promise((r) => setTimeout(r, 20));
      }
    },
    async stop(signal = 'SIGTERM') {
      const proc = child;
      if (!proc) return;
      proc.kill('SIGCONT');
      const gone = new Promise<void>((resolve) => proc.once('exit', () => resolve()));
      proc.kill(signal);
      const timer = setTimeout(() => proc.kill('SIGKILL'), 5_000);
      await gone;
      clearTimeout(timer);
      child = undefined;
    },
    pause() {
      child?.kill('SIGSTOP');
    },
    resume() {
      child?.kill('SIGCONT');
    },
    async restartWithoutData() {
      await self.stop();
      await self.start();
    },
    async cleanup() {
      await self.stop('SIGKILL');
    },
  };
  await self.start();
  return self;
}

/** True when a server on the port answers PING with +PONG. */
function ping(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    let data = '';
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(500, () => done(false));
    socket.once('error', () => done(false));
    socket.once('connect', () => socket.write('PING\r\n'));
    socket.on('data', (d) => {
      data += d.toString();
      if (data.includes('\r\n')) done(data.startsWith('+PONG'));
    });
  });
}

/** A TCP port nobody listens on right now. */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      const port = typeof addr === 'object' && addr ? addr.port : 0;
      srv.close(() => resolve(port));
    });
  });
}
