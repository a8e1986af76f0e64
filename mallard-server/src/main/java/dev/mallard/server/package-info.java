/** Mallard server: DuckDB over Arrow Flight SQL and HTTP. */
package dev.mallard.server;
