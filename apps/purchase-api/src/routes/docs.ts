import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { Hono } from "hono";
import { z } from "zod";
import type { AppEnv } from "../env.ts";
import { type Operation, serve } from "../operation.ts";

export const documentOperation: Operation = {
  method: "get",
  path: "/openapi.json",
  summary: "This document",
  security: "none",
  responses: {
    200: { description: "OpenAPI 3.1", schema: z.looseObject({ openapi: z.literal("3.1.0") }) },
  },
  problems: [],
};

// The reference page is served from the swagger-ui-dist package itself: no CDN, nothing fetched elsewhere.
const asset = (file: string) => readFileSync(fileURLToPath(import.meta.resolve(`swagger-ui-dist/${file}`)));

const page = `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>flashgate API</title><link rel="stylesheet" href="/docs/swagger-ui.css"></head>
<body><div id="ui"></div><script src="/docs/swagger-ui-bundle.js"></script>
<script>window.ui = SwaggerUIBundle({ url: "/openapi.json", dom_id: "#ui" });</script></body>
</html>`;

/** Made on first use, not when the app starts: most processes never serve the document or its page. */
function once<T>(make: () => T): () => T {
  let made: { value: T } | undefined;
  return () => {
    made ??= { value: make() };
    return made.value;
  };
}

/** GET /openapi.json (the document, built from the routes' own schemas) and /docs (its reference page). */
export function docsRoutes(openApiDocument: () => object) {
  const document = once(openApiDocument);
  const bundle = once(() => asset("swagger-ui-bundle.js"));
  const css = once(() => asset("swagger-ui.css"));
  const router = new Hono<AppEnv>();
  serve(router, documentOperation, (c) => c.json(document()));
  return router
    .get("/docs", (c) => c.html(page))
    .get("/docs/swagger-ui-bundle.js", (c) => c.body(bundle(), 200, { "content-type": "text/javascript" }))
    .get("/docs/swagger-ui.css", (c) => c.body(css(), 200, { "content-type": "text/css" }));
}
