// The server's HTTP API as the console uses it. The access token lives in this module's memory only: never in
// localStorage, sessionStorage or a cookie, so closing or reloading the tab logs out.
import { RecordBatchReader, DataType } from 'apache-arrow';

let token = null;

export class ApiError extends Error {
  constructor(status, code, message) {
    super(code ? `${code}: ${message}` : message);
    this.status = status;
    this.code = code;
  }
}

export function loggedIn() {
  return token !== null;
}

export function logout() {
  token = null;
}

async function failure(response) {
  let code = null;
  let message = `HTTP ${response.status}`;
  try {
    const body = await response.json();
    if (body && body.error) {
      code = body.error.code;
      message = body.error.message;
    }
  } catch {
    // not a JSON body: keep the status
  }
  return new ApiError(response.status, code, message);
}

function authorized(headers = {}) {
  return token ? { ...headers, Authorization: `Bearer ${token}` } : headers;
}

export async function login(username, password) {
  const response = await fetch('/v1/login', {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ username, password }),
  });
  if (!response.ok) {
    throw await failure(response);
  }
  const body = await response.json();
  token = body.accessToken;
  return body;
}

/** Who the token belongs to and what the server lets it do: {username, access_mode, can_write}. */
export async function session() {
  const response = await fetch('./api/session', { headers: authorized(), cache: 'no-store' });
  if (!response.ok) {
    throw await failure(response);
  }
  return response.json();
}

/** GET or POST a JSON route; null when the route answers 404 and `missingIsNull` is set. */
export async function json(path, { method = 'GET', missingIsNull = false } = {}) {
  const response = await fetch(path, { method, headers: authorized({ Accept: 'application/json' }), cache: 'no-store' });
  if (response.status === 404 && missingIsNull) {
    return null;
  }
  if (!response.ok) {
    throw await failure(response);
  }
  return response.json();
}

export async function cancel(statementId) {
  const response = await fetch(`/v1/cancel?id=${encodeURIComponent(statementId)}`, { method: 'POST', headers: authorized() });
  if (!response.ok) {
    throw await failure(response);
  }
}

/**
 * Runs a statement through /v1/query with Arrow's stream format and decodes it here, batch by batch, keeping at
 * most `maxRows` rows (the rest of the stream is abandoned). Arrow bodies are asked for uncompressed, since the
 * Arrow JS reader does not decompress ZSTD buffers.
 * @returns {{columns: {name, type, numeric, temporal}[], rows: any[][], truncated: boolean, updateCount: number|null}}
 */
export async function query(sql, statementId, { maxRows = 10000, signal } = {}) {
  const abort = new AbortController();
  const onAbort = () => abort.abort();
  signal?.addEventListener('abort', onAbort);
  try {
    const response = await fetch('/v1/query', {
      method: 'POST',
      headers: authorized({
        Accept: 'application/vnd.apache.arrow.stream',
        'Content-Type': 'application/json',
        'x-dd-query-id': statementId,
        'x-dd-arrow-compression': 'none',
      }),
      body: JSON.stringify({ query: sql }),
      signal: abort.signal,
    });
    if (!response.ok) {
      throw await failure(response);
    }
    const updateHeader = response.headers.get('x-dd-update-count');
    const reader = await RecordBatchReader.from(response);
    await reader.open();
    const fields = reader.schema ? reader.schema.fields : [];
    const columns = fields.map((field) => describe(field));
    const rows = [];
    let truncated = false;
    for await (const batch of reader) {
      const vectors = columns.map((_, index) => batch.getChildAt(index));
      for (let row = 0; row < batch.numRows; row++) {
        if (rows.length >= maxRows) {
          truncated = true;
          break;
        }
        rows.push(vectors.map((vector) => vector.get(row)));
      }
      if (truncated) {
        abort.abort();
        break;
      }
    }
    return { columns, rows, truncated, updateCount: columns.length === 0 && updateHeader !== null ? Number(updateHeader) : null };
  } finally {
    signal?.removeEventListener('abort', onAbort);
  }
}

function describe(field) {
  const type = field.type;
  return {
    name: field.name,
    type: String(type),
    arrowType: type,
    numeric: DataType.isInt(type) || DataType.isFloat(type) || DataType.isDecimal(type),
    temporal: DataType.isTimestamp(type) || DataType.isDate(type),
  };
}
