// How a decoded Arrow value is shown in the grid and used in a chart.
import { DataType } from 'apache-arrow';

function jsonSafe(value) {
  return JSON.stringify(value, (_, v) => (typeof v === 'bigint' ? v.toString() : v));
}

function decimalText(value, scale) {
  let digits = String(value);
  if (!scale) {
    return digits;
  }
  const negative = digits.startsWith('-');
  if (negative) {
    digits = digits.slice(1);
  }
  digits = digits.padStart(scale + 1, '0');
  return `${negative ? '-' : ''}${digits.slice(0, -scale)}.${digits.slice(-scale)}`;
}

export function formatValue(value, column) {
  if (value === null || value === undefined) {
    return null;
  }
  const type = column.arrowType;
  if (column.temporal && typeof value === 'number') {
    const date = new Date(value);
    return Number.isNaN(date.getTime()) ? String(value) : DataType.isDate(type) ? date.toISOString().slice(0, 10) : date.toISOString();
  }
  if (value instanceof Date) {
    return value.toISOString();
  }
  if (DataType.isDecimal(type)) {
    return decimalText(value, type.scale);
  }
  if (typeof value === 'bigint' || typeof value === 'number' || typeof value === 'boolean' || typeof value === 'string') {
    return String(value);
  }
  if (value && typeof value.toJSON === 'function') {
    return jsonSafe(value.toJSON());
  }
  if (ArrayBuffer.isView(value)) {
    return `${value.length} bytes`;
  }
  return jsonSafe(value);
}

/** A number for a chart axis, or null when the value has none. */
export function numberOf(value, column) {
  if (value === null || value === undefined) {
    return null;
  }
  if (typeof value === 'number') {
    return value;
  }
  if (typeof value === 'bigint') {
    return Number(value);
  }
  if (value instanceof Date) {
    return value.getTime();
  }
  if (column && DataType.isDecimal(column.arrowType)) {
    return Number(decimalText(value, column.arrowType.scale));
  }
  const number = Number(value);
  return Number.isFinite(number) ? number : null;
}
