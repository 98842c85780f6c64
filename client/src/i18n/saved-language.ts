import { LANGUAGES, type Language } from './messages.js';

/** The clerk's choice of language, kept in this browser (the translations themselves run anywhere). */
const STORAGE_KEY = 'archive.language';

/** Chinese unless the clerk switched to English on this browser. */
export function initialLanguage(): Language {
  const saved = localStorage.getItem(STORAGE_KEY);
  return (LANGUAGES as readonly string[]).includes(saved ?? '') ? (saved as Language) : 'zh-CN';
}

export function saveLanguage(language: Language): void {
  localStorage.setItem(STORAGE_KEY, language);
  document.documentElement.lang = language;
}
