import { setTimeout as delay } from 'node:timers/promises';

/**
 * Waits for what a test means to happen, checking every `everyMs`. The deadline is only a safety
 * net, generous because a machine running other work can be many times slower than an idle one:
 * a test that needs the condition fails with `what` (said as what should have happened) rather
 * than going on as if it had.
 */
export async function until(
  condition: () => boolean | Promise<boolean>,
  what: string,
  { timeoutMs = 60_000, everyMs = 20 } = {},
): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > end) throw new Error(`timed out after ${timeoutMs / 1000} s waiting until ${what}`);
    await delay(everyMs);
  }
}
