// One load generator for both servers (bench/peer.py drives it): node load.js '<json config>'
//
// config: {target: "dos" | "bgio", ports: [...], matches, seconds, rate, idle}
//   matches  concurrent matches, each its own loop: one move at a time, the next one once the
//            previous one is acknowledged (rate 0), or at most `rate` moves a second per match
//   idle     instead of moves: this many clients that wait for a change that never comes
// It sets up (untimed), prints {"ready": ...}, waits for "go" on stdin, plays for `seconds`,
// lets the moves in flight finish and prints {"result": ...}. With `idle` it prints
// {"ready": ...} once every client waits and exits on "stop".
//
// What an acknowledgement waits for:
//   dos   the answer of POST /api/games/<id>/actions: the server answers once the move is
//         committed to PostgreSQL. A turn is GET .../actions (the legal moves) and that POST;
//         the latency is the POST's.
//   bgio  the server's `update` of the match over the socket (boardgame.io sends it before its
//         write to PostgreSQL has finished); the latency runs from the move to that update.
//         Its request-to-stored latency runs from the move to the end of that write, as the
//         server noted it (bgio_server.js: GET /bench/stored; the same machine's clock).
'use strict';
const http = require('http');
const { performance } = require('perf_hooks');
const readline = require('readline');

const config = JSON.parse(process.argv[2]);
const agent = new http.Agent({ keepAlive: true, maxSockets: Infinity });
const MOVE_TIMEOUT_MS = 10000; // boardgame.io drops a move silently (a stale state): send again

// Once more when a kept-alive connection was closed by the server while idle.
async function request(port, method, path, body, token) {
  try {
    return await request1(port, method, path, body, token);
  } catch (e) {
    if (e.code !== 'ECONNRESET') throw e;
    return request1(port, method, path, body, token);
  }
}

function request1(port, method, path, body, token) {
  return new Promise((resolve, reject) => {
    const data = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
    const headers = { Accept: 'application/json' };
    if (data) { headers['Content-Type'] = 'application/json'; headers['Content-Length'] = data.length; }
    if (token) headers.Authorization = `Bearer ${token}`;
    const req = http.request({ host: '127.0.0.1', port, method, path, headers, agent }, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => {
        const raw = Buffer.concat(chunks).toString();
        let parsed = null;
        try { parsed = raw ? JSON.parse(raw) : null; } catch (e) { parsed = raw; }
        resolve({ status: res.statusCode, body: parsed });
      });
    });
    req.on('error', reject);
    req.setTimeout(120000, () => req.destroy(new Error('timeout')));
    if (data) req.write(data);
    req.end();
  });
}

async function ok(port, method, path, body, token) {
  const r = await request(port, method, path, body, token);
  if (r.status >= 300) throw new Error(`${method} ${path} -> ${r.status} ${JSON.stringify(r.body)}`);
  return r.body;
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const now = () => Number(process.hrtime.bigint()) / 1e6; // ms

function waitLine(expected) {
  return new Promise((resolve) => {
    const rl = readline.createInterface({ input: process.stdin });
    rl.on('line', (line) => { if (line.trim() === expected) { rl.close(); resolve(); } });
    rl.on('close', resolve);
  });
}

// -- DOS ---------------------------------------------------------------------------------------

async function dosGame(port) {
  const created = await ok(port, 'POST', '/api/games', { seats: [{ name: 'ann' }, { name: 'bob' }] });
  const game = { id: created.id, tokens: {}, version: 0, current: -1, status: created.status };
  let body = created;
  for (const invite of created.invites) {
    const joined = await ok(port, 'POST', `/api/games/${game.id}/join`, { invite: invite.invite });
    game.tokens[joined.seat] = joined.player_token;
    body = joined.game;
  }
  dosRefresh(game, body);
  return game;
}

// A game's answer as its seat sees it: when that seat is still to move, its view holds the
// seat's legal actions, and its client moves again without asking for them (as the table page
// and dos-client do); when the turn passes, the next seat's client asks (GET .../actions).
function dosRefresh(game, body) {
  const before = game.current;
  game.version = body.version;
  game.status = body.status;
  game.current = body.view ? body.view.current : -1;
  const view = body.view;
  game.legal = view && view.seat === before && view.current === before && body.status === 'active'
    && view.legal_actions && view.legal_actions.length ? view.legal_actions : null;
}

async function dosMatch(port, stats, until, interval) {
  let game = await dosGame(port);
  stats.ready += 1;
  await stats.go;
  let next = now() + stats.offset(interval);
  while (now() < until()) {
    if (interval) { const wait = next - now(); if (wait > 0) await sleep(wait); next += interval; if (now() >= until()) break; }
    if (game.status !== 'active') { game = await dosGame(port); stats.replaced += 1; }
    const token = game.tokens[game.current];
    let legal = game.legal;  // the mover's next actions, from the answer to its last move
    if (!legal) {
      const listed = await request(port, 'GET', `/api/games/${game.id}/actions`, undefined, token);
      if (listed.status !== 200 || !listed.body.your_turn || !listed.body.actions.length) {
        stats.errors[`actions ${listed.status}`] = (stats.errors[`actions ${listed.status}`] || 0) + 1;
        dosRefresh(game, await ok(port, 'GET', `/api/games/${game.id}`, undefined, token));
        continue;
      }
      stats.listed += 1;
      legal = listed.body.actions.map((listedAction) => listedAction.action);
      game.version = listed.body.version;
    }
    const choice = legal[Math.floor(Math.random() * legal.length)];
    const t0 = now();
    const r = await request(port, 'POST', `/api/games/${game.id}/actions`,
      { version: game.version, actions: [choice] }, token);
    const t1 = now();
    if (r.status === 200) {
      stats.latencies.push(t1 - t0);
      stats.acked += 1;
      dosRefresh(game, r.body.game);
    } else {
      stats.errors[`submit ${r.status}`] = (stats.errors[`submit ${r.status}`] || 0) + 1;
      dosRefresh(game, await ok(port, 'GET', `/api/games/${game.id}`, undefined, token));
    }
  }
}

async function dosIdle(ports, count) {
  // Long-polls on games where nothing happens, spread over the seats of count / 10 games.
  const seats = [];
  for (let i = 0; seats.length * 5 < count; i += 1) {
    const port = ports[i % ports.length];
    const game = await dosGame(port);
    for (const token of Object.values(game.tokens)) {
      const history = await ok(port, 'GET', `/api/games/${game.id}/events?limit=1`, undefined, token);
      seats.push({ port, id: game.id, token, last: history.last });
    }
  }
  let parked = 0;
  for (let i = 0; i < count; i += 1) {
    const seat = seats[i % seats.length];
    const poll = () => request(seat.port, 'GET', `/api/games/${seat.id}/events?after=${seat.last}&wait=60`,
      undefined, seat.token).then(poll, () => {});
    poll();
    parked += 1;
  }
  return { clients: parked, games: seats.length / 2 };
}

// -- boardgame.io ------------------------------------------------------------------------------

function bgioClient(port, matchID, playerID) {
  const { Client } = require('boardgame.io/client');
  const { SocketIO } = require('boardgame.io/multiplayer');
  const Counter = require('./counter');
  const client = Client({
    game: Counter, numPlayers: 2, matchID, playerID, debug: false,
    multiplayer: SocketIO({ server: `http://127.0.0.1:${port}`, socketOpts: { transports: ['websocket'] } }),
  });
  client.start();
  return client;
}

function synced(client) {
  return new Promise((resolve) => {
    const unsubscribe = client.subscribe((state) => {
      if (state && state.isConnected !== false && state._stateID !== undefined && client.getState()) {
        resolve(); setImmediate(() => unsubscribe());
      }
    });
  });
}

async function bgioMatch(port, stats, until, interval) {
  const { matchID } = await ok(port, 'POST', '/games/counter/create', { numPlayers: 2 });
  const client = bgioClient(port, matchID, '0');
  await synced(client);
  let waiting = null; // {count, resolve}
  client.subscribe((state) => {
    if (waiting && state && state.G.count >= waiting.count) { const w = waiting; waiting = null; w.resolve(true); }
  });
  stats.ready += 1;
  await stats.go;
  let next = now() + stats.offset(interval);
  while (now() < until()) {
    if (interval) { const wait = next - now(); if (wait > 0) await sleep(wait); next += interval; if (now() >= until()) break; }
    const before = client.getState();
    const target = before.G.count + 1;
    const t0 = now();
    stats.sent.set(`${matchID}:${before._stateID + 1}`, performance.timeOrigin + performance.now());
    for (;;) {
      const acked = new Promise((resolve) => { waiting = { count: target, resolve }; });
      client.moves.increment();
      const timer = new Promise((resolve) => setTimeout(() => resolve(false), MOVE_TIMEOUT_MS));
      if (await Promise.race([acked, timer])) break;
      waiting = null;
      stats.resent += 1;
    }
    stats.latencies.push(now() - t0);
    stats.acked += 1;
  }
  client.stop();
}

async function bgioIdle(ports, count) {
  const clients = [];
  const waits = [];
  for (let i = 0; clients.length < count; i += 1) {
    const port = ports[i % ports.length];
    const { matchID } = await ok(port, 'POST', '/games/counter/create', { numPlayers: 2 });
    for (let k = 0; k < 10 && clients.length < count; k += 1) {
      const client = bgioClient(port, matchID, String(k % 2));
      clients.push(client);
      waits.push(synced(client));
    }
  }
  await Promise.all(waits);
  return { clients: clients.length, games: Math.ceil(count / 10) };
}

// The request-to-stored latency of each move sent, from the servers' notes of their writes
// (asked again until every acknowledged move's write is there, for at most 10 s).
async function bgioStored(ports, stats) {
  const deadline = now() + 10000;
  while (stats.sent.size && now() < deadline) {
    for (const port of ports) {
      for (const [matchID, stateID, at] of await ok(port, 'GET', '/bench/stored')) {
        const key = `${matchID}:${stateID}`;
        const sentAt = stats.sent.get(key);
        if (sentAt !== undefined) { stats.stored_latencies.push(at - sentAt); stats.sent.delete(key); }
      }
    }
    if (stats.sent.size) await sleep(100);
  }
  stats.unstored = stats.sent.size;
}

// -- main --------------------------------------------------------------------------------------

async function main() {
  const { target, ports, matches, seconds, rate, idle } = config;
  if (idle) {
    const info = await (target === 'dos' ? dosIdle(ports, idle) : bgioIdle(ports, idle));
    console.log(JSON.stringify({ ready: info }));
    await waitLine('stop');
    process.exit(0);
  }
  let release;
  // A fixed rate's matches start spread over one interval, not all at once.
  let started = 0;
  const offset = (interval) => (interval ? (started++ / matches) * interval : 0);
  const stats = { offset, latencies: [], stored_latencies: [], sent: new Map(), acked: 0, resent: 0, replaced: 0, listed: 0, ready: 0, errors: {},
                  go: new Promise((r) => { release = r; }) };
  let end = Infinity;
  const until = () => end;
  const interval = rate ? 1000 / rate : 0;
  const loops = [];
  for (let i = 0; i < matches; i += 1) {
    const port = ports[i % ports.length];
    loops.push((target === 'dos' ? dosMatch : bgioMatch)(port, stats, until, interval)
      .catch((e) => { stats.errors[String(e).slice(0, 200)] = 1; stats.ready += 1; }));
  }
  while (stats.ready < matches) await sleep(20);
  console.log(JSON.stringify({ ready: { matches } }));
  await waitLine('go');
  const cpu0 = process.cpuUsage();
  const t0 = now();
  end = t0 + seconds * 1000;
  release();
  await Promise.all(loops);
  const elapsed = (now() - t0) / 1000;
  const cpu = process.cpuUsage(cpu0);
  if (target === 'bgio') await bgioStored(ports, stats);
  const { go, sent, offset: _, ...out } = stats;
  // Exit once the line is out: stdout to a pipe is asynchronous, and an exit cuts it at 64 KB.
  const line = JSON.stringify({ result: { ...out, elapsed, client_cpu: (cpu.user + cpu.system) / 1e6 } });
  process.stdout.write(`${line}\n`, () => process.exit(0));
}

main().catch((e) => { console.log(JSON.stringify({ error: String(e.stack || e) })); process.exit(1); });
