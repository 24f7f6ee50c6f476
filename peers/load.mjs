// Imports a package of the optional peer setup. Bare specifiers resolve from the importing file's folder, so
// importing through this file finds peers/node_modules (installed by `npm run setup:peers`), never the
// project's own node_modules.
export const importPeer = (name) => import(name);
