// workerd started on worker sockets that already listen. A port found free
// and closed again for workerd to bind can be taken in between by any other
// process (a parallel test, a benchmark); a socket listening in this process,
// handed to workerd as --socket-fd, cannot.
//
//   import { loopbackListener, spawnWorkerd } from '.../tools/workerd_spawn.mjs';
//   const listener = await loopbackListener();      // { port }
//   const config = writeWorkerdConfig(dir, { workers: [{ name: 'app', address: `127.0.0.1:${listener.port}`, ... }] });
//   const child = spawnWorkerd(workerd, config, { sockets: { app: listener }, log: file });
// Each key of `sockets` is a socket's name in the config (writeWorkerdConfig
// names a worker's socket after the worker). `args` go after the config.
import fs from 'node:fs';
import net from 'node:net';
import { spawn } from 'node:child_process';

// A TCP server listening on 127.0.0.1 at a port the system chose; this
// process never accepts on it (spawnWorkerd closes it once workerd has it).
export function loopbackListener() {
  return new Promise((resolve, reject) => {
    const server = net.createServer(socket => socket.destroy());
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve({ port: server.address().port, server }));
  });
}

// Starts `workerd serve config` with each listener as a descriptor of its own
// (3, 4, ...) named by --socket-fd; stdout and stderr go to `log` (a path)
// or are ignored. Returns the child process.
export function spawnWorkerd(workerd, config, { sockets = {}, args = [], log } = {}) {
  const entries = Object.entries(sockets);
  const out = log === undefined ? 'ignore' : fs.openSync(log, 'w');
  const stdio = ['ignore', out, out, ...entries.map(([, l]) => l.server._handle.fd)];
  const socketArgs = entries.map(([name], i) => `--socket-fd=${name}=${3 + i}`);
  try {
    return spawn(workerd, ['serve', config, ...socketArgs, ...args], { stdio });
  } finally {
    for (const [, l] of entries) l.server.close();
    if (out !== 'ignore') fs.closeSync(out);
  }
}
