// CI's browser suites: a web crate compiled to wasm (web/build.sh) run in
// headless Chromium's WebGPU (SwiftShader): the crate's suite (web/, on
// WebGPU's default limits) or, with --root, another crate's suite page
// (integrations/burn/web: the burn integration). Prints every line, then
// `N passed, M failed`; exits 1 on any failure, a page exception or error,
// or no browser (never a skip).
//
//   node --experimental-websocket web/run_suite.mjs [--root DIR] [--pkg DIR]

import { resolve } from 'node:path';
import { Browser, chromiumPath, within } from '../tests/browser/chromium.mjs';
import { serve } from './serve.mjs';

/// The value of `--name`, if given.
function option(name) {
  const i = process.argv.indexOf(name);
  return i > 0 ? resolve(process.argv[i + 1]) : undefined;
}

async function main() {
  const started = Date.now();
  const { path, version } = chromiumPath();
  const { server, origin } = await serve(Object.fromEntries(Object.entries({ root: option('--root'), pkg: option('--pkg') }).filter(([, v]) => v)));
  // `navigator.webdriver` makes the page wait to be asked.
  const browser = await Browser.launch(path, { flags: ['--enable-automation'] });
  const problems = [];
  let code = 1;
  try {
    const page = await browser.open(`${origin}/suite.html`, (method, params) => {
      if (method === 'Runtime.consoleAPICalled' && params.type === 'log') {
        console.log(params.args.map((a) => a.value ?? a.description).join(' '));
      } else if (method === 'Runtime.consoleAPICalled' && ['error', 'assert'].includes(params.type)) {
        problems.push(`console.${params.type}: ${params.args.map((a) => a.value ?? a.description).join(' ')}`);
      } else if (method === 'Runtime.exceptionThrown') {
        problems.push(`page exception: ${params.exceptionDetails.exception?.description ?? params.exceptionDetails.text}`);
      } else if (method === 'Inspector.targetCrashed') problems.push('the page crashed');
    });
    await within(page.evaluate('new Promise((r) => { const t = () => (window.ready ? r(true) : setTimeout(t, 10)); t(); })'), 30000, 'loading the page');
    console.log(`${version}: the suite page loaded in ${((Date.now() - started) / 1000).toFixed(1)} s`);
    const report = await within(page.evaluate('window.runSuite()'), 1200000, 'the browser suite');
    console.log(`${report.adapter}: ${report.passed} passed, ${report.failed} failed`);
    code = report.failed > 0 || report.passed === 0 ? 1 : 0;
  } catch (e) {
    console.log(`FAIL: ${e.message}`);
  } finally {
    for (const p of problems) console.log(p);
    if (problems.length > 0) code = 1;
    await browser.close();
    server.close();
  }
  console.log(`the browser suite took ${((Date.now() - started) / 1000).toFixed(1)} s`);
  process.exit(code);
}

await main();
