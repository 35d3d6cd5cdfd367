// The browser suite's page: loads the crate's wasm (web/build.sh), fetches
// the test data the server lists, runs `run_suite` and shows each line.
// `window.runSuite()` resolves to the report (web/run_suite.mjs calls it);
// opened by hand, the page runs it itself.

import init, { TestData, run_suite } from './pkg/wgpu_split_web.js';

const status = document.getElementById('status');
const lines = document.getElementById('lines');

function show(line) {
  const span = document.createElement('span');
  span.className = line.slice(0, 4);
  span.textContent = `${line}\n`;
  lines.append(span);
  console.log(line);
}

async function runSuite() {
  await init();
  const manifest = await (await fetch('/data/manifest.json')).json();
  status.textContent = `fetching ${manifest.length} files of test data…`;
  const data = new TestData();
  for (const path of manifest) {
    const r = await fetch(`/data/${path}`);
    if (!r.ok) throw new Error(`/data/${path}: ${r.status}`);
    data.add(path, new Uint8Array(await r.arrayBuffer()));
  }
  status.textContent = 'running…';
  const report = JSON.parse(await run_suite(data, show));
  const info = (await navigator.gpu.requestAdapter())?.info ?? {};
  report.adapter = `${info.vendor ?? ''} ${info.architecture ?? ''} ${info.description ?? ''}`.trim() + ` (wgpu: ${report.adapter})`;
  status.textContent = `${report.adapter}: ${report.passed} passed, ${report.failed} failed`;
  return report;
}

window.runSuite = runSuite;
window.ready = true;
if (!navigator.webdriver) runSuite().catch((e) => (status.textContent = `error: ${e}`));
