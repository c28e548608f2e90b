export { Outbox, nasTarget, type OutboxDeps } from './outbox.js';
export { admissionDeliveries, deviceKey, framedIp, type Handoff } from './admission.js';
export { postWebhook, signBody } from './webhook.js';
