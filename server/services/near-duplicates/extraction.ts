export type ExtractedText = { status: 'text'; text: string; format: 'txt' | 'md' | 'csv' | 'html' | 'docx' | 'pdf' } | { status: 'skipped'; reason: string };
export const EXTRACTABLE_MAX_BYTES = 64 * 1024 * 1024;

function decode(bytes: Uint8Array): string {
  try {
    return new TextDecoder('utf-8', { fatal: true, ignoreBOM: false }).decode(bytes);
  } catch {
    return new TextDecoder('gb18030').decode(bytes);
  }
}

/** Text of a document, by its name (extension) or media type. */
export async function extractText(bytes: Uint8Array, file: { name: string; contentType: string }): Promise<ExtractedText> {
  const ext = /\.([a-z0-9]+)$/i.exec(file.name)?.[1]?.toLowerCase();
  const type = file.contentType.split(';')[0]!.trim().toLowerCase();
  if (ext === 'html' || ext === 'htm' || type === 'text/html') {
    const text = decode(bytes)
      .replace(/<(script|style)\b[\s\S]*?<\/\1>/gi, ' ')
      .replace(/<(br|p|div|li|tr|h\d)\b[^>]*>/gi, '\n')
      .replace(/<[^>]+>/g, ' ')
      .replace(/&nbsp;/g, ' ')
      .replace(/&lt;/g, '<')
      .replace(/&gt;/g, '>')
      .replace(/&amp;/g, '&');
    return { status: 'text', text, format: 'html' };
  }
  if (ext === 'md' || type === 'text/markdown') return { status: 'text', text: decode(bytes), format: 'md' };
  if (ext === 'csv' || type === 'text/csv') return { status: 'text', text: decode(bytes), format: 'csv' };
  if (ext === 'txt' || type === 'text/plain') return { status: 'text', text: decode(bytes), format: 'txt' };
  return { status: 'skipped', reason: `not a text document (${type || ext || 'unknown type'})` };
}
