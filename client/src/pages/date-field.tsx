import { useEffect, useId, useLayoutEffect, useRef, useState } from 'preact/hooks';
import { translator, type Language } from '../i18n/index.js';
import { addDays, addMonths, dayText, localToday, monthWeeks, parseDay, parseTime, weekday } from './date-text.js';

/** What `Field` gives its control: its id, and what describes it. */
interface FieldProps {
  id?: string;
  'aria-invalid'?: 'true';
  'aria-describedby'?: string;
}

/**
 * A text field whose typed text the form sends in one canonical form (a day as `YYYY-MM-DD`, a
 * time as `HH:MM`): the page shows the reader's words, the API gets its own. The browser's check
 * (`setCustomValidity`, read by `controlProblems`) says what is wrong before anything is sent.
 */
function useTypedField(
  name: string,
  parse: (text: string) => string | null | undefined,
  invalid: string,
  show: (value: string) => string,
) {
  const ref = useRef<HTMLInputElement>(null);
  const check = () => {
    const input = ref.current;
    if (input) input.setCustomValidity(parse(input.value) === undefined ? invalid : '');
  };
  useEffect(() => {
    const input = ref.current;
    const form = input?.form;
    if (!input || !form) return;
    check();
    // `new FormData(form)` (every form of the app reads its fields so) fires `formdata` first:
    // the typed text is replaced there by its canonical form.
    const canonical = (event: FormDataEvent) => {
      const value = parse(input.value);
      if (value !== undefined) event.formData.set(name, value ?? '');
    };
    form.addEventListener('formdata', canonical);
    return () => form.removeEventListener('formdata', canonical);
  }, [name, invalid]);
  return {
    ref,
    onInput: check,
    // What was typed is shown as the page writes it once the reader moves on (2026-3-1 → 2026年3月1日).
    onBlur: () => {
      const input = ref.current;
      const value = input && parse(input.value);
      if (input && value) input.value = show(value);
    },
  };
}

/**
 * Sets a date field of a form (by its name) as if the reader had typed the day, so that the field
 * shows it in the page's language and the form sends it.
 */
export function setDayField(form: HTMLFormElement, name: string, day: string, language: Language): void {
  const input = form.elements.namedItem(name);
  if (!(input instanceof HTMLInputElement)) return;
  input.value = dayText(language, day);
  input.dispatchEvent(new Event('input', { bubbles: true }));
}

/**
 * A calendar day in the page's language whatever the browser's (the browser's own date input
 * follows its own language: docs/decisions/date-fields.md). Typed (`2026-11-27`, `2026年11月27日`)
 * or chosen in a calendar (the WAI-ARIA date picker dialog: arrow keys, Page Up/Down for months,
 * Enter chooses, Esc closes); the form gets `YYYY-MM-DD` under `name`.
 */
export function DateInput({
  name,
  language,
  defaultValue,
  label,
  id: givenId,
  'aria-invalid': invalid,
  'aria-describedby': describedBy,
}: {
  name: string;
  language: Language;
  /** `YYYY-MM-DD`, or '' for none. */
  defaultValue: string;
  /** The field's label, to name its calendar button. */
  label: string;
} & FieldProps) {
  const t = translator(language);
  const ownId = useId();
  const id = givenId ?? ownId;
  const typed = useTypedField(name, parseDay, t('dateInvalid'), (day) => dayText(language, day));
  const button = useRef<HTMLButtonElement>(null);
  const wrapper = useRef<HTMLDivElement>(null);
  const [open, setOpen] = useState(false);
  const day = parseDay(defaultValue);
  // Before the page is painted in its new language, so the field never shows the old one's day
  // beside the new headings (a test reading the field once the headings changed saw it, now and then).
  useLayoutEffect(() => {
    // The page's language changed: the day in the field is written anew (typed text that is no day stays).
    const input = typed.ref.current;
    const shown = input && parseDay(input.value);
    if (input && shown) input.value = dayText(language, shown);
  }, [language]);

  const close = (focusButton: boolean) => {
    setOpen(false);
    if (focusButton) button.current?.focus();
  };
  const choose = (chosen: string) => {
    const input = typed.ref.current!;
    input.value = dayText(language, chosen);
    input.dispatchEvent(new Event('input', { bubbles: true }));
    close(true);
  };

  useEffect(() => {
    if (!open) return;
    // A click elsewhere closes the calendar, as leaving it with the keyboard does.
    const away = (event: PointerEvent) => {
      if (!wrapper.current?.contains(event.target as Node)) setOpen(false);
    };
    document.addEventListener('pointerdown', away);
    return () => document.removeEventListener('pointerdown', away);
  }, [open]);

  return (
    <div
      class="date-field"
      ref={wrapper}
      onFocusOut={(event) => {
        // Focus moved elsewhere on the page (Tab out of the calendar) closes it; focus lost with
        // a day of the month left behind (relatedTarget null) does not: the new month's day takes it.
        const next = event.relatedTarget as Node | null;
        if (open && next && !wrapper.current?.contains(next)) setOpen(false);
      }}
      onKeyDown={(event) => {
        if (!open || event.key !== 'Escape') return;
        // Esc closes the calendar only, not a dialog the field may be in.
        event.preventDefault();
        event.stopPropagation();
        close(true);
      }}
    >
      <input
        ref={typed.ref}
        id={id}
        type="text"
        name={name}
        autocomplete="off"
        spellcheck={false}
        class="date-text"
        defaultValue={day ? dayText(language, day) : defaultValue}
        placeholder={t('datePlaceholder')}
        aria-invalid={invalid}
        aria-describedby={[`${id}-format`, describedBy].filter(Boolean).join(' ')}
        onInput={typed.onInput}
        onBlur={typed.onBlur}
      />
      <span class="visually-hidden" id={`${id}-format`}>
        {t('dateHint')}
      </span>
      <button
        ref={button}
        type="button"
        class="secondary calendar-button"
        aria-label={t('calendarOpen', { field: label })}
        aria-haspopup="dialog"
        aria-expanded={open ? 'true' : 'false'}
        onClick={() => setOpen(!open)}
      >
        <CalendarIcon />
      </button>
      {open && (
        <Calendar
          language={language}
          label={t('calendarOf', { field: label })}
          start={parseDay(typed.ref.current?.value ?? '') ?? null}
          onChoose={choose}
        />
      )}
    </div>
  );
}

function CalendarIcon() {
  return (
    <svg width="16" height="16" viewBox="0 0 16 16" aria-hidden="true" focusable="false">
      <rect x="1.5" y="2.5" width="13" height="12" rx="1.5" fill="none" stroke="currentColor" />
      <path d="M1.5 6h13M5 1v3M11 1v3" stroke="currentColor" fill="none" />
    </svg>
  );
}

/** A month's grid of days, the chosen one (or today) focused: the WAI-ARIA date picker dialog. */
function Calendar({
  language,
  label,
  start,
  onChoose,
}: {
  language: Language;
  label: string;
  /** The day in the field, if any: shown chosen, and focused first. */
  start: string | null;
  onChoose: (day: string) => void;
}) {
  const t = translator(language);
  const today = localToday();
  const [focused, setFocused] = useState(start ?? today);
  const grid = useRef<HTMLTableElement>(null);
  // Set where the keyboard moves the focused day (and on opening), not where a button changes the month.
  const follow = useRef(true);
  const headingId = useId();
  const month = focused.slice(0, 7);

  useLayoutEffect(() => {
    if (!follow.current) return;
    follow.current = false;
    grid.current?.querySelector<HTMLElement>('td[tabindex="0"]')?.focus();
  }, [focused]);

  const move = (next: string) => {
    follow.current = true;
    setFocused(next);
  };
  const onGridKey = (event: KeyboardEvent) => {
    const steps: Record<string, () => string> = {
      ArrowLeft: () => addDays(focused, -1),
      ArrowRight: () => addDays(focused, 1),
      ArrowUp: () => addDays(focused, -7),
      ArrowDown: () => addDays(focused, 7),
      Home: () => addDays(focused, -weekday(focused)),
      End: () => addDays(focused, 6 - weekday(focused)),
      PageUp: () => addMonths(focused, event.shiftKey ? -12 : -1),
      PageDown: () => addMonths(focused, event.shiftKey ? 12 : 1),
    };
    if (event.key === 'Enter' || event.key === ' ') {
      event.preventDefault();
      onChoose(focused);
    } else if (steps[event.key]) {
      event.preventDefault();
      move(steps[event.key]!());
    }
  };

  const long = new Intl.DateTimeFormat(language, { dateStyle: 'full', timeZone: 'UTC' });
  const monthName = new Intl.DateTimeFormat(language, { year: 'numeric', month: 'long', timeZone: 'UTC' });
  const dayName = (format: 'short' | 'long', i: number) =>
    new Intl.DateTimeFormat(language, { weekday: format, timeZone: 'UTC' }).format(Date.UTC(2024, 0, 1 + i));
  const utc = (day: string) => Date.parse(`${day}T00:00:00Z`);
  // Named by hidden text rather than aria-label: the name is the button's content, as WCAG 2.5.3 asks.
  const monthButton = (months: number, text: string, name: string) => (
    <button type="button" class="secondary small" onClick={() => setFocused(addMonths(focused, months))}>
      <span aria-hidden="true">{text}</span>
      <span class="visually-hidden">{name}</span>
    </button>
  );
  return (
    <div class="calendar" role="dialog" aria-label={label}>
      <div class="calendar-head">
        {monthButton(-12, '«', t('calendarPreviousYear'))}
        {monthButton(-1, '‹', t('calendarPreviousMonth'))}
        <span class="calendar-month" id={headingId} aria-live="polite">
          {monthName.format(utc(`${month}-01`))}
        </span>
        {monthButton(1, '›', t('calendarNextMonth'))}
        {monthButton(12, '»', t('calendarNextYear'))}
      </div>
      <table role="grid" class="calendar-days" ref={grid} aria-labelledby={headingId} onKeyDown={onGridKey}>
        <thead>
          <tr>
            {Array.from({ length: 7 }, (_, i) => (
              <th key={i} scope="col" abbr={dayName('long', i)}>
                {dayName('short', i)}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {monthWeeks(month).map((week) => (
            <tr key={week[0]}>
              {week.map((day) =>
                day.startsWith(month) ? (
                  <td
                    key={day}
                    tabIndex={day === focused ? 0 : -1}
                    aria-label={long.format(utc(day))}
                    aria-selected={day === start ? 'true' : 'false'}
                    aria-current={day === today ? 'date' : undefined}
                    data-day={day}
                    onClick={() => onChoose(day)}
                  >
                    {Number(day.slice(8))}
                  </td>
                ) : (
                  <td key={day} />
                ),
              )}
            </tr>
          ))}
        </tbody>
      </table>
      <div class="calendar-foot">
        <button type="button" class="secondary small" onClick={() => onChoose(today)}>
          {t('calendarToday')}
        </button>
        <span class="calendar-keys">{t('calendarKeys')}</span>
      </div>
    </div>
  );
}

/** A time of day, 24-hour (`09:30`), typed: the form gets `HH:MM` under `name`. */
export function TimeInput({
  name,
  language,
  defaultValue,
  hint: hintText,
  id,
  'aria-invalid': invalid,
  'aria-describedby': describedBy,
}: {
  name: string;
  language: Language;
  /** `HH:MM`, or '' for none. */
  defaultValue: string;
  /** What an empty field means, with the format. */
  hint: string;
} & FieldProps) {
  const t = translator(language);
  const typed = useTypedField(name, parseTime, t('timeInvalid'), (time) => time);
  const ownId = useId();
  const hint = `${id ?? ownId}-format`;
  return (
    <>
      <input
        ref={typed.ref}
        id={id ?? ownId}
        type="text"
        name={name}
        inputMode="numeric"
        autocomplete="off"
        class="time-text"
        defaultValue={defaultValue}
        placeholder={t('timePlaceholder')}
        aria-invalid={invalid}
        aria-describedby={[hint, describedBy].filter(Boolean).join(' ')}
        onInput={typed.onInput}
        onBlur={typed.onBlur}
      />
      <span class="visually-hidden" id={hint}>
        {hintText}
      </span>
    </>
  );
}
