export { Outbox } from './outbox.js';
export { admissionDeliveries, deviceKey, type Handoff } from './admission.js';
export { postWebhook } from './webhook.js';
