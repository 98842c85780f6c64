/** A text field's value from a submitted form: '' when the form has no such field (or a file there). */
export function formText(form: FormData, name: string): string {
  const value = form.get(name);
  return typeof value === 'string' ? value : '';
}
