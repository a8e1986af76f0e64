// SPDX-License-Identifier: Apache-2.0
/** Mallard server: DuckDB over Arrow Flight SQL and HTTP. */
package dev.mallard.server;
