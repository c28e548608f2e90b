import { readFileSync } from 'node:fs';
import { dirname, isAbsolute, resolve } from 'node:path';
import { LineCounter, parseDocument, isNode, type Node } from 'yaml';
import { configSchema, type GatewayConfig } from './schema.js';

export { parseHostPort, isHostname } from './schema.js';
export type { GatewayConfig, HostPort, SniRoute, IdentityMode, NasConfig, PortalSeed, TenantConfig, Branding, CoaAttributeName } from './schema.js';
export { IDENTITY_MODES, emailDomain, webhookUrl, brandingSchema } from './schema.js';

/** One precise complaint about the config: where it is and what is wrong. */
export interface ConfigProblem {
  file: string;
  line?: number;
  column?: number;
  key: string;
  message: string;
}

export class ConfigError extends Error {
  constructor(public readonly problems: ConfigProblem[]) {
    super(problems.map(formatProblem).join('\n'));
    this.name = 'ConfigError';
  }
}

export function formatProblem(p: ConfigProblem): string {
  const where = p.line ? `${p.file}:${p.line}:${p.column ?? 1}` : p.file;
  return p.key ? `${where}: ${p.key}: ${p.message}` : `${where}: ${p.message}`;
}

export interface LoadedConfig {
  file: string;
  config: GatewayConfig;
}

/** Reads, parses and validates a config file; throws ConfigError naming file, line, key and reason. */
export function loadConfig(file: string): LoadedConfig {
  const path = resolve(file);
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    const why = code === 'ENOENT' ? 'file not found' : code === 'EACCES' ? 'permission denied' : String(err);
    throw new ConfigError([{ file: path, key: '', message: `cannot read config: ${why}` }]);
  }
  return parseConfig(text, path);
}

export function parseConfig(text: string, path: string): LoadedConfig {
  const lines = new LineCounter();
  const doc = parseDocument(text, { lineCounter: lines, prettyErrors: false, uniqueKeys: true });
  if (doc.errors.length > 0) {
    throw new ConfigError(
      doc.errors.map((e) => {
        const pos = lines.linePos(e.pos[0]);
        return { file: path, line: pos.line, column: pos.col, key: '', message: `YAML: ${e.message.split('\n')[0]}` };
      }),
    );
  }
  const raw = doc.toJS() ?? {};
  if (typeof raw !== 'object' || Array.isArray(raw)) {
    throw new ConfigError([{ file: path, key: '', message: 'the config must be a YAML mapping of keys' }]);
  }
  const result = configSchema.safeParse(raw);
  if (!result.success) {
    throw new ConfigError(
      result.error.issues.map((issue) => {
        const keyPath = issue.path.map(String);
        if (issue.code === 'unrecognized_keys') {
          return locate(doc, lines, path, keyPath, `unknown key${issue.keys.length > 1 ? 's' : ''} ${issue.keys.map((k) => `"${k}"`).join(', ')}`, issue.keys[0]);
        }
        const present = doc.hasIn(keyPath.map((k) => (/^\d+$/.test(k) ? Number(k) : k)));
        return locate(doc, lines, path, keyPath, issue.code === 'invalid_type' && !present ? 'is required' : issue.message);
      }),
    );
  }
  const config = result.data;
  // The spec's switch for captive steering; it overrides dns.captive either way.
  const captiveEnv = process.env.GATEWAY_DNS_CAPTIVE;
  if (captiveEnv === '1' || captiveEnv === 'true') config.dns.captive = true;
  else if (captiveEnv === '0' || captiveEnv === 'false') config.dns.captive = false;
  const base = dirname(path);
  const abs = (p: string) => (isAbsolute(p) ? p : resolve(base, p));
  config.dataDir = abs(config.dataDir);
  if (config.gateway.certFile) config.gateway.certFile = abs(config.gateway.certFile);
  if (config.gateway.keyFile) config.gateway.keyFile = abs(config.gateway.keyFile);
  return { file: path, config };
}

function locate(
  doc: ReturnType<typeof parseDocument>,
  lines: LineCounter,
  file: string,
  keyPath: string[],
  message: string,
  childKey?: string,
): ConfigProblem {
  const fullPath = childKey ? [...keyPath, childKey] : keyPath;
  const key = fullPath.map((k, i) => (/^\d+$/.test(k) ? `[${k}]` : i === 0 ? k : `.${k}`)).join('');
  // Walk up until a node with a source position exists (a missing key points at its parent).
  for (let n = fullPath.length; n >= 0; n--) {
    const segs = fullPath.slice(0, n).map((k) => (/^\d+$/.test(k) ? Number(k) : k));
    const node = n === 0 ? doc.contents : doc.getIn(segs, true);
    if (isNode(node) && (node as Node).range) {
      const pos = lines.linePos((node as Node).range![0]);
      return { file, line: pos.line, column: pos.col, key, message };
    }
  }
  return { file, key, message };
}
