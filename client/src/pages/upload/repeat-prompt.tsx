import { useEffect, useRef } from 'preact/hooks';
import { translator, type Language } from '../../i18n/index.js';
import type { RepeatQuestion } from '../../upload/repeat-question.js';
import { formatCount, formatTime } from '../format.js';

/**
 * 其中 N 个文件本单位已于 … 上传过：跳过这些 / 仍要再次登记. Asked once for a drop; skipping is
 * the default (it has the keyboard when the question appears, so Enter skips). The other files
 * of the drop go on meanwhile.
 */
export function RepeatPrompt({ language, question }: { language: Language; question: RepeatQuestion }) {
  const t = translator(language);
  const skip = useRef<HTMLButtonElement>(null);
  useEffect(() => skip.current?.focus(), [question]);
  return (
    <section
      class="notice repeat-question"
      role="alertdialog"
      aria-labelledby="repeat-question-text"
      aria-describedby="repeat-question-hint"
      data-count={question.count}
    >
      <p id="repeat-question-text" class="repeat-question-text">
        {t('repeatQuestion', {
          count: formatCount(language, question.count),
          time: formatTime(language, question.latest),
        })}
      </p>
      <p id="repeat-question-hint" class="hint">
        {t('repeatHint')}
      </p>
      <div class="upload-actions">
        <button type="button" ref={skip} onClick={() => question.answer('skip')}>
          {t('repeatSkip')}
        </button>
        <button type="button" class="secondary" onClick={() => question.answer('count')}>
          {t('repeatCount')}
        </button>
      </div>
    </section>
  );
}
