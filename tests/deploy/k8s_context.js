"use strict";
// What the checks of deploy/k8s share (check_k8s.js and its parts k8s_render.js and
// k8s_commands.js): the command line, the pinned npm packages, and the problems found.
const path = require("path");

function parseArgs(argv) {
  const args = {};
  for (let i = 2; i < argv.length; i += 2) {
    if (!argv[i].startsWith("--") || i + 1 >= argv.length) usage();
    args[argv[i].slice(2)] = argv[i + 1];
  }
  for (const k of ["base", "binary", "work", "modules"]) if (!args[k]) usage();
  return args;
}

function usage() {
  console.error("usage: check_k8s.js --base DIR --binary FILE --work DIR --modules DIR");
  process.exit(2);
}

const args = parseArgs(process.argv);
const modules = path.resolve(args.modules);
const need = (name) => require(require.resolve(name, { paths: [modules] }));
const YAML = need("yaml");
const ts = need("typescript");

const errors = [];
const fail = (where, msg) => errors.push(`${where}: ${msg}`);

module.exports = { args, modules, need, YAML, ts, errors, fail };
