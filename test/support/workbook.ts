import { strToU8, zipSync, type Zippable } from 'fflate';

/**
 * An Excel workbook (.xlsx) of one sheet, as Excel writes one in its parts (strings shared, numbers
 * as numbers), made here so that tests need no spreadsheet program. `extra` adds or replaces parts.
 */
export function workbook(rows: Array<Array<string | number | null>>, extra: Zippable = {}): Uint8Array {
  const strings: string[] = [];
  const shared = (s: string) => {
    const at = strings.indexOf(s);
    return at >= 0 ? at : strings.push(s) - 1;
  };
  const column = (i: number) => String.fromCharCode(65 + i);
  const escape = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
  const sheetRows = rows
    .map((cells, r) => {
      const xml = cells
        .map((cell, c) => {
          const ref = `${column(c)}${r + 1}`;
          if (cell === null) return '';
          if (typeof cell === 'number') return `<c r="${ref}"><v>${cell}</v></c>`;
          return `<c r="${ref}" t="s"><v>${shared(cell)}</v></c>`;
        })
        .join('');
      return `<row r="${r + 1}">${xml}</row>`;
    })
    .join('');
  const head = '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>';
  const main = 'http://schemas.openxmlformats.org/spreadsheetml/2006/main';
  const rel = 'http://schemas.openxmlformats.org/officeDocument/2006/relationships';
  const pkg = 'http://schemas.openxmlformats.org/package/2006/relationships';
  const ct = 'application/vnd.openxmlformats-officedocument.spreadsheetml';
  return zipSync({
    '[Content_Types].xml': strToU8(
      `${head}<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/><Override PartName="/xl/workbook.xml" ContentType="${ct}.sheet.main+xml"/><Override PartName="/xl/worksheets/sheet1.xml" ContentType="${ct}.worksheet+xml"/><Override PartName="/xl/sharedStrings.xml" ContentType="${ct}.sharedStrings+xml"/></Types>`,
    ),
    '_rels/.rels': strToU8(
      `${head}<Relationships xmlns="${pkg}"><Relationship Id="rId1" Type="${rel}/officeDocument" Target="xl/workbook.xml"/></Relationships>`,
    ),
    'xl/workbook.xml': strToU8(
      `${head}<workbook xmlns="${main}" xmlns:r="${rel}"><sheets><sheet name="账号" sheetId="1" r:id="rId1"/></sheets></workbook>`,
    ),
    'xl/_rels/workbook.xml.rels': strToU8(
      `${head}<Relationships xmlns="${pkg}"><Relationship Id="rId1" Type="${rel}/worksheet" Target="worksheets/sheet1.xml"/><Relationship Id="rId2" Type="${rel}/sharedStrings" Target="sharedStrings.xml"/></Relationships>`,
    ),
    'xl/worksheets/sheet1.xml': strToU8(
      `${head}<worksheet xmlns="${main}"><sheetData>${sheetRows}</sheetData></worksheet>`,
    ),
    'xl/sharedStrings.xml': strToU8(
      `${head}<sst xmlns="${main}" count="${strings.length}" uniqueCount="${strings.length}">${strings
        .map((s) => `<si><t>${escape(s)}</t></si>`)
        .join('')}</sst>`,
    ),
    ...extra,
  });
}

/**
 * A zip bomb shaped as a workbook: `part` unpacks to `bytes` zeros while the zip's directory
 * declares `declared` bytes (a lie a hostile file may tell; no lie when they are equal).
 */
export function bombWorkbook(bytes: number, declared = bytes, part = 'xl/worksheets/sheet2.xml'): Uint8Array {
  const zip = workbook([['x', 'clerk', '130922100']], { [part]: [new Uint8Array(bytes), { level: 1 }] });
  if (declared === bytes) return zip;
  // Rewrite the declared size in the part's central directory entry (and its local header).
  const view = new DataView(zip.buffer, zip.byteOffset, zip.byteLength);
  const name = strToU8(part);
  for (let at = 0; at + 4 <= zip.length; at++) {
    const signature = view.getUint32(at, true);
    const nameAt = signature === 0x02014b50 ? at + 46 : signature === 0x04034b50 ? at + 30 : -1;
    if (nameAt < 0 || !name.every((b, i) => zip[nameAt + i] === b)) continue;
    view.setUint32(signature === 0x02014b50 ? at + 24 : at + 22, declared, true);
  }
  return zip;
}
