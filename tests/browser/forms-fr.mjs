// The cluster form once more, in French: a browser whose language is French (Playwright's
// locale, which Chromium sends as Accept-Language) fills the form by the guide's words, meets
// the 401 inside the French help, tests and saves; then the footer's link switches the pages to
// English and back. Run by tests/languages.rs, which passes everything in the environment.

import { check, env, launch } from './steps.mjs';
import { readFileSync } from 'node:fs';

const base = env('BASE');
const [adminUser, adminPass] = env('ADMIN').split(':');
const sim = env('SIM');
const token = readFileSync(env('TOKEN_FILE'), 'utf8').trim();
const ca = readFileSync(env('CA_FILE'), 'utf8');
const shots = env('SHOTS');

const browser = await launch();
try {
  const admin = await browser.newContext({
    httpCredentials: { username: adminUser, password: adminPass },
    viewport: { width: 900, height: 1000 },
    locale: 'fr-FR',
  });
  const page = await admin.newPage();
  await page.goto(`${base}/clusters/new`);
  check(await page.getAttribute('html', 'lang') === 'fr', 'a French browser gets the French form');
  const direct = page.locator('form.cluster').first();
  // Each field found by its label, in the guide's words.
  const field = (label) => direct.getByLabel(label, { exact: false });
  await field('Nom').fill('lab');
  await field("Adresse de l’API server").fill(sim);
  check(await field('Port').inputValue() === '6443', 'Port, 6443 unless changed');
  await field('Jeton de compte de service').fill('not-the-token-0123456789');
  await field('Certificat CA du cluster').fill(ca);
  check(await field('Accepter un certificat non vérifiable').isChecked() === false, 'Accepter un certificat non vérifiable, unticked');
  check(await field('Délai par requête').inputValue() === '10s', 'Délai par requête, 10 s unless changed');
  await field('Namespaces ignorés').fill('ci');
  await field('Intervalle').fill('1s');
  const press = async (button) => {
    await Promise.all([page.waitForNavigation(), direct.getByRole('button', { name: button }).click()]);
  };
  await press('Tester');
  const error = await page.textContent('.error');
  check(error.includes('Le test a échoué.') && error.includes('The API server refused the token (401)'),
    'the 401, quoted in English as the guide quotes it, after the French words');
  check((await page.textContent('.help')).includes('Un jeton fait avec kubectl create token expire'), 'beside it, the guide’s French help');
  await page.screenshot({ path: `${shots}/cluster-form-fr.png`, fullPage: true });

  await field('Jeton de compte de service').fill(token);
  await press('Tester');
  check((await page.textContent('.tested')).includes('Le cluster a été lu.'), 'the right token reads the cluster, said in French');
  await field('Jeton de compte de service').fill(token);
  await press('Enregistrer');
  check(page.url().endsWith('/clusters/lab'), 'saving leads to the cluster page');

  // The troubled cluster's panel in French, for the docs.
  await page.goto(`${base}/clusters/trouble`);
  check((await page.textContent('main')).includes('Pods qui ont besoin d’attention'), 'the panel in French');
  await page.screenshot({ path: `${shots}/cluster-page-fr.png`, fullPage: true });

  // The footer's link: English, then back to French, on the same page.
  await Promise.all([page.waitForNavigation(), page.click('footer.languages a[lang="en"]')]);
  check(page.url().endsWith('/clusters/trouble') && await page.getAttribute('html', 'lang') === 'en',
    'English chosen in the footer, on the same page, over the browser’s French');
  check((await page.textContent('main')).includes('Pods needing attention'), 'the panel in English');
  await page.goto(`${base}/`);
  check(await page.getAttribute('html', 'lang') === 'en', 'the choice is kept (the cookie)');
  await Promise.all([page.waitForNavigation(), page.click('footer.languages a[lang="fr"]')]);
  check(await page.getAttribute('html', 'lang') === 'fr', 'and French again');
} finally {
  await browser.close();
}
