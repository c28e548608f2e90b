import type { HostPort } from '../config/index.js';

/** Turns a failed bind into a message an operator can act on. */
export function explainBindError(err: NodeJS.ErrnoException, what: string, at: HostPort): Error {
  const where = `${at.host.includes(':') ? `[${at.host}]` : at.host}:${at.port}`;
  let why: string;
  switch (err.code) {
    case 'EADDRINUSE':
      why = `address already in use: another program holds ${where} (find it with: ss -ltnup 'sport = :${at.port}')`;
      if (at.port === 53) {
        why += '. On most distributions this is systemd-resolved\'s stub listener: set DNSStubListener=no in /etc/systemd/resolved.conf and run systemctl restart systemd-resolved, or bind listen.dns to one specific address';
      }
      break;
    case 'EACCES':
      why = `permission denied: ports below 1024 need CAP_NET_BIND_SERVICE (the systemd unit grants it; when run by hand use root or: setcap cap_net_bind_service=+ep $(command -v node))`;
      break;
    case 'EADDRNOTAVAIL':
      why = `${at.host} is not an address of this machine (check ip addr, or use 0.0.0.0)`;
      break;
    default:
      why = err.message;
  }
  return new Error(`cannot bind ${what} on ${where}: ${why}`);
}
