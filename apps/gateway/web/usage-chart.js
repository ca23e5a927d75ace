// @ts-check
// A key's requests per day as a plain SVG bar chart: one bar per day (successful requests in a
// darker part), no library, readable by screen readers through its title and each bar's title.
import { formatDate, formatNumber, t } from './i18n.js';

const SVG = 'http://www.w3.org/2000/svg';

/** @param {string} tag @param {Record<string, string | number>} attrs @param {...Node} children */
function svg(tag, attrs, ...children) {
  const node = document.createElementNS(SVG, tag);
  for (const [name, value] of Object.entries(attrs)) node.setAttribute(name, String(value));
  node.append(...children);
  return node;
}

/**
 * @param {{ date: string, requests: number, successful: number }[]} days oldest first
 * @returns {SVGSVGElement}
 */
export function usageChart(days) {
  const width = 600;
  const height = 160;
  const top = Math.max(1, ...days.map((d) => d.requests));
  const slot = width / Math.max(1, days.length);
  const bar = Math.max(1, slot * 0.8);
  const total = days.reduce((sum, d) => sum + d.requests, 0);
  const ok = days.reduce((sum, d) => sum + d.successful, 0);
  const title = svg('title', {});
  title.textContent = t('settings:account.usageChartLabel', {
    count: total,
    requests: formatNumber(total),
    successful: formatNumber(ok),
  });
  const bars = days.map((d, i) => {
    const h = (d.requests / top) * (height - 20);
    const hOk = (d.successful / top) * (height - 20);
    const label = svg('title', {});
    label.textContent = t('settings:account.usageDay', {
      count: d.requests,
      date: formatDate(`${d.date}T00:00:00Z`, { dateStyle: 'medium', timeZone: 'UTC' }),
      requests: formatNumber(d.requests),
      successful: formatNumber(d.successful),
    });
    return svg(
      'g',
      { 'data-date': d.date, 'data-requests': d.requests },
      label,
      svg('rect', { x: i * slot, y: height - h, width: bar, height: h, class: 'usage-all' }),
      svg('rect', { x: i * slot, y: height - hOk, width: bar, height: hOk, class: 'usage-ok' }),
    );
  });
  const chart = /** @type {SVGSVGElement} */ (
    svg('svg', { viewBox: `0 0 ${width} ${height}`, role: 'img', class: 'usage-chart', width: '100%' }, title, ...bars)
  );
  return chart;
}
