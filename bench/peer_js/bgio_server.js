// boardgame.io's server on bgio-postgres: node bgio_server.js <port> <postgres url>
const { Server } = require('boardgame.io/server');
const { PostgresStore } = require('bgio-postgres');
const Counter = require('./counter');

const [port, url] = [Number(process.argv[2]), process.argv[3]];
// Sequelize logs every statement by default: not what a deployment runs.
const db = new PostgresStore(url, { logging: false });
const server = Server({ games: [Counter], db });
server.run(port);
