// SPDX-License-Identifier: Apache-2.0
/**
 * The web console: a single-page application built from {@code src/main/console} and served from the jar at
 * {@code /ui} and {@code /v1/ui} by {@link dev.mallard.server.console.ConsoleRoutes}, under a strict
 * Content-Security-Policy. The page talks only to the server's own routes ({@code /v1/login}, {@code /v1/query},
 * {@code /v1/cancel}, {@code /v1/pipelines}, {@code /v1/ingestion/queues}) and {@code /ui/api/session}.
 */
package dev.mallard.server.console;
