import { useEffect, useState } from 'preact/hooks';
import type { ReceiptRowView, ReceiptSummary, ReceiptView } from '../../../shared/receipts.js';
import type { WithdrawalReason } from '../../../shared/withdrawals.js';
import { personLabel } from '../../../shared/accounts.js';
import type { AccountView } from '../../../shared/schemas.js';
import { ARCHIVE_UNIT_ID } from '../../../shared/units.js';
import type { ArchiveApi } from '../api.js';
import { describeError, translator, type Language } from '../i18n/index.js';
import { outcomeWord, receiptReasonText } from '../upload/outcome-text.js';
import { pathInDrop } from './upload/transfer-rows.js';
import { ErrorNote, Pager } from './controls.js';
import { formatBytes, formatCount, formatTime, unitPlace } from './format.js';
import { TableSection } from './table/table-section.js';
import { TransferSheet } from './transfer-sheet.js';
import { useLoaded } from './table/use-loaded.js';
import { WithdrawDialog } from './withdraw-dialog.js';
import { DisposeButton } from './dispose-dialog.js';

const PAGE_SIZE = 20;

/** 上传清单: the clerk's receipts of folder uploads, and one receipt, printable and as CSV. */
export function ReceiptsPage({
  api,
  language,
  id,
  trashDays,
  canDispose = false,
  account,
}: {
  api: ArchiveApi;
  language: Language;
  id?: string;
  /** TRASH_DAYS, from the session: what the withdrawal dialog promises. */
  trashDays: number;
  /** A top-level administrator: a receipt offers 销毁 of its files. */
  canDispose?: boolean;
  /** The clerk: 移交人 and 移交单位 of the printed 移交清单. */
  account: AccountView;
}) {
  return id ? (
    <ReceiptPage
      api={api}
      language={language}
      id={id}
      trashDays={trashDays}
      canDispose={canDispose}
      account={account}
    />
  ) : (
    <ReceiptList api={api} language={language} />
  );
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
      r.withdrawal
        ? t('withdrawnAt', { time: formatTime(language, r.withdrawal.withdrawnAt) })
        : outcomeWord(language, r.outcome),
      r.reason
        ? receiptReasonText(language, r.reason)
        : r.sameAs
          ? t('statusSameAs', { path: pathInDrop(r.sameAs) })
          : '',
      formatTime(language, r.at, true),
      r.fileId ?? '',
      r.uploadCount ?? '',
    ]
      .map(cell)
      .join(','),
  );
  return `\uFEFF${[header.map(cell).join(','), ...lines].join('\r\n')}\r\n`;
}

/** A row the clerk may still withdraw: counted (it names its upload) and not withdrawn. */
const withdrawable = (r: ReceiptRowView): r is ReceiptRowView & { uploadId: string } =>
  r.uploadId !== undefined && r.withdrawal === undefined;

/** What the withdrawal dialog is open for: some rows by their uploads, or the whole receipt. */
type Withdrawing = { uploads: string[]; what: string } | { receipt: true; what: string; count: number };

function ReceiptPage({
  api,
  language,
  id,
  trashDays,
  canDispose,
  account,
}: {
  api: ArchiveApi;
  language: Language;
  id: string;
  trashDays: number;
  canDispose: boolean;
  account: AccountView;
}) {
  const t = translator(language);
  const [receipt, setReceipt] = useState<ReceiptView | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [csvUrl, setCsvUrl] = useState<string | null>(null);
  const [selected, setSelected] = useState<ReadonlySet<string>>(new Set());
  const [withdrawing, setWithdrawing] = useState<Withdrawing | null>(null);
  const [done, setDone] = useState<number | null>(null);
  const load = () =>
    api.receipt(id).then(
      (r) => {
        setReceipt(r);
        setSelected(new Set());
      },
      (e: unknown) => setError(describeError(language, e)),
    );
  useEffect(() => {
    void load();
  }, [id]);
  const open = receipt ? receipt.rows.filter(withdrawable) : [];
  const toggle = (upload: string, on: boolean) => {
    const next = new Set(selected);
    if (on) next.add(upload);
    else next.delete(upload);
    setSelected(next);
  };
  const withdraw = async (w: Withdrawing, reason: WithdrawalReason, note: string) => {
    const request = { reason, ...(note ? { note } : {}) };
    const answer = await api.withdraw(
      'receipt' in w ? { ...request, receipt: id } : { ...request, uploads: w.uploads },
    );
    setDone(answer.withdrawn.length);
    await load();
  };
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
      <h1 id="receipt-title" class="no-print">
        {t('receiptHeading', { title: receipt?.title ?? '' })}
      </h1>
      <ErrorNote error={error} />
      {receipt && (
        <>
          <TransferSheet
            language={language}
            receipt={receipt}
            unit={account.unit.id === ARCHIVE_UNIT_ID ? t('unitArchiveInSentence') : unitPlace(account.unit)}
            clerk={personLabel(account.username, account.displayName, language)}
          />
          <h2 class="print-only appendix-title">{t('transferAppendix', { title: receipt.title })}</h2>
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
            {canDispose && receipt.rows.some((r) => r.fileId) && (
              <DisposeButton
                api={api}
                language={language}
                what={t('disposeReceiptWhat', { title: receipt.title })}
                target={{ receipt: id }}
              />
            )}
            {open.length > 0 && (
              <>
                <button
                  type="button"
                  class="secondary"
                  disabled={selected.size === 0}
                  onClick={() =>
                    setWithdrawing({
                      uploads: [...selected],
                      what: t('withdrawSelectedWhat'),
                    })
                  }
                >
                  {t('withdrawSelected', { count: formatCount(language, selected.size) })}
                </button>
                <button
                  type="button"
                  class="secondary"
                  onClick={() =>
                    setWithdrawing({
                      receipt: true,
                      what: t('withdrawWholeWhat', { title: receipt.title }),
                      count: open.length,
                    })
                  }
                >
                  {t('withdrawWhole')}
                </button>
              </>
            )}
          </div>
          {done !== null && (
            <p role="status" class="notice">
              {t('withdrawDone', { count: formatCount(language, done) })} <a href="#/trash">{t('navTrash')}</a>
            </p>
          )}
          <table class="files receipt-rows">
            <thead>
              <tr>
                <th scope="col" class="pick no-print">
                  <span class="visually-hidden">{t('withdrawPick')}</span>
                </th>
                <th scope="col" class="num">
                  {t('csvRow')}
                </th>
                <th scope="col">{t('csvPath')}</th>
                <th scope="col" class="num">
                  {t('colSize')}
                </th>
                <th scope="col">{t('csvOutcome')}</th>
                <th scope="col">{t('csvTime')}</th>
                <th scope="col" class="print-only">
                  {t('csvFileId')}
                </th>
                <th scope="col" class="no-print">
                  <span class="visually-hidden">{t('withdraw')}</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {receipt.rows.map((r, i) => (
                <tr key={i} data-outcome={r.outcome} data-withdrawn={r.withdrawal ? 'yes' : undefined}>
                  <td class="pick no-print">
                    {withdrawable(r) && (
                      <input
                        type="checkbox"
                        aria-label={t('withdrawPickRow', { name: r.path })}
                        checked={selected.has(r.uploadId)}
                        onChange={(e) => toggle(r.uploadId, (e.target as HTMLInputElement).checked)}
                      />
                    )}
                  </td>
                  <td class="num">{i + 1}</td>
                  <td class="name">{r.path}</td>
                  <td class="num">{formatBytes(r.size)}</td>
                  <td>
                    {r.withdrawal ? (
                      <span class="withdrawn">
                        {t('withdrawnAt', { time: formatTime(language, r.withdrawal.withdrawnAt) })}
                      </span>
                    ) : (
                      <>
                        {outcomeWord(language, r.outcome)}
                        {r.reason && `${t('summarySeparator')}${receiptReasonText(language, r.reason)}`}
                        {r.sameAs && `${t('summarySeparator')}${t('statusSameAs', { path: pathInDrop(r.sameAs) })}`}
                      </>
                    )}
                  </td>
                  <td>{formatTime(language, r.at, true)}</td>
                  <td class="print-only system-id">{r.fileId ?? ''}</td>
                  <td class="no-print">
                    {withdrawable(r) && (
                      <button
                        type="button"
                        class="secondary small"
                        aria-label={`${t('withdraw')} ${r.path}`}
                        onClick={() => setWithdrawing({ uploads: [r.uploadId], what: r.path })}
                      >
                        {t('withdraw')}
                      </button>
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
          {withdrawing && (
            <WithdrawDialog
              language={language}
              what={withdrawing.what}
              count={'receipt' in withdrawing ? withdrawing.count : withdrawing.uploads.length}
              trashDays={trashDays}
              onWithdraw={(reason, note) => withdraw(withdrawing, reason, note)}
              onClose={() => setWithdrawing(null)}
            />
          )}
        </>
      )}
    </main>
  );
}
