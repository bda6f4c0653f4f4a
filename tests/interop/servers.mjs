// The lifetime of an emulator's local HTTP server (s3server.mjs, azurite.mjs): its connections
// are tracked, and it is stopped once, by the returned stop() or at process exit, whichever
// comes first; cleanup() (kill a child, remove a directory) runs after it either way.
export function serverLifetime(server, cleanup) {
  const sockets = new Set();
  server.on('connection', (s) => { sockets.add(s); s.on('close', () => sockets.delete(s)); });
  let stopped = false;
  const onExit = () => { if (!stopped) { stopped = true; server.close(); cleanup(); } };
  process.on('exit', onExit);
  return async () => {
    if (stopped) return;
    stopped = true;
    process.removeListener('exit', onExit);
    for (const s of sockets) s.destroy();
    await new Promise((r) => server.close(r));
    cleanup();
  };
}
