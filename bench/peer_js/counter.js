// The cheap game boardgame.io plays: one counter. `client: false` keeps the client from
// applying a move itself, so a client's state changes only with the server's update (its ack).
module.exports = {
  name: 'counter',
  setup: () => ({ count: 0 }),
  moves: {
    increment: { move: ({ G }) => { G.count += 1; }, client: false },
  },
};
