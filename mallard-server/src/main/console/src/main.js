import './style.css';
import * as api from './api.js';
import { chart, sparkline } from './charts.js';
import { formatValue, numberOf } from './format.js';

const PAGE_ROWS = 50;
const POLL_MS = 1000;
const HISTORY_MS = 5 * 60 * 1000;
const $ = (id) => document.getElementById(id);

let me = null;
let result = null;
let page = 0;
let running = null;
let statementCounter = 0;
const history = [];
let poller = null;

function el(tag, attributes = {}, ...children) {
  const element = document.createElement(tag);
  for (const [key, value] of Object.entries(attributes)) {
    if (key === 'class') element.className = value;
    else if (key.startsWith('data-')) element.dataset[key.slice(5).replace(/-(.)/g, (_, c) => c.toUpperCase())] = value;
    else element[key] = value;
  }
  for (const child of children) {
    if (child !== null && child !== undefined) element.append(child instanceof Node ? child : String(child));
  }
  return element;
}

// ---- login ----
$('login-form').addEventListener('submit', async (event) => {
  event.preventDefault();
  $('login-error').textContent = '';
  try {
    await api.login($('username').value, $('password').value);
    $('password').value = '';
    me = await api.session();
    $('who').textContent = `${me.username} · ${me.access_mode}`;
    $('who').dataset.mode = me.access_mode;
    $('login').hidden = true;
    $('app').hidden = false;
    $('tabs').hidden = false;
    $('logout').hidden = false;
    $('sql').focus();
  } catch (error) {
    $('login-error').textContent = error.message;
  }
});

$('logout').addEventListener('click', () => {
  api.logout();
  window.location.reload();
});

// ---- tabs ----
for (const tab of document.querySelectorAll('.tab')) {
  tab.addEventListener('click', () => show(tab.dataset.tab));
}

function show(name) {
  for (const tab of document.querySelectorAll('.tab')) tab.classList.toggle('active', tab.dataset.tab === name);
  for (const panel of ['query', 'schema', 'pipelines', 'ingestion']) $(`panel-${panel}`).hidden = panel !== name;
  clearInterval(poller);
  poller = null;
  if (name === 'schema') loadSchema();
  if (name === 'pipelines') poll(pollPipelines);
  if (name === 'ingestion') poll(pollIngestion);
}

function poll(fn) {
  fn();
  poller = setInterval(fn, POLL_MS);
}

// ---- query ----
$('run').addEventListener('click', () => run($('sql').value));
$('sql').addEventListener('keydown', (event) => {
  if (event.key === 'Enter' && (event.ctrlKey || event.metaKey)) run($('sql').value);
});
$('cancel').addEventListener('click', async () => {
  if (!running) return;
  try {
    await api.cancel(running.id);
    $('status').textContent = `cancelling statement ${running.id}…`;
  } catch (error) {
    $('query-error').textContent = error.message;
  }
});

async function run(sql) {
  if (running || !sql.trim()) return;
  const id = `console-${Date.now().toString(36)}-${++statementCounter}`;
  running = { id, started: performance.now() };
  $('run').disabled = true;
  $('cancel').disabled = false;
  $('query-error').textContent = '';
  $('status').textContent = `running statement ${id}…`;
  $('status').dataset.state = 'running';
  let outcome;
  try {
    result = await api.query(sql, id);
    page = 0;
    const ms = Math.round(performance.now() - running.started);
    outcome = result.columns.length === 0
      ? `OK${result.updateCount !== null ? `, ${result.updateCount} rows changed` : ''}`
      : `${result.rows.length}${result.truncated ? '+' : ''} rows`;
    $('status').textContent = `${outcome} in ${ms} ms${result.truncated ? ` (the first ${result.rows.length} are kept)` : ''}`;
    $('status').dataset.state = 'done';
    render();
  } catch (error) {
    outcome = error.code || 'error';
    $('status').textContent = '';
    $('status').dataset.state = 'failed';
    $('query-error').textContent = error.message;
  } finally {
    remember(sql, outcome);
    running = null;
    $('run').disabled = false;
    $('cancel').disabled = true;
  }
}

function remember(sql, outcome) {
  history.unshift({ sql, outcome, at: new Date() });
  history.length = Math.min(history.length, 50);
  $('history').replaceChildren(...history.map((entry) => {
    const item = el('li', { title: 'put back into the editor' }, entry.sql, el('span', {}, `${entry.at.toLocaleTimeString()} · ${entry.outcome}`));
    item.addEventListener('click', () => { $('sql').value = entry.sql; });
    return item;
  }));
}

function render() {
  const { columns, rows } = result;
  $('result-tools').hidden = columns.length === 0;
  if (columns.length === 0) {
    $('grid').replaceChildren();
    $('chart').replaceChildren();
    return;
  }
  const pages = Math.max(1, Math.ceil(rows.length / PAGE_ROWS));
  page = Math.min(page, pages - 1);
  const first = page * PAGE_ROWS;
  const shown = rows.slice(first, first + PAGE_ROWS);
  const head = el('tr', {}, ...columns.map((c) => el('th', { 'data-type': c.type }, c.name, el('small', {}, c.type))));
  const body = shown.map((row) => el('tr', {}, ...row.map((value, index) => {
    const text = formatValue(value, columns[index]);
    return el('td', { class: text === null ? 'null' : columns[index].numeric ? 'num' : '' }, text === null ? 'NULL' : text);
  })));
  $('grid').replaceChildren(el('table', { id: 'result-table' }, el('thead', {}, head), el('tbody', {}, ...body)));
  const previous = el('button', { id: 'page-previous', disabled: page === 0 }, '‹');
  const next = el('button', { id: 'page-next', disabled: page >= pages - 1 }, '›');
  previous.addEventListener('click', () => { page--; render(); });
  next.addEventListener('click', () => { page++; render(); });
  $('pager').replaceChildren(previous, el('span', { id: 'page-info' },
    ` rows ${rows.length ? first + 1 : 0}–${first + shown.length} of ${rows.length} · page ${page + 1}/${pages} `), next);
  fillChartChoices();
  drawChart();
}

function fillChartChoices() {
  const { columns } = result;
  const keepX = $('chart-x').value;
  const keepY = $('chart-y').value;
  $('chart-x').replaceChildren(...columns.map((c) => el('option', { value: c.name }, c.name)));
  const numeric = columns.filter((c) => c.numeric);
  $('chart-y').replaceChildren(...numeric.map((c) => el('option', { value: c.name }, c.name)));
  if (columns.some((c) => c.name === keepX)) $('chart-x').value = keepX;
  if (numeric.some((c) => c.name === keepY)) $('chart-y').value = keepY;
  else if (numeric.length) $('chart-y').value = numeric[numeric.length > 1 && numeric[0].name === $('chart-x').value ? 1 : 0].name;
}

for (const id of ['chart-kind', 'chart-x', 'chart-y']) $(id).addEventListener('change', drawChart);

function drawChart() {
  const kind = $('chart-kind').value;
  if (!result || kind === 'none' || !$('chart-y').value) {
    $('chart').replaceChildren();
    return;
  }
  const xIndex = result.columns.findIndex((c) => c.name === $('chart-x').value);
  const yIndex = result.columns.findIndex((c) => c.name === $('chart-y').value);
  const xColumn = result.columns[xIndex];
  const points = [];
  for (const row of result.rows.slice(0, kind === 'bar' ? 500 : 10000)) {
    const y = numberOf(row[yIndex], result.columns[yIndex]);
    if (y === null) continue;
    const x = xColumn && (xColumn.numeric || xColumn.temporal) ? numberOf(row[xIndex], xColumn) : null;
    points.push({ x, y, label: xColumn ? formatValue(row[xIndex], xColumn) ?? 'NULL' : '' });
  }
  $('chart').replaceChildren(chart(points, { kind, title: `${$('chart-y').value} over ${$('chart-x').value}` }));
}

// ---- schema ----
$('schema-refresh').addEventListener('click', loadSchema);

async function rowsOf(sql) {
  return api.query(sql, `console-schema-${Date.now().toString(36)}-${++statementCounter}`, { maxRows: 5000 });
}

async function loadSchema() {
  $('schema-error').textContent = '';
  try {
    const objects = await rowsOf("SELECT table_catalog, table_schema, table_name, table_type FROM information_schema.tables "
      + "WHERE table_schema NOT IN ('mallard_views', 'information_schema', 'pg_catalog') ORDER BY 1, 2, 3");
    let materialized = new Map();
    let stats = null;
    try {
      const views = await rowsOf('SELECT name, sql FROM mallard_views.views ORDER BY position');
      materialized = new Map(views.rows.map((row) => [String(row[0]), String(row[1])]));
      stats = await rowsOf('SELECT * FROM dbsp_stats()');
    } catch {
      // no materialized views in this database
    }
    const table = (title, id, rows, headers) => el('section', {}, el('h3', {}, `${title} (${rows.length})`),
      el('table', { class: 'schema-table', id }, el('thead', {}, el('tr', {}, ...headers.map((h) => el('th', {}, h)))),
        el('tbody', {}, ...rows.map((r) => el('tr', {}, ...r.map((v) => el('td', {}, v)))))));
    const named = objects.rows.map((r) => r.map(String));
    const tables = named.filter((r) => r[3] !== 'VIEW' && !materialized.has(r[2])).map((r) => [`${r[1]}.${r[2]}`, r[0], r[3]]);
    const views = named.filter((r) => r[3] === 'VIEW' && !materialized.has(r[2])).map((r) => [`${r[1]}.${r[2]}`, r[0]]);
    const mvs = [...materialized.entries()].map(([name, sql]) => [name, sql]);
    const parts = [table('Tables', 'schema-tables', tables, ['table', 'database', 'type']),
      table('Views', 'schema-views', views, ['view', 'database']),
      table('Materialized views', 'schema-materialized', mvs, ['view', 'query'])];
    if (stats) {
      parts.push(table('dbsp_stats()', 'schema-dbsp-stats', stats.rows.map((r) => r.map((v, i) => formatValue(v, stats.columns[i]) ?? '')),
        stats.columns.map((c) => c.name)));
    }
    $('schema').replaceChildren(...parts);
  } catch (error) {
    $('schema-error').textContent = error.message;
  }
}

// ---- pipelines ----
const pipelineSeries = new Map();

function keep(series, sample) {
  series.push(sample);
  while (series.length && series[0].t < sample.t - HISTORY_MS) series.shift();
}

async function pollPipelines() {
  try {
    const answer = await api.json('/v1/pipelines', { missingIsNull: true });
    if (answer === null) {
      $('pipelines-status').textContent = 'Pipelines are not enabled on this server (GET /v1/pipelines answered 404): start the server with a pipelines hub.';
      $('pipelines-status').dataset.state = 'disabled';
      $('pipelines').replaceChildren();
      return;
    }
    const now = Date.now();
    // Stop and start only where the hub says this user may (COMPLETE mode, or a pipeline admin); it refuses the rest anyway.
    const control = answer.can_control === true;
    $('pipelines-status').textContent = `${answer.pipelines.length} pipelines · updated ${new Date(now).toLocaleTimeString()}`;
    $('pipelines-status').dataset.state = 'enabled';
    $('pipelines').replaceChildren(...answer.pipelines.map((p) => {
      const series = pipelineSeries.get(p.name) ?? { lag: [], mps: [], errors: [], messages: [] };
      pipelineSeries.set(p.name, series);
      keep(series.messages, { t: now, value: p.messages ?? 0 });
      keep(series.lag, { t: now, value: p.lag ?? 0 });
      keep(series.mps, { t: now, value: p.messages_per_second ?? 0 });
      keep(series.errors, { t: now, value: p.errors ?? 0 });
      const buttons = [];
      if (control) {
        const stop = el('button', { class: 'pipeline-stop', disabled: p.state !== 'RUNNING' && p.state !== 'STARTING' }, 'Stop');
        const start = el('button', { class: 'pipeline-start', disabled: p.state !== 'STOPPED' && p.state !== 'FAILED' }, 'Start');
        stop.addEventListener('click', () => control_(p.name, 'stop'));
        start.addEventListener('click', () => control_(p.name, 'start'));
        buttons.push(stop, start);
      }
      return el('article', { class: 'pipeline', 'data-pipeline': p.name, 'data-state': p.state,
        // How many values each series took over the last minutes: whether its chart moved (read by the browser test).
        'data-distinct-lags': String(new Set(series.lag.map((s) => s.value)).size),
        'data-distinct-messages': String(new Set(series.messages.map((s) => s.value)).size) },
        el('h3', {}, p.name, el('span', { class: `state ${p.state}` }, p.state), ...buttons),
        el('p', { class: 'status' }, `source ${p.source} · lag ${p.lag ?? '-'} · ${p.batches} batches · ${p.messages} messages · ${p.errors} errors`
          + ` · last batch ${p.last_batch_at ?? 'never'}`),
        p.last_error ? el('p', { class: 'error' }, `${p.last_error.code}: ${p.last_error.message}`) : null,
        el('div', { class: 'sparks' }, sparkline(series.lag, { label: 'lag' }), sparkline(series.mps, { label: 'msgs/s' }),
          sparkline(series.errors, { label: 'errors' })));
    }));
  } catch (error) {
    $('pipelines-status').textContent = error.message;
    $('pipelines-status').dataset.state = 'failed';
  }
}

async function control_(name, action) {
  try {
    await api.json(`/v1/pipelines/${encodeURIComponent(name)}/${action}`, { method: 'POST' });
  } catch (error) {
    $('pipelines-status').textContent = error.message;
  }
  pollPipelines();
}

// ---- ingestion ----
const queueSeries = new Map();

async function pollIngestion() {
  try {
    const answer = await api.json('/v1/ingestion/queues', { missingIsNull: true });
    if (answer === null) {
      $('ingestion-status').textContent = 'Ingestion is not enabled on this server (GET /v1/ingestion/queues answered 404).';
      $('ingestion-status').dataset.state = 'disabled';
      $('ingestion').replaceChildren();
      return;
    }
    const now = Date.now();
    $('ingestion-status').textContent = `${answer.queues.length} queues · updated ${new Date(now).toLocaleTimeString()}`;
    $('ingestion-status').dataset.state = 'enabled';
    const headers = ['queue', 'path', 'batches', 'rows', 'bytes', 'pending bytes', 'rows/s', 'last batch', 'watermark min', 'watermark max', 'rows/s (last minutes)'];
    $('ingestion').replaceChildren(el('table', { class: 'metrics', id: 'ingestion-table' },
      el('thead', {}, el('tr', {}, ...headers.map((h) => el('th', {}, h)))),
      el('tbody', {}, ...answer.queues.map((q) => {
        const series = queueSeries.get(q.name) ?? [];
        queueSeries.set(q.name, series);
        keep(series, { t: now, value: q.rows_per_second ?? 0 });
        return el('tr', { 'data-queue': q.name, 'data-rows': String(q.rows), 'data-samples': String(series.length),
          'data-watermark-max': q.watermark?.max ?? '' }, el('td', {}, q.name), el('td', {}, q.path), el('td', { class: 'num' }, q.batches),
          el('td', { class: 'num' }, q.rows), el('td', { class: 'num' }, q.bytes), el('td', { class: 'num' }, q.pending_bytes),
          el('td', { class: 'num' }, Number(q.rows_per_second).toFixed(1)), el('td', {}, q.last_batch_at ?? 'never'),
          el('td', {}, q.watermark?.min ?? '-'), el('td', {}, q.watermark?.max ?? '-'),
          el('td', {}, sparkline(series, { label: 'rows/s', width: 160, height: 36 })));
      }))));
  } catch (error) {
    $('ingestion-status').textContent = error.message;
    $('ingestion-status').dataset.state = 'failed';
  }
}
