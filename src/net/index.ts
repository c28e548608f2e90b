export { TlsListener, normalizeIp, type RelaySettings, type TlsListenerDeps } from './listener.js';
export { SniRouter, type RouteDecision, type InterceptPolicy } from './router.js';
export { parseClientHello, type HelloParse } from './clienthello.js';
