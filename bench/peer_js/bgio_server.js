// boardgame.io's server on bgio-postgres: node bgio_server.js <port> <postgres url>
//
// One addition for the benchmark: the time each state write to PostgreSQL has finished (its
// match and _stateID, in epoch ms), served at GET /bench/stored, so that the load generator
// can measure boardgame.io's request-to-stored latency besides its acknowledgement.
const { performance } = require('perf_hooks');
const { Server } = require('boardgame.io/server');
const { PostgresStore } = require('bgio-postgres');
const Counter = require('./counter');

const [port, url] = [Number(process.argv[2]), process.argv[3]];
// Sequelize logs every statement by default: not what a deployment runs.
const db = new PostgresStore(url, { logging: false });
const stored = [];
const setState = db.setState.bind(db);
db.setState = async (id, state, deltalog) => {
  await setState(id, state, deltalog);
  stored.push([id, state._stateID, performance.timeOrigin + performance.now()]);
};
const server = Server({ games: [Counter], db });
server.router.get('/bench/stored', (ctx) => { ctx.body = stored.splice(0); });
server.run(port);
