// The prisma CLI requires this module when it starts and calls into it only for `prisma dev`
// (Prisma's local Postgres), which Fenceline does not use: see package.json beside this file.
"use strict";
function leftOut() {
  throw new Error("`prisma dev` is not installed in Fenceline's checkout (package.json overrides @prisma/dev): npm start runs an embedded PostgreSQL instead");
}
class ServerState {
  static fromServerDump = leftOut;
  static createExclusively = leftOut;
  static scan = leftOut;
}
module.exports = { startPrismaDevServer: leftOut, unstable_startServer: leftOut, ServerState };
