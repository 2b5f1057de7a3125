// Public, unauthenticated documentation: the OpenAPI document, rendered docs (Swagger UI served
// from the installed package, no CDN), and a short page per problem type URI.
import express, { type Router } from 'express';
import { PROBLEM_KINDS, PROBLEM_TITLES, isProblemKind } from '@sightline/kit';

export function mountDocsRoutes(router: Router, openApiDocument: object): void {
  const uiDir = require('swagger-ui-dist').getAbsoluteFSPath() as string;
  router.get(['/v1/openapi.json', '/openapi.json'], (_req, res) => res.json(openApiDocument));
  router.get('/docs', (req, res, next) => {
    if (!req.path.endsWith('/')) return res.redirect(301, '/docs/');
    next();
  });
  router.get('/docs/', (_req, res) => res.type('html').send(DOCS_PAGE));
  router.use('/docs', express.static(uiDir, { index: false }));
  router.get('/problems/:kind', (req, res) => {
    const kind = String(req.params['kind']);
    if (!isProblemKind(kind)) return res.status(404).type('text/plain').send('Unknown problem type.\n');
    res.type('html').send(problemPage(kind, PROBLEM_TITLES[kind], PROBLEM_KINDS[kind]));
  });
}

const DOCS_PAGE = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Sightline API</title>
<link rel="stylesheet" href="/docs/swagger-ui.css"></head>
<body><div id="ui"></div><script src="/docs/swagger-ui-bundle.js"></script>
<script>SwaggerUIBundle({ url: "/v1/openapi.json", dom_id: "#ui" });</script></body></html>`;

function problemPage(kind: string, title: string, status: number): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${title}</title></head><body>
<h1>${title}</h1><p>Problem type <code>${kind}</code>, HTTP ${status}.</p>
<p>Sightline answers errors as <code>application/problem+json</code>. Read <code>remediation</code> for what to do
next and <code>allowed</code>, when present, for the valid values. Match on <code>type</code>, never on <code>detail</code>.</p>
<p>Clients retry 429 and 5xx answers after <code>Retry-After</code> with the request unchanged, and do not retry other 4xx answers.</p>
</body></html>`;
}
