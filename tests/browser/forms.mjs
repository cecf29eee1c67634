// Adds, tests, edits and removes a cluster through the pages of a running `dumbmonit serve`, as a
// user does, in Debian's Chromium driven by Playwright. Run by tests/forms.rs, which starts the
// simulated API server and serve and passes everything in the environment. Secrets are read from
// files and never printed.

import { check, env, launch } from './steps.mjs';
import { readFileSync, writeFileSync } from 'node:fs';

const base = env('BASE');
const [adminUser, adminPass] = env('ADMIN').split(':');
const [viewerUser, viewerPass] = env('VIEWER').split(':');
const sim = env('SIM');
const token = readFileSync(env('TOKEN_FILE'), 'utf8').trim();
const ca = readFileSync(env('CA_FILE'), 'utf8');
const shots = env('SHOTS');

const browser = await launch();
try {
  const admin = await browser.newContext({ httpCredentials: { username: adminUser, password: adminPass }, viewport: { width: 900, height: 1000 } });
  const page = await admin.newPage();

  // The form, with exactly the guide's fields.
  await page.goto(`${base}/clusters/new`);
  for (const field of ['name', 'address', 'port', 'token', 'ca', 'insecure', 'watch', 'timeout', 'ignored', 'interval']) {
    check(await page.locator(`form.cluster [name="${field}"]`).count() >= 1, `the form has the field ${field}`);
  }
  check(await page.inputValue('form.cluster [name="timeout"]') === '10s', 'the timeout per request is 10 s unless changed');
  await page.screenshot({ path: `${shots}/cluster-form.png`, fullPage: true });

  const direct = page.locator('form.cluster').first();
  const fill = async (values) => {
    for (const [name, value] of Object.entries(values)) {
      await direct.locator(`[name="${name}"]`).fill(value);
    }
  };
  const press = async (action) => {
    await Promise.all([page.waitForNavigation(), direct.locator(`button[value="${action}"]`).click()]);
  };

  // A wrong token: the 401 and the guide's help beside it.
  await fill({ name: 'lab', address: sim, token: 'not-the-token-0123456789', ca });
  await press('test');
  let error = await page.textContent('.error');
  check(error.includes('refused the token (401)'), 'a wrong token shows the 401');
  check((await page.textContent('.help')).includes('kubectl create token'), 'beside it, the help on tokens that expire');
  check(!(await page.content()).includes('not-the-token-0123456789'), 'the token entered is not put back in the page');
  await page.screenshot({ path: `${shots}/cluster-form-401.png`, fullPage: true });

  // The right token without the CA: the certificate help.
  await fill({ token, ca: '' });
  await press('test');
  error = await page.textContent('.error');
  check(error.includes('unknown authority'), 'a missing CA shows the certificate error');
  check((await page.textContent('.help')).includes('The cluster CA is missing'), 'beside it, the help on the CA');
  await page.screenshot({ path: `${shots}/cluster-form-certificate.png`, fullPage: true });

  // Corrected: the test reads the cluster; nothing is saved yet.
  await fill({ token, ca, interval: '1s' });
  await press('test');
  const tested = await page.textContent('.tested');
  check(tested.includes('The cluster was read.') && tested.includes('Healthy'), 'the corrected entry tests healthy');
  let overview = await (await admin.request.get(`${base}/`)).text();
  check(!overview.includes('href="/clusters/lab"'), 'a test saves nothing');

  // Saved: watched from the next moment, on the overview with data after its first cycle.
  await fill({ token });
  await press('save');
  check(page.url().endsWith('/clusters/lab'), 'saving leads to the cluster page');
  let seen = false;
  for (let i = 0; i < 100 && !seen; i++) {
    await page.goto(`${base}/`);
    seen = (await page.locator('a[href="/clusters/lab"]').count()) === 1
      && !(await page.locator('tr', { has: page.locator('a[href="/clusters/lab"]') }).textContent()).includes('Waiting');
    if (!seen) await page.waitForTimeout(100);
  }
  check(seen, 'the saved cluster is on the overview with data after its first cycle');
  const row = await page.locator('tr', { has: page.locator('a[href="/clusters/lab"]') }).textContent();
  check(/\d+\/\d+/.test(row), `its row has its nodes (${row.replace(/\s+/g, ' ').trim()})`);

  // Edited: the interval and ignored namespaces change, the token is kept.
  await page.goto(`${base}/clusters/lab`);
  check((await page.textContent('p.source')).includes('Added on the pages'), 'the page says where the cluster comes from');
  await Promise.all([page.waitForNavigation(), page.click('p.source a')]);
  check(await page.inputValue('form.cluster [name="token"]') === '', 'the stored token is never shown');
  const before = await (await admin.request.get(`${base}/api/v1/clusters/lab`)).json();
  await fill({ interval: '2s', ignored: 'shop, ci' });
  await press('save');
  await page.goto(`${base}/clusters/lab/edit`);
  check(await page.inputValue('form.cluster [name="interval"]') === '2s', 'the edit is saved');
  check(await page.inputValue('form.cluster [name="ignored"]') === 'shop, ci', 'the ignored namespaces too');
  let reread = false;
  for (let i = 0; i < 100 && !reread; i++) {
    const doc = await (await admin.request.get(`${base}/api/v1/clusters/lab`)).json();
    // The pods of the namespace now ignored are no longer counted: read with the new settings.
    reread = doc.error === null && doc.added_on_pages === true && doc.pods < before.pods;
    if (!reread) await page.waitForTimeout(100);
  }
  check(reread, `the edited cluster is read again with the kept token, without the ignored namespace (${before.pods} pods before)`);

  // Removed.
  await page.goto(`${base}/clusters/lab/edit`);
  await Promise.all([page.waitForNavigation(), page.click('form.remove button')]);
  overview = await page.content();
  check(!overview.includes('href="/clusters/lab"'), 'the removed cluster is gone from the overview');

  // The audit list.
  await page.goto(`${base}/audit`);
  const audit = await page.textContent('table');
  check(audit.includes('added') && audit.includes('changed') && audit.includes('removed') && audit.includes(adminUser),
    'the audit list says who added, changed and removed it');

  // A POST without this session's CSRF token, or from another origin, is refused.
  const csrf = await (async () => { await page.goto(`${base}/clusters/new`); return page.inputValue('form.cluster [name="csrf"]'); })();
  let r = await admin.request.post(`${base}/clusters/new`, { form: { action: 'save', name: 'x', address: sim, token: 'x' }, headers: { Origin: base } });
  check(r.status() === 403, 'a POST without the CSRF token is refused with 403');
  r = await admin.request.post(`${base}/clusters/new`, { form: { csrf: 'forged', action: 'save', name: 'x', address: sim, token: 'x' }, headers: { Origin: base } });
  check(r.status() === 403, 'a POST with a forged CSRF token is refused with 403');
  r = await admin.request.post(`${base}/clusters/new`, { form: { csrf, action: 'save', name: 'x', address: sim, token: 'x' }, headers: { Origin: 'http://attacker.example' } });
  check(r.status() === 403, 'a POST from another origin is refused with 403');

  // Through an agent: the command, with its token, shown once.
  await page.goto(`${base}/clusters/new`);
  const agentForm = page.locator('form.cluster').nth(1);
  await agentForm.locator('[name="name"]').fill('edge');
  await Promise.all([page.waitForNavigation(), agentForm.locator('button[value="agent"]').click()]);
  const command = await page.textContent('pre.command');
  check(command.includes('dumbmonit manifests agent') && command.includes("--cluster='edge'") && command.includes('kubectl apply -f -'),
    'the agent path shows the one command to run');
  const agentToken = command.match(/printf '%s' '([^']+)'/)[1];
  writeFileSync(env('AGENT_TOKEN_OUT'), agentToken);
  for (const path of ['/clusters/edge', '/clusters/edge/edit', '/', '/api/v1/clusters', '/api/v1/clusters/edge', '/metrics', '/audit']) {
    const body = await (await admin.request.get(`${base}${path}`)).text();
    check(!body.includes(agentToken) && !body.includes(token), `no token in ${path} afterwards`);
  }

  // The agent's cluster is edited without connection settings: the agent holds them.
  await page.goto(`${base}/clusters/edge/edit`);
  check(await page.locator('form.cluster [name="token"]').count() === 0 && await page.locator('button[value="test"]').count() === 0,
    "an agent's cluster has no token field and no test");
  await page.locator('form.cluster [name="interval"]').fill('30s');
  await Promise.all([page.waitForNavigation(), page.locator('button[value="save"]').click()]);
  await page.goto(`${base}/clusters/edge/edit`);
  check(await page.inputValue('form.cluster [name="interval"]') === '30s', "an agent's cluster is edited");

  // A viewer changes nothing.
  const viewer = await browser.newContext({ httpCredentials: { username: viewerUser, password: viewerPass } });
  const vpage = await viewer.newPage();
  const answer = await vpage.goto(`${base}/clusters/new`);
  check(answer.status() === 403 && (await vpage.content()).includes('needs the admin role'), 'a viewer cannot open the form');
  r = await viewer.request.post(`${base}/clusters/edge/remove`, { form: { csrf }, headers: { Origin: base } });
  check(r.status() === 403, 'a viewer cannot remove a cluster');
  check((await (await viewer.request.get(`${base}/`)).text()).includes('href="/clusters/edge"'), 'the cluster is still there');
} finally {
  await browser.close();
}
