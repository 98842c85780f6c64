import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import type { UploadLock } from '../store/uploads/port.js';

/**
 * Which process-id space this process lives in: host name, boot and pid namespace. Containers
 * that share a host name (host networking, a fixed `hostname:`) have pid spaces of their own, and
 * a pid means something only within one. Off Linux, a random value: locks then free by lease only.
 */
function machineIdentity(): string {
  try {
    const boot = fs.readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim();
    const pids = fs.readlinkSync('/proc/self/ns/pid');
    return `${os.hostname()}/${boot}/${pids}`;
  } catch {
    return `${os.hostname()}/${randomBytes(8).toString('hex')}`;
  }
}

/**
 * Who this server process is, for the write locks of resumable uploads. A lock names its
 * holder (this process and the request), so a lock left behind by a killed process on this host
 * can be taken over at once instead of after its lease runs out.
 */
export class LockIdentity {
  private readonly instance = randomBytes(6).toString('hex');
  private next = 0;

  constructor(
    private readonly host = machineIdentity(),
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
