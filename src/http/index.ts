export { createGatewayApp, createPlainApp } from './app.js';
export { gatewayUrl, type GatewayContext } from './context.js';
export { esc, page } from './html.js';
