// The console end to end in the system Chromium, driven by playwright-core. ConsoleBrowserIT starts the servers
// and runs this script; it prints one line per step and exits non-zero on the first failure, with a screenshot.
//   MALLARD_URL       a COMPLETE server's HTTP address      MALLARD_RO_URL  a READ_ONLY server's
//   MALLARD_USER / MALLARD_PASSWORD                          SCREENSHOTS     where the screenshots go
//   CHROMIUM          the browser (default /usr/bin/chromium)
//   SCENARIO=ingestion instead: MALLARD_URL is a COMPLETE server with the ingestion queue QUEUE the test feeds
//   SCENARIO=pipelines instead: MALLARD_URL is a READ_ONLY server whose hub runs the pipeline PIPELINE while the test
//                     publishes events; MALLARD_USER is not a pipeline admin, MALLARD_ADMIN / MALLARD_ADMIN_PASSWORD is
import { chromium } from 'playwright-core';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';

const env = process.env;
const shots = env.SCREENSHOTS ?? 'screenshots';
mkdirSync(shots, { recursive: true });
const TIMEOUT = 60_000;

const browser = await chromium.launch({
  executablePath: env.CHROMIUM ?? '/usr/bin/chromium',
  headless: true,
  args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
    '--disable-component-update', '--disable-sync'],
});

let current = null;
const problems = [];

function step(name) {
  console.log(`step: ${name}`);
}

async function open(url) {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const page = await context.newPage();
  page.setDefaultTimeout(TIMEOUT);
  // A CSP violation or a script error is a failure of the console, whatever the step.
  page.on('console', (message) => {
    if (message.type() === 'error' && !/status of 40[34]/.test(message.text()) && !/Failed to load resource/.test(message.text())) {
      problems.push(`console error: ${message.text()}`);
    }
  });
  page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
  current = page;
  await page.goto(`${url}/ui`);
  return page;
}

async function logIn(page, mode, user = env.MALLARD_USER, password = env.MALLARD_PASSWORD) {
  await page.fill('#username', user);
  await page.fill('#password', password);
  await page.click('#login-button');
  await page.waitForFunction((m) => document.getElementById('who').dataset.mode === m, mode);
  const stored = await page.evaluate(() => [localStorage.length, sessionStorage.length, document.cookie]);
  if (stored[0] !== 0 || stored[1] !== 0 || stored[2] !== '') {
    throw new Error(`the token must live in memory only, found storage ${JSON.stringify(stored)}`);
  }
}

async function run(page, sql) {
  await page.fill('#sql', sql);
  await page.click('#run');
  await page.waitForFunction(() => ['done', 'failed'].includes(document.getElementById('status').dataset.state)
    && document.getElementById('run').disabled === false);
}

function expect(condition, message) {
  if (!condition) throw new Error(message);
}

async function consoleScenario() {
  step('log in to the COMPLETE server');
  const page = await open(env.MALLARD_URL);
  expect(page.url().endsWith('/ui/'), `/ui should lead to /ui/, got ${page.url()}`);
  await logIn(page, 'COMPLETE');

  step('run a query and see its rows, typed and paged');
  await run(page, "SELECT range AS n, range * 2.5 AS scaled, 'row ' || range AS label, TIMESTAMP '2026-01-01' + to_seconds(range) AS at FROM range(120)");
  const status = await page.textContent('#status');
  expect(status.startsWith('120 rows'), `status should count 120 rows: ${status}`);
  expect(await page.locator('#result-table tbody tr').count() === 50, 'a page shows 50 rows');
  const types = await page.locator('#result-table th').evaluateAll((ths) => ths.map((th) => th.dataset.type));
  expect(types[0] === 'Int64' && types[2] === 'Utf8' && types[3].startsWith('Timestamp'), `typed columns: ${types}`);
  expect((await page.textContent('#result-table tbody tr:first-child td:nth-child(3)')) === 'row 0', 'first row label');
  await page.click('#page-next');
  const info = await page.textContent('#page-info');
  expect(info.includes('rows 51–100 of 120'), `second page: ${info}`);
  expect((await page.textContent('#result-table tbody tr:first-child td:first-child')) === '50', 'second page starts at 50');

  step('chart the result');
  await page.selectOption('#chart-kind', 'line');
  await page.selectOption('#chart-x', 'n');
  await page.selectOption('#chart-y', 'scaled');
  await page.waitForSelector('#chart svg[data-kind="line"][data-points="120"] path.chart-line');
  await page.selectOption('#chart-kind', 'bar');
  await page.waitForSelector('#chart svg[data-kind="bar"] rect.chart-bar');
  await page.screenshot({ path: join(shots, '01-query-and-chart.png'), fullPage: true });

  step('cancel a long query');
  await page.fill('#sql', 'SELECT sum(hash(a.range + b.range)) FROM range(1000000) a, range(1000000) b');
  await page.click('#run');
  await page.waitForFunction(() => document.getElementById('status').dataset.state === 'running');
  const deadline = Date.now() + TIMEOUT;
  while (await page.evaluate(() => document.getElementById('status').dataset.state) === 'running') {
    expect(Date.now() < deadline, 'the long query was never cancelled');
    // Until the server has the statement running, /v1/cancel answers 404; press again.
    await page.click('#cancel').catch(() => {});
    await page.waitForTimeout(250);
  }
  const cancelled = await page.textContent('#query-error');
  expect(cancelled.includes('user.sql.cancelled'), `the cancelled query should show the server's error: ${cancelled}`);
  await page.screenshot({ path: join(shots, '02-cancelled.png'), fullPage: true });
  expect(await page.locator('#history li').count() >= 2, 'history lists the statements');

  step('browse the schema: a table, a view, a materialized view and dbsp_stats');
  await run(page, "CREATE TABLE birds AS SELECT * FROM (VALUES ('duck', 3), ('goose', 1)) t(name, n)");
  expect((await page.textContent('#query-error')) === '', `create table: ${await page.textContent('#query-error')}`);
  await run(page, 'CREATE VIEW big_birds AS SELECT * FROM birds WHERE n > 1');
  await run(page, "SELECT dbsp_create_view('bird_totals', 'SELECT name, sum(n) AS total FROM birds GROUP BY name')");
  expect((await page.textContent('#query-error')) === '', `create materialized view: ${await page.textContent('#query-error')}`);
  await page.click('button[data-tab="schema"]');
  await page.waitForSelector('#schema-tables td:text-is("main.birds")');
  await page.waitForSelector('#schema-views td:text-is("main.big_birds")');
  await page.waitForSelector('#schema-materialized td:text-is("bird_totals")');
  await page.waitForSelector('#schema-dbsp-stats td:text-is("views")');
  await page.screenshot({ path: join(shots, '03-schema.png'), fullPage: true });

  step('pipelines and ingestion panels say when the feature is not enabled');
  await page.click('button[data-tab="pipelines"]');
  await page.waitForFunction(() => ['disabled', 'enabled'].includes(document.getElementById('pipelines-status').dataset.state));
  const pipelines = await page.evaluate(() => document.getElementById('pipelines-status').dataset.state);
  if (pipelines === 'disabled') {
    expect((await page.textContent('#pipelines-status')).includes('not enabled'), 'a disabled hub is named');
  }
  await page.screenshot({ path: join(shots, '04-pipelines.png'), fullPage: true });
  await page.click('button[data-tab="ingestion"]');
  await page.waitForFunction(() => ['disabled', 'enabled'].includes(document.getElementById('ingestion-status').dataset.state));
  await page.screenshot({ path: join(shots, '05-ingestion.png'), fullPage: true });
  console.log(`pipelines panel: ${pipelines}`);

  step('a READ_ONLY user is refused a write and sees no stop button');
  const readOnly = await open(env.MALLARD_RO_URL);
  await logIn(readOnly, 'READ_ONLY');
  await run(readOnly, 'SELECT 1 AS one');
  expect((await readOnly.textContent('#status')).startsWith('1 rows'), 'a READ_ONLY user may query');
  await run(readOnly, 'CREATE TABLE nope (x INTEGER)');
  const refused = await readOnly.textContent('#query-error');
  expect(refused.includes('user.access.denied'), `the write should be refused with the server's error: ${refused}`);
  await readOnly.screenshot({ path: join(shots, '06-read-only-refused.png'), fullPage: true });
  await readOnly.click('button[data-tab="pipelines"]');
  await readOnly.waitForFunction(() => ['disabled', 'enabled', 'failed'].includes(document.getElementById('pipelines-status').dataset.state));
  expect(await readOnly.locator('.pipeline-stop').count() === 0, 'a READ_ONLY user sees no stop button');
}

async function pipelinesScenario() {
  const card = `article[data-pipeline="${env.PIPELINE}"]`;
  step('a READ_ONLY user who is no pipeline admin sees the pipeline but no stop button');
  const reader = await open(env.MALLARD_URL);
  await logIn(reader, 'READ_ONLY');
  await reader.click('button[data-tab="pipelines"]');
  await reader.waitForSelector(`${card}[data-state="RUNNING"]`);
  expect(await reader.locator('.pipeline-stop').count() === 0, 'no stop button for a reader');
  await reader.screenshot({ path: join(shots, '11-pipelines-reader.png'), fullPage: true });

  step("the pipeline's lag, msgs/s and errors charts move while events are published");
  const admin = await open(env.MALLARD_URL);
  await logIn(admin, 'READ_ONLY', env.MALLARD_ADMIN, env.MALLARD_ADMIN_PASSWORD);
  await admin.click('button[data-tab="pipelines"]');
  await admin.waitForSelector(`${card} .pipeline-stop`);
  // Each poll adds a point to every chart; the lag and the message count each took several values: the charts moved.
  await admin.waitForFunction((selector) => {
    const article = document.querySelector(selector);
    const lag = article?.querySelector('figure[data-series="lag"]');
    return lag && Number(lag.dataset.samples) >= 3 && lag.querySelector('path') !== null
      && Number(article.dataset.distinctLags) >= 2 && Number(article.dataset.distinctMessages) >= 3;
  }, card, { timeout: 120_000 });
  await admin.screenshot({ path: join(shots, '12-pipeline-lag-moves.png'), fullPage: true });

  step('a pipeline admin stops and starts the pipeline');
  await admin.click(`${card} .pipeline-stop`);
  await admin.waitForSelector(`${card}[data-state="STOPPED"]`);
  await admin.screenshot({ path: join(shots, '13-pipeline-stopped.png'), fullPage: true });
  await admin.click(`${card} .pipeline-start`);
  await admin.waitForSelector(`${card}[data-state="RUNNING"]`);
}

async function ingestionScenario() {
  const row = `tr[data-queue="${env.QUEUE}"]`;
  step("an ingestion queue's rows, batches and watermark appear and move as batches arrive");
  const page = await open(env.MALLARD_URL);
  await logIn(page, 'COMPLETE');
  await page.click('button[data-tab="ingestion"]');
  await page.waitForSelector(`${row}[data-rows]`);
  const first = Number(await page.getAttribute(row, 'data-rows'));
  await page.waitForFunction(([selector, before]) => {
    const tr = document.querySelector(selector);
    return tr && Number(tr.dataset.rows) > before && tr.dataset.watermarkMax !== '' && Number(tr.dataset.samples) >= 3;
  }, [row, first], { timeout: 120_000 });
  await page.screenshot({ path: join(shots, '21-ingestion-queue.png'), fullPage: true });
}

try {
  if (env.SCENARIO === 'pipelines') {
    await pipelinesScenario();
  } else if (env.SCENARIO === 'ingestion') {
    await ingestionScenario();
  } else {
    await consoleScenario();
  }
  expect(problems.length === 0, `the page reported problems:\n${problems.join('\n')}`);
  console.log('console e2e: all steps passed');
  await browser.close();
} catch (error) {
  console.error(`FAILED: ${error.message}`);
  if (problems.length) console.error(problems.join('\n'));
  if (current) await current.screenshot({ path: join(shots, 'failure.png'), fullPage: true }).catch(() => {});
  await browser.close();
  process.exit(1);
}
