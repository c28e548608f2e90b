export { UpstreamResolver, UpstreamError, type Question } from './upstream.js';
