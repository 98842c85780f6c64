import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { IMPORT_TEMPLATE, type ImportProblem } from '../../shared/accounts.js';
import { body, type Client, TestServer } from '../support/server.js';
import { storeTargets } from '../support/stores.js';
import { bombWorkbook, workbook } from '../support/workbook.js';

/**
 * Account import as county offices make the file (issue 42): a plain CSV from Excel or WPS (GBK),
 * an Excel workbook, rows of empty cells left behind, the template's example row left in, and unit
 * codes mistyped. Hebei loaded; who is who:
 * - top: the archive's top-level administrator;
 * - qing: administrator of 青县; dongguang: of 东光县 (both counties of 沧州市);
 * - clerk: a clerk of 清州镇 (in 青县).
 * The administrators who can import (qing and top) each run the cases that concern them.
 */
type Who = 'anonymous' | 'clerk' | 'qing' | 'dongguang' | 'top';
const QINGZHOU = '130922100';
const CHENZUI = '130922203'; // 陈嘴乡, 青县
const DENGMINGSI = '130923104'; // 灯明寺镇, 东光县
const XLSX = 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet';

interface Refusal {
  error: string;
  message: string;
  details: {
    reason?: string;
    examples?: number;
    maxBytes?: number;
    rows?: Array<{ line: number; username: string; problems: string[]; codes: ImportProblem[] }>;
  };
}

/** Text as GBK, the way Excel saves a plain "CSV" on a Chinese Windows (GB18030's two-byte part). */
function gbk(text: string): Uint8Array {
  const decoder = new TextDecoder('gb18030');
  const codes = new Map<string, number[]>();
  for (let lead = 0x81; lead <= 0xfe; lead++)
    for (let trail = 0x40; trail <= 0xfe; trail++) {
      if (trail === 0x7f) continue;
      const c = decoder.decode(new Uint8Array([lead, trail]));
      if (!codes.has(c)) codes.set(c, [lead, trail]);
    }
  const bytes: number[] = [];
  for (const c of text) {
    if (c.charCodeAt(0) < 0x80) bytes.push(c.charCodeAt(0));
    else bytes.push(...codes.get(c)!);
  }
  return new Uint8Array(bytes);
}

const answerRows = (csv: string) =>
  csv
    .replace(/^\uFEFF/, '')
    .trim()
    .split(/\r\n/)
    .slice(1)
    .map((line) => line.split(','));

for (const target of storeTargets) {
  describe(`account import from the files offices make (${target.name} store)`, { skip: target.skip }, () => {
    let server: TestServer;
    let as: Record<Who, Client>;
    /** 8 MB of sheet declared as 1 KB; made before any connection opens (it takes a while, longer than a socket idles). */
    let lyingBomb: Uint8Array;

    before(async () => {
      lyingBomb = bombWorkbook(8 << 20, 1024);
      server = await TestServer.start(target);
      await server.archive.services.directory.load(['13']);
      await server.addAccountIn('top', 'admin', 'archive');
      await server.addAccountIn('qing', 'admin', '130922');
      await server.addAccountIn('dongguang', 'admin', '130923');
      await server.addAccountIn('clerk', 'clerk', QINGZHOU);
      as = await server.loginAll(['clerk', 'qing', 'dongguang', 'top']);
    });
    after(() => server.close());

    const send = (who: Who, file: string | Uint8Array, type = 'text/csv') =>
      as[who].fetch('/api/accounts/import', { method: 'POST', headers: { 'content-type': type }, body: file });
    const exists = async (username: string) =>
      (await server.archive.services.accounts.list()).some((a) => a.username === username);
    /** The refused rows' problems, by line. */
    const refusedRows = async (who: Who, csv: string) =>
      (await body<Refusal>(await send(who, csv), 400)).details.rows!.map((r) => [r.line, r.codes]);

    it('reads a CSV saved as GBK (Excel’s and WPS’s plain CSV), Chinese header, roles and names included', async () => {
      for (const who of ['qing', 'top'] as const) {
        const res = await send(who, gbk(`用户名,角色,单位代码,姓名\r\ngbk.${who},档案员,${QINGZHOU},王芳\r\n`));
        const answer = await res.text();
        assert.equal(res.status, 201, answer);
        const [[user, name, role, unit, password]] = answerRows(answer) as [string[]];
        assert.deepEqual([user, name, role, unit], [`gbk.${who}`, '王芳', '档案员', '河北省 / 沧州市 / 青县 / 清州镇']);
        await server.login(`gbk.${who}`, password);
      }
      // UTF-8 stays UTF-8: a file that is UTF-8 is never read as GBK.
      const utf8 = await send('qing', `utf8.one,clerk,${QINGZHOU},李四\n`);
      assert.equal(answerRows(await utf8.text())[0]![1], '李四');
    });

    it('reads the first sheet of an Excel workbook (.xlsx), a unit code typed as a number included', async () => {
      for (const who of ['qing', 'top'] as const) {
        const file = workbook([
          ['用户名', '角色', '单位代码', '姓名'],
          [`xlsx.${who}`, '档案员', Number(QINGZHOU), '赵六'],
          [`xlsx2.${who}`, '管理员', CHENZUI, null],
        ]);
        const res = await send(who, file, XLSX);
        const answer = await res.text();
        assert.equal(res.status, 201, answer);
        assert.deepEqual(
          answerRows(answer).map((r) => r.slice(0, 4)),
          [
            [`xlsx.${who}`, '赵六', '档案员', '河北省 / 沧州市 / 青县 / 清州镇'],
            [`xlsx2.${who}`, '', '管理员', '河北省 / 沧州市 / 青县 / 陈嘴乡'],
          ],
        );
        await server.login(`xlsx.${who}`, answerRows(answer)[0]![4]);
      }
      // Whatever type the browser gives it (Windows often gives none): the bytes say it is a workbook.
      const untyped = await send('qing', workbook([['xlsx.untyped', 'clerk', QINGZHOU]]), 'application/octet-stream');
      assert.equal(untyped.status, 201, await untyped.text());
      // Its rows are checked as a CSV's are, by the sheet's row numbers.
      assert.deepEqual(
        (
          await body<Refusal>(
            await send(
              'qing',
              workbook([
                ['ok.x', 'clerk', QINGZHOU],
                ['bad.x', 'boss', QINGZHOU],
              ]),
              XLSX,
            ),
            400,
          )
        ).details.rows!.map((r) => [r.line, r.codes]),
        [[2, [{ code: 'bad_role', role: 'boss' }]]],
      );
      assert.equal(await exists('ok.x'), false);
    });

    it('refuses a workbook that unpacks to too much (a zip bomb, even one lying about its size), an .xls and a broken zip, with 400 and what to do', async () => {
      // 32 MB of sheet declared: refused from the zip's directory, nothing unpacked.
      const honest = await body<Refusal>(await send('qing', bombWorkbook(1024, 32 << 20), XLSX), 400);
      assert.equal(honest.details.reason, 'sheet_too_large');
      assert.equal(honest.details.maxBytes, 16 << 20);
      assert.match(honest.message, /keep only the accounts' sheet, or save it as "CSV UTF-8"/);
      // 8 MB declared as 1 KB: unpacked no further than the 1 KB it declares.
      assert.ok(lyingBomb.length < 1 << 20, `the bomb is small: ${lyingBomb.length} bytes`);
      assert.equal((await body<Refusal>(await send('top', lyingBomb, XLSX), 400)).details.reason, 'sheet_too_large');
      // An Excel 97–2003 workbook, and a zip that is no workbook.
      const xls = new Uint8Array([0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1, ...new Uint8Array(504)]);
      const old = await body<Refusal>(await send('qing', xls, 'application/vnd.ms-excel'), 400);
      assert.equal(old.details.reason, 'old_excel');
      assert.match(old.message, /\.xlsx/);
      const broken = workbook([['a', 'clerk', QINGZHOU]]).slice(0, 200);
      assert.equal((await body<Refusal>(await send('qing', broken, XLSX), 400)).details.reason, 'not_a_workbook');
    });

    it('skips rows of empty cells (`,,,`) that Excel leaves behind, says how many, and keeps the file’s line numbers', async () => {
      for (const who of ['qing', 'top'] as const) {
        const res = await send(
          who,
          `用户名,角色,单位代码,姓名\r\nblank1.${who},档案员,${QINGZHOU},\r\n,,,\r\n\r\nblank2.${who},档案员,${QINGZHOU},\r\n,,,\r\n ,  , ,\r\n`,
        );
        const answer = await res.text();
        assert.equal(res.status, 201, answer);
        assert.equal(res.headers.get('import-skipped-blank'), '4');
        assert.equal(res.headers.get('import-skipped-examples'), null);
        assert.deepEqual(
          answerRows(answer).map((r) => r[0]),
          [`blank1.${who}`, `blank2.${who}`],
        );
      }
      // A wrong row after empty ones is named by its line in the file.
      assert.deepEqual(await refusedRows('qing', `用户名,角色,单位代码\r\n,,,\r\n\r\nlate,chief,${QINGZHOU}\r\n`), [
        [4, [{ code: 'bad_role', role: 'chief' }]],
      ]);
      // Only empty rows: no accounts.
      assert.equal(
        (await body<Refusal>(await send('qing', '用户名,角色,单位代码\r\n,,,\r\n,,,\r\n'), 400)).details.reason,
        'no_accounts',
      );
    });

    it('never imports the template’s example row (marked 示例, or the earlier template’s), and says which line it skipped', async () => {
      for (const who of ['qing', 'top'] as const) {
        const res = await send(who, `${IMPORT_TEMPLATE}real.${who},档案员,${QINGZHOU},真名\r\n`);
        const answer = await res.text();
        assert.equal(res.status, 201, answer);
        assert.equal(res.headers.get('import-skipped-examples'), '2');
        assert.deepEqual(
          answerRows(answer).map((r) => r[0]),
          [`real.${who}`],
        );
      }
      assert.equal(await exists('zhangsan'), false);
      // The template as downloaded, nothing added: refused, saying the example is not imported.
      const alone = await body<Refusal>(await send('qing', IMPORT_TEMPLATE), 400);
      assert.deepEqual([alone.details.reason, alone.details.examples], ['no_accounts', 1]);
      assert.match(alone.message, /besides the example row/);
      // The earlier template's unmarked example, and a "#" comment line, in a workbook.
      const earlier = await send(
        'qing',
        workbook([
          ['用户名', '角色', '单位代码', '姓名'],
          ['zhangsan', '档案员', 130922100, '张三'],
          ['# 青县 第二批', null, null, null],
          ['wb.real', '档案员', 130922100, null],
        ]),
        XLSX,
      );
      assert.equal(earlier.status, 201, await earlier.clone().text());
      assert.equal(earlier.headers.get('import-skipped-examples'), '2,3');
      assert.equal(await exists('zhangsan'), false);
    });

    it('says a code that names no unit has no unit, never that it is outside the reach, and offers the nearest unit within the reach', async () => {
      const unknown = (unit: string, closest?: { id: string; name: string; path: string }): ImportProblem[] => [
        { code: 'unit_unknown', unit, ...(closest && { closest }) },
      ];
      const chenzui = { id: CHENZUI, name: '陈嘴乡', path: '河北省 / 沧州市 / 青县 / 陈嘴乡' };
      // Two digits swapped, one left out, a name where the code goes: 陈嘴乡, to 青县 and to the top.
      for (const who of ['qing', 'top'] as const) {
        const refused = await body<Refusal>(
          await send(who, `u1,clerk,130922023\nu2,clerk,13092223\nu3,clerk,陈嘴乡\nu4,clerk,999999999\n`),
          400,
        );
        assert.deepEqual(
          refused.details.rows!.map((r) => [r.line, r.codes]),
          [
            [1, unknown('130922023', chenzui)],
            [2, unknown('13092223', chenzui)],
            [3, unknown('陈嘴乡', chenzui)],
            [4, unknown('999999999')],
          ],
          who,
        );
        assert.match(refused.message, /no unit has the code "130922023": did you mean 陈嘴乡 130922203\?/);
        assert.doesNotMatch(refused.message, /reach/);
      }
      // Near a unit of another county: the top is offered it; 青县's administrator is never.
      const [[, [top]]] = (await refusedRows('top', 'v1,clerk,130923014\n')) as [[number, ImportProblem[]]];
      assert.deepEqual(
        top,
        unknown('130923014', { id: DENGMINGSI, name: '灯明寺镇', path: '河北省 / 沧州市 / 东光县 / 灯明寺镇' })[0],
      );
      for (const [who, typed] of [
        ['qing', '130923014'],
        ['qing', '灯明寺镇'],
        ['dongguang', '130922023'],
        ['dongguang', '陈嘴乡'],
      ] as const) {
        const [[, [problem]]] = (await refusedRows(who, `v2,clerk,${typed}\n`)) as [[number, ImportProblem[]]];
        assert.equal(problem!.code, 'unit_unknown', `${who} ${typed}`);
        const offered = problem!.code === 'unit_unknown' ? problem!.closest : undefined;
        const own = who === 'qing' ? '130922' : '130923';
        assert.ok(offered === undefined || offered.id.startsWith(own), `${who} ${typed}: offered ${offered?.id}`);
      }
      // A unit that exists outside the reach keeps the reach's words; so does the archive itself.
      assert.deepEqual(await refusedRows('qing', `w1,clerk,${DENGMINGSI}\nw2,admin,archive\n`), [
        [1, [{ code: 'unit_outside_reach', unit: DENGMINGSI }]],
        [2, [{ code: 'unit_outside_reach', unit: 'archive' }]],
      ]);
      assert.deepEqual(await refusedRows('dongguang', `w3,clerk,${CHENZUI}\n`), [
        [1, [{ code: 'unit_outside_reach', unit: CHENZUI }]],
      ]);
      // A unit within reach that the role cannot have: said as such, not as outside the reach.
      assert.deepEqual(await refusedRows('top', 'w4,clerk,archive\n'), [
        [1, [{ code: 'unit_not_for_role', unit: 'archive', role: 'clerk' }]],
      ]);
    });

    it('refuses an administrator’s reset of its own password with 409 (it would end its session); others as before', async () => {
      for (const who of ['qing', 'dongguang', 'top'] as const) {
        const self = await server.archive.services.accounts.getByUsername(who);
        const refused = await body<Refusal>(
          await as[who].json(`/api/accounts/${self.id}/password-reset`, 'POST', {}),
          409,
        );
        assert.equal(refused.details.reason, 'own_password_reset');
        await body(await as[who].fetch('/api/session'), 200);
      }
      const other = await server.addAccountIn('reset.me', 'clerk', QINGZHOU);
      const reset = `/api/accounts/${other.id}/password-reset`;
      await body(await as.anonymous.json(reset, 'POST', {}), 401);
      await body(await as.clerk.json(reset, 'POST', {}), 403);
      await body(await as.dongguang.json(reset, 'POST', {}), 404);
      await body(await as.qing.json(reset, 'POST', {}), 200);
      await body(await as.top.json(reset, 'POST', {}), 200);
    });

    it('lets only administrators import a workbook: anonymous 401, a clerk 403', async () => {
      const file = workbook([['nobody.x', 'clerk', QINGZHOU]]);
      await body(await send('anonymous', file, XLSX), 401);
      await body(await send('clerk', file, XLSX), 403);
      assert.equal(await exists('nobody.x'), false);
    });
  });
}
