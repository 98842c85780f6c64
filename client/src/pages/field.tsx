import { cloneElement, type ComponentChildren, type VNode } from 'preact';
import { useEffect, useId, useRef, useState } from 'preact/hooks';
import type { ErrorCode } from '../../../shared/errors.js';
import { ApiError, describeError, type Language, type Translate } from '../i18n/index.js';
import { ErrorNote } from './controls.js';

/**
 * A form's problems: a text per field (by the control's name), and under FORM what no one field
 * is to blame for (a wrong login, the network). Shown at the field, tied to it with
 * aria-invalid and aria-describedby, so a screen reader reads the problem with the field.
 */
export type FieldErrors = Readonly<Record<string, string>>;
export const FORM = '*';
export const NO_ERRORS: FieldErrors = {};

/**
 * A labelled control with its hint and its problem below it. The one child is the control; it
 * gets its id and its aria-invalid and aria-describedby from here.
 */
export function Field({
  label,
  errors,
  hint,
  class: className,
  children,
}: {
  label: ComponentChildren;
  errors: FieldErrors;
  hint?: ComponentChildren;
  class?: string;
  children: VNode<{ name?: string }>;
}) {
  const id = useId();
  const error = children.props.name ? errors[children.props.name] : undefined;
  return (
    <div class={`field${error ? ' invalid' : ''}${className ? ` ${className}` : ''}`}>
      <label for={id}>{label}</label>
      <Control id={id} error={error} hint={hint}>
        {children}
      </Control>
    </div>
  );
}

/**
 * A control tied to its hint and its problem (for controls labelled otherwise, as the unit
 * picker's search is by its fieldset).
 */
export function Control({
  id,
  error,
  hint,
  children,
}: {
  id: string;
  error: string | undefined;
  hint?: ComponentChildren;
  children: VNode;
}) {
  const described = [hint ? `${id}-hint` : '', error ? `${id}-error` : ''].filter(Boolean).join(' ');
  return (
    <>
      {cloneElement(children, {
        id,
        'aria-invalid': error ? 'true' : undefined,
        'aria-describedby': described || undefined,
      })}
      {hint && (
        <span class="field-hint" id={`${id}-hint`}>
          {hint}
        </span>
      )}
      {error && (
        <span class="field-error" id={`${id}-error`}>
          {error}
        </span>
      )}
    </>
  );
}

/** The form's own problem, announced when it appears. */
export function FormProblem({ errors }: { errors: FieldErrors }) {
  return <ErrorNote error={errors[FORM] ?? null} />;
}

/**
 * What the browser's constraints (required, minlength, min, max, type) find wrong with a form's
 * controls, in the page's language: the forms are `noValidate`, as the browser's own bubbles
 * speak its language, not the page's, and vanish before a screen reader reads them.
 */
export function controlProblems(form: HTMLFormElement, t: Translate): Record<string, string> {
  const problems: Record<string, string> = {};
  for (const control of Array.from(form.elements)) {
    if (!(control instanceof HTMLInputElement || control instanceof HTMLSelectElement)) continue;
    if (!control.name || control.disabled || problems[control.name]) continue;
    const problem = controlProblem(control, t);
    if (problem) problems[control.name] = problem;
  }
  return problems;
}

function controlProblem(control: HTMLInputElement | HTMLSelectElement, t: Translate): string | undefined {
  const { validity } = control;
  if (validity.valueMissing) return t(control.type === 'file' ? 'fieldChooseFile' : 'fieldRequired');
  if (!(control instanceof HTMLInputElement)) return undefined;
  // A field that checks its own text (a date, a time) says what it expects.
  if (validity.customError) return control.validationMessage;
  // Counted as the server counts a password: in characters, not UTF-16 units.
  const length = Array.from(control.value).length;
  if (control.minLength > 0 && length > 0 && length < control.minLength)
    return t('fieldTooShort', { min: control.minLength });
  if (validity.rangeUnderflow) return t('fieldTooSmall', { min: control.min });
  if (validity.rangeOverflow) return t('fieldTooLarge', { max: control.max });
  if (validity.badInput || validity.typeMismatch || validity.stepMismatch) return t('fieldInvalid');
  return undefined;
}

/** Where a server's refusals go in one form. */
export interface ErrorPlaces {
  /** The form's fields (as the server names them, or as `renamed` maps them). */
  fields: readonly string[];
  /** The form's name for a field the server names otherwise. */
  renamed?: Readonly<Record<string, string>>;
  /** Codes that always concern one field, with what to say there (else the code's own text). */
  codes?: Partial<Record<ErrorCode, { field: string; text?: string }>>;
  /** The text for a refusal (else the code's own). */
  describe?: (error: unknown) => string;
}

/**
 * A refusal at the field it concerns: the one the server names (`details.field`, from
 * server/http/validate.ts) or the one its code always concerns; otherwise the form's own.
 */
export function placeError(language: Language, error: unknown, places: ErrorPlaces): FieldErrors {
  const describe = places.describe ?? ((e: unknown) => describeError(language, e));
  if (error instanceof ApiError) {
    const byCode = places.codes?.[error.code];
    if (byCode && places.fields.includes(byCode.field)) return { [byCode.field]: byCode.text ?? describe(error) };
    const named = error.details.field;
    const field = typeof named === 'string' ? (places.renamed?.[named] ?? named) : undefined;
    if (field !== undefined && places.fields.includes(field)) return { [field]: describe(error) };
  }
  return { [FORM]: describe(error) };
}

/** Moves the keyboard to the form's first field with a problem (none: nothing moves). */
export function focusFirstInvalid(root: ParentNode | null | undefined): void {
  root?.querySelector<HTMLElement>('[aria-invalid="true"]')?.focus();
}

/**
 * A form that checks its fields before sending, sends once at a time, and shows each refusal at
 * its field, the first of them focused.
 *
 * `check` adds what the constraints cannot say (two passwords that differ); `send` may throw a
 * server's refusal, placed by `places`.
 */
export function useCheckedForm({
  language,
  t,
  places,
  check,
  send,
}: {
  language: Language;
  t: Translate;
  places: ErrorPlaces;
  check?: (form: FormData) => Record<string, string>;
  send: (form: FormData, element: HTMLFormElement) => Promise<void>;
}) {
  const ref = useRef<HTMLFormElement>(null);
  const [errors, setErrors] = useState<FieldErrors>(NO_ERRORS);
  const [busy, setBusy] = useState(false);
  // Counts the times problems were shown, so the same problems shown again move the focus again.
  const [shown, setShown] = useState(0);
  useEffect(() => {
    if (shown > 0) focusFirstInvalid(ref.current);
  }, [shown]);
  const show = (next: FieldErrors) => {
    setErrors(next);
    setShown((n) => n + 1);
  };

  const submit = (event: Event): void => {
    event.preventDefault();
    if (busy) return;
    const element = event.currentTarget as HTMLFormElement;
    const data = new FormData(element);
    const problems = { ...controlProblems(element, t), ...check?.(data) };
    if (Object.keys(problems).length > 0) return show(problems);
    setErrors(NO_ERRORS);
    setBusy(true);
    send(data, element).then(
      () => setBusy(false),
      (error: unknown) => {
        setBusy(false);
        show(placeError(language, error, places));
      },
    );
  };
  return { ref, errors, busy, submit, show };
}
