export { CertificateAuthority } from './ca.js';
export { LeafService, type Leaf, type LeafStats } from './leaves.js';
