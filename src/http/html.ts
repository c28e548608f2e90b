/** Escapes text for HTML element content and quoted attribute values. */
export function esc(value: unknown): string {
  return String(value ?? '')
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&#39;');
}

const STYLE = `
  :root { color-scheme: light dark; --accent: #2457c5; }
  body { font: 15px/1.5 system-ui, sans-serif; margin: 0; background: Canvas; color: CanvasText; }
  header { background: var(--accent); color: #fff; padding: .7rem 1.2rem; display: flex; gap: 1rem; align-items: center; }
  header a { color: #fff; }
  header .grow { flex: 1; }
  main { max-width: 60rem; margin: 1.5rem auto; padding: 0 1.2rem; }
  nav.sections a { margin-right: 1rem; }
  table { border-collapse: collapse; width: 100%; font-size: 13px; }
  th, td { text-align: left; padding: .3rem .5rem; border-bottom: 1px solid #8884; }
  form.card { max-width: 22rem; display: grid; gap: .6rem; }
  input, button { font: inherit; padding: .4rem .6rem; }
  button { background: var(--accent); color: #fff; border: 0; border-radius: 4px; cursor: pointer; }
  .error { color: #c0262d; }
  .muted { opacity: .7; }
`;

/** A complete page; `body` must already be escaped HTML. */
export function page(title: string, body: string, headerRight = ''): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>${esc(title)}</title><style>${STYLE}</style></head>
<body><header><strong class="grow">${esc(title)}</strong>${headerRight}</header><main>${body}</main></body></html>`;
}
