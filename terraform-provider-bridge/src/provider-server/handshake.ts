/** The go-plugin handshake terraform performs with every provider it starts. */

export const MAGIC_COOKIE_KEY = 'TF_PLUGIN_MAGIC_COOKIE';
export const MAGIC_COOKIE_VALUE = 'd602bf8f470bc67ca7faa0386276bbdd4330efaf76d1a219cb4d6991ca9872b2';
export const CORE_PROTOCOL_VERSION = 1;
export const PROTOCOL_VERSION = 6;

export const NOT_A_COMMAND =
  'This binary is a plugin. These are not meant to be executed directly.\n' +
  'Please execute the program that consumes these plugins, which will\n' +
  'load any plugins automatically';

/** Why this process must not serve (no cookie, or terraform offers no protocol 6), or null when it may. */
export function handshakeProblem(env: NodeJS.ProcessEnv): string | null {
  if (env[MAGIC_COOKIE_KEY] !== MAGIC_COOKIE_VALUE) return NOT_A_COMMAND;
  const offered = env.PLUGIN_PROTOCOL_VERSIONS;
  if (offered && !offered.split(',').map((v) => Number(v.trim())).includes(PROTOCOL_VERSION)) {
    return `terraform-provider-agentgw speaks plugin protocol ${PROTOCOL_VERSION}; the client offers ${offered}: use Terraform 1.0 or later`;
  }
  return null;
}

/**
 * The line go-plugin reads from the plugin's stdout:
 * CORE-VERSION|APP-VERSION|NETWORK|ADDRESS|PROTOCOL|SERVER-CERT (base64 DER without padding, empty without TLS).
 */
export function handshakeLine(address: string, serverCertDer?: Buffer): string {
  const cert = serverCertDer ? serverCertDer.toString('base64').replace(/=+$/, '') : '';
  return `${CORE_PROTOCOL_VERSION}|${PROTOCOL_VERSION}|tcp|${address}|grpc|${cert}`;
}
