import { useEffect, useState } from 'preact/hooks';
import type { ReceiptSummary, ReceiptView } from '../../../shared/receipts.js';
import type { ArchiveApi } from '../api.js';
import { describeError, translator, type Language } from '../i18n/index.js';
import { outcomeWord, receiptReasonText } from '../upload/outcome-text.js';
import { ErrorNote, Pager } from './controls.js';
import { formatBytes, formatCount, formatTime } from './format.js';
import { TableSection } from './table/table-section.js';
import { useLoaded } from './table/use-loaded.js';

const PAGE_SIZE = 20;

/** 上传清单: the clerk's receipts of folder uploads, and one receipt, printable and as CSV. */
export function ReceiptsPage({ api, language, id }: { api: ArchiveApi; language: Language; id?: string }) {
  return id ? <ReceiptPage api={api} language={language} id={id} /> : <ReceiptList api={api} language={language} />;
}

function countsText(language: Language, r: ReceiptSummary): string {
  const t = translator(language);
  const counts = t('receiptCounts', {
    total: formatCount(language, r.total),
    instant: formatCount(language, r.counts.instant),
    stored: formatCount(language, r.counts.stored + r.counts.duplicate),
    failed: formatCount(language, r.counts.failed),
  });
  return r.counts.skipped > 0
    ? counts + t('summarySkipped', { skipped: formatCount(language, r.counts.skipped) })
    : counts;
}

function ReceiptList({ api, language }: { api: ArchiveApi; language: Language }) {
  const t = translator(language);
  const [offset, setOffset] = useState(0);
  const loaded = useLoaded(String(offset), () => api.receipts({ limit: PAGE_SIZE, offset }));
  return (
    <main class="page" aria-labelledby="receipts-title">
      <h1 id="receipts-title">{t('receiptsTitle')}</h1>
      <p class="hint">{t('receiptsHint')}</p>
      <TableSection
        language={language}
        label={t('receiptsTitle')}
        loaded={loaded}
        count={null}
        empty={t('receiptsEmpty')}
        columns={[
          { label: t('receiptTitle'), className: 'name', cell: (r) => <a href={`#/receipts/${r.id}`}>{r.title}</a> },
          { label: t('receiptStarted'), cell: (r) => formatTime(language, r.startedAt) },
          { label: t('receiptFiles'), cell: (r) => countsText(language, r) },
        ]}
        rowKey={(r) => r.id}
        tableClass="files receipts"
        pager={(total) => (
          <Pager language={language} total={total} size={PAGE_SIZE} offset={offset} onOffset={setOffset} />
        )}
      />
    </main>
  );
}

/** The receipt as CSV for Excel and WPS: Chinese (or English) column names, UTF-8 with a BOM. */
function receiptCsv(language: Language, receipt: ReceiptView): string {
  const t = translator(language);
  const cell = (value: string | number) => {
    const text = String(value);
    // A leading =, +, - or @ would run as a formula in a spreadsheet.
    const safe = /^[=+\-@\t\r]/.test(text) ? `'${text}` : text;
    return /[",\r\n]/.test(safe) ? `"${safe.replaceAll('"', '""')}"` : safe;
  };
  const header = [
    t('csvRow'),
    t('csvPath'),
    t('csvSize'),
    t('csvOutcome'),
    t('csvReason'),
    t('csvTime'),
    t('csvFileId'),
    t('csvUploadCount'),
  ];
  const lines = receipt.rows.map((r, i) =>
    [
      i + 1,
      r.path,
      r.size,
      outcomeWord(language, r.outcome),
      r.reason ? receiptReasonText(language, r.reason) : '',
      formatTime(language, r.at, true),
      r.fileId ?? '',
      r.uploadCount ?? '',
    ]
      .map(cell)
      .join(','),
  );
  return `\uFEFF${[header.map(cell).join(','), ...lines].join('\r\n')}\r\n`;
}

function ReceiptPage({ api, language, id }: { api: ArchiveApi; language: Language; id: string }) {
  const t = translator(language);
  const [receipt, setReceipt] = useState<ReceiptView | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [csvUrl, setCsvUrl] = useState<string | null>(null);
  useEffect(() => {
    api.receipt(id).then(setReceipt, (e: unknown) => setError(describeError(language, e)));
  }, [id]);
  useEffect(() => {
    if (!receipt) return;
    const url = URL.createObjectURL(new Blob([receiptCsv(language, receipt)], { type: 'text/csv;charset=utf-8' }));
    setCsvUrl(url);
    return () => URL.revokeObjectURL(url);
  }, [receipt, language]);
  const day = receipt ? receipt.startedAt.slice(0, 10) : '';
  return (
    <main class="page receipt" aria-labelledby="receipt-title">
      <p class="no-print">
        <a href="#/receipts">{t('receiptsBack')}</a>
      </p>
      <h1 id="receipt-title">{t('receiptHeading', { title: receipt?.title ?? '' })}</h1>
      <ErrorNote error={error} />
      {receipt && (
        <>
          <p class="receipt-meta">
            {t('receiptStartedAt', { time: formatTime(language, receipt.startedAt) })}
            {' · '}
            {countsText(language, receipt)}
          </p>
          <div class="upload-actions no-print">
            {csvUrl && (
              <a class="button" href={csvUrl} download={`${t('receiptFileName')}-${receipt.title}-${day}.csv`}>
                {t('receiptCsv')}
              </a>
            )}
            <button type="button" class="secondary" onClick={() => print()}>
              {t('receiptPrint')}
            </button>
          </div>
          <table class="files receipt-rows">
            <thead>
              <tr>
                <th scope="col" class="num">
                  {t('csvRow')}
                </th>
                <th scope="col">{t('csvPath')}</th>
                <th scope="col" class="num">
                  {t('colSize')}
                </th>
                <th scope="col">{t('csvOutcome')}</th>
                <th scope="col">{t('csvTime')}</th>
              </tr>
            </thead>
            <tbody>
              {receipt.rows.map((r, i) => (
                <tr key={i} data-outcome={r.outcome}>
                  <td class="num">{i + 1}</td>
                  <td class="name">{r.path}</td>
                  <td class="num">{formatBytes(r.size)}</td>
                  <td>
                    {outcomeWord(language, r.outcome)}
                    {r.reason && `${t('summarySeparator')}${receiptReasonText(language, r.reason)}`}
                  </td>
                  <td>{formatTime(language, r.at, true)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </>
      )}
    </main>
  );
}
