import { execFile, execFileSync } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/**
 * A PostgreSQL cluster of a test's own, on a free port, that the test may stop and restart at will (the shared server
 * on 5432 is never touched). Trust authentication, user `postgres`, database `postgres`. When the process runs as root,
 * initdb and pg_ctl run as the `postgres` system user (initdb refuses root).
 */
export interface OwnPostgres {
  readonly port: number;
  /** `postgres://postgres@127.0.0.1:PORT/postgres` */
  readonly url: string;
  readonly dataDir: string;
  start(): Promise<void>;
  /** `pg_ctl stop -m fast` (or another mode): connections are terminated with 57P01, as in an operator's restart. */
  stop(mode?: 'smart' | 'fast' | 'immediate'): Promise<void>;
  /** `pg_ctl restart -m fast`, returning once the server accepts connections again. */
  restart(mode?: 'smart' | 'fast' | 'immediate'): Promise<void>;
  /**
   * SIGSTOP to the postmaster and every backend: the server keeps its sockets open and answers nothing, as a host that
   * hangs (swapping, a stalled disk, a paused VM) would. thaw() (SIGCONT) resumes them; cleanup() thaws first.
   */
  freeze(): void;
  thaw(): void;
  /** Stops the server (immediately) and removes its files. */
  cleanup(): Promise<void>;
}

/** The postmaster's pid (first line of postmaster.pid) and its children's (the backends and background workers). */
function serverPids(dataDir: string): number[] {
  const postmaster = Number(readFileSync(join(dataDir, 'postmaster.pid'), 'utf8').split('\n')[0]);
  const children = execFileSync('ps', ['-o', 'pid=', '--ppid', String(postmaster)], { encoding: 'utf8' })
    .split('\n')
    .map((l) => Number(l.trim()))
    .filter((n) => n > 0);
  return [postmaster, ...children];
}

/** The bin directory of the newest PostgreSQL installed under /usr/lib/postgresql (or AGENTGW_TEST_PG_BIN). */
export function postgresBinDir(): string {
  if (process.env.AGENTGW_TEST_PG_BIN) return process.env.AGENTGW_TEST_PG_BIN;
  const root = '/usr/lib/postgresql';
  const versions = existsSync(root)
    ? readdirSync(root)
        .filter((v) => existsSync(join(root, v, 'bin', 'pg_ctl')))
        .sort((a, b) => Number(b) - Number(a))
    : [];
  if (versions.length === 0) throw new Error(`No PostgreSQL binaries under ${root}: install the postgresql package (or set AGENTGW_TEST_PG_BIN).`);
  return join(root, versions[0]!, 'bin');
}

/** A TCP port nobody listens on right now. */
export async function freePort(): Promise<number> {
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

/** Initialises and starts a fresh cluster; call cleanup() when done. */
export async function startOwnPostgres(): Promise<OwnPostgres> {
  const bin = postgresBinDir();
  const asRoot = process.getuid?.() === 0;
  const exec = async (cmd: string, args: string[]) => {
    const file = join(bin, cmd);
    try {
      return asRoot ? await run('runuser', ['-u', 'postgres', '--', file, ...args]) : await run(file, args);
    } catch (e) {
      const err = e as Error & { stderr?: string; stdout?: string };
      throw new Error(`${cmd} ${args.join(' ')} failed: ${err.message}\n${err.stdout ?? ''}${err.stderr ?? ''}`);
    }
  };
  const root = mkdtempSync(join(tmpdir(), 'agentgw-pg-'));
  const dataDir = join(root, 'data');
  const socketDir = root;
  const logFile = join(root, 'postgres.log');
  try {
    if (asRoot) {
      const { stdout: uid } = await run('id', ['-u', 'postgres']);
      const { stdout: gid } = await run('id', ['-g', 'postgres']);
      chownSync(root, Number(uid.trim()), Number(gid.trim()));
    }
    await exec('initdb', ['-D', dataDir, '-U', 'postgres', '--auth=trust', '--no-sync', '-E', 'UTF8', '--locale=C']);
  } catch (e) {
    rmSync(root, { recursive: true, force: true });
    throw e;
  }
  let port = 0;
  // fsync off: a test cluster that is thrown away needs no durability, and start-up and commits are faster.
  const serverOpts = () => `-p ${port} -k ${socketDir} -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off -c full_page_writes=off`;
  const pgCtl = (...args: string[]) => exec('pg_ctl', ['-D', dataDir, '-l', logFile, ...args]);
  let running = false;
  let frozen: number[] = [];
  const signal = (pids: number[], sig: NodeJS.Signals) => {
    for (const pid of pids) {
      try {
        process.kill(pid, sig);
      } catch {
        // a backend that ended meanwhile
      }
    }
  };
  const thaw = () => {
    signal(frozen, 'SIGCONT');
    frozen = [];
  };
  // A test worker that ends without cleanup() (a failed hook, a timeout) leaves no server behind.
  const onExit = () => {
    thaw();
    if (!running) return;
    try {
      const args = ['-D', dataDir, '-m', 'immediate', 'stop'];
      if (asRoot) execFileSync('runuser', ['-u', 'postgres', '--', join(bin, 'pg_ctl'), ...args], { stdio: 'ignore' });
      else execFileSync(join(bin, 'pg_ctl'), args, { stdio: 'ignore' });
    } catch {
      // already gone
    }
  };
  process.once('exit', onExit);
  const self: OwnPostgres = {
    get port() {
      return port;
    },
    get url() {
      return `postgres://postgres@127.0.0.1:${port}/postgres`;
    },
    dataDir,
    async start() {
      await pgCtl('-o', serverOpts(), '-w', '-t', '30', 'start');
      running = true;
    },
    async stop(mode = 'fast') {
      await pgCtl('-m', mode, '-w', '-t', '30', 'stop');
      running = false;
    },
    async restart(mode = 'fast') {
      await pgCtl('-m', mode, '-o', serverOpts(), '-w', '-t', '30', 'restart');
      running = true;
    },
    freeze() {
      if (frozen.length > 0) return;
      frozen = serverPids(dataDir);
      signal(frozen, 'SIGSTOP');
    },
    thaw,
    async cleanup() {
      thaw();
      if (running) await self.stop('immediate').catch(() => undefined);
      process.off('exit', onExit);
      rmSync(root, { recursive: true, force: true });
    },
  };
  // The free port may be taken between finding it and the server binding it: then another one.
  for (let attempt = 1; ; attempt++) {
    port = await freePort();
    try {
      await self.start();
      break;
    } catch (e) {
      if (attempt < 3) continue;
      await self.cleanup();
      throw e;
    }
  }
  return self;
}
