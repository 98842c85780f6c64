import { randomBytes } from 'node:crypto';
import type { ReceiptView } from '../../shared/receipts.js';
import { md5, sha256 } from './content.js';
import { body, type Client } from './server.js';

/** What a folder's upload leaves a client: its receipt's id, and each file's upload id and file id. */
export interface UploadedFolder {
  receipt: string;
  uploadIds: string[];
  fileIds: string[];
}

/**
 * A folder the client uploads in one batch (`<title>/第N页.pdf`, each file under its own key),
 * and the receipt it keeps of it, dated `at`: as the upload page does, in one request each.
 */
export async function uploadFolder(
  client: Client,
  files: Buffer[],
  title = '卷',
  at: Date = new Date(),
): Promise<UploadedFolder> {
  const newKey = () => randomBytes(16).toString('hex');
  const keys = files.map(() => newKey());
  const paths = files.map((_, i) => `${title}/第${i + 1}页.pdf`);
  const batch = await body<{ results: Array<{ fileId: string }> }>(
    await client.batch(
      files.map((data, i) => ({ name: `p${i}.pdf`, data })),
      files.map((data, i) => ({ md5: md5(data), sha256: sha256(data), name: paths[i], key: keys[i] })),
    ),
    200,
  );
  const receipt = newKey();
  const rows = files.map((data, i) => ({
    path: paths[i],
    size: data.length,
    outcome: 'stored',
    via: 'batch',
    key: keys[i],
    at: at.toISOString(),
  }));
  await body(await client.json(`/api/receipts/${receipt}`, 'PUT', { title, startedAt: at.toISOString(), rows }), 200);
  const view = await body<ReceiptView>(await client.fetch(`/api/receipts/${receipt}`), 200);
  return { receipt, uploadIds: view.rows.map((r) => r.uploadId!), fileIds: batch.results.map((r) => r.fileId) };
}
