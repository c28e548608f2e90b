export { DnsService, type DnsClient, type Transport } from './service.js';
export { DnsServer } from './server.js';
export { registerDoh } from './doh.js';
export { Forwarder } from './forwarder.js';
export { UpstreamError } from './transport.js';
export { AiCatalog, BUILTIN_AI_SERVICES, type AiService } from './catalog.js';
export { CANARIES } from './steering.js';
export { DEFAULT_CLIENT_NETWORKS, parseCidr } from './acl.js';
