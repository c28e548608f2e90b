/**
 * The script of /portal-admin.html, served from /admin/assets/portal-admin.js (the page's CSP
 * allows no inline script). It saves through the JSON API and shows each validation error
 * next to its field.
 */
export const PORTAL_ADMIN_SCRIPT = `'use strict';
(() => {
  const meta = (n) => document.querySelector('meta[name="' + n + '"]').content;
  const csrf = meta('csrf-token');
  const api = (path) => path + '?tenant=' + encodeURIComponent(meta('tenant'));
  const form = document.getElementById('settings');
  const val = (name) => (form.elements[name] ? form.elements[name].value.trim() : '');

  function showErrors(fields) {
    document.querySelectorAll('[data-error-for]').forEach((p) => {
      const msg = fields && fields[p.dataset.errorFor];
      p.textContent = msg || '';
      p.hidden = !msg;
      const input = document.getElementById(p.dataset.errorFor);
      if (input) input.setAttribute('aria-invalid', msg ? 'true' : 'false');
    });
  }

  async function call(method, path, body, isForm) {
    const headers = { 'x-csrf-token': csrf };
    if (body && !isForm) headers['content-type'] = 'application/json';
    const res = await fetch(api(path), { method, headers, body: isForm ? body : body && JSON.stringify(body), credentials: 'same-origin' });
    let data = {};
    try { data = await res.json(); } catch (e) { data = { message: 'HTTP ' + res.status }; }
    return { ok: res.ok, status: res.status, data };
  }

  form.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    const status = document.getElementById('status');
    const branding = {};
    for (const k of ['name', 'color', 'welcome']) if (val('branding.' + k)) branding[k] = val('branding.' + k);
    const body = {
      identityMode: val('identityMode'),
      allowedDomains: val('allowedDomains').split(/[\\s,]+/).filter(Boolean),
      admitWebhookUrl: val('admitWebhookUrl'),
      branding,
    };
    if (val('admitWebhookSecret')) body.admitWebhookSecret = form.elements.admitWebhookSecret.value;
    if (form.elements.clearWebhookSecret && form.elements.clearWebhookSecret.checked) body.clearWebhookSecret = true;
    status.textContent = 'Saving…';
    const r = await call('PUT', '/admin/api/portal', body);
    if (r.ok) {
      showErrors({});
      form.elements.admitWebhookSecret.value = '';
      status.textContent = 'Saved. The portal uses the new settings now.';
      if (r.data.admitWebhookSecretSet) form.elements.admitWebhookSecret.placeholder = 'saved; type a new one to replace it';
    } else {
      showErrors(r.data.fields || { form: r.data.message });
      status.textContent = r.data.fields ? 'Not saved: correct the fields marked.' : 'Not saved: ' + r.data.message;
    }
  });

  document.getElementById('test-webhook').addEventListener('click', async () => {
    const out = document.getElementById('test-result');
    out.textContent = 'Sending…';
    const r = await call('POST', '/admin/api/portal/test-webhook');
    if (!r.ok) out.textContent = r.data.message;
    else if (r.data.outcome === 'delivered') out.textContent = 'Delivered: the receiver answered HTTP ' + r.data.status + '.';
    else out.textContent = 'Not delivered: ' + r.data.error;
  });

  document.getElementById('logo-form').addEventListener('submit', async (ev) => {
    ev.preventDefault();
    const input = document.getElementById('logo');
    const out = document.getElementById('logo-status');
    if (!input.files.length) { showErrors({ logo: 'choose an image first' }); return; }
    const fd = new FormData();
    fd.append('logo', input.files[0]);
    const r = await call('POST', '/admin/api/portal/logo', fd, true);
    if (r.ok) { showErrors({}); out.textContent = 'Logo saved.'; location.reload(); }
    else { showErrors(r.data.fields || { logo: r.data.message }); out.textContent = ''; }
  });

  const remove = document.getElementById('remove-logo');
  if (remove) remove.addEventListener('click', async () => {
    const r = await call('DELETE', '/admin/api/portal/logo');
    if (r.ok) location.reload();
  });
})();
`;
