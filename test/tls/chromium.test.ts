import t from 'tap';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { launchChromium } from '../helpers/browser.js';
import { run } from '../helpers/exec.js';
import { gatewayd, startDaemon, tempDir, HOSTNAME } from '../helpers/daemon.js';

// Chromium on Linux trusts the roots in the user's NSS database: put the exported CA there.
const gw = await startDaemon(t);
const home = tempDir(t, 'gwchromium-');
const nssdb = join(home, '.pki/nssdb');
mkdirSync(nssdb, { recursive: true });
const caFile = join(home, 'ca.pem');
(await import('node:fs')).writeFileSync(caFile, (await gatewayd(['ca', 'export', '--config', gw.configFile])).stdout);
await run('certutil', ['-d', `sql:${nssdb}`, '-N', '--empty-password']);
const add = await run('certutil', ['-d', `sql:${nssdb}`, '-A', '-n', 'gatewayd test CA', '-t', 'C,,', '-i', caFile]);
if (add.code !== 0) throw new Error(`certutil: ${add.stderr}`);

t.test('Chromium accepts the minted certificate once the CA is trusted', async (t) => {
  const { newPage } = await launchChromium(t, { home, ignoreHTTPSErrors: false });
  const page = await newPage();
  const res = await page.goto(`https://${HOSTNAME}:${gw.httpsPort}/portal`);
  t.equal(res?.status(), 200);
  t.match(await page.textContent('h1'), /Join the network/);
  const security = await res!.securityDetails();
  t.equal(security?.subjectName, HOSTNAME);
});

t.test('without the CA Chromium refuses the connection (the check above can fail)', async (t) => {
  const { newPage } = await launchChromium(t, { ignoreHTTPSErrors: false }); // HOME: a fresh, empty directory
  const page = await newPage();
  await t.rejects(page.goto(`https://${HOSTNAME}:${gw.httpsPort}/portal`), /ERR_CERT_AUTHORITY_INVALID/);
});
