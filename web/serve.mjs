// Serves the web pages on 127.0.0.1 (a secure context, so WebGPU is
// exposed): the pages and their modules from web/, the wasm-bindgen output
// from web/pkg/ (web/build.sh), the repository's test data under /data/
// (with /data/manifest.json listing it) and each installed onnxruntime-web
// under /ort/<version>/ (web/node_modules, `npm ci` in web/). Nothing is
// fetched from the network.
//
//   node web/serve.mjs [--port N]     then open http://127.0.0.1:N/bench.html
//
// The CI drivers (run_suite.mjs, check_bench.mjs) import `serve`.

import { createServer } from 'node:http';
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { dirname, extname, join, normalize, relative, resolve, sep } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

export const WEB = dirname(fileURLToPath(import.meta.url));
const REPO = resolve(WEB, '..');

/// What the suite reads of tests/data: the node tests, the real models'
/// skeletons and list, numpy's permuted moves.
const DATA_ROOTS = ['onnx-node', 'onnx-extra', 'onnx-models/nodes', 'onnx-models/skeletons', 'onnx-models/models.json', 'permuted/cases.json'];

const TYPES = {
  '.html': 'text/html',
  '.mjs': 'text/javascript',
  '.js': 'text/javascript',
  '.json': 'application/json',
  '.wasm': 'application/wasm',
  '.css': 'text/css',
  '.png': 'image/png',
};

/// Files under `dir`, relative to it, in `/` form.
function walk(dir, base = dir) {
  const out = [];
  for (const name of readdirSync(dir).sort()) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) out.push(...walk(path, base));
    else out.push(relative(base, path).split(sep).join('/'));
  }
  return out;
}

/// The test data the suite reads, by path under tests/data/.
export function dataManifest() {
  const data = join(REPO, 'tests', 'data');
  const files = [];
  for (const root of DATA_ROOTS) {
    const path = join(data, root);
    if (statSync(path).isDirectory()) files.push(...walk(path).map((f) => `${root}/${f}`));
    else files.push(root);
  }
  return files.filter((f) => !f.endsWith('.weights'));
}

/// Each onnxruntime-web package installed in web/node_modules, by version.
export function ortPackages() {
  const modules = join(WEB, 'node_modules');
  const found = {};
  if (!existsSync(modules)) return found;
  for (const name of readdirSync(modules)) {
    const pkg = join(modules, name, 'package.json');
    if (!name.startsWith('onnxruntime-web') || !existsSync(pkg)) continue;
    const { name: real, version } = JSON.parse(readFileSync(pkg, 'utf8'));
    if (real === 'onnxruntime-web') found[version] = join(modules, name, 'dist');
  }
  return found;
}

/// Starts the server; resolves to `{ server, origin, ort }`. `root`: where
/// the pages are (web/, or another web crate's directory such as
/// integrations/burn/web); `pkg`: its wasm-bindgen output directory.
export async function serve({ port = 0, root = WEB, pkg = join(root, 'pkg') } = {}) {
  const manifest = dataManifest();
  const data = new Set(manifest);
  const ort = ortPackages();
  const server = createServer((req, res) => {
    const path = decodeURIComponent(new URL(req.url, 'http://x').pathname);
    let file = null;
    if (path === '/ort/versions.json') {
      res.writeHead(200, { 'content-type': TYPES['.json'], 'cache-control': 'no-store' });
      res.end(JSON.stringify(Object.keys(ort)));
      return;
    } else if (path === '/data/manifest.json') {
      res.writeHead(200, { 'content-type': TYPES['.json'], 'cache-control': 'no-store' });
      res.end(JSON.stringify(manifest));
      return;
    } else if (path.startsWith('/data/') && data.has(path.slice(6))) {
      file = join(REPO, 'tests', 'data', path.slice(6));
    } else if (path.startsWith('/pkg/')) {
      file = join(pkg, path.slice(5));
    } else if (path.startsWith('/ort/')) {
      const [version, ...rest] = path.slice(5).split('/');
      if (ort[version]) file = join(ort[version], ...rest);
    } else if (path === '/') {
      res.writeHead(302, { location: '/bench.html' }).end();
      return;
    } else {
      file = join(root, normalize(path));
    }
    const inside = file && [root, pkg, join(REPO, 'tests', 'data'), ...Object.values(ort)].some((d) => file.startsWith(d + sep));
    if (!inside || req.method !== 'GET' || !existsSync(file) || !statSync(file).isFile()) {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, { 'content-type': TYPES[extname(file)] ?? 'application/octet-stream', 'cache-control': 'no-store' });
    res.end(readFileSync(file));
  });
  await new Promise((r) => server.listen(port, '127.0.0.1', r));
  return { server, origin: `http://127.0.0.1:${server.address().port}`, ort: Object.keys(ort) };
}

if (import.meta.url === pathToFileURL(process.argv[1]).href) {
  const i = process.argv.indexOf('--port');
  const port = i > 0 ? Number(process.argv[i + 1]) : 8080;
  const { origin, ort } = await serve({ port });
  console.log(`serving web/ on ${origin}: open ${origin}/bench.html (the bench) or ${origin}/suite.html (the suite); onnxruntime-web ${ort.join(', ') || 'not installed (npm ci in web/)'}`);
}
