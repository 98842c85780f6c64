import type { ReceiptView } from '../../../shared/receipts.js';
import { translator, type Language } from '../i18n/index.js';
import { formatBytes, formatCount, formatDay } from './format.js';
import { transferVolumes } from './transfer-volumes.js';

/**
 * 移交清单, page 1 of a printed receipt: who hands over what to whom, one line per 案卷 with its
 * files and size, and the lines to sign; the files follow as its appendix (附件：文件目录). Shown
 * on paper only (the screen has the receipt's own table).
 */
export function TransferSheet({
  language,
  receipt,
  unit,
  clerk,
}: {
  language: Language;
  receipt: ReceiptView;
  /** 移交单位: the clerk's unit, as the page names it. */
  unit: string;
  /** 移交人: the clerk, by name (and login). */
  clerk: string;
}) {
  const t = translator(language);
  const volumes = transferVolumes(receipt.rows);
  const n = (value: number) => formatCount(language, value);
  const total = volumes.reduce((sum, v) => ({ files: sum.files + v.files, bytes: sum.bytes + v.bytes }), {
    files: 0,
    bytes: 0,
  });
  const left = receipt.rows.length - total.files;
  return (
    <section class="transfer-sheet print-only" aria-labelledby="transfer-title">
      <h2 id="transfer-title">{t('transferTitle')}</h2>
      <dl class="transfer-parties">
        <div>
          <dt>{t('transferUnit')}</dt>
          <dd>{unit}</dd>
        </div>
        <div>
          <dt>{t('transferClerk')}</dt>
          <dd>{clerk}</dd>
        </div>
        <div>
          <dt>{t('transferReceiver')}</dt>
          <dd class="blank" />
        </div>
        <div>
          <dt>{t('transferDate')}</dt>
          <dd>{formatDay(language, receipt.startedAt.slice(0, 10))}</dd>
        </div>
        <div class="wide">
          <dt>{t('transferFolder')}</dt>
          <dd>{receipt.title}</dd>
        </div>
      </dl>
      <table class="transfer-volumes">
        <thead>
          <tr>
            <th scope="col" class="num">
              {t('csvRow')}
            </th>
            <th scope="col">{t('transferVolume')}</th>
            <th scope="col" class="num">
              {t('transferFiles')}
            </th>
            <th scope="col" class="num">
              {t('transferSize')}
            </th>
          </tr>
        </thead>
        <tbody>
          {volumes.map((v, i) => (
            <tr key={v.name}>
              <td class="num">{i + 1}</td>
              <td>{v.name || t('transferLoose')}</td>
              <td class="num">{n(v.files)}</td>
              <td class="num">{formatBytes(v.bytes)}</td>
            </tr>
          ))}
        </tbody>
        <tfoot>
          <tr>
            <th scope="row" colSpan={2}>
              {t('transferTotal')}
            </th>
            <td class="num">{n(total.files)}</td>
            <td class="num">{formatBytes(total.bytes)}</td>
          </tr>
        </tfoot>
      </table>
      {left > 0 && <p class="transfer-note">{t('transferLeftOut', { count: n(left) })}</p>}
      <p class="transfer-note">{t('transferAppendixNote', { count: n(total.files) })}</p>
      <div class="signatures">
        <p>
          <span>{t('transferClerkSign')}</span>
          <span class="line" />
          <span>{t('transferSignDate')}</span>
          <span class="line short" />
        </p>
        <p>
          <span>{t('transferReceiverSign')}</span>
          <span class="line" />
          <span>{t('transferSignDate')}</span>
          <span class="line short" />
        </p>
      </div>
    </section>
  );
}
