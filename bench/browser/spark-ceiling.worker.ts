/// <reference lib="webworker" />
import SparkMD5 from 'spark-md5';

/**
 * The ceiling for MD5 in this browser: spark-md5 over bytes already in memory, in the same 4 MiB
 * slices the real pipeline uses. Reading the file is not timed.
 */
declare const self: DedicatedWorkerGlobalScope;
const SLICE = 4 * 1024 * 1024;

self.onmessage = async (event: MessageEvent<{ file: Blob }>) => {
  const { file } = event.data;
  const slices: ArrayBuffer[] = [];
  for (let at = 0; at < file.size; at += SLICE)
    slices.push(await file.slice(at, Math.min(at + SLICE, file.size)).arrayBuffer());
  const started = performance.now();
  const md5 = new SparkMD5.ArrayBuffer();
  for (const slice of slices) md5.append(slice);
  const digest = md5.end();
  self.postMessage({ seconds: (performance.now() - started) / 1000, md5: digest });
};
