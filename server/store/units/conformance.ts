import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ConflictError } from '../../errors.js';
import { conformanceSuite, type StoreTarget } from '../../../test/support/stores.js';
import type { DirectoryUnit } from './port.js';

/** A unit under `parent` (at the top without one), its path and lineage following from it. */
function unit(id: string, name: string, level: DirectoryUnit['level'], parent?: DirectoryUnit): DirectoryUnit {
  return {
    id,
    code: level === 'custom' ? null : id,
    name,
    level,
    parentId: parent?.id ?? null,
    path: [...(parent?.path ?? []), name],
    lineage: `${parent?.lineage ?? ''}${id}/`,
  };
}

/** A unit of unitTree() by its id. */
const inTree = (id: string): DirectoryUnit => unitTree().find((u) => u.id === id)!;

/** A small piece of Hebei, as the directory loader builds it. */
export function unitTree(): DirectoryUnit[] {
  const hebei = unit('130000', '河北省', 'province');
  const cangzhou = unit('130900', '沧州市', 'city', hebei);
  const qingxian = unit('130922', '青县', 'county', cangzhou);
  const dongguang = unit('130923', '东光县', 'county', cangzhou);
  return [
    hebei,
    cangzhou,
    qingxian,
    dongguang,
    unit('130922100', '清州镇', 'town', qingxian),
    unit('130922101', '金牛镇', 'town', qingxian),
    unit('130923100', '东光镇', 'town', dongguang),
    unit('131000', '廊坊市', 'city', hebei),
  ];
}

/** What every store adapter's unit directory must do (run against each adapter by test/store/). */
export function unitConformance(target: StoreTarget): void {
  conformanceSuite('units', target, (store) => {
    describe('the unit directory', () => {
      it('adds a province once, however often it is loaded', async () => {
        assert.equal(await store.units.addMissing(unitTree()), 8);
        assert.equal(await store.units.addMissing(unitTree()), 0);
        assert.equal(await store.units.countDivisionsWithin('130000/'), 8);
        assert.equal(await store.units.countDivisionsWithin('130000/130900/130922/'), 3);
        await store.units.add(unit('u000000000001', '县档案馆', 'custom', inTree('130922')));
        assert.equal(await store.units.countDivisionsWithin('130000/'), 8, 'units added here are not divisions');
        assert.deepEqual(await store.units.get('130922100'), unitTree()[4]);
        assert.equal(await store.units.get('130922199'), undefined);
        assert.deepEqual((await store.units.getMany(['131000', '130922199', '130000'])).map((u) => u.id).sort(), [
          '130000',
          '131000',
        ]);
        assert.deepEqual(await store.units.getMany([]), []);
      });

      it('lists a parent’s children in code order, custom units after them', async () => {
        await store.units.addMissing(unitTree());
        await store.units.add(unit('u000000000001', '县档案馆', 'custom', inTree('130922')));
        const page = await store.units.find({ parentId: '130922', limit: 10, offset: 0 });
        assert.deepEqual(
          page.items.map((u) => u.name),
          ['清州镇', '金牛镇', '县档案馆'],
        );
        assert.equal(page.total, 3);
        const top = await store.units.find({ parentId: null, limit: 10, offset: 0 });
        assert.deepEqual(
          top.items.map((u) => u.id),
          ['130000'],
        );
        const second = await store.units.find({ parentId: '130922', limit: 1, offset: 1 });
        assert.deepEqual(
          second.items.map((u) => u.name),
          ['金牛镇'],
        );
        assert.equal(second.total, 3);
      });

      it('finds units by a part of the name or the start of the code, within a subtree and a level', async () => {
        await store.units.addMissing(unitTree());
        const names = async (query: Parameters<typeof store.units.find>[0]) =>
          (await store.units.find(query)).items.map((u) => u.name);
        assert.deepEqual(await names({ q: '镇', limit: 10, offset: 0 }), ['清州镇', '金牛镇', '东光镇']);
        assert.deepEqual(await names({ q: '镇', within: '130000/130900/130923/', limit: 10, offset: 0 }), ['东光镇']);
        assert.deepEqual(await names({ q: '1309221', limit: 10, offset: 0 }), ['清州镇', '金牛镇']);
        assert.deepEqual(await names({ q: '0922', limit: 10, offset: 0 }), [], 'codes match from their start');
        assert.deepEqual(await names({ q: '东光', level: 'county', limit: 10, offset: 0 }), ['东光县']);
        assert.deepEqual(await names({ q: '%', limit: 10, offset: 0 }), [], 'search text is literal');
        assert.deepEqual(
          (await store.units.named('青县')).map((u) => u.id),
          ['130922'],
        );
      });

      it('gives the ids of a subtree, and of the units whose path or code a search part names', async () => {
        await store.units.addMissing(unitTree());
        await store.units.add(unit('u000000000001', '县档案馆', 'custom', inTree('130922')));
        const ids = async (query: { within?: string; part?: string }) => (await store.units.ids(query)).sort();
        assert.equal((await ids({})).length, 9, 'every unit');
        assert.deepEqual(await ids({ within: '130000/130900/130922/' }), [
          '130922',
          '130922100',
          '130922101',
          'u000000000001',
        ]);
        assert.deepEqual(
          await ids({ part: '青县' }),
          ['130922', '130922100', '130922101', 'u000000000001'],
          'the county takes its units',
        );
        assert.deepEqual(await ids({ part: '青县', within: '130000/130900/130923/' }), [], 'within the subtree only');
        assert.deepEqual(await ids({ part: '县/清' }), ['130922100'], 'across two names of the path');
        assert.deepEqual(await ids({ part: '沧州市/' }), [
          '130922',
          '130922100',
          '130922101',
          '130923',
          '130923100',
          'u000000000001',
        ]);
        assert.deepEqual(await ids({ part: '1309221' }), ['130922100', '130922101'], 'the start of a code');
        assert.deepEqual(await ids({ part: '0922' }), [], 'codes match from their start');
        assert.deepEqual(await ids({ part: '%' }), [], 'search text is literal');
        assert.deepEqual(
          await ids({ part: '/' }),
          (await ids({})).filter((id) => id !== '130000'),
          'every path of two names',
        );
      });

      it('refuses a second unit of one name under one parent, at the top too', async () => {
        await store.units.addMissing(unitTree());
        const custom = (id: string, name: string, parentId: string | null) =>
          unit(id, name, 'custom', parentId === null ? undefined : inTree(parentId));
        await store.units.add(custom('u000000000001', '市档案局', '130900'));
        await assert.rejects(store.units.add(custom('u000000000002', '市档案局', '130900')), ConflictError);
        await store.units.add(custom('u000000000003', '市档案局', '131000'));
        await store.units.add(custom('u000000000004', '省档案馆', null));
        await assert.rejects(store.units.add(custom('u000000000005', '省档案馆', null)), ConflictError);
        assert.equal(await store.units.get('u000000000002'), undefined);
      });

      it('renames a unit in its own path and in the paths of the units under it', async () => {
        await store.units.addMissing(unitTree());
        const bureau = unit('u000000000001', '档案局', 'custom', inTree('130900'));
        const office = unit('u000000000002', '利用科', 'custom', bureau);
        await store.units.add(bureau);
        await store.units.add(office);
        await store.units.rename(bureau.id, '市档案局');
        assert.deepEqual((await store.units.get(bureau.id))?.path, ['河北省', '沧州市', '市档案局']);
        assert.deepEqual((await store.units.get(office.id))?.path, ['河北省', '沧州市', '市档案局', '利用科']);
        assert.deepEqual((await store.units.get('130922'))?.path, ['河北省', '沧州市', '青县'], 'siblings unchanged');
        await assert.rejects(store.units.rename(bureau.id, '青县'), ConflictError);
        assert.equal((await store.units.get(bureau.id))?.name, '市档案局');
      });
    });
  });
}
