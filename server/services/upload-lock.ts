import { randomBytes } from 'node:crypto';
import os from 'node:os';
import type { UploadLock } from '../store/port.js';

/**
 * Who this server process is, for the write locks of resumable uploads. A lock names its
 * holder (this process and the request), so a lock left behind by a killed process on this host
 * can be taken over at once instead of after its lease runs out.
 */
export class LockIdentity {
  private readonly instance = randomBytes(6).toString('hex');
  private next = 0;

  constructor(
    private readonly host = os.hostname(),
    private readonly pid = process.pid,
  ) {}

  newLock(until: Date): UploadLock {
    return { holder: `${this.instance}/${++this.next}`, host: this.host, pid: this.pid, until };
  }

  /** Whether a lock's holder is known to be gone (a holder on another host never is). */
  isGone(lock: UploadLock): boolean {
    if (lock.host !== this.host || lock.holder.startsWith(`${this.instance}/`)) return false;
    // Our own process id under another instance: an earlier life of this process id.
    if (lock.pid === this.pid) return true;
    try {
      process.kill(lock.pid, 0);
      return false;
    } catch (err) {
      return (err as NodeJS.ErrnoException).code === 'ESRCH';
    }
  }
}
