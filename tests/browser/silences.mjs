// Makes, edits and expires a silence, and acknowledges an alert, through the pages of a running
// `dumbmonit serve`, as an admin does, in Debian's Chromium driven by Playwright. Run by
// tests/quiet.rs, which starts the simulated API server and serve and passes everything in the
// environment.

import { check, env, launch } from './steps.mjs';

const base = env('BASE');
const [adminUser, adminPass] = env('ADMIN').split(':');
const shots = env('SHOTS');

const browser = await launch();
try {
  const admin = await browser.newContext({ httpCredentials: { username: adminUser, password: adminPass }, viewport: { width: 1100, height: 1000 } });
  const page = await admin.newPage();
  const submit = async (form) => {
    await Promise.all([page.waitForNavigation(), page.locator(`${form} button[type="submit"]`).first().click()]);
  };

  // From the crash loop's row on the Cluster panel: "Silence…" opens the form with its labels.
  await page.goto(`${base}/clusters/lab`);
  const row = page.locator('tr', { hasText: 'KubernetesPodCrashLooping' }).first();
  await Promise.all([page.waitForNavigation(), row.locator('a', { hasText: 'Silence…' }).click()]);
  const matchers = await page.inputValue('form.silence textarea[name="matchers"]');
  check(matchers.includes('alertname="KubernetesPodCrashLooping"') && matchers.includes('cluster="lab"'),
    'the new silence is pre-filled with the alert\'s labels');
  await page.fill('form.silence [name="duration"]', '1d');
  await page.fill('form.silence [name="comment"]', 'from the browser <b>');
  await submit('form.silence');
  check(page.url().endsWith('/silences'), 'saved, the silences are listed');
  let silence = page.locator('table.silences tr', { hasText: 'from the browser <b>' });
  check(await silence.count() === 1, 'the silence is listed with its comment, escaped');
  check((await silence.locator('td').first().textContent()).trim() === 'active', 'it is active');
  await page.screenshot({ path: `${shots}/silences.png`, fullPage: true });

  // Edited: a new comment and end.
  await Promise.all([page.waitForNavigation(), silence.locator('a', { hasText: 'Edit' }).click()]);
  check(await page.locator('form.silence textarea[readonly]').count() === 1, 'its matchers are not changed on edit');
  await page.fill('form.silence [name="duration"]', '2d');
  await page.fill('form.silence [name="comment"]', 'edited in the browser');
  await submit('form.silence');
  silence = page.locator('table.silences tr', { hasText: 'edited in the browser' });
  check(await silence.count() === 1, 'the edited comment is listed');

  // Expired.
  await Promise.all([page.waitForNavigation(), silence.locator('button', { hasText: 'Expire' }).click()]);
  silence = page.locator('table.silences tr', { hasText: 'edited in the browser' });
  check((await silence.locator('td').first().textContent()).trim() === 'expired', 'expired');

  // A recurring maintenance window of the cluster, made and ended.
  await Promise.all([page.waitForNavigation(), page.locator('a', { hasText: 'New maintenance window' }).click()]);
  await page.fill('form.silence [name="cluster"]', 'lab');
  await page.fill('form.silence [name="schedule"]', '0 2 * * 0');
  await page.fill('form.silence [name="time_zone"]', 'Europe/Paris');
  await page.fill('form.silence [name="duration"]', '2h');
  await page.fill('form.silence [name="comment"]', 'weekly upgrades');
  await submit('form.silence');
  const windowRow = page.locator('tr', { hasText: 'weekly upgrades' });
  check(await windowRow.count() === 1, 'the maintenance window is listed');
  await Promise.all([page.waitForNavigation(), windowRow.locator('button', { hasText: 'End' }).click()]);
  check(await page.locator('tr', { hasText: 'weekly upgrades' }).count() === 0, 'the maintenance window ended');

  // The crash loop acknowledged from its row.
  await page.goto(`${base}/clusters/lab`);
  await Promise.all([page.waitForNavigation(), page.locator('tr', { hasText: 'KubernetesPodCrashLooping' }).first().locator('a', { hasText: 'Acknowledge…' }).click()]);
  await page.fill('form.ack [name="comment"]', 'looking at the logs');
  await submit('form.ack');
  const panel = await page.textContent('main');
  check(panel.includes('acknowledged by admin at') && panel.includes('looking at the logs'), 'the alert shows who is on it');
} finally {
  await browser.close();
}
