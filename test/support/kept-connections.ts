import http from 'node:http';
import { Agent, getGlobalDispatcher, setGlobalDispatcher } from 'undici';

/**
 * Call after the test process's event loop was blocked (a synchronous child process): the
 * connections fetch and node:http keep open between requests may have been closed by the server
 * meanwhile (Node's idle keep-alive timeout is 5 s; the archive command takes longer than that on
 * a busy machine), and the blocked process has not read the close yet. The next request would go
 * on such a connection and fail with "other side closed" (fetch) or "socket hang up" (node:http),
 * as crash-during-uploads did once right after `archive gc`. Later requests go on new connections;
 * fetch's old ones close once the requests still on them end.
 */
export function forgetKeptConnections(): void {
  const kept = getGlobalDispatcher();
  setGlobalDispatcher(new Agent());
  void kept.close();
  for (const idle of Object.values(http.globalAgent.freeSockets)) for (const socket of idle ?? []) socket.destroy();
}
