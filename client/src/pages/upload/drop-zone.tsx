import { useRef, useState } from 'preact/hooks';
import { translator, type Language } from '../../i18n/index.js';
import { filesFromDrop, filesFromInput, type ChosenFile } from '../../upload/chosen-files.js';
import { formatBytes } from '../format.js';

/**
 * Where a clerk drops a folder or files, or chooses them with the two buttons. `compact` while an
 * upload runs: one line (继续添加), so the transfer list has the screen, as in 网盘 transfer lists.
 */
export function DropZone({
  language,
  maxFileSize,
  onFiles,
  compact = false,
}: {
  language: Language;
  maxFileSize: number;
  onFiles: (files: ChosenFile[]) => void;
  compact?: boolean;
}) {
  const t = translator(language);
  const [dragging, setDragging] = useState(false);
  const folderInput = useRef<HTMLInputElement>(null);
  const fileInput = useRef<HTMLInputElement>(null);
  const chosen = (event: Event) => {
    const input = event.currentTarget as HTMLInputElement;
    onFiles(filesFromInput(input.files));
    input.value = '';
  };
  return (
    <div
      class={`dropzone${compact ? ' compact' : ''}${dragging ? ' dragging' : ''}`}
      onDragOver={(event) => {
        event.preventDefault();
        setDragging(true);
      }}
      onDragLeave={() => setDragging(false)}
      onDrop={(event) => {
        event.preventDefault();
        setDragging(false);
        if (event.dataTransfer) void filesFromDrop(event.dataTransfer).then(onFiles);
      }}
    >
      {compact ? (
        <>
          <button type="button" onClick={() => folderInput.current?.click()}>
            {t('addMore')}
          </button>
          <button type="button" class="secondary" onClick={() => fileInput.current?.click()}>
            {t('addMoreFiles')}
          </button>
          <span class="drop-text">{t('addMoreHint')}</span>
          <span class="drop-limit">{t('sizeLimit', { limit: formatBytes(maxFileSize) })}</span>
        </>
      ) : (
        <>
          <p class="drop-text">{t('dropHere')}</p>
          <div class="drop-actions">
            <button type="button" onClick={() => folderInput.current?.click()}>
              {t('chooseFolder')}
            </button>
            <button type="button" class="secondary" onClick={() => fileInput.current?.click()}>
              {t('chooseFiles')}
            </button>
          </div>
          <p class="drop-limit">{t('sizeLimit', { limit: formatBytes(maxFileSize) })}</p>
        </>
      )}
      <input
        ref={folderInput}
        type="file"
        multiple
        hidden
        {...{ webkitdirectory: true }}
        aria-label={t('chooseFolder')}
        onChange={chosen}
      />
      <input ref={fileInput} type="file" multiple hidden aria-label={t('chooseFiles')} onChange={chosen} />
    </div>
  );
}
