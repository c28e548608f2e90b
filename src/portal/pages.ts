import { esc } from '../http/html.js';
import { nextSteps, type Platform } from './platform.js';
import type { PortalView } from './settings.js';

/** The portal's pages: one branded shell (logo, accent color, copy) around small forms. */

const STYLE = `
  :root { color-scheme: light dark; --accent: #2457c5; }
  body { font: 16px/1.5 system-ui, sans-serif; margin: 0; background: Canvas; color: CanvasText; }
  header { background: var(--accent); color: #fff; padding: .8rem 1.2rem; display: flex; gap: .8rem; align-items: center; }
  header img { max-height: 40px; max-width: 160px; background: #fff; border-radius: 4px; padding: 2px; }
  main { max-width: 30rem; margin: 1.5rem auto; padding: 0 1.2rem; }
  form { display: grid; gap: .6rem; margin: 1rem 0; }
  input, button { font: inherit; padding: .55rem .7rem; border-radius: 6px; }
  input { border: 1px solid #8888; }
  input[aria-invalid=true] { border-color: #c0262d; }
  button { background: var(--accent); color: #fff; border: 0; cursor: pointer; }
  button.link { background: none; color: var(--accent); padding: 0; text-decoration: underline; justify-self: start; }
  .error { color: #c0262d; margin: 0; }
  .info { color: #1d7a36; margin: 0; }
  .muted { opacity: .75; font-size: .9em; }
  ol.steps li { margin-bottom: .8rem; }
  a.button { display: inline-block; background: var(--accent); color: #fff; padding: .5rem .9rem; border-radius: 6px; text-decoration: none; }
`;

export function brandName(view: PortalView): string {
  return view.branding.name || view.tenant.name;
}

export function portalPage(view: PortalView | undefined, title: string, body: string): string {
  const name = view ? brandName(view) : 'Network enrollment';
  const accent = view?.branding.color ? `<style>:root { --accent: ${view.branding.color}; }</style>` : '';
  const logo = view?.hasLogo ? `<img src="/portal/logo/${esc(view.tenant.id)}?v=${view.updatedAt ?? 0}" alt="">` : '';
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>${esc(title)} · ${esc(name)}</title><style>${STYLE}</style>${accent}</head>
<body><header>${logo}<strong>${esc(name)}</strong></header><main>${body}</main></body></html>`;
}

function hidden(fields: Record<string, string>): string {
  return Object.entries(fields).map(([k, v]) => `<input type="hidden" name="${esc(k)}" value="${esc(v)}">`).join('');
}

const MODE_COPY: Record<string, { label: string; type: string; hint: string; button: string; required: boolean }> = {
  none: { label: 'Your email or name', type: 'text', hint: 'Optional. It is shown to IT next to this device.', button: 'Connect', required: false },
  domain: { label: 'Work email', type: 'email', hint: '', button: 'Connect', required: true },
  otp: { label: 'Work email', type: 'email', hint: 'We email you a code to prove the address is yours.', button: 'Email me a code', required: true },
  sso: { label: 'Work email (optional)', type: 'email', hint: 'You sign in with your organization account next.', button: 'Sign in with your organization', required: false },
};

export interface FormState {
  csrf: string;
  handoff: Record<string, string>;
  email?: string;
  error?: string;
}

export function enrollForm(view: PortalView, s: FormState): string {
  const copy = MODE_COPY[view.identityMode];
  const hint = view.identityMode === 'domain' ? `Use your address at ${view.allowedDomains.join(' or ')}.` : copy.hint;
  const welcome = view.branding.welcome || 'This network asks each device to enroll before it is let on. It takes a few seconds.';
  return portalPage(
    view,
    'Join the network',
    `<h1>Join the network</h1>
     <p>${esc(welcome)}</p>
     <form method="post" action="/portal/enroll" novalidate>
       ${hidden({ _csrf: s.csrf, ...s.handoff })}
       <label for="email">${esc(copy.label)}</label>
       <input id="email" name="email" type="${copy.type}" autocomplete="email" value="${esc(s.email ?? '')}" ${copy.required ? 'required' : ''}
         maxlength="254" aria-describedby="email-hint email-error"${s.error ? ' aria-invalid="true"' : ''}>
       <span id="email-hint" class="muted">${esc(hint)}</span>
       ${s.error ? `<p id="email-error" class="error" role="alert">${esc(s.error)}</p>` : ''}
       <button type="submit">${esc(copy.button)}</button>
     </form>
     <p class="muted">AI services used from this network are governed by your organization: which services are used, and when, may be recorded.</p>`,
  );
}

export interface CodeState {
  csrf: string;
  challenge: string;
  email: string;
  error?: string;
  info?: string;
  locked?: boolean;
}

export function codeForm(view: PortalView, s: CodeState): string {
  const resend = `<form method="post" action="/portal/resend">${hidden({ _csrf: s.csrf, challenge: s.challenge })}
       <button type="submit" class="link">Send a new code</button></form>`;
  if (s.locked) {
    return portalPage(view, 'Enter the code', `<h1>Enter the code</h1><p id="code-error" class="error" role="alert">${esc(s.error ?? '')}</p>
      <p><a href="/portal">Start again</a></p>`);
  }
  return portalPage(
    view,
    'Enter the code',
    `<h1>Check your email</h1>
     <p>We sent a code to <strong>${esc(s.email)}</strong>.</p>
     <form method="post" action="/portal/verify" novalidate>
       ${hidden({ _csrf: s.csrf, challenge: s.challenge })}
       <label for="code">Code</label>
       <input id="code" name="code" inputmode="numeric" autocomplete="one-time-code" maxlength="12" required autofocus
         aria-describedby="code-error"${s.error ? ' aria-invalid="true"' : ''}>
       ${s.error ? `<p id="code-error" class="error" role="alert">${esc(s.error)}</p>` : ''}
       ${s.info ? `<p class="info" role="status">${esc(s.info)}</p>` : ''}
       <button type="submit">Verify</button>
     </form>
     ${resend}`,
  );
}

export function donePage(view: PortalView, platform: Platform, identity: string | null, continueUrl?: string): string {
  const steps = nextSteps(platform)
    .map((s) => `<li data-step="${esc(s.id)}"><strong>${esc(s.title)}</strong><br>${esc(s.text)}${s.href ? `<br><a href="${esc(s.href)}">${esc(s.linkText ?? s.href)}</a>` : ''}</li>`)
    .join('');
  return portalPage(
    view,
    'You are connected',
    `<h1>You are connected</h1>
     <p>This device is enrolled${identity ? ` as <strong>${esc(identity)}</strong>` : ''}.</p>
     ${continueUrl ? `<p><a class="button" id="continue" href="${esc(continueUrl)}">Continue</a></p>` : ''}
     <h2>Next steps</h2>
     <ol class="steps" data-platform="${esc(platform)}">${steps}</ol>`,
  );
}

export function messagePage(view: PortalView | undefined, title: string, message: string): string {
  return portalPage(view, title, `<h1>${esc(title)}</h1><p role="alert">${esc(message)}</p><p><a href="/portal">Back to the start</a></p>`);
}

export function connectPage(view: PortalView | undefined, serverUrl: string): string {
  return portalPage(
    view,
    'Gateway Connect',
    `<h1>Gateway Connect</h1>
     <p>Company computers get the Gateway Connect client from IT, through device management (MDM), with the
        organization's enrollment token already set. It enrolls the computer for its user and needs nothing from you.</p>
     <p>IT can also enroll a computer by hand:</p>
     <pre>gateway-connect enroll --server ${esc(serverUrl)} --token &lt;enrollment token&gt;</pre>
     <p>Personal devices do not need the client: use the profile or certificate offered after you join.</p>`,
  );
}
