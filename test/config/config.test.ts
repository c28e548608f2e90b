import t from 'tap';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { gatewayd, tempDir } from '../helpers/daemon.js';
import { parseConfig } from '../../src/config/index.js';

const dir = tempDir(t);
const good = `gateway:
  hostname: gw.example.test
  address: 127.0.0.1
listen:
  https: 0.0.0.0:443
  http: 0.0.0.0:80
  dns: 0.0.0.0:53
dataDir: ./data
tls:
  routes:
    - { sni: intranet.example.test, to: 10.0.0.5:443 }
    - { sni: "*.corp.example.test", to: "[fd00::5]:8443" }
dns:
  upstreams: [ 9.9.9.9:53, "[2620:fe::fe]" ]
`;

async function check(name: string, text: string) {
  const file = join(dir, name);
  writeFileSync(file, text);
  return { file, ...(await gatewayd(['config', 'check', '--config', file])) };
}

t.test('a good config passes, with defaults filled in and paths made absolute', async (t) => {
  const r = await check('good.yaml', good);
  t.equal(r.code, 0, r.stderr);
  t.match(r.stdout, /ok/);
  const { config } = parseConfig(good, join(dir, 'good.yaml'));
  t.equal(config.dataDir, join(dir, 'data'));
  t.same(config.tls.routes[1], { sni: '*.corp.example.test', to: { host: 'fd00::5', port: 8443 } });
  t.same(config.dns.upstreams[1], { host: '2620:fe::fe', port: 53 });
  t.equal(config.relay.helloTimeoutMs, 10000);
  t.equal(config.tls.leafLifetimeDays, 30);
});

t.test('the example config shipped in config/ is valid', async (t) => {
  const r = await gatewayd(['config', 'check', '--config', new URL('../../../config/gateway.example.yaml', import.meta.url).pathname]);
  t.equal(r.code, 0, r.stderr);
});

const cases: [string, string, RegExp][] = [
  ['bad port', good.replace('0.0.0.0:443', '0.0.0.0:99999'), /bad-port\.yaml:5:\d+: listen\.https: port "99999" is not a number/],
  ['missing key', good.replace('  address: 127.0.0.1\n', ''), /missing-key\.yaml:2:\d+: gateway\.address: is required/],
  ['unknown key', good.replace('dataDir:', 'dataDri: x\ndataDir:'), /unknown-key\.yaml:\d+:\d+: dataDri: unknown key "dataDri"/],
  ['bad address', good.replace('address: 127.0.0.1', 'address: localhost'), /gateway\.address: must be an IPv4 or IPv6 address/],
  ['bad sni', good.replace('intranet.example.test', 'bad_name!'), /bad-sni\.yaml:11:\d+: tls\.routes\[0\]\.sni: must be a host name or \*\.suffix/],
  ['yaml syntax', good.replace('listen:\n', 'listen:\n  https: [\n'), /yaml-syntax\.yaml:\d+:\d+: YAML: /],
  ['no upstreams', good.replace('upstreams: [ 9.9.9.9:53, "[2620:fe::fe]" ]', 'upstreams: []'), /dns\.upstreams: at least one upstream/],
  ['v6 without brackets', good.replace('9.9.9.9:53', '2620:fe::fe:53'), /IPv6 address needs brackets/],
  ['metrics off loopback', good.replace('dns: 0.0.0.0:53', 'dns: 0.0.0.0:53\n  metrics: 0.0.0.0:9187'), /listen\.metrics: .*loopback/],
  ['wrong type', good.replace('dataDir: ./data', 'dataDir: ./data\nrelay: { idleTimeoutSec: soon }'), /relay\.idleTimeoutSec: .*number/],
  ['cert without key', good.replace('address: 127.0.0.1', 'address: 127.0.0.1\n  certFile: a.pem'), /certFile and keyFile go together/],
];

for (const [name, text, expected] of cases) {
  t.test(`config check names file, line, key and reason: ${name}`, async (t) => {
    const r = await check(`${name.replace(/ /g, '-')}.yaml`, text);
    t.equal(r.code, 1, 'non-zero exit');
    t.match(r.stderr, expected);
    t.notMatch(r.stderr, /\n\s+at /, 'no stack trace');
  });
}

t.test('a missing file is named', async (t) => {
  const r = await gatewayd(['config', 'check', '--config', join(dir, 'nope.yaml')]);
  t.equal(r.code, 1);
  t.match(r.stderr, /nope\.yaml: cannot read config: file not found/);
});

t.test('--help on every command, --version', async (t) => {
  for (const args of [['--help'], ['serve', '--help'], ['config', 'check', '--help'], ['ca', 'init', '--help'], ['ca', 'export', '--help'], ['admin', 'add', '--help']]) {
    const r = await gatewayd(args);
    t.equal(r.code, 0, args.join(' '));
    t.match(r.stdout, /Usage: gatewayd/);
  }
  t.match((await gatewayd(['--version'])).stdout, /^\d+\.\d+\.\d+/);
  const missing = await gatewayd(['serve']);
  t.equal(missing.code, 1);
  t.match(missing.stderr, /--config/);
});

t.test('tenants, portal and nac: each mistake is named with its line and key', async (t) => {
  const ok = await check('tenants.yaml', `${good}tenants:
  - id: acme
    name: Acme
    networks: [ 10.1.0.0/16 ]
    portal: { identityMode: domain, allowedDomains: [ "@Acme.Example" ], admitWebhookUrl: "https://nac.acme.example/admit", admitWebhookSecret: long-enough-secret }
nac:
  coa:
    - { address: 10.0.0.2, secret: s3cret, tenant: acme }
`);
  t.equal(ok.code, 0, ok.stderr);
  const { config } = parseConfig(readFileSync(ok.file, 'utf8'), ok.file);
  t.same(config.tenants![0].portal.allowedDomains, ['acme.example'], 'domains are normalized');
  t.match(config.nac.coa[0], { port: 3799, kind: 'coa', attributes: ['Framed-IP-Address', 'Acct-Session-Id'] }, 'NAS defaults');

  const bad = await check('tenants-bad.yaml', `${good}tenants:
  - id: Acme Corp
    name: Acme
    networks: [ 10.1.0.0/33 ]
    portal: { identityMode: domain, admitWebhookUrl: "ftp://x" }
  - id: globex
    name: Globex
    portal: { identityMode: otp }
  - id: globex
    name: Globex again
portal: { identityMode: none }
nac:
  coa:
    - { address: nas.example, secret: s, tenant: initech, attributes: [ Framed-IP-Address, Bogus-Attr ] }
`);
  t.equal(bad.code, 1);
  for (const re of [
    /tenants-bad\.yaml:\d+:\d+: tenants\[0\]\.id: must be lowercase letters/,
    /tenants\[0\]\.networks\[0\]: must be an address or network/,
    /tenants\[0\]\.portal\.admitWebhookUrl: must be an http:\/\/ or https:\/\/ URL/,
    /tenants\[0\]\.portal: identityMode domain needs at least one allowedDomains entry|tenants\[0\]\.portal: admitWebhookUrl needs admitWebhookSecret/,
    /nac\.coa\[0\]\.address: must be the NAS IP address/,
    /nac\.coa\[0\]\.attributes\[1\]: /,
  ]) t.match(bad.stderr, re);

  const semantic = await check('tenants-semantic.yaml', `${good}tenants:
  - { id: globex, name: Globex, portal: { identityMode: otp } }
  - { id: globex, name: Globex again }
portal: { identityMode: none }
nac:
  coa:
    - { address: 10.0.0.2, secret: s, tenant: initech }
`);
  t.equal(semantic.code, 1);
  t.match(semantic.stderr, /portal: with a tenants block, put portal: inside each tenant/);
  t.match(semantic.stderr, /tenants\[1\]\.id: tenant id "globex" is used twice/);
  t.match(semantic.stderr, /nac\.coa\[0\]\.tenant: no tenant "initech"/);
  t.match(semantic.stderr, /smtp: identityMode otp sends codes by email: configure smtp/);
});
