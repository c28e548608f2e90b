import { ConfigError, loadConfig, type GatewayConfig } from '../config/index.js';
import { hashPassword, validatePassword, validateUsername } from '../admin/passwords.js';
import type { Daemon } from '../daemon/index.js';
import { openStore } from '../store/index.js';
import { CertificateAuthority } from '../tls/index.js';

/** Prints the problem and exits 1: every CLI failure ends here with a message, never a stack. */
function fail(message: string, code = 1): never {
  process.stderr.write(`gatewayd: ${message}\n`);
  process.exit(code);
}

function load(file: string): GatewayConfig {
  try {
    return loadConfig(file).config;
  } catch (err) {
    if (err instanceof ConfigError) fail(`invalid config:\n${err.message}`);
    throw err;
  }
}

export async function runServe(file: string): Promise<void> {
  load(file); // report config errors plainly before anything starts
  let daemon: Daemon;
  try {
    const { Daemon } = await import('../daemon/index.js');
    daemon = await Daemon.start(file);
  } catch (err) {
    fail(err instanceof ConfigError ? `invalid config:\n${err.message}` : (err as Error).message);
  }
  const b = daemon.bound;
  const host = daemon.ctx.config().gateway.hostname;
  const port = daemon.ctx.publicHttpsPort();
  const base = `https://${host}${port === 443 ? '' : `:${port}`}`;
  process.stderr.write(
    `gatewayd ${daemon.ctx.version} is running.\n` +
      `  portal: ${base}/portal    admin: ${base}/admin\n` +
      `  TLS on ${b.https.address}:${b.https.port}` +
      (b.dns ? `, DNS on ${b.dns.address}:${b.dns.port} (try: dig @${b.dns.address} -p ${b.dns.port} ${host})` : '') +
      (b.http ? `, HTTP on ${b.http.address}:${b.http.port}` : '') +
      (b.metrics ? `, metrics on ${b.metrics.address}:${b.metrics.port}` : '') +
      `\n  trust the CA from ${base}/ca.pem (or: gatewayd ca export --config ${file})\n`,
  );
  let reloading = Promise.resolve(true);
  process.on('SIGHUP', () => {
    reloading = reloading.then(() => daemon.reload());
  });
  const stop = (signal: string) => {
    daemon.log.info({ signal }, 'signal received');
    void daemon.stop().then(() => process.exit(0));
  };
  process.once('SIGTERM', () => stop('SIGTERM'));
  process.once('SIGINT', () => stop('SIGINT'));
  // No input from the network may crash the daemon; if a bug slips through, log it and carry on.
  process.on('uncaughtException', (err) => daemon.log.error({ err }, 'uncaught exception'));
  process.on('unhandledRejection', (err) => daemon.log.error({ err }, 'unhandled rejection'));
}

export async function runConfigCheck(file: string): Promise<void> {
  const c = load(file);
  process.stdout.write(`${file}: ok (gateway ${c.gateway.hostname}, ${c.tls.routes.length} SNI routes, dataDir ${c.dataDir})\n`);
}

export async function runCaInit(file: string): Promise<void> {
  const c = load(file);
  const { ca, created } = CertificateAuthority.loadOrCreate(c.dataDir, `gatewayd CA (${c.gateway.hostname})`);
  const dir = CertificateAuthority.paths(c.dataDir).dir;
  process.stdout.write(`${created ? 'created' : 'kept the existing'} CA in ${dir} (SHA-256 ${ca.fingerprint})\n`);
}

export async function runCaExport(file: string, format: 'pem' | 'der'): Promise<void> {
  const c = load(file);
  const ca = CertificateAuthority.load(c.dataDir);
  if (!ca) fail(`no CA in ${CertificateAuthority.paths(c.dataDir).dir} yet: run gatewayd ca init --config ${file}`);
  process.stdout.write(format === 'der' ? ca.der() : ca.certPem);
}

async function readStdin(): Promise<string> {
  if (process.stdin.isTTY) process.stderr.write('password: ');
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8').replace(/\r?\n$/, '');
}

export async function runAdminAdd(file: string, username: string, tenant?: string, appliance = false): Promise<void> {
  const c = load(file);
  const badName = validateUsername(username);
  if (badName) fail(badName);
  const tenants = c.tenants?.map((t) => t.id) ?? ['default'];
  if (tenant !== undefined && !tenants.includes(tenant)) fail(`no tenant "${tenant}" in the config (known: ${tenants.join(', ')})`);
  if (tenant !== undefined && appliance) fail('--tenant and --appliance exclude each other');
  const password = await readStdin();
  const badPassword = validatePassword(password);
  if (badPassword) fail(`${badPassword} (the password is read from stdin)`);
  const store = await openStore(c.dataDir);
  try {
    // A password change keeps the admin's scope; only --tenant or --appliance changes it.
    const created = await store.admins.upsert(username, await hashPassword(password), appliance ? null : tenant);
    const scope = tenant ? ` for tenant "${tenant}"` : appliance ? ' for the whole appliance' : '';
    process.stdout.write(created ? `created admin "${username}"${scope}\n` : `changed the password of admin "${username}"${scope} and ended its sessions\n`);
  } finally {
    await store.close();
  }
}
