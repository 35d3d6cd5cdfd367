// Headless Chromium driven over the DevTools protocol: launches Debian's
// `chromium` with a fresh profile, connects to its browser endpoint with
// Node's WebSocket (Node 20: `--experimental-websocket`), opens a page and
// evaluates expressions in it. No npm dependency.

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
  '--remote-debugging-port=0',
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
  static async launch(path, { timeoutMs = 30000 } = {}) {
    const profile = mkdtempSync(join(tmpdir(), 'wgpu-split-chromium-'));
    const child = spawn(path, [...FLAGS, `--user-data-dir=${profile}`, 'about:blank'], {
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    const log = [];
    const endpoint = await new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`chromium printed no DevTools endpoint in ${timeoutMs} ms:\n${log.join('')}`)), timeoutMs);
      child.on('exit', (code, signal) => {
        clearTimeout(timer);
        reject(new Error(`chromium exited (${code ?? signal}) before its DevTools endpoint:\n${log.join('')}`));
      });
      child.stderr.setEncoding('utf8');
      child.stderr.on('data', (chunk) => {
        log.push(chunk);
        const m = /DevTools listening on (ws:\/\/\S+)/.exec(log.join(''));
        if (m) {
          clearTimeout(timer);
          resolve(m[1]);
        }
      });
    });
    const cdp = await Cdp.connect(endpoint);
    return new Browser(child, cdp, profile, log);
  }

  constructor(child, cdp, profile, log) {
    this.child = child;
    this.cdp = cdp;
    this.profile = profile;
    this.log = log;
  }

  /// Opens `url` in a new page; resolves once it has loaded. Returns a
  /// `Page`.
  async open(url) {
    const { targetId } = await this.cdp.send('Target.createTarget', { url: 'about:blank' });
    const { sessionId } = await this.cdp.send('Target.attachToTarget', { targetId, flatten: true });
    const page = new Page(this.cdp, sessionId);
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
    await new Promise((resolve) => {
      if (this.child.exitCode !== null || this.child.signalCode !== null) resolve();
      else {
        const timer = setTimeout(() => this.child.kill('SIGKILL'), 5000);
        this.child.on('exit', () => {
          clearTimeout(timer);
          resolve();
        });
      }
    });
    rmSync(this.profile, { recursive: true, force: true });
  }
}

/// One DevTools connection: numbered commands, events to listeners.
class Cdp {
  static connect(url) {
    if (typeof WebSocket === 'undefined') {
      throw new Error('no WebSocket in this Node: run node with --experimental-websocket (Node 20) or use Node 22+');
    }
    const ws = new WebSocket(url);
    return new Promise((resolve, reject) => {
      ws.onopen = () => resolve(new Cdp(ws));
      ws.onerror = (e) => reject(new Error(`DevTools connection failed: ${e.message ?? e}`));
    });
  }

  constructor(ws) {
    this.ws = ws;
    this.next = 1;
    this.pending = new Map();
    this.listeners = [];
    this.closed = false;
    ws.onmessage = (event) => {
      const message = JSON.parse(event.data);
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
    ws.onclose = () => {
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
      this.ws.send(JSON.stringify(message));
    });
  }

  listen(listener) {
    this.listeners.push(listener);
    return () => {
      this.listeners = this.listeners.filter((l) => l !== listener);
    };
  }

  close() {
    if (!this.closed) this.ws.close();
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
