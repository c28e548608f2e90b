import t from 'tap';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { run } from '../helpers/exec.js';
import { gatewayd, startDaemon, tempDir } from '../helpers/daemon.js';
import { adminSession, curlSession } from '../helpers/curl-session.js';

// The guest profile is checked by Python's plistlib (Apple's format, not our writer) and against
// the payload keys Apple documents for com.apple.security.root and com.apple.dnsSettings.managed.

const CHECK = `
import json, plistlib, sys
p = plistlib.load(open(sys.argv[1], 'rb'))
out = {'top': {k: (v if not isinstance(v, (bytes, list)) else None) for k, v in p.items()}, 'payloads': []}
for c in p['PayloadContent']:
    d = {k: (v.hex() if isinstance(v, bytes) else v) for k, v in c.items()}
    out['payloads'].append(d)
print(json.dumps(out))
`;

const dir = tempDir(t);
const gw = await startDaemon(t, { gateway: { aliases: ['dns.corp.test'] }, portal: { identityMode: 'none', branding: { name: 'Acme & Sons <Guest>' } } });
const script = join(dir, 'check.py');
writeFileSync(script, CHECK);

async function parse(body: string) {
  const file = join(dir, `p${Math.random()}.mobileconfig`);
  writeFileSync(file, body);
  const r = await run('/usr/bin/python3', [script, file]);
  if (r.code !== 0) throw new Error(`plistlib refused the profile: ${r.stderr}`);
  return JSON.parse(r.stdout);
}

const UUID = /^[0-9A-F]{8}-[0-9A-F]{4}-[0-9A-F]{4}-[0-9A-F]{4}-[0-9A-F]{12}$/;
const COMMON = ['PayloadType', 'PayloadVersion', 'PayloadIdentifier', 'PayloadUUID', 'PayloadDisplayName'];

t.test('the portal profile holds the gateway CA and DoH through the gateway, as Apple expects', async (t) => {
  const r = await curlSession(t, gw)('/portal/profile.mobileconfig');
  t.equal(r.status, 200);
  t.match(r.head, /content-type: application\/x-apple-aspen-config/i);
  const p = await parse(r.body);
  t.match(p.top, { PayloadType: 'Configuration', PayloadVersion: 1, PayloadIdentifier: /^[a-z0-9.-]+$/, PayloadUUID: UUID, PayloadDisplayName: 'Acme & Sons <Guest> network', PayloadRemovalDisallowed: false });
  t.equal(p.payloads.length, 2);
  const [ca, dns] = p.payloads;
  for (const payload of p.payloads) for (const k of COMMON) t.ok(k in payload, `${payload.PayloadType} has ${k}`);
  t.equal(ca.PayloadType, 'com.apple.security.root');
  t.match(ca.PayloadUUID, UUID);
  // The certificate data is the CA that `gatewayd ca export --format der` gives.
  const exported = await gatewayd(['ca', 'export', '--config', gw.configFile, '--format', 'der']);
  t.equal(ca.PayloadContent, exported.stdoutBuffer.toString('hex'), 'the root payload is the gateway CA in DER');
  t.equal(dns.PayloadType, 'com.apple.dnsSettings.managed');
  t.same(dns.DNSSettings, { DNSProtocol: 'HTTPS', ServerURL: `https://gw.test:${gw.httpsPort}/dns-query`, ServerAddresses: ['127.0.0.1'] });
  t.not(ca.PayloadUUID, dns.PayloadUUID);
  const again = await parse((await curlSession(t, gw)('/portal/profile.mobileconfig')).body);
  t.equal(again.top.PayloadUUID, p.top.PayloadUUID, 'the same profile keeps its UUID, so reinstalling replaces it');
});

t.test('Admin > DNS Redirector offers the profile with the server name the admin used', async (t) => {
  const admin = await adminSession(t, gw);
  const section = await admin.curl('/admin/dns-redirector');
  t.equal(section.status, 200);
  t.match(section.body, new RegExp(`https://gw\\.test:${gw.httpsPort}/dns-query`));
  // Reached under another name (as devices would know it), the profile points there.
  const alt = curlSession(t, gw, { host: 'dns.corp.test' });
  const login = await alt('/admin/login');
  const password = (await import('node:fs')).readFileSync(join(gw.dataDir, 'initial-admin-password'), 'utf8').trim();
  const csrf = /name="_csrf" value="([^"]+)"/.exec(login.body)![1];
  t.equal((await alt('/admin/login', ['--data-urlencode', 'username=admin', '--data-urlencode', `password=${password}`, '--data-urlencode', `_csrf=${csrf}`])).status, 303);
  const r = await alt('/admin/api/dns-profile.mobileconfig');
  t.equal(r.status, 200);
  const p = await parse(r.body);
  t.equal(p.payloads[1].DNSSettings.ServerURL, `https://dns.corp.test:${gw.httpsPort}/dns-query`);
  t.equal((await curlSession(t, gw)('/admin/api/dns-profile.mobileconfig')).status, 401, 'the admin download needs a login');
});
