// @ts-check
// More options' clip range for one media item: start and end (seconds or [h:]mm:ss) and the cut's
// mode, checked in the page so a mistake is told beside the fields before any request. The item's
// source downloads, conversions and merge read it; subtitle tracks never do (the server refuses it).
import { el } from './api.js';
import { t } from './i18n.js';
import { parseTime, showTime } from './clip-time.js';

export { parseTime, showTime };

/**
 * @typedef {{ start: number, end: number, mode: 'fast' | 'precise' }} Clip
 * @typedef {{ node: HTMLElement, read: () => Clip | null | false, show: (message: string) => void, label: (clip: Clip) => string }} ClipBox
 */

/**
 * The clip fields of an item. `read()` answers the clip, null when both times are empty (the whole
 * media), or false after showing why the range is unusable; `show()` puts the server's refusal there.
 * @param {{ index: number, duration?: number }} item
 * @returns {ClipBox}
 */
export function clipBox(item) {
  const id = (part) => `clip-${item.index}-${part}`;
  const known = typeof item.duration === 'number' && item.duration > 0 ? item.duration : null;
  const input = (part, placeholder) =>
    /** @type {HTMLInputElement} */ (
      el('input', {
        id: id(part),
        type: 'text',
        inputmode: 'decimal',
        autocomplete: 'off',
        spellcheck: 'false',
        placeholder,
        'aria-describedby': `${id('hint')} ${id('error')}`,
      })
    );
  const start = input('start', '0:00');
  const end = input('end', known ? showTime(known) : t('playground:clip.endPlaceholder'));
  const mode = /** @type {HTMLSelectElement} */ (
    el(
      'select',
      { id: id('mode') },
      el('option', { value: 'fast' }, t('playground:clip.fast')),
      el('option', { value: 'precise' }, t('playground:clip.precise')),
    )
  );
  const error = el('p', { id: id('error'), class: 'form-error', role: 'alert' });
  const field = (text, control) => el('div', { class: 'field' }, el('label', { for: control.id }, text), control);
  const node = el(
    'fieldset',
    { class: 'clip' },
    el('legend', {}, t('playground:clip.title')),
    el('p', { id: id('hint'), class: 'hint' }, t('playground:clip.hint')),
    el(
      'div',
      { class: 'clip-fields' },
      field(t('playground:clip.start'), start),
      field(t('playground:clip.end'), end),
      field(t('playground:clip.cut'), mode),
    ),
    error,
  );

  const show = (/** @type {string} */ message, /** @type {HTMLInputElement | null} */ culprit = null) => {
    error.textContent = message;
    for (const box of [start, end]) box.removeAttribute('aria-invalid');
    if (culprit) {
      culprit.setAttribute('aria-invalid', 'true');
      culprit.focus();
    }
  };
  /** @returns {Clip | null | false} */
  const read = () => {
    const from = parseTime(start.value);
    let to = parseTime(end.value);
    if (from === null && to === null) {
      show('');
      return null;
    }
    if (Number.isNaN(from)) return fail(t('playground:clip.badStart'), start);
    if (Number.isNaN(to)) return fail(t('playground:clip.badEnd'), end);
    if (to === null) {
      if (known === null) return fail(t('playground:clip.needEnd'), end);
      to = known;
    }
    const s = from ?? 0;
    if (known !== null && s >= known) return fail(t('playground:clip.pastEnd', { length: showTime(known) }), start);
    if (to <= s) return fail(t('playground:clip.endBeforeStart'), end);
    show('');
    return { start: s, end: to, mode: mode.value === 'precise' ? 'precise' : 'fast' };
  };
  const fail = (message, culprit) => {
    show(message, culprit);
    return /** @type {false} */ (false);
  };
  const label = (/** @type {Clip} */ clip) =>
    t(clip.mode === 'precise' ? 'playground:clip.labelPrecise' : 'playground:clip.label', {
      start: showTime(clip.start),
      end: showTime(clip.end),
    });
  return { node, read, show: (message) => show(message, null), label };
}
