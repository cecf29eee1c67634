// What every browser test shares: its settings from the environment (set by the Rust test that
// starts serve), a step that says what it checked, and Debian's Chromium launched for a test.

import { chromium } from 'playwright-core';

/// A setting the Rust test passes; its absence is the test's mistake.
export const env = (name) => {
  const v = process.env[name];
  if (!v) throw new Error(`${name} is not set`);
  return v;
};

/// A step: fails the test with what was expected, or says it held.
export function check(ok, what) {
  if (!ok) throw new Error(`not so: ${what}`);
  console.log(`ok: ${what}`);
}

/// Chromium with nothing of its own on the network (no sync, no updates, no QUIC).
export function launch() {
  return chromium.launch({
    executablePath: env('CHROMIUM'),
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
      '--disable-component-update', '--disable-sync'],
  });
}
