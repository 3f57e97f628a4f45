/**
 * Loaded with `node --require` before the unit tests: makes `require('vscode')` return the fake in
 * ./index (the real module exists only inside the editor).
 */
import Module = require('module');
import * as path from 'path';

const fake = path.join(__dirname, 'index.js');
const m = Module as unknown as { _resolveFilename: (request: string, ...rest: unknown[]) => string };
const original = m._resolveFilename;
m._resolveFilename = function (request: string, ...rest: unknown[]): string {
  if (request === 'vscode') return fake;
  return original.call(this, request, ...rest);
};
