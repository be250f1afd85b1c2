// HTML escaping for the one place strings become markup: ECharts HTML
// tooltips (the templates never build HTML; v-html is banned by the linter).

const MAP: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
  '`': '&#96;',
}

/** Escapes every character that could open markup or end an attribute. */
export function escapeHtml(value: unknown): string {
  return String(value ?? '').replace(/[&<>"'`]/g, (c) => MAP[c])
}
