// CI's look at the bench page: loads web/bench.html (?quick) in headless
// Chromium, waits for every case, fails unless every case is exact on our
// side (onnxruntime-web's rows are reported, never required) and every
// binding-wall shape is exact through the crate; keeps a screenshot and the
// results as JSON.
//
//   node --experimental-websocket web/check_bench.mjs OUT_DIR [--full] [--nowall] [--calibrate] [--only NAME,...]

import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Browser, chromiumPath, within } from '../tests/browser/chromium.mjs';
import { serve } from './serve.mjs';

async function main() {
  const args = process.argv.slice(2);
  const out = args.find((a, i) => !a.startsWith('--') && args[i - 1] !== '--only');
  if (!out) {
    console.error('usage: node --experimental-websocket web/check_bench.mjs OUT_DIR [--full] [--nowall] [--calibrate] [--only NAME,...]');
    process.exit(2);
  }
  mkdirSync(out, { recursive: true });
  const started = Date.now();
  const { path, version } = chromiumPath();
  const { server, origin, ort } = await serve();
  const browser = await Browser.launch(path, { flags: ['--enable-webgpu-developer-features', '--window-size=1400,2000'] });
  const problems = [];
  let code = 1;
  try {
    const query = [args.includes('--full') ? null : 'quick', args.includes('--nowall') ? 'nowall' : null, args.includes('--calibrate') ? 'calibrate' : null, args.includes('--only') ? `only=${args[args.indexOf('--only') + 1]}` : null].filter(Boolean).join('&');
    const page = await browser.open(`${origin}/bench.html${query ? `?${query}` : ''}`, (method, params) => {
      if (method === 'Runtime.consoleAPICalled' && params.type === 'log') console.log(`  ${params.args.map((a) => a.value ?? a.description).join(' ')}`);
      else if (method === 'Runtime.exceptionThrown') problems.push(`page exception: ${params.exceptionDetails.exception?.description ?? params.exceptionDetails.text}`);
      else if (method === 'Inspector.targetCrashed') problems.push('the page crashed');
    });
    const result = await within(page.evaluate('window.benchDone'), 1800000, 'the bench page');
    writeFileSync(join(out, 'bench.json'), JSON.stringify({ chromium: version, date: new Date().toISOString(), ...result }, null, 1));
    await page.send('Emulation.setDeviceMetricsOverride', { width: 1400, height: 2000, deviceScaleFactor: 1, mobile: false });
    const shot = await page.send('Page.captureScreenshot', { format: 'png', captureBeyondViewport: true });
    writeFileSync(join(out, 'bench.png'), Buffer.from(shot.data, 'base64'));
    const ortExact = result.rows.filter((r) => r.ort.status === 'exact').length;
    console.log(`${result.device}; onnxruntime-web ${result.ort ?? 'none'} (${ort.join(', ')} installed)`);
    console.log(`bench page: ${result.rows.length} cases, ${result.rows.filter((r) => r.check === 'exact').length} exact on our side, ${ortExact} exact on onnxruntime-web's; binding wall: ${result.wall.filter((r) => r.ours.status === 'exact').length} of ${result.wall.length} shapes exact through the crate`);
    for (const r of result.rows) if (r.check !== 'exact') console.log(`FAIL ${r.name}: ${r.check}`);
    for (const r of result.wall) if (r.ours.status !== 'exact') console.log(`FAIL wall ${r.case}: ${r.ours.status}`);
    code = result.bad > 0 || result.rows.length === 0 ? 1 : 0;
    console.log(`screenshot: ${join(out, 'bench.png')}`);
  } catch (e) {
    console.log(`FAIL: ${e.message}`);
  } finally {
    for (const p of problems) console.log(p);
    if (problems.length > 0) code = 1;
    await browser.close();
    server.close();
  }
  console.log(`the bench page took ${((Date.now() - started) / 1000).toFixed(1)} s`);
  process.exit(code);
}

await main();
