import { createRequire } from "node:module";
import path from "node:path";
import express from "express";
import { SERVICE_ORIGIN } from "./openapi-guide.js";

// Only the folder of Swagger UI's assets is needed: the package's main module would load
// the whole UI bundle into the server's memory.
const assetsDir = path.dirname(createRequire(import.meta.url).resolve("swagger-ui-dist/package.json"));

const page = `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <title>Commerce Data Ingestion API</title>
  <link rel="stylesheet" href="/docs/assets/swagger-ui.css">
</head>
<body>
  <div id="api-reference"></div>
  <script src="/docs/assets/swagger-ui-bundle.js"></script>
  <script src="/docs/init.js"></script>
</body>
</html>`;

// "Try it out" stays off until clicked; the front page's examples name the address this page was opened at.
const init = `window.ui = SwaggerUIBundle({
  url: "/api/v1/openapi.json",
  dom_id: "#api-reference",
  deepLinking: true,
  persistAuthorization: true,
  tryItOutEnabled: false,
  responseInterceptor: (res) => {
    if (res.url.endsWith("/api/v1/openapi.json") && typeof res.text === "string") {
      res.text = res.text.split(${JSON.stringify(SERVICE_ORIGIN)}).join(window.location.origin);
      res.body = JSON.parse(res.text);
      res.obj = res.body;
    }
    return res;
  },
});`;

/** An interactive API reference served from the package's own files: it works offline. */
export function createDocsRouter(): express.Router {
  const docs = express.Router();
  docs.get("/docs", (_req, res) => {
    res.type("html").send(page);
  });
  docs.get("/docs/init.js", (_req, res) => {
    res.type("application/javascript").send(init);
  });
  docs.use("/docs/assets", express.static(assetsDir, { index: false, maxAge: "1d" }));
  return docs;
}
