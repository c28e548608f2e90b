export { createGatewayApp, createMetricsApp, createPlainApp, type RouteFeature } from './app.js';
export { gatewayUrl, type GatewayContext, type OwnCertificate } from './context.js';
export { esc, page } from './html.js';
