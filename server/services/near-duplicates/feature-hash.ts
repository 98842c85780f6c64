import type { IHasher } from 'hash-wasm';

/**
 * xxHash64 of a feature: fast and well distributed (the design used CityHash; any good 64-bit
 * hash serves). Made once (the WebAssembly module loads asynchronously), then used synchronously.
 * hash-wasm is loaded here, when the first one is made: it holds every hash it offers.
 */
export class FeatureHash {
  private constructor(private readonly hasher: IHasher) {}

  static async create(): Promise<FeatureHash> {
    const { createXXHash64 } = await import('hash-wasm');
    return new FeatureHash(await createXXHash64());
  }

  /** The 64-bit hash as two unsigned 32-bit halves. */
  hash(feature: string): [hi: number, lo: number] {
    const bytes = this.hasher.init().update(feature).digest('binary');
    return [
      ((bytes[0]! << 24) | (bytes[1]! << 16) | (bytes[2]! << 8) | bytes[3]!) >>> 0,
      ((bytes[4]! << 24) | (bytes[5]! << 16) | (bytes[6]! << 8) | bytes[7]!) >>> 0,
    ];
  }
}
