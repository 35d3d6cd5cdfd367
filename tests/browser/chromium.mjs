// Headless Chromium driven over the DevTools protocol: launches Debian's
// `chromium` with a fresh profile, connects to its browser endpoint with
// Node's WebSocket (Node 20: `--experimental-websocket`; Node 22 has it
// built in), opens a page and evaluates expressions in it. A Node without
// WebSocket (Debian 12's own Node 18) speaks the same protocol over
// `--remote-debugging-pipe` instead. No npm dependency.

import { spawn, execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/// The flags of every launch: headless, WebGPU on (Chromium's bundled
/// SwiftShader Vulkan runs it without a GPU), nothing fetched from the
/// network.
const FLAGS = [
  '--headless=new',
  '--no-sandbox',
  '--enable-unsafe-webgpu',
  '--disable-gpu-sandbox',
  '--no-first-run',
  '--no-default-browser-check',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--disable-extensions',
];

/// The browser's path: `$CHROMIUM`, else `chromium` on the PATH. Throws
/// (never skips) when there is none.
export function chromiumPath() {
  const candidate = process.env.CHROMIUM || 'chromium';
  try {
    const version = execFileSync(candidate, ['--version'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
    return { path: candidate, version };
  } catch (e) {
    throw new Error(`no browser: '${candidate} --version' failed (${e.message.split('\n')[0]}); install Debian's chromium (apt-get install -y chromium) or set CHROMIUM`);
  }
}

/// A launched browser: its process, its DevTools connection, its profile.
export class Browser {
  static async launch(path, { timeoutMs = 30000, flags = [] } = {}) {
    const profile = mkdtempSync(join(tmpdir(), 'wgpu-split-chromium-'));
    const ws = typeof WebSocket !== 'undefined';
    const args = [...FLAGS, ...flags, ws ? '--remote-debugging-port=0' : '--remote-debugging-pipe', `--user-data-dir=${profile}`, 'about:blank'];
    // With a pipe the browser reads commands on fd 3 and answers on fd 4.
    const child = spawn(path, args, { stdio: ['ignore', 'ignore', 'pipe', ...(ws ? [] : ['pipe', 'pipe'])] });
    const log = [];
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (chunk) => log.push(chunk));
    try {
      const transport = ws ? await webSocket(await endpoint(child, log, timeoutMs)) : pipe(child);
      const browser = new Browser(child, new Cdp(transport), profile, log);
      await within(browser.cdp.send('Browser.getVersion'), timeoutMs, 'the DevTools connection');
      return browser;
    } catch (e) {
      // Never leave a browser behind.
      await stop(child);
      rmSync(profile, { recursive: true, force: true });
      throw e;
    }
  }

  constructor(child, cdp, profile, log) {
    this.child = child;
    this.cdp = cdp;
    this.profile = profile;
    this.log = log;
  }

  /// Opens `url` in a new page, `onEvent(method, params)` hearing its
  /// events from before it loads; resolves once it has loaded. Returns a
  /// `Page`.
  async open(url, onEvent = () => {}) {
    const { targetId } = await this.cdp.send('Target.createTarget', { url: 'about:blank' });
    const { sessionId } = await this.cdp.send('Target.attachToTarget', { targetId, flatten: true });
    const page = new Page(this.cdp, sessionId);
    page.on(onEvent);
    await page.send('Inspector.enable');
    await page.send('Runtime.enable');
    await page.send('Page.enable');
    const loaded = page.once('Page.loadEventFired');
    await page.send('Page.navigate', { url });
    await loaded;
    return page;
  }

  async close() {
    try {
      await this.cdp.send('Browser.close');
    } catch {
      // Already gone.
    }
    this.cdp.close();
    await stop(this.child, 5000);
    rmSync(this.profile, { recursive: true, force: true });
  }
}

/// Ends `child` (the browser this driver started): SIGTERM, SIGKILL after
/// `graceMs`; resolves once it has exited.
function stop(child, graceMs = 0) {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) {
      resolve();
      return;
    }
    child.on('exit', () => {
      clearTimeout(timer);
      resolve();
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), graceMs + 5000);
    if (graceMs === 0) child.kill('SIGTERM');
    else setTimeout(() => child.kill('SIGTERM'), graceMs);
  });
}

/// The browser's DevTools endpoint, once `child` prints it.
function endpoint(child, log, timeoutMs) {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`chromium printed no DevTools endpoint in ${timeoutMs} ms:\n${log.join('')}`)), timeoutMs);
    child.on('exit', (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`chromium exited (${code ?? signal}) before its DevTools endpoint:\n${log.join('')}`));
    });
    child.stderr.on('data', () => {
      const m = /DevTools listening on (ws:\/\/\S+)/.exec(log.join(''));
      if (m) {
        clearTimeout(timer);
        resolve(m[1]);
      }
    });
  });
}

/// `promise`, or a rejection after `ms`.
export function within(promise, ms, what) {
  let timer;
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: no answer in ${ms / 1000} s`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/// A transport over Node's WebSocket: `send(text)`, and `onmessage(text)`
/// and `onclose()` to set.
function webSocket(url) {
  const ws = new WebSocket(url);
  return new Promise((resolve, reject) => {
    ws.onerror = (e) => reject(new Error(`DevTools connection failed: ${e.message ?? e}`));
    ws.onopen = () => {
      const t = { send: (text) => ws.send(text), close: () => ws.close(), onmessage: null, onclose: null };
      ws.onmessage = (event) => t.onmessage(event.data);
      ws.onclose = () => t.onclose();
      resolve(t);
    };
  });
}

/// A transport over `--remote-debugging-pipe`: messages end with a NUL.
function pipe(child) {
  const [, , , writer, reader] = child.stdio;
  const t = { send: (text) => writer.write(`${text}\0`), close: () => writer.end(), onmessage: null, onclose: null };
  let pending = '';
  reader.setEncoding('utf8');
  reader.on('data', (chunk) => {
    const parts = (pending + chunk).split('\0');
    pending = parts.pop();
    for (const text of parts) t.onmessage(text);
  });
  reader.on('close', () => t.onclose());
  writer.on('error', () => {});
  return t;
}

/// One DevTools connection: numbered commands, events to listeners.
class Cdp {
  constructor(transport) {
    this.transport = transport;
    this.next = 1;
    this.pending = new Map();
    this.listeners = [];
    this.closed = false;
    transport.onmessage = (text) => {
      const message = JSON.parse(text);
      if (message.id !== undefined) {
        const p = this.pending.get(message.id);
        if (!p) return;
        this.pending.delete(message.id);
        if (message.error) p.reject(new Error(`${p.method}: ${message.error.message} ${message.error.data ?? ''}`));
        else p.resolve(message.result);
      } else {
        for (const l of this.listeners) l(message);
      }
    };
    transport.onclose = () => {
      this.closed = true;
      for (const p of this.pending.values()) p.reject(new Error(`${p.method}: the DevTools connection closed`));
      this.pending.clear();
    };
  }

  send(method, params = {}, sessionId = undefined) {
    if (this.closed) return Promise.reject(new Error(`${method}: the DevTools connection is closed`));
    const id = this.next++;
    const message = { id, method, params };
    if (sessionId) message.sessionId = sessionId;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject, method });
      this.transport.send(JSON.stringify(message));
    });
  }

  listen(listener) {
    this.listeners.push(listener);
    return () => {
      this.listeners = this.listeners.filter((l) => l !== listener);
    };
  }

  close() {
    if (!this.closed) this.transport.close();
  }
}

/// A page (a flattened session of the browser's connection).
class Page {
  constructor(cdp, sessionId) {
    this.cdp = cdp;
    this.sessionId = sessionId;
  }

  send(method, params = {}) {
    return this.cdp.send(method, params, this.sessionId);
  }

  /// Calls `listener(method, params)` for every event of this page.
  on(listener) {
    return this.cdp.listen((m) => {
      if (m.sessionId === this.sessionId) listener(m.method, m.params);
    });
  }

  once(method) {
    return new Promise((resolve) => {
      const off = this.on((m, params) => {
        if (m === method) {
          off();
          resolve(params);
        }
      });
    });
  }

  /// Evaluates `expression` in the page, awaiting its promise; returns its
  /// value (JSON) or throws with the page's exception.
  async evaluate(expression) {
    const r = await this.send('Runtime.evaluate', {
      expression,
      awaitPromise: true,
      returnByValue: true,
    });
    if (r.exceptionDetails) {
      const d = r.exceptionDetails;
      throw new Error(`in the page: ${d.exception?.description ?? d.text}`);
    }
    return r.result.value;
  }
}
