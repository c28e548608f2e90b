import { createHash } from 'node:crypto';
import { esc } from '../http/html.js';

export interface ProfileInput {
  /** The gateway name devices use: DoH server URL host and identifier root. */
  serverName: string;
  /** https port, when not 443. */
  port: number;
  /** The gateway address, so the device can reach the resolver without DNS. */
  serverAddress?: string;
  organization: string;
  caDer: Buffer;
  caName: string;
}

/** A UUID that stays the same for the same profile, so installing it again replaces the old one. */
function stableUuid(seed: string): string {
  const h = createHash('sha256').update(seed).digest('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-a${h.slice(17, 20)}-${h.slice(20, 32)}`.toUpperCase();
}

function base64Lines(b: Buffer): string {
  return b.toString('base64').replace(/.{1,64}/g, '$&\n');
}

/**
 * An Apple configuration profile (.mobileconfig) with two payloads: the gateway root CA
 * (com.apple.security.root) and encrypted DNS through the gateway's DoH endpoint
 * (com.apple.dnsSettings.managed). Unsigned: the device shows it as unverified.
 */
export function mobileconfig(p: ProfileInput): string {
  const root = `net.gatewayd.${p.serverName}`;
  const url = `https://${p.serverName}${p.port === 443 ? '' : `:${p.port}`}/dns-query`;
  const str = (k: string, v: string) => `<key>${k}</key><string>${esc(v)}</string>`;
  const int = (k: string, v: number) => `<key>${k}</key><integer>${v}</integer>`;
  const addresses = p.serverAddress ? `<key>ServerAddresses</key><array><string>${esc(p.serverAddress)}</string></array>` : '';
  return `<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
<plist version="1.0">
<dict>
  <key>PayloadContent</key>
  <array>
    <dict>
      ${str('PayloadType', 'com.apple.security.root')}
      ${int('PayloadVersion', 1)}
      ${str('PayloadIdentifier', `${root}.ca`)}
      ${str('PayloadUUID', stableUuid(`${root}.ca`))}
      ${str('PayloadDisplayName', p.caName)}
      ${str('PayloadCertificateFileName', 'gateway-ca.cer')}
      <key>PayloadContent</key>
      <data>
${base64Lines(p.caDer)}      </data>
    </dict>
    <dict>
      ${str('PayloadType', 'com.apple.dnsSettings.managed')}
      ${int('PayloadVersion', 1)}
      ${str('PayloadIdentifier', `${root}.dns`)}
      ${str('PayloadUUID', stableUuid(`${root}.dns`))}
      ${str('PayloadDisplayName', `Encrypted DNS via ${p.serverName}`)}
      <key>DNSSettings</key>
      <dict>
        ${str('DNSProtocol', 'HTTPS')}
        ${str('ServerURL', url)}
        ${addresses}
      </dict>
    </dict>
  </array>
  ${str('PayloadType', 'Configuration')}
  ${int('PayloadVersion', 1)}
  ${str('PayloadIdentifier', root)}
  ${str('PayloadUUID', stableUuid(root))}
  ${str('PayloadDisplayName', `${p.organization} network`)}
  ${str('PayloadDescription', `Trusts the ${p.organization} gateway certificate and sends DNS to ${p.serverName} over HTTPS.`)}
  ${str('PayloadOrganization', p.organization)}
  <key>PayloadRemovalDisallowed</key><false/>
</dict>
</plist>
`;
}

export const MOBILECONFIG_TYPE = 'application/x-apple-aspen-config';
